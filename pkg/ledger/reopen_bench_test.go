package ledger_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/loadgen"
)

// BenchmarkReopenAfterBurst measures opening a durable ledger whose
// recent blocks are full: the state ledgerscale's restart after a
// full-speed phase leaves (140 slots of 3 600 transfers, ~500 000
// signatures the status cache must answer for; 10 000 per slot is the
// issue's 25 000 transfers/s, 1.4 million). One op is Open then Close of
// the same directory.
//
//	go test -run '^$' -bench ReopenAfterBurst -benchtime 20x ./pkg/ledger/
func BenchmarkReopenAfterBurst(b *testing.B) {
	for _, perSlot := range []int{0, 3600, 10_000} {
		b.Run(fmt.Sprintf("tx-per-slot=%d", perSlot), func(b *testing.B) {
			const slots = 140
			w := loadgen.NewWorld(4096)
			cfg := ledger.Config{Name: "bench", Genesis: w.Genesis(), DataDir: b.TempDir(), ManualSlots: true}
			l, err := ledger.Open(cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			bh, _ := l.LatestBlockhash(ledger.Processed)
			txs := w.SignTransfers(slots*perSlot, bh.Blockhash)
			for s := 0; s < slots; s++ {
				if perSlot > 0 {
					recs, errs := l.ProcessBatch(ctx, txs[s*perSlot:(s+1)*perSlot])
					for i, err := range errs {
						if err != nil || recs[i].Err != nil {
							b.Fatalf("transaction %d: %v %v", i, err, recs[i])
						}
					}
				}
				if _, err := l.AdvanceSlot(ctx); err != nil {
					b.Fatal(err)
				}
			}
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				l, err := ledger.Open(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
