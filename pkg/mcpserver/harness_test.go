package mcpserver_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/api"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/mcpserver"
	"github.com/ferry-sh/ferry/pkg/router"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// Endpoint URLs of the embedded pair. They do not resolve: everything is
// served in-process, so a request that is not fails instead of reaching
// some other node.
const (
	testBaseURL   = "http://base.ferry.test"
	testERURL     = "http://er.ferry.test"
	testRouterURL = "http://router.ferry.test"
	// testBrokenURL answers every RPC call with HTTP 500.
	testBrokenURL = "http://broken.ferry.test"
)

func seedKey(label string) ed25519.PrivateKey {
	s := sha256.Sum256([]byte("ferry-mcp-test:" + label))
	return ed25519.NewKeyFromSeed(s[:])
}

func pubOf(k ed25519.PrivateKey) solana.PublicKey { return solana.PublicKeyFromBytes(k[32:]) }

var erIdentityKey = seedKey("er identity")

// env is ferry's payments API with the MCP endpoint mounted, over an
// embedded base ledger, an embedded ephemeral ledger and a local router,
// served on a real loopback listener.
type env struct {
	t       *testing.T
	base    *ledger.Ledger
	er      *ledger.Ledger
	api     *api.Server
	mcp     *mcpserver.Handler
	srv     *httptest.Server
	mint    solana.PublicKey
	logs    *syncBuffer
	baseRPC *chainclient.Client
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

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, logs: &syncBuffer{}}
	var err error
	e.base, err = ledger.Open(ledger.Config{Name: "mcp-base", SlotDuration: 10 * time.Millisecond, FinalityDepth: 2})
	if err != nil {
		t.Fatalf("open base ledger: %v", err)
	}
	t.Cleanup(func() { e.base.Close() })
	e.er, err = ledger.Open(ledger.Config{Name: "mcp-er", SlotDuration: 10 * time.Millisecond, FinalityDepth: 2,
		LamportsPerSignature: -1, Identity: erIdentityKey})
	if err != nil {
		t.Fatalf("open ephemeral ledger: %v", err)
	}
	t.Cleanup(func() { e.er.Close() })
	baseH := rpcserver.New(e.base, rpcserver.Options{})
	erH := rpcserver.New(e.er, rpcserver.Options{})
	e.baseRPC, _ = chainclient.New(testBaseURL, chainclient.WithHandler(baseH))
	erRPC, _ := chainclient.New(testERURL, chainclient.WithHandler(erH))
	reg, err := router.NewLocal(router.LocalConfig{
		Identity: pubOf(erIdentityKey), URL: testERURL,
		Blockhash:     router.RPCBlockhash{Client: erRPC, Commitment: chainclient.Confirmed},
		Base:          router.RPCAccounts{Client: e.baseRPC, Commitment: chainclient.Confirmed},
		BaseBlockhash: router.RPCBlockhash{Client: e.baseRPC, Commitment: chainclient.Confirmed},
	})
	if err != nil {
		t.Fatalf("create router: %v", err)
	}
	clusters, err := api.NewClusters(api.ClustersConfig{
		Overrides: cluster.Overrides{PerCluster: map[string]cluster.Overrides{
			"local": {BaseRPC: testBaseURL, Ephemeral: testERURL, Router: testRouterURL},
		}},
		InProcess: map[string]http.Handler{testBaseURL: baseH, testERURL: erH, testRouterURL: &router.Handler{Backend: reg},
			testBrokenURL: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "node is down", http.StatusInternalServerError)
			})},
		Cache: chainclient.CacheOptions{BlockhashTTL: 20 * time.Millisecond},
	})
	if err != nil {
		t.Fatalf("create clusters: %v", err)
	}
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.api, err = api.New(api.Config{Clusters: clusters, Logger: log, ConfirmPollInterval: 5 * time.Millisecond, DisableBackgroundCrank: true})
	if err != nil {
		t.Fatalf("create API: %v", err)
	}
	t.Cleanup(func() { e.api.Close() })
	e.mcp, err = mcpserver.New(mcpserver.Config{Service: e.api.Service(), Clusters: clusters, Logger: log})
	if err != nil {
		t.Fatalf("create MCP endpoint: %v", err)
	}
	e.mcp.Mount(e.api)
	e.srv = httptest.NewServer(e.api)
	t.Cleanup(e.srv.Close)

	mint, _, err := e.base.Faucet().CreateMint(t.Context(), ledger.MintOptions{Decimals: 6, Key: seedKey("mint")})
	if err != nil {
		t.Fatalf("create mint: %v", err)
	}
	e.mint = mint
	e.settle()
	return e
}

// settle waits until everything processed so far is confirmed on both
// ledgers.
func (e *env) settle() {
	e.t.Helper()
	for _, l := range []*ledger.Ledger{e.base, e.er} {
		if err := l.WaitForSlot(e.t.Context(), l.Slot(ledger.Processed), ledger.Confirmed); err != nil {
			e.t.Fatalf("settle: %v", err)
		}
	}
}

// fund gives a wallet SOL and tokens of the test mint on base.
func (e *env) fund(owner solana.PublicKey, tokens uint64) {
	e.t.Helper()
	ctx := e.t.Context()
	if _, err := e.base.Faucet().Airdrop(ctx, owner, 1_000_000_000); err != nil {
		e.t.Fatalf("airdrop: %v", err)
	}
	if tokens > 0 {
		if _, err := e.base.Faucet().MintTo(ctx, e.mint, owner, tokens); err != nil {
			e.t.Fatalf("mint to: %v", err)
		}
	}
	e.settle()
}

// headerTransport adds headers to every request of a client.
type headerTransport struct {
	header http.Header
	next   http.RoundTripper
}

func (h *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range h.header {
		r.Header[k] = vs
	}
	return h.next.RoundTrip(r)
}

// connect opens a Go SDK client session at protocol version (empty: the
// SDK's default), with extra HTTP headers on every request.
func (e *env) connect(version string, header http.Header) *mcp.ClientSession {
	e.t.Helper()
	hc := e.srv.Client()
	if header != nil {
		hc = &http.Client{Transport: &headerTransport{header: header, next: e.srv.Client().Transport}}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "ferry-mcp-test", Version: "1.0.0"}, nil)
	cs, err := c.Connect(e.t.Context(), &mcp.StreamableClientTransport{
		Endpoint: e.srv.URL + mcpserver.Path, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		e.t.Fatalf("connect at %q: %v", version, err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

// rawResponse is a recorded HTTP response.
type rawResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends a raw HTTP request to the test server. headers are name/value
// pairs; an empty value deletes the header.
func (e *env) do(method, path, body string, headers ...string) *rawResponse {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
		} else if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("read %s %s: %v", method, path, err)
	}
	return &rawResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// rest calls a REST route with a JSON body (POST) or query (GET).
func (e *env) rest(method, path string, body any) *rawResponse {
	e.t.Helper()
	if method == http.MethodGet {
		return e.do(method, path+queryOf(e.t, body), "")
	}
	b, err := json.Marshal(body)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.do(method, path, string(b))
}

// expectations is testdata/mcp/expectations.json, shared with the
// TypeScript client check that .ci/run runs against `ferry serve`.
type expectations struct {
	ServerInfo   map[string]any `json:"serverInfo"`
	Capabilities map[string]any `json:"capabilities"`
	Tools        []struct {
		Name     string   `json:"name"`
		Title    string   `json:"title"`
		Required []string `json:"required"`
		Text     string   `json:"text"`
	} `json:"tools"`
	Transfer struct {
		Tool                  string         `json:"tool"`
		Arguments             map[string]any `json:"arguments"`
		Text                  string         `json:"text"`
		StructuredContentKeys []string       `json:"structuredContentKeys"`
		StructuredContent     map[string]any `json:"structuredContent"`
	} `json:"transfer"`
	TransferInvalid struct {
		Tool       string         `json:"tool"`
		Arguments  map[string]any `json:"arguments"`
		HTTPStatus int            `json:"httpStatus"`
		Text       string         `json:"text"`
		Error      map[string]any `json:"error"`
	} `json:"transferInvalid"`
}

func loadExpectations(t *testing.T) *expectations {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mcp", "expectations.json"))
	if err != nil {
		t.Fatalf("read expectations: %v", err)
	}
	var x expectations
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatalf("parse expectations: %v", err)
	}
	return &x
}

// login runs the REST challenge/login flow for key and returns the bearer
// token.
func (e *env) login(key ed25519.PrivateKey) string {
	e.t.Helper()
	pk := pubOf(key).String()
	var ch struct{ Challenge string }
	if r := e.do(http.MethodGet, "/v1/spl/challenge?pubkey="+pk, ""); r.Status != 200 || json.Unmarshal(r.Body, &ch) != nil {
		e.t.Fatalf("challenge: %d %s", r.Status, r.Body)
	}
	body, _ := json.Marshal(map[string]string{"pubkey": pk, "challenge": ch.Challenge,
		"signature": base58.Encode(ed25519.Sign(key, []byte(ch.Challenge)))})
	var lr struct{ Token string }
	if r := e.do(http.MethodPost, "/v1/spl/login", string(body)); r.Status != 200 || json.Unmarshal(r.Body, &lr) != nil {
		e.t.Fatalf("login: %d %s", r.Status, r.Body)
	}
	return lr.Token
}
