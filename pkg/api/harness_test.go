package api

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/router"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Endpoint URLs of the test pair. They do not resolve: a request that is
// not served in-process fails instead of reaching some other node.
const (
	testBaseURL   = "http://base.ferry.test"
	testERURL     = "http://er.ferry.test"
	testRouterURL = "http://router.ferry.test"
)

func seedKey(label string) ed25519.PrivateKey {
	s := sha256.Sum256([]byte("ferry-api-test:" + label))
	return ed25519.NewKeyFromSeed(s[:])
}

func pubOf(k ed25519.PrivateKey) solana.PublicKey { return solana.PublicKeyFromBytes(k[32:]) }

var (
	erIdentityKey = seedKey("er identity")
	erIdentity    = pubOf(erIdentityKey)
)

// harness is the payments API over an embedded base ledger and ephemeral
// ledger (plus a router), all reached in-process.
type harness struct {
	t        testing.TB
	base     *ledger.Ledger
	er       *ledger.Ledger
	srv      *Server
	clusters *Clusters
	logs     *syncBuffer
	mint     solana.PublicKey
	baseRPC  *chainclient.Client
	erRPC    *chainclient.Client

	mu        sync.Mutex
	erQueries []string // raw queries of requests the ER served
}

func (h *harness) erQueryLog() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.erQueries...)
}

type harnessOptions struct {
	// offline refuses every connection that is not served in-process
	// (fuzzing); by default only loopback addresses are reachable.
	offline   bool
	cfg       func(*Config)
	overrides map[string]cluster.Overrides // extra PerCluster overrides
	inProcess map[string]http.Handler
	allow     []string               // ClustersConfig.AllowUpstream
	health    map[string]HealthCheck // ClustersConfig.Health
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func newHarness(t testing.TB, opts ...harnessOptions) *harness {
	t.Helper()
	base, err := ledger.Open(ledger.Config{Name: "api-base", SlotDuration: 10 * time.Millisecond, FinalityDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { base.Close() })
	er, err := ledger.Open(ledger.Config{Name: "api-er", SlotDuration: 10 * time.Millisecond, FinalityDepth: 2,
		LamportsPerSignature: -1, Identity: erIdentityKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { er.Close() })
	h := newHarnessOver(t, base, er, rpcserver.New(base, rpcserver.Options{}), rpcserver.New(er, rpcserver.Options{}), erIdentity, opts...)
	mint, _, err := base.Faucet().CreateMint(t.Context(), ledger.MintOptions{Decimals: 6, Key: seedKey("mint")})
	if err != nil {
		t.Fatal(err)
	}
	h.mint = mint
	h.settle()
	return h
}

// newHarnessOver serves the API over given ledgers and their JSON-RPC
// handlers (an embedded pair, or a localnet.Pair), with a local router.
func newHarnessOver(t testing.TB, base, er *ledger.Ledger, baseH, erH http.Handler, identity solana.PublicKey, opts ...harnessOptions) *harness {
	t.Helper()
	var o harnessOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	h := &harness{t: t, logs: &syncBuffer{}, base: base, er: er}
	var err error
	h.baseRPC, _ = chainclient.New(testBaseURL, chainclient.WithHandler(baseH))
	h.erRPC, _ = chainclient.New(testERURL, chainclient.WithHandler(erH))
	reg, err := router.NewLocal(router.LocalConfig{
		Identity: identity, URL: testERURL,
		Blockhash:     router.RPCBlockhash{Client: h.erRPC, Commitment: chainclient.Confirmed},
		Base:          router.RPCAccounts{Client: h.baseRPC, Commitment: chainclient.Confirmed},
		BaseBlockhash: router.RPCBlockhash{Client: h.baseRPC, Commitment: chainclient.Confirmed},
	})
	if err != nil {
		t.Fatal(err)
	}
	recordER := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.erQueries = append(h.erQueries, r.URL.RawQuery)
		h.mu.Unlock()
		erH.ServeHTTP(w, r)
	})
	inProc := map[string]http.Handler{testBaseURL: baseH, testERURL: recordER, testRouterURL: &router.Handler{Backend: reg}}
	for k, v := range o.inProcess {
		inProc[k] = v
	}
	per := map[string]cluster.Overrides{"local": {BaseRPC: testBaseURL, Ephemeral: testERURL, Router: testRouterURL}}
	for k, v := range o.overrides {
		per[k] = v
	}
	// Tests never leave the machine: only loopback (or nothing) is dialled.
	guard := &http.Client{Transport: &guardTransport{offline: o.offline}}
	h.clusters, err = NewClusters(ClustersConfig{Overrides: cluster.Overrides{PerCluster: per}, InProcess: inProc,
		AllowUpstream: o.allow, Health: o.health,
		Cache: chainclient.CacheOptions{BlockhashTTL: 20 * time.Millisecond}, ClientOptions: []chainclient.Option{chainclient.WithHTTPClient(guard)}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Clusters:            h.clusters,
		Logger:              slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		ConfirmPollInterval: 5 * time.Millisecond,
	}
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	h.srv, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.srv.Close() })
	return h
}

// guardTransport refuses requests to anything but loopback addresses (or
// to anything at all when offline).
type guardTransport struct{ offline bool }

func (g *guardTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	host := r.URL.Hostname()
	if g.offline || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, fmt.Errorf("test transport: %s is not reachable from tests", host)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// settle waits until everything processed so far is confirmed on both
// ledgers.
func (h *harness) settle() {
	h.t.Helper()
	ctx := h.t.Context()
	for _, l := range []*ledger.Ledger{h.base, h.er} {
		if err := l.WaitForSlot(ctx, l.Slot(ledger.Processed), ledger.Confirmed); err != nil {
			h.t.Fatal(err)
		}
	}
}

// fund gives a wallet SOL and tokens of the test mint on base.
func (h *harness) fund(owner solana.PublicKey, tokens uint64) {
	h.t.Helper()
	ctx := h.t.Context()
	if _, err := h.base.Faucet().Airdrop(ctx, owner, 1_000_000_000); err != nil {
		h.t.Fatal(err)
	}
	if tokens > 0 {
		if _, err := h.base.Faucet().MintTo(ctx, h.mint, owner, tokens); err != nil {
			h.t.Fatal(err)
		}
	}
	h.settle()
}

// put writes accounts directly (delegation records, pools, queues).
func (h *harness) put(l *ledger.Ledger, accts map[solana.PublicKey]*ledger.Account) {
	h.t.Helper()
	_, err := l.Apply(h.t.Context(), func(w ledger.AccountWriter) error {
		for k, a := range accts {
			w.Set(k, a)
		}
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.settle()
}

// response is a recorded HTTP response.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r *response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %q (%v)", r.Body, err)
	}
	return m
}

// do sends a request through the server's handler.
func (h *harness) do(method, path string, body any, headers ...string) *response {
	h.t.Helper()
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
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequestWithContext(h.t.Context(), method, path, rd)
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
	h.srv.ServeHTTP(rec, req)
	return &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// ok asserts a 200 and decodes the body into T.
func ok[T any](t testing.TB, r *response) *T {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	v := new(T)
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	return v
}

// apiError asserts an error envelope with status and code.
func apiError(t testing.TB, r *response, status int, code string) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	var env struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil || env.Error == nil {
		t.Fatalf("not an error envelope: %s", r.Body)
	}
	if env.Error["code"] != code {
		t.Fatalf("code %v, want %s: %s", env.Error["code"], code, r.Body)
	}
	if _, ok := env.Error["message"].(string); !ok {
		t.Fatalf("no message: %s", r.Body)
	}
	return env.Error
}

// sign signs a build response's transaction with keys.
func sign(t *testing.T, out *payments.UnsignedTransaction, keys ...ed25519.PrivateKey) string {
	t.Helper()
	tx, err := txwire.DecodeBase64(out.TransactionBase64)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Sign(keys...); err != nil {
		t.Fatal(err)
	}
	return tx.Base64()
}

// send submits a signed build through /v1/transaction/send with confirm.
func (h *harness) send(out *payments.UnsignedTransaction, signed string, headers ...string) *response {
	h.t.Helper()
	body := map[string]any{"transactionBase64": signed, "sendTo": out.SendTo, "confirm": true,
		"recentBlockhash": out.RecentBlockhash, "lastValidBlockHeight": out.LastValidBlockHeight}
	if out.SendRPCEndpoint != "" {
		body["sendRpcEndpoint"] = out.SendRPCEndpoint
	}
	return h.do("POST", "/v1/transaction/send", body, headers...)
}

// login runs the challenge/login flow for key and returns the token.
func (h *harness) login(key ed25519.PrivateKey) string {
	h.t.Helper()
	pk := pubOf(key).String()
	ch := ok[auth.ChallengeResponse](h.t, h.do("GET", "/v1/spl/challenge?pubkey="+pk, nil))
	sig := base58.Encode(ed25519.Sign(key, []byte(ch.Challenge)))
	lr := ok[auth.LoginResponse](h.t, h.do("POST", "/v1/spl/login", map[string]string{"pubkey": pk, "challenge": ch.Challenge, "signature": sig}))
	return lr.Token
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
