package ledger

import (
	"math/rand/v2"
	"testing"

	"github.com/gagliardetto/solana-go"
)

// BenchmarkKeydirReplay measures opening an account log after a kill
// whose key directory's base holds a million accounts and whose log
// holds 600 000 records of them written since (what a restart after a
// kill replays, the changes of base accounts being kept in the base's
// index until the next run or rewrite).
func BenchmarkKeydirReplay(b *testing.B) {
	const accounts, changes, perSlot = 1_000_000, 600_000, 10_000
	dir := b.TempDir()
	lg, err := openAccountLog(dir, logPos{}, true, 0)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]solana.PublicKey, accounts)
	for i := range keys {
		for j := 0; j < 32; j += 8 {
			v := rng.Uint64()
			for k := range 8 {
				keys[i][j+k] = byte(v >> (8 * k))
			}
		}
	}
	a := testAccount(1, 165)
	var end logPos
	write := func(ks []solana.PublicKey) {
		ws := make([]AccountWrite, len(ks))
		for i, k := range ks {
			ws[i] = AccountWrite{Key: k, Account: a}
		}
		pos, err := lg.append(ws)
		if err != nil {
			b.Fatal(err)
		}
		if err := applyLog(lg); err != nil {
			b.Fatal(err)
		}
		end = pos
	}
	for i := 0; i < accounts; i += 50_000 {
		write(keys[i : i+50_000])
	}
	if err := lg.snapshot(); err != nil {
		b.Fatal(err)
	}
	slot := make([]solana.PublicKey, 0, perSlot)
	seen := map[solana.PublicKey]bool{}
	for n := 0; n < changes; {
		slot, seen = slot[:0], map[solana.PublicKey]bool{}
		for len(slot) < perSlot {
			k := keys[rng.IntN(accounts)]
			if !seen[k] {
				seen[k] = true
				slot = append(slot, k)
			}
		}
		write(slot)
		n += perSlot
	}
	lg.abandon()
	b.ResetTimer()
	for range b.N {
		lg, err := openLogAfter(dir, end, 0, lg)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		lg.abandon()
		b.StartTimer()
	}
}
