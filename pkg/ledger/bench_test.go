package ledger_test

import (
	"context"
	"fmt"
	"os"
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
// the bytes written per transaction (measureTransfers).
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
			measureTransfers(b, l, w.SignTransfers(b.N, bh.Blockhash), mode == "bbolt")
		})
	}
}

// BenchmarkTransferAtScale is BenchmarkTransferChecked on a durable ledger
// holding many token accounts, the pattern of tools/ledgerscale: 1024
// payers send to recipients drawn at random from L genesis token
// accounts, so at a million accounts nearly every transfer writes an
// account no recent slot wrote. Compare the bytes written per
// transaction across L (flat is the goal); L=1M needs ~2 GiB of memory
// for its genesis.
//
//	go test -run '^$' -bench TransferAtScale -benchtime 300000x ./pkg/ledger/
func BenchmarkTransferAtScale(b *testing.B) {
	for _, accounts := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("accounts=%d", accounts), func(b *testing.B) {
			w := loadgen.NewWorld(1024)
			w.AddRecipients(accounts)
			l, err := ledger.Open(ledger.Config{Name: "bench", Genesis: w.Genesis(), DataDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			bh, _ := l.LatestBlockhash(ledger.Processed)
			measureTransfers(b, l, w.SignPayments(b.N, bh.Blockhash, uint64(accounts)), true)
		})
	}
}

// measureTransfers executes txs, all of which must succeed, and reports
// throughput and CPU per transaction; on a durable ledger also the bytes
// written per transaction: what the kernel counted (disk-B/tx, Linux)
// and what the store wrote by part (StorageWrites: bbolt, account log
// records and cleaning, each table).
func measureTransfers(b *testing.B, l *ledger.Ledger, txs [][]byte, durable bool) {
	ctx := context.Background()
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0, disk0, w0, reads0 := time.Now(), loadgen.CPUTime(), loadgen.DiskWritten(0), l.StorageWrites(), loadgen.ReadCalls(0)
	dev0 := loadgen.DeviceWritten(os.TempDir())
	// A few submitters keep verification of the next batch running while
	// the slot loop executes the current one.
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
	elapsed, cpu, disk, w1, reads := time.Since(start), loadgen.CPUTime()-cpu0, loadgen.DiskWritten(0)-disk0, l.StorageWrites(), loadgen.ReadCalls(0)-reads0
	dev := loadgen.DeviceWritten(os.TempDir()) - dev0
	b.StopTimer()
	failed.Range(func(k, v any) bool {
		b.Fatalf("transaction %v failed: %v", k, v)
		return false
	})
	n := float64(len(txs))
	b.ReportMetric(n/elapsed.Seconds(), "tx/s")
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-µs/tx")
	if !durable {
		return
	}
	if disk0 >= 0 {
		// Everything up to the last slot was synced by its commit.
		b.ReportMetric(float64(disk)/n, "disk-B/tx")
	}
	if dev0 >= 0 {
		// The whole device (the test's directories are under TempDir):
		// what reached the disk, journal included, if nothing else wrote.
		b.ReportMetric(float64(dev)/n, "dev-B/tx")
	}
	if reads0 >= 0 {
		// Lookups of accounts and table entries not in memory are preads.
		b.ReportMetric(float64(reads)/n, "reads/tx")
	}
	b.ReportMetric(float64(w1.Database-w0.Database)/n, "db-B/tx")
	b.ReportMetric(float64(w1.AccountRecords-w0.AccountRecords)/n, "acclog-B/tx")
	b.ReportMetric(float64(w1.AccountCleaning-w0.AccountCleaning)/n, "clean-B/tx")
	b.ReportMetric(float64(w1.KeyDirectory-w0.KeyDirectory)/n, "keydir-B/tx")
	b.ReportMetric(float64(w1.Signatures-w0.Signatures)/n, "sigs-B/tx")
	b.ReportMetric(float64(w1.Heads-w0.Heads)/n, "heads-B/tx")
}
