package httpguard

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAnyOrigin(t *testing.T) {
	var reached int
	h := AnyOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		w.Write([]byte("ok"))
	}))
	for _, tc := range []struct {
		name, reqHeaders, wantHeaders string
	}{
		{"web3.js", "content-type,solana-client", "content-type,solana-client"},
		{"no list", "", CORSAllowHeaders},
		{"not header names", "content-type, <script>", CORSAllowHeaders},
		{"too long", strings.Repeat("x-a,", 300), CORSAllowHeaders},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("OPTIONS", "/", nil)
			r.Header.Set("Origin", "https://dapp.example")
			r.Header.Set("Access-Control-Request-Method", "POST")
			if tc.reqHeaders != "" {
				r.Header.Set("Access-Control-Request-Headers", tc.reqHeaders)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			hd := w.Header()
			if w.Code != http.StatusOK || w.Body.Len() != 0 || hd.Get("Access-Control-Allow-Origin") != "*" ||
				hd.Get("Access-Control-Allow-Methods") != "POST, GET, OPTIONS" || hd.Get("Access-Control-Max-Age") != "86400" ||
				hd.Get("Access-Control-Allow-Headers") != tc.wantHeaders || hd.Get("Access-Control-Allow-Credentials") != "" {
				t.Fatalf("preflight: %d %v", w.Code, hd)
			}
		})
	}
	if reached != 0 {
		t.Fatal("a preflight reached the handler")
	}
	r := httptest.NewRequest("POST", "/", strings.NewReader("{}"))
	r.Header.Set("Origin", "https://dapp.example")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if reached != 1 || w.Body.String() != "ok" || w.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("POST: reached %d, %v %q", reached, w.Header(), w.Body)
	}
}

func TestOrigins(t *testing.T) {
	o, err := ParseOrigins([]string{"http://localhost:3000", "HTTPS://App.Example/", "null", "http://localhost:3000"})
	if err != nil {
		t.Fatal(err)
	}
	if o.String() != "http://localhost:3000, https://app.example, null" {
		t.Errorf("String = %q", o.String())
	}
	for origin, want := range map[string]bool{
		"http://localhost:3000": true, "https://app.example": true, "https://APP.example": true, "null": true,
		"http://localhost:3001": false, "https://localhost:3000": false, "https://evil.example": false, "": false,
	} {
		if o.Allows(origin) != want {
			t.Errorf("Allows(%q) = %v", origin, !want)
		}
	}
	if (Origins{}).Allows("http://localhost:3000") || !(Origins{}).Empty() {
		t.Error("the zero value allows an origin")
	}
	all, _ := ParseOrigins([]string{"*"})
	if !all.Allows("https://evil.example") || !all.Allows("") || all.Empty() {
		t.Error(`"*" does not allow every origin`)
	}
	for _, bad := range []string{"localhost:3000", "ftp://x", "http://x/path", "http://u:p@x", "http://", "http://x?q=1", "*.example"} {
		if _, err := ParseOrigin(bad); err == nil {
			t.Errorf("ParseOrigin(%q) accepted", bad)
		}
	}
}

func TestBrowserOrigin(t *testing.T) {
	for _, tc := range []struct {
		headers []string
		origin  string
		browser bool
	}{
		{nil, "", false},
		{[]string{"Origin", "https://a.example"}, "https://a.example", true},
		{[]string{"Sec-Fetch-Site", "cross-site"}, "", true},
		{[]string{"Sec-Fetch-Site", "same-site"}, "", true},
		{[]string{"Sec-Fetch-Site", "none"}, "", false},
	} {
		r := httptest.NewRequest("POST", "/", nil)
		for i := 0; i < len(tc.headers); i += 2 {
			r.Header.Set(tc.headers[i], tc.headers[i+1])
		}
		if o, b := BrowserOrigin(r); o != tc.origin || b != tc.browser {
			t.Errorf("%v: %q %v", tc.headers, o, b)
		}
	}
}

// capServer serves h on a LimitListener of max connections with a fake
// clock that ticks once per reading, so eviction order is deterministic.
func capServer(t *testing.T, max int, h http.Handler) (*LimitListener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewLimitListener(ln, max)
	var mu sync.Mutex
	tick := time.Unix(0, 0)
	l.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		tick = tick.Add(time.Second)
		return tick
	}
	srv := &http.Server{Handler: h, ConnState: l.ConnState}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l, ln.Addr().String()
}

// waitOpen waits until the listener holds n connections.
func waitOpen(t *testing.T, l *LimitListener, n int) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if l.Stats().Open == n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%d connections open, want %d", l.Stats().Open, n)
}

// closed reports whether the server closed c (a read returns EOF or a
// reset rather than timing out).
func closed(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

func TestLimitListenerEvictsIdleConnections(t *testing.T) {
	l, addr := capServer(t, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	first, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	waitOpen(t, l, 1)
	second, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	waitOpen(t, l, 2)
	// At the cap, a third connection replaces the one silent longest.
	third, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if !closed(first) {
		t.Fatal("the oldest idle connection was not closed")
	}
	if _, err := io.WriteString(third, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(third), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("request on the new connection: %v %v", resp, err)
	}
	if st := l.Stats(); st.Open != 2 || st.Refused != 0 || st.Evicted != 1 {
		t.Fatalf("stats: %+v", st)
	}
}

func TestLimitListenerRefusesWhenAllBusy(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	l, addr := capServer(t, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
		w.Write([]byte("done"))
	}))
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get("http://" + addr + "/")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}()
	}
	<-started
	<-started
	// Both connections are busy: the N+1th is answered 503 and closed.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || string(body) != refusedBody {
		t.Fatalf("refused connection: %d %q", resp.StatusCode, body)
	}
	if st := l.Stats(); st.Refused != 1 || st.Evicted != 0 || st.Busy != 2 {
		t.Fatalf("stats: %+v", st)
	}
	close(release)
	wg.Wait()
	// The slots are free again once the busy requests finish.
	resp, err = http.Get("http://" + addr + "/")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("after release: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestLimitListenerCountsHijackedConnections(t *testing.T) {
	hijacked := make(chan net.Conn, 1)
	l, addr := capServer(t, 1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		hijacked <- c
	}))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	hc := <-hijacked
	// A hijacked connection (a websocket) is busy until closed: the next
	// connection is refused, not the websocket evicted.
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(c2), nil); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second connection: %v %v", resp, err)
	}
	c2.Close()
	if st := l.Stats(); st.Open != 1 || st.Busy != 1 || st.Refused != 1 {
		t.Fatalf("stats: %+v", st)
	}
	hc.Close()
	waitOpen(t, l, 0)
}
