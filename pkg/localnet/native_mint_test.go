package localnet_test

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/programs"
	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// requirePairNativeMints checks that both ledgers of p hold both native
// mints exactly as genesis creates them.
func requirePairNativeMints(t *testing.T, p *localnet.Pair) {
	t.Helper()
	for _, l := range []*ledger.Ledger{p.Base, p.Ephemeral} {
		for k, want := range programs.GenesisAccounts(l.Rent()) {
			got, _ := l.Account(k, ledger.Processed)
			if got == nil || got.Owner != want.Owner || got.Lamports != want.Lamports || string(got.Data) != string(want.Data) {
				t.Errorf("%s: native mint %s = %+v, want %+v", l.Name(), k, got, want)
			}
		}
	}
}

// TestNativeMintsOnBothLedgers: a new pair has the native mints on base
// and on the rollup; a data directory whose ledgers lack them (created by
// an older ferry) gets them when it is opened again.
func TestNativeMintsOnBothLedgers(t *testing.T) {
	dir := t.TempDir()
	cfg := localnet.Config{DataDir: dir, ManualSlots: true, FinalityDepth: -1, NoSync: true}
	p, err := localnet.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	requirePairNativeMints(t, p)
	for _, l := range []*ledger.Ledger{p.Base, p.Ephemeral} {
		if _, err := l.Apply(t.Context(), func(w ledger.AccountWriter) error {
			for _, k := range []solana.PublicKey{spl.NativeMintID, spl.NativeMint2022ID} {
				w.Set(k, nil)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.AdvanceSlot(t.Context()); err != nil {
			t.Fatal(err)
		}
		if a, _ := l.Account(spl.NativeMintID, ledger.Processed); a != nil {
			t.Fatalf("%s: native mint not removed", l.Name())
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p, err = localnet.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	requirePairNativeMints(t, p)
}
