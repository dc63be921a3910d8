package chainclient

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// fakeRPC is an httptest JSON-RPC server whose methods answer with canned
// raw JSON results or errors, recording every request.
type fakeRPC struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	handlers map[string]func(params json.RawMessage) (result any, rpcErr *RPCError)
	reqs     []fakeReq
}

type fakeReq struct {
	Method string
	Params json.RawMessage
	ID     json.RawMessage
	Query  url.Values
	Header http.Header
	Body   []byte
}

func newFake(t testing.TB) *fakeRPC {
	f := &fakeRPC{t: t, handlers: map[string]func(json.RawMessage) (any, *RPCError){}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRPC) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		f.t.Errorf("fake RPC: bad request body %q: %v", body, err)
		http.Error(w, "bad request", 400)
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, fakeReq{Method: req.Method, Params: req.Params, ID: req.ID, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
	h := f.handlers[req.Method]
	f.mu.Unlock()
	resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if h == nil {
		resp["error"] = RPCError{Code: -32601, Message: "Method not found"}
	} else if res, rerr := h(req.Params); rerr != nil {
		resp["error"] = rerr
	} else {
		resp["result"] = res
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// on registers a handler.
func (f *fakeRPC) on(method string, h func(params json.RawMessage) (any, *RPCError)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers[method] = h
}

// raw registers a method that always answers with the raw JSON result.
func (f *fakeRPC) raw(method, result string) {
	f.on(method, func(json.RawMessage) (any, *RPCError) { return json.RawMessage(result), nil })
}

func (f *fakeRPC) requests() []fakeReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeReq(nil), f.reqs...)
}

func (f *fakeRPC) count(method string) int {
	n := 0
	for _, r := range f.requests() {
		if r.Method == method {
			n++
		}
	}
	return n
}

// last returns the last request for method.
func (f *fakeRPC) last(method string) fakeReq {
	f.t.Helper()
	rs := f.requests()
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Method == method {
			return rs[i]
		}
	}
	f.t.Fatalf("no %s request recorded", method)
	return fakeReq{}
}

func (f *fakeRPC) client(t testing.TB, opts ...Option) *Client {
	t.Helper()
	c, err := New(f.srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// jsonEq compares two JSON documents semantically.
func jsonEq(t testing.TB, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("JSON mismatch\n got: %s\nwant: %s", gb, wb)
	}
}
