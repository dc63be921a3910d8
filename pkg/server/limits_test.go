package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/httpguard"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/pubsub"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// runServer serves s until the test ends.
func runServer(t *testing.T, s *Server) map[string]string {
	t.Helper()
	urls, err := s.Bind()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan struct{})
	s.OnReady(func(map[string]string) { close(ready) })
	go func() { done <- s.Run(ctx) }()
	<-ready
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return urls
}

// TestConnectionCap: the listener holds at most MaxConns connections; the
// N+1th replaces an idle one, or is refused when all are busy.
func TestConnectionCap(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	s := New(nil, "")
	s.SetLimits(Limits{MaxConns: 3})
	s.Endpoint("busy", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/wait" {
			<-release
		}
		w.Write([]byte("ok"))
	}))
	url := runServer(t, s)["busy"]
	addr := strings.TrimPrefix(url, "http://")
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // before the server stops
	lim := s.endpoints[0].lim

	// Three silent connections fill the cap; each new one replaces the
	// oldest, so a real client still gets through.
	var idle []net.Conn
	for i := 0; i < 6; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	resp, err := http.Get(url + "/")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("request past idle connections: %v %v", resp, err)
	}
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	if st := lim.Stats(); st.Open > 3 || st.Evicted < 4 {
		t.Fatalf("after 7 connections: %+v", st)
	}
	for _, c := range idle {
		c.Close()
	}
	waitFor(t, "the idle connections to close", func() bool { return lim.Stats().Open == 0 })

	// Three requests in progress: the next connection gets 503.
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			io.WriteString(c, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
			http.ReadResponse(bufio.NewReader(c), nil)
		}()
	}
	waitFor(t, "three busy connections", func() bool { return lim.Stats().Busy == 3 })
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("N+1th connection: %v %v", resp, err)
	}
	if st := lim.Stats(); st.Refused != 1 {
		t.Errorf("stats %+v", st)
	}
	once.Do(func() { close(release) })
	wg.Wait()
}

// TestTrickledBodyCutOff: a client that sends its body a byte at a time is
// cut off by the read timeout, and the handler never sees a whole body.
func TestTrickledBodyCutOff(t *testing.T) {
	got := make(chan error, 1)
	s := New(nil, "")
	s.SetLimits(Limits{ReadTimeout: 300 * time.Millisecond})
	s.Endpoint("rpc", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		got <- err
	}))
	addr := strings.TrimPrefix(runServer(t, s)["rpc"], "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const size = 1000
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
	sent := 0
	for ; sent < size; sent++ {
		if _, err := c.Write([]byte{'1'}); err != nil {
			break // the server closed the connection
		}
		select {
		case err := <-got:
			if err == nil {
				t.Fatal("the handler read the whole trickled body")
			}
			if !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "timeout") && !strings.Contains(err.Error(), "deadline") {
				t.Logf("body read error: %v", err)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("sent %d of %d bytes, one every 20 ms, and the server still read on", sent, size)
}

// TestCORSOnEveryListener: the chain nodes and the router answer
// preflights as Agave does; the API as the hosted API does (CORS_ORIGIN).
func TestCORSOnEveryListener(t *testing.T) {
	o := fast("", "")
	o.Demo.Disabled = true
	serveOnce(t, o, func(info *Info) {
		for _, key := range []string{KeyRPC, KeyEphemeral, KeyRouter, KeyAPI} {
			req, _ := http.NewRequest(http.MethodOptions, info.URLs[key]+"/", nil)
			req.Header.Set("Origin", "https://dapp.example")
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "content-type,solana-client")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			h := resp.Header
			if resp.StatusCode/100 != 2 || h.Get("Access-Control-Allow-Origin") != "*" ||
				!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
				h.Get("Access-Control-Allow-Headers") != "content-type,solana-client" || h.Get("Access-Control-Max-Age") == "" {
				t.Errorf("%s preflight: %d %v", key, resp.StatusCode, h)
			}
		}
		// Actual requests carry Access-Control-Allow-Origin too.
		for _, key := range []string{KeyRPC, KeyEphemeral, KeyRouter} {
			req, _ := http.NewRequest(http.MethodPost, info.URLs[key], strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"getHealth"}`))
			req.Header.Set("Origin", "https://dapp.example")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(string(b), `"result":"ok"`) {
				t.Errorf("%s POST: %v %s", key, resp.Header, b)
			}
		}
	})
}

// TestFaucetOriginsThroughServe: requestAirdrop from a web page is refused
// unless the page's origin was allowed; the CLI (no Origin) always works.
func TestFaucetOriginsThroughServe(t *testing.T) {
	o := fast("", "")
	o.Demo.Disabled = true
	var err error
	if o.AllowOrigins, err = httpguard.ParseOrigins([]string{"http://localhost:5173"}); err != nil {
		t.Fatal(err)
	}
	serveOnce(t, o, func(info *Info) {
		to := solana.NewWallet().PublicKey().String()
		for i, tc := range []struct {
			node, origin string
			code         int
		}{
			{KeyRPC, "", 0},
			{KeyRPC, "http://localhost:5173", 0},
			{KeyRPC, "https://evil.example", rpcserver.CodeOriginNotAllowed},
			{KeyEphemeral, "https://evil.example", rpcserver.CodeOriginNotAllowed},
			{KeyEphemeral, "http://localhost:5173", 0},
		} {
			body := `{"jsonrpc":"2.0","id":1,"method":"requestAirdrop","params":["` + to + `",` + string(rune('1'+i)) + `000000]}`
			req, _ := http.NewRequest(http.MethodPost, info.URLs[tc.node], strings.NewReader(body))
			req.Header.Set("Content-Type", "text/plain") // a CORS "simple request"
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Error *rpcserver.Error `json:"error"`
			}
			json.NewDecoder(resp.Body).Decode(&r)
			resp.Body.Close()
			code := 0
			if r.Error != nil {
				code = r.Error.Code
			}
			if code != tc.code {
				t.Errorf("%s from %q: %+v, want code %d", tc.node, tc.origin, r.Error, tc.code)
			}
		}
	})
}

func TestLimitsDefaults(t *testing.T) {
	n, err := Build(fast("", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Server.Close()
	l := n.Server.limits
	if l.MaxConns != httpguard.DefaultMaxConns || l.ReadTimeout != rpcserver.ReadTimeout || l.ReadHeaderTimeout != rpcserver.ReadHeaderTimeout || l.IdleTimeout != rpcserver.IdleTimeout {
		t.Errorf("limits %+v", l)
	}
	for _, e := range n.Server.endpoints {
		if e.cors != (e.key != KeyAPI) {
			t.Errorf("%s: any-origin CORS %v", e.key, e.cors)
		}
	}
}

// TestConnectionCapKeepsWebsockets: a websocket is a hijacked, busy
// connection, never the "idle" one a new connection replaces at the
// cap. N live websockets on a listener capped at N+1 survive a stream of
// plain keep-alive HTTP connections (each replacing the previous idle
// one) and still answer and receive notifications; with the cap all
// websockets, a new connection is refused rather than one of them cut.
func TestConnectionCapKeepsWebsockets(t *testing.T) {
	const sockets = 3
	l, err := ledger.Open(ledger.Config{Name: "cap", ManualSlots: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ps := pubsub.New(l, pubsub.Options{})
	t.Cleanup(func() { ps.Close() })
	s := New(nil, "")
	s.SetLimits(Limits{MaxConns: sockets + 1})
	// The shape of a chain node's RPC port: CORS, upgrades to PubSub.
	s.Endpoint("rpc", "127.0.0.1:0", withPubSub(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}), ps), WithAnyOriginCORS())
	httpURL := runServer(t, s)["rpc"]
	addr := strings.TrimPrefix(httpURL, "http://")
	lim := s.endpoints[0].lim
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	dial := func() *websocket.Conn {
		t.Helper()
		ws, _, err := websocket.Dial(ctx, "ws://"+addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.CloseNow() })
		return ws
	}
	call := func(ws *websocket.Conn, req string) string {
		t.Helper()
		if err := ws.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
			t.Fatalf("websocket write: %v", err)
		}
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("websocket read: %v", err)
		}
		return string(b)
	}
	var wss []*websocket.Conn
	for i := 0; i < sockets; i++ {
		ws := dial()
		if r := call(ws, `{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}`); !strings.Contains(r, `"result":0`) {
			t.Fatalf("slotSubscribe: %s", r)
		}
		wss = append(wss, ws)
	}
	waitFor(t, "the websockets to be hijacked", func() bool { return lim.Stats().Busy == sockets })

	// Plain keep-alive connections, each left idle after one request:
	// every one past the cap replaces the previous idle one.
	const plain = 3 * (sockets + 1)
	for i := 0; i < plain; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("plain connection %d: %v %v", i, resp, err)
		}
		resp.Body.Close()
		// The server marks it idle after the response: wait, so that the
		// next connection finds an idle one to replace.
		waitFor(t, "the request to end", func() bool { return lim.Stats().Busy == sockets })
	}
	if st := lim.Stats(); st.Open != sockets+1 || st.Busy != sockets || st.Refused != 0 || st.Evicted != plain-1 {
		t.Fatalf("after %d plain connections: %+v", plain, st)
	}

	// Every websocket is alive: it answers, and is notified.
	for i, ws := range wss {
		if r := call(ws, `{"jsonrpc":"2.0","id":2,"method":"getVersion"}`); !strings.Contains(r, `"solana-core"`) {
			t.Fatalf("websocket %d: %s", i, r)
		}
	}
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	for i, ws := range wss {
		_, b, err := ws.Read(ctx)
		if err != nil || !strings.Contains(string(b), `"slotNotification"`) {
			t.Fatalf("websocket %d after the plain connections: %s %v", i, b, err)
		}
	}

	// One more websocket replaces the last idle plain connection; with
	// the cap full of websockets a new connection is refused (503), none
	// of them cut.
	last := dial()
	if r := call(last, `{"jsonrpc":"2.0","id":1,"method":"getVersion"}`); !strings.Contains(r, `"solana-core"`) {
		t.Fatalf("websocket %d: %s", sockets, r)
	}
	waitFor(t, "the cap full of websockets", func() bool { return lim.Stats().Busy == sockets+1 })
	resp, err := http.Get(httpURL + "/")
	if err == nil {
		resp.Body.Close()
	}
	if err == nil && resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a connection past a cap of websockets: %d", resp.StatusCode)
	}
	for i, ws := range append(wss, last) {
		if r := call(ws, `{"jsonrpc":"2.0","id":3,"method":"getVersion"}`); !strings.Contains(r, `"solana-core"`) {
			t.Fatalf("websocket %d after the refusal: %s", i, r)
		}
	}
	if st := lim.Stats(); st.Open != sockets+1 || st.Refused != 1 || st.Evicted != plain {
		t.Fatalf("stats %+v", st)
	}
}
