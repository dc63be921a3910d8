package api

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
)

// upstreamCall is one request a mock upstream received.
type upstreamCall struct {
	Upstream string // the mock's name
	// Method is the JSON-RPC method, or "GET /path" / "POST /path" for a
	// request that is not JSON-RPC (auth, swap).
	Method string
	Params json.RawMessage
	Query  url.Values
	Body   []byte
}

// key is the public key a JSON-RPC call is about (its first param), or
// "".
func (c upstreamCall) key() string {
	var ps []json.RawMessage
	if json.Unmarshal(c.Params, &ps) != nil || len(ps) == 0 {
		return ""
	}
	var s string
	json.Unmarshal(ps[0], &s)
	if _, err := solana.PublicKeyFromBase58(s); err != nil {
		return ""
	}
	return s
}

// callLog records the calls of every mock upstream of a test, in order.
type callLog struct {
	mu    sync.Mutex
	calls []upstreamCall
}

func (l *callLog) add(c upstreamCall) {
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
}

func (l *callLog) all() []upstreamCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

func (l *callLog) reset() {
	l.mu.Lock()
	l.calls = nil
	l.mu.Unlock()
}

// pattern renders the calls as "upstream method[ key]" lines, the key
// being named through names (base58 → label) when known.
func (l *callLog) pattern(names map[string]string) []string {
	var out []string
	for _, c := range l.all() {
		s := c.Upstream + " " + c.Method
		if k := c.key(); k != "" {
			if n, ok := names[k]; ok {
				k = n
			}
			s += " " + k
		}
		out = append(out, s)
	}
	return out
}

// count is the number of calls of method on upstream ("" for any).
func (l *callLog) count(upstream, method string) int {
	n := 0
	for _, c := range l.all() {
		if (upstream == "" || c.Upstream == upstream) && c.Method == method {
			n++
		}
	}
	return n
}

// rpcFail is a JSON-RPC error answer; with HTTPStatus, an HTTP error
// whose body is Message instead.
type rpcFail struct {
	Code       int    `json:"code"`
	Message    string `json:"message"`
	Data       any    `json:"data,omitempty"`
	HTTPStatus int    `json:"-"`
}

// rpcHandler answers one JSON-RPC method: a result (marshalled as JSON),
// or an error.
type rpcHandler func(params []json.RawMessage, q url.Values) (any, *rpcFail)

// mockUpstream is a JSON-RPC node (and any plain HTTP routes) over HTTP
// that records every request in a shared callLog. Unknown methods are
// -32601.
type mockUpstream struct {
	name string
	*httptest.Server
	log *callLog

	mu   sync.Mutex
	rpc  map[string]rpcHandler
	http map[string]http.HandlerFunc // "GET /auth/challenge" → handler
}

func newMockUpstream(t testing.TB, name string, log *callLog) *mockUpstream {
	m := &mockUpstream{name: name, log: log, rpc: map[string]rpcHandler{}, http: map[string]http.HandlerFunc{}}
	m.Server = httptest.NewServer(m)
	t.Cleanup(m.Close)
	return m
}

// on sets the handler of a JSON-RPC method.
func (m *mockUpstream) on(method string, h rpcHandler) *mockUpstream {
	m.mu.Lock()
	m.rpc[method] = h
	m.mu.Unlock()
	return m
}

// onHTTP sets the handler of a plain HTTP route ("GET /auth/challenge").
func (m *mockUpstream) onHTTP(route string, h http.HandlerFunc) *mockUpstream {
	m.mu.Lock()
	m.http[route] = h
	m.mu.Unlock()
	return m
}

// result answers method with a fixed result.
func (m *mockUpstream) result(method string, v any) *mockUpstream {
	return m.on(method, func([]json.RawMessage, url.Values) (any, *rpcFail) { return v, nil })
}

func (m *mockUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	route := r.Method + " " + strings.TrimSuffix(r.URL.Path, "/")
	m.mu.Lock()
	h, plain := m.http[route]
	m.mu.Unlock()
	if plain || r.Method != http.MethodPost || !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		m.log.add(upstreamCall{Upstream: m.name, Method: route, Query: r.URL.Query(), Body: body})
		if !plain {
			http.Error(w, "no such route", http.StatusNotFound)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(w, r)
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "not JSON-RPC", http.StatusBadRequest)
		return
	}
	m.log.add(upstreamCall{Upstream: m.name, Method: req.Method, Params: req.Params, Query: r.URL.Query(), Body: body})
	m.mu.Lock()
	rh := m.rpc[req.Method]
	m.mu.Unlock()
	var ps []json.RawMessage
	json.Unmarshal(req.Params, &ps)
	resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if rh == nil {
		resp["error"] = rpcFail{Code: -32601, Message: "Method not found"}
	} else if v, fail := rh(ps, r.URL.Query()); fail != nil && fail.HTTPStatus != 0 {
		http.Error(w, fail.Message, fail.HTTPStatus)
		return
	} else if fail != nil {
		resp["error"] = fail
	} else {
		resp["result"] = v
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// JSON-RPC result shapes.

func withContext(v any) map[string]any {
	return map[string]any{"context": map[string]any{"slot": 1}, "value": v}
}

// acct is an account as getAccountInfo shows it.
type acct struct {
	Owner    solana.PublicKey
	Lamports uint64
	Data     []byte
}

func (a *acct) json() any {
	if a == nil {
		return nil
	}
	return map[string]any{"lamports": a.Lamports, "owner": a.Owner.String(), "executable": false, "rentEpoch": 0,
		"space": len(a.Data), "data": []string{base64.StdEncoding.EncodeToString(a.Data), "base64"}}
}

// accounts answers getAccountInfo and getMultipleAccounts from a map
// (missing keys are null).
func (m *mockUpstream) accounts(set map[solana.PublicKey]*acct) *mockUpstream {
	var mu sync.Mutex
	get := func(s string) any {
		k, err := solana.PublicKeyFromBase58(s)
		if err != nil {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		return set[k].json()
	}
	m.on("getAccountInfo", func(ps []json.RawMessage, _ url.Values) (any, *rpcFail) {
		var s string
		json.Unmarshal(ps[0], &s)
		return withContext(get(s)), nil
	})
	return m.on("getMultipleAccounts", func(ps []json.RawMessage, _ url.Values) (any, *rpcFail) {
		var keys []string
		json.Unmarshal(ps[0], &keys)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = get(k)
		}
		return withContext(out), nil
	})
}

// blockhash answers getLatestBlockhash.
func (m *mockUpstream) blockhash(h solana.Hash, lastValid uint64) *mockUpstream {
	return m.result("getLatestBlockhash", withContext(map[string]any{"blockhash": h.String(), "lastValidBlockHeight": lastValid}))
}

// identity answers getIdentity.
func (m *mockUpstream) identity(id solana.PublicKey) *mockUpstream {
	return m.result("getIdentity", map[string]any{"identity": id.String()})
}

// gateway is the payments API wired as `ferry serve --cluster NAME` wires
// it in gateway mode (pkg/server buildGateway): the hosted API's
// environment variables (FromEnv) pick the endpoints, every upstream is
// reached over HTTP, and nothing but loopback can be dialled.
type gateway struct {
	t   testing.TB
	srv *Server
	env EnvConfig
}

type gatewayOptions struct {
	cluster string            // --cluster; default mainnet
	base    cluster.Overrides // ferry's own configuration (config file, flags)
	cfg     func(*Config)
	allow   []string
	now     func() time.Time
}

func newGateway(t testing.TB, env map[string]string, opts ...gatewayOptions) *gateway {
	t.Helper()
	var o gatewayOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.cluster == "" {
		o.cluster = "mainnet"
	}
	ec, err := FromEnv(func(k string) string { return env[k] }, o.base)
	if err != nil {
		t.Fatal(err)
	}
	guard := &http.Client{Transport: &guardTransport{}, CheckRedirect: chainclient.SameOriginRedirects}
	cs, err := NewClusters(ClustersConfig{Default: o.cluster, Overrides: ec.Overrides, AllowUpstream: o.allow,
		ClientOptions: []chainclient.Option{chainclient.WithHTTPClient(guard)}})
	if err != nil {
		t.Fatal(err)
	}
	_, key, _ := ed25519.GenerateKey(nil)
	now := o.now
	if now == nil {
		now = time.Now
	}
	a, err := auth.New(auth.Config{Key: key, HTTPClient: guard, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Clusters: cs, Sponsor: ec.Sponsor, Auth: a, CORSOrigin: ec.CORSOrigin, Now: now,
		Swap:                SwapConfig{UpstreamURL: ec.SwapUpstream, HTTPClient: guard},
		Logger:              slog.New(slog.DiscardHandler),
		ConfirmPollInterval: time.Millisecond,
	}
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &gateway{t: t, srv: srv, env: ec}
}

// do sends a request through the gateway's handler.
func (g *gateway) do(method, path string, body any, headers ...string) *response {
	g.t.Helper()
	return serve(g.t, g.srv, method, path, body, headers...)
}

// serve sends one request to h and records the response.
func serve(t testing.TB, h http.Handler, method, path string, body any, headers ...string) *response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// wantError asserts an error envelope with status, code and exact
// message.
func wantError(t testing.TB, r *response, status int, code, message string) map[string]any {
	t.Helper()
	e := apiError(t, r, status, code)
	if e["message"] != message {
		t.Fatalf("message %q, want %q", e["message"], message)
	}
	return e
}

// wantCalls asserts the exact call pattern.
func wantCalls(t testing.TB, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("upstream calls:\n  got  %s\n  want %s", strings.Join(got, "\n       "), strings.Join(want, "\n       "))
	}
}

func fmtKey(k solana.PublicKey) string { return fmt.Sprint(k) }
