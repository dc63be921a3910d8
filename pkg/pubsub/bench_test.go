package pubsub

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
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

// BenchmarkAccountFanout measures one account notification to 100
// connections holding the same subscription (10 distinct callers), from
// the write to the messages queued: without a read filter, with one that
// shows the account to everyone, and with one that hides it from all but
// one caller. The filter here is trivial; ns/op is what the fan-out adds
// around it (a real filter's cost is per distinct caller).
func BenchmarkAccountFanout(b *testing.B) {
	key := solana.PublicKey{9}
	hidden := newPrivacy()
	for _, tc := range []struct {
		name   string
		filter rpcserver.ReadFilter
		hide   bool
	}{
		{"no filter", nil, false},
		{"filter, visible to all", hidden.filter, false},
		{"filter, hidden from 9 of 10 callers", hidden.filter, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			l, err := ledger.Open(ledger.Config{Name: "bench", ManualSlots: true})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			s := New(l, Options{ReadFilter: tc.filter, QueueLength: 1 << 30})
			defer s.Close()
			hidden.hide(key, false)
			conns := make([]*conn, 100)
			req := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"accountSubscribe","params":["%s",{"encoding":"base64","commitment":"confirmed"}]}`, key)
			for i := range conns {
				tok := fmt.Sprintf("caller-%d", i%10)
				if i%10 == 0 {
					tok = readerToken
				}
				conns[i] = &conn{s: s, subs: map[uint64]*subscription{}, wake: make(chan struct{}, 1), done: make(chan struct{}),
					caller: tok, readCtx: rpcserver.WithRequestToken(context.Background(), tok)}
				conns[i].answer(req)
				conns[i].queue = conns[i].queue[:0]
			}
			hidden.hide(key, tc.hide)
			writes := []ledger.AccountWrite{{Key: key, Account: &ledger.Account{Lamports: 1, Owner: solana.SystemProgramID, Data: make([]byte, 165)}}}
			for b.Loop() {
				s.mu.Lock()
				s.accountWrites(ledger.Confirmed, 1, writes)
				s.mu.Unlock()
				for _, c := range conns {
					c.queue = c.queue[:0]
				}
			}
		})
	}
}
