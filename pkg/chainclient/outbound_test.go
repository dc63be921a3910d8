package chainclient

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// counter is an httptest server that counts the requests it gets.
type counter struct {
	*httptest.Server
	n atomic.Int64
}

func newCounter(t *testing.T, h http.HandlerFunc) *counter {
	c := &counter{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.n.Add(1)
		h(w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

func slotHandler(w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":42}`)
}

func TestRedirectsStayOnTheirOrigin(t *testing.T) {
	other := newCounter(t, slotHandler)
	for _, code := range []int{http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		var secret = "s3cr3t"
		from := newCounter(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/?token="+r.URL.Query().Get("token"), code)
		})
		c, err := New(from.URL + "/?token=" + secret)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.GetSlot(testCtx, "")
		var he *HTTPError
		if !errors.As(err, &he) || he.StatusCode != code {
			t.Fatalf("%d: err = %v, want the redirect itself as an HTTPError", code, err)
		}
		if strings.Contains(err.Error(), other.URL) || strings.Contains(err.Error(), secret) {
			t.Fatalf("%d: message names the target or the token: %v", code, err)
		}
	}
	if n := other.n.Load(); n != 0 {
		t.Fatalf("the other origin got %d requests", n)
	}

	// Same origin: followed (a load balancer moving the path), a bounded
	// number of times.
	var hops atomic.Int64
	var same *counter
	same = newCounter(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/final" {
			slotHandler(w, r)
			return
		}
		hops.Add(1)
		http.Redirect(w, r, same.URL+"/final", http.StatusTemporaryRedirect)
	})
	c, _ := New(same.URL + "/start")
	if slot, err := c.GetSlot(testCtx, ""); err != nil || slot != 42 {
		t.Fatalf("same-origin redirect: %d %v", slot, err)
	}
	var loop *counter
	loop = newCounter(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, loop.URL+r.URL.Path+"x", http.StatusTemporaryRedirect)
	})
	c, _ = New(loop.URL + "/a")
	if _, err := c.GetSlot(testCtx, ""); err == nil {
		t.Fatal("a redirect loop succeeded")
	}
	if n := loop.n.Load(); n != MaxRedirects+1 {
		t.Fatalf("redirect loop: %d requests, want %d", n, MaxRedirects+1)
	}

	// A caller's own http.Client without a policy gets the same one.
	c, _ = New(from(t, other.URL).URL, WithHTTPClient(&http.Client{Timeout: time.Second}))
	if _, err := c.GetSlot(testCtx, ""); err == nil {
		t.Fatal("redirect followed with a custom client")
	}
	if n := other.n.Load(); n != 0 {
		t.Fatalf("the other origin got %d requests", n)
	}
}

func from(t *testing.T, to string) *counter {
	return newCounter(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusSeeOther) })
}

// TestUnreachableIsOneMessage: a refused connection, a listener that never
// answers (timeout) and a name that does not resolve read the same, so an
// API that reports them is no port scanner; the cause stays available.
func TestUnreachableIsOneMessage(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + closed.Addr().String()
	closed.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			defer conn.Close() // hold it open: the client times out
		}
	}()
	noDNS := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
		return nil, &net.DNSError{Err: "no such host", Name: addr, IsNotFound: true}
	}}}
	cases := []struct {
		name string
		url  string
		opts []Option
	}{
		{"refused", refused, nil},
		{"timeout", "http://" + silent.Addr().String(), []Option{WithTimeout(50 * time.Millisecond)}},
		{"dns", "http://no-such-host.invalid", []Option{WithHTTPClient(noDNS)}},
	}
	for _, tc := range cases {
		c, _ := New(tc.url, tc.opts...)
		_, err := c.GetSlot(testCtx, "")
		var te *TransportError
		if !errors.As(err, &te) || te.Err == nil {
			t.Fatalf("%s: err = %v", tc.name, err)
		}
		msg := strings.Replace(err.Error(), c.String(), "<url>", 1)
		if msg != "getSlot at <url>: "+UnreachableMessage {
			t.Errorf("%s: message %q", tc.name, msg)
		}
	}
}
