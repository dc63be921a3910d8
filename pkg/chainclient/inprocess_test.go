package chainclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestWithHandlerServesInProcess(t *testing.T) {
	f := newFake(t)
	f.raw("getLatestBlockhash", `{"context":{"slot":1},"value":{"blockhash":"EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N","lastValidBlockHeight":3090}}`)
	url := f.srv.URL
	f.srv.Close() // no network: every request must go through the handler

	c, err := New(url+"/?token=secret", WithHandler(http.HandlerFunc(f.serve)))
	if err != nil {
		t.Fatal(err)
	}
	bh, err := c.GetLatestBlockhash(testCtx, Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	if bh.Hash != hash1 || bh.LastValidBlockHeight != 3090 {
		t.Fatalf("got %+v", bh)
	}
	req := f.last("getLatestBlockhash")
	if req.Query.Get("token") != "secret" {
		t.Errorf("token not forwarded: %v", req.Query)
	}
	if req.Header.Get("Content-Type") != "application/json" {
		t.Errorf("content type %q", req.Header.Get("Content-Type"))
	}
	if c.URL() != url+"/" {
		t.Errorf("URL() = %q, want %q", c.URL(), url)
	}
	// Errors keep their types.
	var re *RPCError
	if _, err := c.GetSlot(testCtx, ""); !errors.As(err, &re) || re.Code != -32601 {
		t.Fatalf("err = %v", err)
	}
}

func TestHandlerTransportStatusAndBody(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.RequestURI != "/path?q=1" || r.Host != "node.example" || r.Method != http.MethodPost {
			t.Errorf("server view: %s %s host %s", r.Method, r.RequestURI, r.Host)
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, "slow down: "+string(body))
	})
	c, err := New("http://node.example/path?q=1", WithHandler(h))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetSlot(testCtx, "")
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != 429 || !strings.HasPrefix(he.Body, "slow down: {") {
		t.Fatalf("err = %v", err)
	}

	// A raw round trip: status line, headers, body, content length.
	tr := &HandlerTransport{Handler: h}
	req, _ := http.NewRequest(http.MethodPost, "http://node.example/path?q=1", strings.NewReader("x"))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Status != "429 Too Many Requests" || resp.Header.Get("Retry-After") != "1" || string(b) != "slow down: x" || resp.ContentLength != int64(len(b)) {
		t.Fatalf("resp %s %v %q %d", resp.Status, resp.Header, b, resp.ContentLength)
	}
	if _, err := resp.Body.Read(make([]byte, 1)); err == nil {
		t.Fatal("read after close succeeded")
	}
}

func TestHandlerTransportPanicAndCancel(t *testing.T) {
	c, err := New("http://node.example", WithHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom")
	})))
	if err != nil {
		t.Fatal(err)
	}
	var te *TransportError
	if _, err := c.GetSlot(testCtx, ""); !errors.As(err, &te) || !strings.Contains(te.Err.Error(), "panicked: boom") ||
		strings.Contains(err.Error(), "boom") {
		t.Fatalf("panic: err = %v", err)
	}

	ctx, cancel := context.WithCancel(testCtx)
	c, _ = New("http://node.example", WithHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cancel() // the caller gives up while the handler runs
		<-r.Context().Done()
	})))
	if _, err := c.GetSlot(ctx, ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: err = %v", err)
	}
	if _, err := c.GetSlot(ctx, ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("already canceled: err = %v", err)
	}
}
