package pubsub

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
)

// BenchmarkSubscribe measures what holding subscriptions costs the
// server: b.N accountSubscribe requests for distinct accounts (none
// shared) answered over 100 connections, through the whole request path
// but without sockets. ns/op is one subscribe; B/sub is the live heap
// each held subscription keeps (after a GC), the server-side state that
// grows with the count. Connection costs (goroutines, socket buffers) are
// per connection and not included.
func BenchmarkSubscribe(b *testing.B) {
	l, err := ledger.Open(ledger.Config{Name: "bench", ManualSlots: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	s := New(l, Options{MaxSubscriptionsPerConnection: 1 << 30, QueueLength: 1 << 30})
	defer s.Close()
	conns := make([]*conn, 100)
	for i := range conns {
		conns[i] = &conn{s: s, subs: map[uint64]*subscription{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
	}
	reqs := make([][]byte, b.N)
	for i := range reqs {
		key := solana.PublicKey{byte(i), byte(i >> 8), byte(i >> 16), byte(i >> 24), 7}
		reqs[i] = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"accountSubscribe","params":["%s",{"encoding":"base64","commitment":"confirmed"}]}`, i, key)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i, r := range reqs {
		c := conns[i%len(conns)]
		c.answer(r)
		c.queue = c.queue[:0]
	}
	b.StopTimer()
	reqs = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	if st := s.Stats(); st.Subscriptions != b.N {
		b.Fatalf("%d subscriptions held, want %d", st.Subscriptions, b.N)
	}
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "B/sub")
	runtime.KeepAlive(conns)
}

// BenchmarkConfirmedNotification measures the notification path at
// confirmed: per op, a transaction is processed, a client subscribes to
// its signature over a real websocket, the slot is made durable
// (AdvanceSlot, in memory) and the client reads the notification. It is
// the cost of a send-to-confirmed cycle without the wait for the slot
// clock, which a served node adds (up to one slot; docs/performance.md).
func BenchmarkConfirmedNotification(b *testing.B) {
	e := newEnv(b, ledger.Config{}, Options{})
	c := e.dial()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, sig, raw := e.transfer(1_000_000)
		b.StartTimer()
		e.process(raw)
		id := c.subscribe("signatureSubscribe", sig.String(), map[string]any{"commitment": "confirmed"})
		e.advance()
		if m := c.note(); m.Params.Subscription != id {
			b.Fatalf("notification %s", m.raw)
		}
	}
}
