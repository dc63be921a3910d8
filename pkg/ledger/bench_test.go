package ledger_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/loadgen"
)

// BenchmarkTransferChecked measures signed SPL TransferChecked
// transactions per second executed in-process: decode, batched parallel
// ed25519 verification, then the slot loop's blockhash, duplicate and fee
// checks, execution, metadata and commit, with the 400 ms slot clock
// running; the last slot is made durable inside the timing. Transactions
// are pre-signed, paid by 4096 distinct owners. On bbolt it also reports
// the bytes written to disk per transaction (Linux).
//
//	go test -run '^$' -bench TransferChecked -benchtime 200000x ./pkg/ledger/
func BenchmarkTransferChecked(b *testing.B) {
	for _, mode := range []string{"memory", "bbolt"} {
		b.Run(mode, func(b *testing.B) {
			w := loadgen.NewWorld(4096)
			cfg := ledger.Config{Name: "bench", Genesis: w.Genesis()}
			if mode == "bbolt" {
				cfg.DataDir = b.TempDir()
			}
			l, err := ledger.Open(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			bh, _ := l.LatestBlockhash(ledger.Processed)
			txs := w.SignTransfers(b.N, bh.Blockhash)
			ctx := context.Background()
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			start, cpu0, disk0 := time.Now(), loadgen.CPUTime(), loadgen.DiskWritten()
			// A few submitters keep verification of the next batch running
			// while the slot loop executes the current one.
			const batch, submitters = 1024, 3
			var wg sync.WaitGroup
			var failed sync.Map
			for s := 0; s < submitters; s++ {
				wg.Add(1)
				go func(s int) {
					defer wg.Done()
					for lo := s * batch; lo < len(txs); lo += submitters * batch {
						recs, errs := l.ProcessBatch(ctx, txs[lo:min(lo+batch, len(txs))])
						for i, err := range errs {
							if err != nil || recs[i].Err != nil {
								failed.Store(lo+i, fmt.Sprint(err, recs[i]))
							}
						}
					}
				}(s)
			}
			wg.Wait()
			if _, err := l.AdvanceSlot(ctx); err != nil {
				b.Fatal(err)
			}
			elapsed, cpu, disk := time.Since(start), loadgen.CPUTime()-cpu0, loadgen.DiskWritten()-disk0
			b.StopTimer()
			failed.Range(func(k, v any) bool {
				b.Fatalf("transaction %v failed: %v", k, v)
				return false
			})
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tx/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/tx")
			if mode == "bbolt" && disk0 >= 0 {
				// Everything up to the last slot was synced by its commit.
				b.ReportMetric(float64(disk)/float64(b.N), "disk-B/tx")
			}
		})
	}
}
