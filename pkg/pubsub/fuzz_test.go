package pubsub

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

var fuzzSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}`,
	`{"jsonrpc":"2.0","id":"a","method":"accountSubscribe","params":["11111111111111111111111111111111",{"encoding":"jsonParsed","commitment":"confirmed"}]}`,
	`{"jsonrpc":"2.0","id":2,"method":"programSubscribe","params":["TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",{"filters":[{"dataSize":165},{"memcmp":{"offset":32,"bytes":"3"}},"tokenAccountState"]}]}`,
	`{"jsonrpc":"2.0","id":3,"method":"logsSubscribe","params":[{"mentions":["11111111111111111111111111111111"]}]}`,
	`{"jsonrpc":"2.0","id":4,"method":"signatureSubscribe","params":["5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW",{"enableReceivedNotification":true}]}`,
	`{"jsonrpc":"2.0","id":5,"method":"blockSubscribe","params":[{"mentionsAccountOrProgram":"11111111111111111111111111111111"},{"transactionDetails":"accounts","encoding":"jsonParsed"}]}`,
	`[{"jsonrpc":"2.0","id":6,"method":"rootSubscribe"},{"jsonrpc":"2.0","id":7,"method":"rootUnsubscribe","params":[0]}]`,
	`{"jsonrpc":"2.0","method":"ping"}`,
	`[]`, `[1]`, `{`, `null`, `{"jsonrpc":"2.0","id":-1,"method":"x"}`, `{"jsonrpc":"2.0","id":1,"method":"getVersion","params":{}}`,
}

// FuzzParseMessage checks that the request parser never panics and that
// every request it returns is either runnable or carries an error to
// answer with.
func FuzzParseMessage(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		reqs, batch := parseMessage(b)
		if len(reqs) == 0 {
			t.Fatal("no request")
		}
		if batch && !json.Valid(b) {
			t.Fatal("batch from invalid JSON")
		}
		for _, r := range reqs {
			if r.err != nil {
				if r.id == nil && r.err.Code != -32602 {
					t.Fatalf("envelope error without an id to answer: %+v", r)
				}
				if r.id != nil && !json.Valid(errorResponse(r.id, r.err)) {
					t.Fatalf("invalid error response for %q", b)
				}
				continue
			}
			if r.id != nil && !json.Valid(resultResponse(r.id, true)) {
				t.Fatalf("invalid response for id %q", r.id)
			}
		}
	})
}

// FuzzAnswer runs whole messages through a connection's request handling
// (without a socket) and checks that nothing panics, every answer is
// valid JSON, and the subscription registry stays consistent.
func FuzzAnswer(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	l, err := ledger.Open(ledger.Config{Name: "fuzz", ManualSlots: true})
	if err != nil {
		f.Fatal(err)
	}
	defer l.Close()
	// Requests go through a read filter that hides the system program's
	// account (the seeds' address) from this caller.
	p := newPrivacy()
	p.hide(solana.SystemProgramID, true)
	s := New(l, Options{QueueLength: 1 << 30, ReadFilter: p.filter})
	defer s.Close()
	f.Fuzz(func(t *testing.T, b []byte) {
		// A connection without a socket: answers stay in its queue.
		c := &conn{s: s, subs: map[uint64]*subscription{}, wake: make(chan struct{}, 1), done: make(chan struct{}),
			caller: "fuzz", readCtx: rpcserver.WithRequestToken(context.Background(), "fuzz")}
		defer s.dropConn(c)
		c.answer(b)
		for _, m := range c.queue {
			if !json.Valid(m) {
				t.Fatalf("invalid message %q for input %q", m, b)
			}
			// A method that panicked is answered "Internal error".
			if bytes.Contains(m, []byte(`"message":"Internal error"`)) {
				t.Fatalf("a method panicked on %q: %s", b, m)
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		n := 0
		for id, sub := range c.subs {
			if s.subs[id] != sub || sub.id != id {
				t.Fatalf("registry out of sync for %d", id)
			}
			if !slices.Contains(sub.holders, c) {
				t.Fatalf("subscription %d does not list its holder", id)
			}
			n++
		}
		if s.holds < n {
			t.Fatalf("holds %d < %d held", s.holds, n)
		}
	})
}
