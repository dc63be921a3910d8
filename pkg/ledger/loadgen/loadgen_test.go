package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

func TestRunConfirmsEverything(t *testing.T) {
	w := NewWorld(64)
	l, err := ledger.Open(ledger.Config{Name: "loadgen", Genesis: w.Genesis(), SlotDuration: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	srv := httptest.NewServer(rpcserver.New(l, rpcserver.Options{}))
	defer srv.Close()
	bh, _ := l.LatestBlockhash(ledger.Processed)
	txs := w.SignTransfers(500, bh.Blockhash)
	for _, o := range []Options{
		{URL: srv.URL, Clients: 4},
		{URL: srv.URL, Clients: 2, Batch: 7, HTTPClient: http.DefaultClient},
	} {
		res, err := Run(context.Background(), txs[:250], o)
		txs = txs[250:]
		if err != nil || res.Confirmed != 250 || res.Failed != 0 {
			t.Fatalf("run %+v: %+v, %v", o, res, err)
		}
		// One latency per confirmed transaction, ascending, none longer
		// than the run.
		if len(res.Latencies) != 250 || !slices.IsSorted(res.Latencies) || res.Latencies[0] <= 0 || res.Percentile(100) > res.Elapsed {
			t.Fatalf("run %+v: %d latencies, p0 %v, p100 %v, elapsed %v", o, len(res.Latencies), res.Percentile(0.1), res.Percentile(100), res.Elapsed)
		}
		if p50, p99 := res.Percentile(50), res.Percentile(99); p50 > p99 || p50 != res.Latencies[124] || p99 != res.Latencies[247] {
			t.Fatalf("percentiles: p50 %v p99 %v of %v", p50, p99, res.Latencies)
		}
	}
	// Sending the same transactions again: every send fails preflight as
	// already processed, and the failures are counted.
	again := w.SignTransfers(10, bh.Blockhash)
	res, err := Run(context.Background(), again, Options{URL: srv.URL, Clients: 1})
	if err != nil || res.Failed != 10 || !strings.Contains(res.FirstError, "already been processed") {
		t.Fatalf("replay: %+v, %v", res, err)
	}
}

func TestConnChunkedAndClose(t *testing.T) {
	big := strings.Repeat("x", 100_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		w.Write([]byte(big)) // larger than the server's buffer: chunked
	}))
	defer srv.Close()
	for _, path := range []string{"/", "/close"} {
		c, err := newConn(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			b, err := c.post([]byte(`{}`))
			if err != nil || string(b) != big {
				t.Fatalf("%s round %d: %d bytes, %v", path, i, len(b), err)
			}
		}
		c.close()
	}
	if _, err := newConn("https://example.com"); err == nil {
		t.Fatal("https accepted")
	}
}
