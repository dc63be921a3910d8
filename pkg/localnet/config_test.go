package localnet_test

import (
	"testing"
	"time"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/localnet"
)

// TestConfigReachesBothLedgers: the localnet.Config settings that ferry
// serve passes for both chain nodes (--empty-slot-batch, --account-cache)
// configure both, a zero keeping the ledger's default.
func TestConfigReachesBothLedgers(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*localnet.Config)
		get  func(ledger.Config) any
		want any
	}{
		{"EmptySlotBatch", func(c *localnet.Config) { c.EmptySlotBatch = 123 * time.Millisecond },
			func(c ledger.Config) any { return c.EmptySlotBatch }, 123 * time.Millisecond},
		{"EmptySlotBatch every slot on its own", func(c *localnet.Config) { c.EmptySlotBatch = -1 },
			func(c ledger.Config) any { return c.EmptySlotBatch }, time.Duration(0)},
		{"AccountCacheSize", func(c *localnet.Config) { c.AccountCacheSize = 1234 },
			func(c ledger.Config) any { return c.AccountCacheSize }, 1234},
		{"AccountCacheSize default", func(*localnet.Config) {},
			func(c ledger.Config) any { return c.AccountCacheSize }, ledger.DefaultAccountCacheSize},
	} {
		cfg := localnet.Config{DataDir: t.TempDir(), NoSync: true}
		tc.set(&cfg)
		p, err := localnet.Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := tc.get(p.Base.Config()); got != tc.want {
			t.Errorf("%s: base has %v, want %v", tc.name, got, tc.want)
		}
		if got := tc.get(p.Ephemeral.Config()); got != tc.want {
			t.Errorf("%s: ephemeral has %v, want %v", tc.name, got, tc.want)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
