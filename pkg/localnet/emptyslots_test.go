package localnet_test

import (
	"testing"
	"time"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/localnet"
)

// TestEmptySlotBatchReachesBothLedgers: localnet.Config.EmptySlotBatch
// (ferry serve --empty-slot-batch) configures both chain nodes.
func TestEmptySlotBatchReachesBothLedgers(t *testing.T) {
	for _, tc := range []struct {
		set, want time.Duration
	}{
		{123 * time.Millisecond, 123 * time.Millisecond},
		{-1, 0}, // every slot on its own
	} {
		p, err := localnet.Open(localnet.Config{DataDir: t.TempDir(), NoSync: true, EmptySlotBatch: tc.set})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Base.Config().EmptySlotBatch; got != tc.want {
			t.Errorf("base: EmptySlotBatch %v, want %v", got, tc.want)
		}
		if got := p.Ephemeral.Config().EmptySlotBatch; got != tc.want {
			t.Errorf("ephemeral: EmptySlotBatch %v, want %v", got, tc.want)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAccountCacheSizeReachesBothLedgers: localnet.Config.AccountCacheSize
// (ferry serve --account-cache) configures both chain nodes; zero keeps
// the ledger's default.
func TestAccountCacheSizeReachesBothLedgers(t *testing.T) {
	for _, tc := range []struct{ set, want int }{
		{1234, 1234},
		{0, ledger.DefaultAccountCacheSize},
	} {
		p, err := localnet.Open(localnet.Config{DataDir: t.TempDir(), NoSync: true, AccountCacheSize: tc.set})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Base.Config().AccountCacheSize; got != tc.want {
			t.Errorf("base: AccountCacheSize %d, want %d", got, tc.want)
		}
		if got := p.Ephemeral.Config().AccountCacheSize; got != tc.want {
			t.Errorf("ephemeral: AccountCacheSize %d, want %d", got, tc.want)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
