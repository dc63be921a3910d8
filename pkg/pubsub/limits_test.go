package pubsub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
)

// smallBuffers wraps a listener so that accepted connections have small
// socket send buffers: a client that stops reading then blocks the
// server's writes after some hundred kilobytes instead of megabytes.
// (Buffers below the loopback MSS would make TCP stall on zero windows
// for seconds once the client reads again.)
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(64 << 10)
	}
	return c, err
}

// slowEnv is an env whose server has small socket send buffers and whose
// clients (dialSlow) have small receive buffers.
func slowEnv(t *testing.T, o Options) *env {
	t.Helper()
	l, err := ledger.Open(ledger.Config{Name: "slow", ManualSlots: true})
	if err != nil {
		t.Fatal(err)
	}
	s := New(l, o)
	hs := httptest.NewUnstartedServer(s)
	hs.Listener = smallBuffers{hs.Listener}
	hs.Start()
	t.Cleanup(func() {
		s.Close()
		hs.Close()
		l.Close()
	})
	return &env{t: t, l: l, s: s, url: "ws" + strings.TrimPrefix(hs.URL, "http")}
}

func (e *env) dialSlow() *client {
	e.t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetReadBuffer(64 << 10)
		}
		return c, err
	}}}
	ws, _, err := websocket.Dial(testCtx(e.t), e.url, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		e.t.Fatal(err)
	}
	ws.SetReadLimit(-1)
	e.t.Cleanup(func() { ws.CloseNow() })
	return &client{t: e.t, ws: ws, nextID: 1}
}

// flood makes n processed-level notifications of about 13 KB for key,
// and n/10 of a few hundred bytes for each of small.
func (e *env) flood(key solana.PublicKey, n int, small ...solana.PublicKey) error {
	data := make([]byte, 10_000)
	for i := 0; i < n; i++ {
		data[0] = byte(i)
		_, err := e.l.Apply(testCtx(e.t), func(w ledger.AccountWriter) error {
			w.Set(key, &ledger.Account{Lamports: 1_000_000_000, Owner: solana.SystemProgramID, Data: data})
			for _, k := range small {
				if i%10 == 0 {
					w.Set(k, &ledger.Account{Lamports: 1_000_000_000 + uint64(i), Owner: solana.SystemProgramID})
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// TestSlowConsumer checks that a client that stops reading is
// disconnected with 1008 and a reason once its queue is full, that the
// ledger never waits for it, and that other clients keep getting every
// notification.
func TestSlowConsumer(t *testing.T) {
	e := slowEnv(t, Options{QueueLength: 64, WriteTimeout: 30 * time.Second})
	key, small := newKey(t), newKey(t)
	slow := e.dialSlow()
	slow.subscribe("accountSubscribe", key.String(), map[string]any{"commitment": "processed", "encoding": "base64"})
	// The good client watches a small account written with every tenth
	// big one: fewer notifications in all than its queue holds, so it
	// keeps up however the machine schedules its writer.
	good := e.dial()
	goodID := good.subscribe("accountSubscribe", small.String(), map[string]any{"commitment": "processed", "encoding": "base64"})

	// The good client reads as notifications come; the slow one does not
	// read at all. Apply never blocks: all 400 writes land.
	const n = 400
	done := make(chan error, 1)
	go func() {
		for i := 0; i < n/10; i++ {
			_, b, err := good.ws.Read(testCtx(t))
			if err != nil {
				done <- err
				return
			}
			var m message
			if json.Unmarshal(b, &m) != nil || m.Params.Subscription != goodID {
				done <- fmt.Errorf("good client got %.100s", b)
				return
			}
		}
		done <- nil
	}()
	flooded := make(chan error, 1)
	go func() { flooded <- e.flood(key, n, small) }()
	waitFor(t, func() bool { return e.s.Stats().SlowConsumerDisconnects == 1 })
	// Reading now (within the server's 5 s close handshake) drains what
	// the kernel buffered, then the close frame.
	var err error
	for err == nil {
		_, _, err = slow.ws.Read(testCtx(t))
	}
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || !strings.Contains(ce.Reason, "slow consumer") {
		t.Fatalf("slow client ended with %v, want 1008 slow consumer", err)
	}
	if err := <-flooded; err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("good client: %v", err)
	}
	waitFor(t, func() bool { return e.s.Stats().Connections == 1 })
	if st := e.s.Stats(); st.Holds != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestNeverReads checks that a client that never reads is dropped (its
// writes time out) and its subscriptions released, without the client's
// help.
func TestNeverReads(t *testing.T) {
	e := slowEnv(t, Options{QueueLength: 1 << 20, WriteTimeout: 200 * time.Millisecond})
	key := newKey(t)
	c := e.dialSlow()
	c.subscribe("accountSubscribe", key.String(), map[string]any{"commitment": "processed", "encoding": "base64"})
	if err := e.flood(key, 50); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { st := e.s.Stats(); return st.Connections == 0 && st.Holds == 0 })
	// The ledger went on: the next slot advances at once.
	e.advance()
}

// TestLimits checks the connection, subscription and message limits.
func TestLimits(t *testing.T) {
	e := newEnv(t, ledger.Config{}, Options{MaxSubscriptionsPerConnection: 3, MaxSubscriptions: 4, MaxConnections: 2})
	a, b := e.dial(), e.dial()
	for i := 0; i < 3; i++ {
		a.subscribe("accountSubscribe", newKey(t).String())
	}
	r := a.call("accountSubscribe", newKey(t).String())
	if r.Error == nil || r.Error.Code != -32603 || r.Error.Message != "Internal Error: Subscription refused. Connection subscription limit reached (3)" {
		t.Fatalf("fourth on one connection: %s", r.raw)
	}
	// Resubscribing to what a already holds is not a new subscription.
	b.subscribe("slotSubscribe")
	r = b.call("accountSubscribe", newKey(t).String())
	if r.Error == nil || r.Error.Code != -32603 || r.Error.Message != "Internal Error: Subscription refused. Node subscription limit reached" {
		t.Fatalf("fifth on the node: %s", r.raw)
	}
	// A third connection is refused before the upgrade.
	_, resp, err := websocket.Dial(testCtx(t), e.url, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("third connection: %v %v", resp, err)
	}
	// A message over 4096 bytes closes with 1009.
	b.send(`{"jsonrpc":"2.0","id":1,"method":"getVersion","params":["` + strings.Repeat("x", 5000) + `"]}`)
	_, _, err = b.ws.Read(testCtx(t))
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("big message: %v", err)
	}
	// Invalid UTF-8 closes with 1007.
	if err := a.ws.Write(testCtx(t), websocket.MessageText, []byte{0xff, 0xfe}); err != nil {
		t.Fatal(err)
	}
	_, _, err = a.ws.Read(testCtx(t))
	if websocket.CloseStatus(err) != websocket.StatusInvalidFramePayloadData {
		t.Fatalf("invalid UTF-8: %v", err)
	}
	waitFor(t, func() bool { st := e.s.Stats(); return st.Connections == 0 && st.Holds == 0 })
	// Not an upgrade: 426.
	resp, err = http.Get("http" + strings.TrimPrefix(e.url, "ws"))
	if err != nil || resp.StatusCode != http.StatusUpgradeRequired {
		t.Fatalf("plain GET: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestManySubscriptions sends 10 000 subscriptions down one connection
// without waiting: the first DefaultMaxSubscriptionsPerConnection
// succeed, the rest get Agave's error code, and the ledger is not held
// up meanwhile.
func TestManySubscriptions(t *testing.T) {
	e := newEnv(t, ledger.Config{}, Options{})
	c := e.dial()
	const n = 10_000
	go func() {
		for i := 0; i < n; i++ {
			key := solana.PublicKey{byte(i), byte(i >> 8), 1}
			req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"accountSubscribe","params":["%s",{"encoding":"base64"}]}`, i, key)
			if c.ws.Write(testCtx(t), websocket.MessageText, []byte(req)) != nil {
				return
			}
		}
	}()
	ok, refused := 0, 0
	for ok+refused < n {
		m := c.read()
		switch {
		case m.Error == nil:
			ok++
		case m.Error.Code == -32603:
			refused++
		default:
			t.Fatalf("answer %s", m.raw)
		}
		if (ok+refused)%2000 == 0 {
			e.advance() // the ledger does not wait for the connection
		}
	}
	if ok != DefaultMaxSubscriptionsPerConnection || refused != n-ok {
		t.Fatalf("%d accepted, %d refused", ok, refused)
	}
	if st := e.s.Stats(); st.Subscriptions != ok {
		t.Fatalf("stats %+v", st)
	}
	c.ws.Close(websocket.StatusNormalClosure, "")
	waitFor(t, func() bool { return e.s.Stats().Holds == 0 })
}

// TestShutdown checks that Close ends connections with 1001 and refuses
// new ones.
func TestShutdown(t *testing.T) {
	e := newEnv(t, ledger.Config{}, Options{})
	c := e.dial()
	c.subscribe("slotSubscribe")
	ended := make(chan error, 1)
	go func() {
		_, _, err := c.ws.Read(testCtx(t))
		ended <- err
	}()
	if err := e.s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("after Close: %v", err)
	}
	_, resp, err := websocket.Dial(testCtx(t), e.url, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("dial after Close: %v %v", resp, err)
	}
}

// TestLedgerClosed checks that connections end when the ledger closes.
func TestLedgerClosed(t *testing.T) {
	e := newEnv(t, ledger.Config{}, Options{})
	c := e.dial()
	c.subscribe("rootSubscribe")
	if err := e.l.Close(); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.ws.Read(testCtx(t))
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("after the ledger closed: %v", err)
	}
}

// TestNotifierFallsBehind: while the notifier is stuck (here: the test
// holds the registry lock it needs), the ledger goes on without waiting;
// once more than EventBuffer events are waiting the notifier is dropped,
// every client is closed with 1013, and new clients are served again.
func TestNotifierFallsBehind(t *testing.T) {
	e := newEnv(t, ledger.Config{FinalityDepth: -1}, Options{EventBuffer: 4})
	c := e.dial()
	c.subscribe("slotSubscribe")
	e.s.mu.Lock()
	for i := 0; i < 5; i++ { // 15 events: frozen, confirmed, finalized
		e.advance()
	}
	e.s.mu.Unlock()
	var err error
	for err == nil {
		_, _, err = c.ws.Read(testCtx(t))
	}
	if websocket.CloseStatus(err) != websocket.StatusTryAgainLater {
		t.Fatalf("client ended with %v, want 1013", err)
	}
	// A new client is notified again.
	c2 := e.dial()
	id := c2.subscribe("slotSubscribe")
	e.advance()
	if m := c2.note(); m.Params.Subscription != id {
		t.Fatalf("after the restart: %s", m.raw)
	}
}
