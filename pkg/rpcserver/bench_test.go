package rpcserver

import (
	"context"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/loadgen"
)

// BenchmarkHTTPTransferChecked measures signed SPL TransferChecked
// transactions per second sent over HTTP JSON-RPC (sendTransaction,
// base64, preflight at processed) by concurrent clients until every one is
// confirmed, polled with batched getSignatureStatuses. The server is this
// package's handler on a real 127.0.0.1 listener with the 400 ms slot
// clock; signature verification is on. Transactions are pre-signed and
// paid by 4096 distinct owners.
//
//	go test -run '^$' -bench HTTPTransferChecked -benchtime 100000x ./pkg/rpcserver/
func BenchmarkHTTPTransferChecked(b *testing.B) {
	for _, tc := range []struct {
		name    string
		bbolt   bool
		clients int
		batch   int
	}{
		{"bbolt/single", true, 32, 1},
		{"bbolt/batch16", true, 8, 16},
		{"memory/single", false, 32, 1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := loadgen.NewWorld(4096)
			cfg := ledger.Config{Name: "bench-http", Genesis: w.Genesis()}
			if tc.bbolt {
				cfg.DataDir = b.TempDir()
			}
			l, err := ledger.Open(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			srv := httptest.NewServer(New(l, Options{}))
			defer srv.Close()
			bh, _ := l.LatestBlockhash(ledger.Processed)
			txs := w.SignTransfers(b.N, bh.Blockhash)
			runtime.GC()
			b.ResetTimer()
			cpu0 := loadgen.CPUTime()
			res, err := loadgen.Run(context.Background(), txs, loadgen.Options{URL: srv.URL, Clients: tc.clients, Batch: tc.batch})
			cpu := loadgen.CPUTime() - cpu0
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			if res.Failed > 0 || res.Confirmed != b.N {
				b.Fatalf("%d confirmed, %d failed of %d: %s", res.Confirmed, res.Failed, b.N, res.FirstError)
			}
			b.ReportMetric(res.TPS(), "tx/s")
			b.ReportMetric(float64(b.N)/res.SendTime.Seconds(), "sent/s")
			// Includes the load generator, which runs in this process.
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/tx")
		})
	}
}
