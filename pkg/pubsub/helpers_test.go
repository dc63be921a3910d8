package pubsub

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// env is a manual-slot ledger with a PubSub server on a test HTTP server.
type env struct {
	t   testing.TB
	l   *ledger.Ledger
	s   *Server
	url string
}

func newEnv(t testing.TB, cfg ledger.Config, o Options) *env {
	t.Helper()
	cfg.ManualSlots = true
	if cfg.Name == "" {
		cfg.Name = "pubsub-test"
	}
	l, err := ledger.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := New(l, o)
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		hs.Close()
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return &env{t: t, l: l, s: s, url: "ws" + strings.TrimPrefix(hs.URL, "http")}
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (e *env) advance() uint64 {
	e.t.Helper()
	slot, err := e.l.AdvanceSlot(testCtx(e.t))
	if err != nil {
		e.t.Fatal(err)
	}
	return slot
}

// signed builds a transaction paid and signed by the faucet.
func (e *env) signed(ixs ...txwire.Instruction) (solana.Signature, []byte) {
	e.t.Helper()
	bh, _ := e.l.LatestBlockhash(ledger.Processed)
	msg, err := txwire.Compile(e.l.Faucet().PublicKey(), ixs, bh.Blockhash)
	if err != nil {
		e.t.Fatal(err)
	}
	tx := txwire.NewUnsigned(msg)
	if err := tx.Sign(e.l.FaucetKey()); err != nil {
		e.t.Fatal(err)
	}
	return tx.Signatures[0], tx.Bytes()
}

func (e *env) process(raw []byte) *ledger.TxRecord {
	e.t.Helper()
	rec, err := e.l.Process(testCtx(e.t), raw)
	if err != nil {
		e.t.Fatal(err)
	}
	return rec
}

// transfer builds a faucet transfer of lamports to a new address.
func (e *env) transfer(lamports uint64) (solana.PublicKey, solana.Signature, []byte) {
	to := newKey(e.t)
	sig, raw := e.signed(spl.SystemTransfer(e.l.Faucet().PublicKey(), to, lamports))
	return to, sig, raw
}

func newKey(t testing.TB) solana.PublicKey {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return solana.PublicKeyFromBytes(pub)
}

// client is a raw websocket client that sends JSON-RPC and sorts what
// comes back into responses and notifications.
type client struct {
	t      testing.TB
	ws     *websocket.Conn
	nextID int
	notes  []message // notifications read while waiting for a response
}

// message is any frame the server sends.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Method string `json:"method"`
	Params struct {
		Result       json.RawMessage `json:"result"`
		Subscription uint64          `json:"subscription"`
	} `json:"params"`
	raw []byte
}

func (e *env) dial() *client {
	e.t.Helper()
	return e.dialAs("")
}

// dialAs connects with ?token=token (none when empty), as a caller of a
// node that filters reads proves who it is.
func (e *env) dialAs(token string) *client {
	e.t.Helper()
	u := e.url
	if token != "" {
		u += "?token=" + url.QueryEscape(token)
	}
	ws, _, err := websocket.Dial(testCtx(e.t), u, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	ws.SetReadLimit(-1)
	e.t.Cleanup(func() { ws.CloseNow() })
	return &client{t: e.t, ws: ws, nextID: 1}
}

func (c *client) send(raw string) {
	c.t.Helper()
	if err := c.ws.Write(testCtx(c.t), websocket.MessageText, []byte(raw)); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) read() message {
	c.t.Helper()
	_, b, err := c.ws.Read(testCtx(c.t))
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m message
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("read %s: %v", b, err)
	}
	m.raw = b
	return m
}

// readRaw reads the next frame as text.
func (c *client) readRaw() string {
	c.t.Helper()
	_, b, err := c.ws.Read(testCtx(c.t))
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return string(b)
}

// call sends a request and returns its response, keeping notifications
// that arrive first.
func (c *client) call(method string, params ...any) message {
	c.t.Helper()
	id := c.nextID
	c.nextID++
	if params == nil {
		params = []any{}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	c.send(string(b))
	for {
		m := c.read()
		if m.Method != "" {
			c.notes = append(c.notes, m)
			continue
		}
		if string(m.ID) != fmt.Sprint(id) {
			c.t.Fatalf("response %s, want id %d", m.raw, id)
		}
		return m
	}
}

// subscribe calls a subscribe method that must succeed and returns the id.
func (c *client) subscribe(method string, params ...any) uint64 {
	c.t.Helper()
	m := c.call(method, params...)
	var id uint64
	if m.Error != nil || json.Unmarshal(m.Result, &id) != nil {
		c.t.Fatalf("%s: %s", method, m.raw)
	}
	return id
}

// note returns the next notification.
func (c *client) note() message {
	c.t.Helper()
	if len(c.notes) > 0 {
		m := c.notes[0]
		c.notes = c.notes[1:]
		return m
	}
	for {
		m := c.read()
		if m.Method != "" {
			return m
		}
		c.t.Fatalf("unexpected response %s", m.raw)
	}
}

// sync is a barrier: it returns the notifications queued for the client
// before the answer to a request that takes the registry lock (an
// unsubscribe of an id nobody has). The notifier holds that lock while
// it handles a batch of events, so everything it produced for events it
// had started on is in them.
func (c *client) sync() []message {
	c.t.Helper()
	if r := c.call("accountUnsubscribe", uint64(1)<<60); r.Error == nil {
		c.t.Fatalf("barrier: %s", r.raw)
	}
	out := c.notes
	c.notes = nil
	return out
}

// noNotes checks that nothing was notified up to a barrier.
func (c *client) noNotes(why string) {
	c.t.Helper()
	if n := c.sync(); len(n) > 0 {
		c.t.Fatalf("%s: unexpected notification %s", why, n[0].raw)
	}
}

// value decodes a notification's RpcResponse.
func value(t *testing.T, m message) (uint64, json.RawMessage) {
	t.Helper()
	var r struct {
		Context struct {
			Slot uint64 `json:"slot"`
		} `json:"context"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(m.Params.Result, &r); err != nil {
		t.Fatalf("notification %s: %v", m.raw, err)
	}
	return r.Context.Slot, r.Value
}

// jsonEq compares JSON texts by value.
func jsonEq(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("got  %s\nwant %s", gb, wb)
	}
}

// waitFor polls cond until it holds (the test's deadline bounds it).
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
