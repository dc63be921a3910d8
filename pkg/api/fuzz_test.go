package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"unicode/utf8"
)

// fuzzRoutes are the routes whose input is fuzzed: the body of POST
// routes, the query string of GET routes.
var fuzzRoutes = []struct{ method, path string }{
	{"POST", "/v1/spl/transfer"},
	{"POST", "/v1/spl/deposit"},
	{"POST", "/v1/spl/withdraw"},
	{"POST", "/v1/spl/initialize-mint"},
	{"POST", "/v1/spl/transfer-queue/ensure-crank"},
	{"POST", "/v1/spl/undelegate-ephemeral-ata"},
	{"POST", "/v1/spl/stealth-pool"},
	{"POST", "/v1/spl/login"},
	{"POST", "/v1/transaction/send"},
	{"POST", "/v1/swap/swap"},
	{"GET", "/v1/spl/balance"},
	{"GET", "/v1/spl/private-balance"},
	{"GET", "/v1/spl/is-mint-initialized"},
	{"GET", "/v1/spl/stealth-pool"},
	{"GET", "/v1/spl/challenge"},
	{"GET", "/v1/swap/quote"},
}

// FuzzHandlers sends arbitrary bodies (and query strings) to every route
// through the real handler, backed by the embedded ledgers (no network):
// nothing may panic, and every answer must be a well-formed envelope.
func FuzzHandlers(f *testing.F) {
	alice, bob, mint := pubOf(seedKey("alice")), pubOf(seedKey("bob")), pubOf(seedKey("mint"))
	seeds := map[string]string{
		"/v1/spl/transfer":                    transferBody(alice, bob, mint, "private", "base", "base", `,"split":3,"minDelayMs":"1","memo":"m"`),
		"/v1/spl/deposit":                     fmt.Sprintf(`{"owner":%q,"amount":5,"mint":%q,"initVaultIfMissing":true}`, alice, mint),
		"/v1/spl/withdraw":                    fmt.Sprintf(`{"owner":%q,"amount":5,"mint":%q,"idempotent":false}`, alice, mint),
		"/v1/spl/initialize-mint":             fmt.Sprintf(`{"payer":%q,"mint":%q}`, alice, mint),
		"/v1/spl/transfer-queue/ensure-crank": fmt.Sprintf(`{"mint":%q}`, mint),
		"/v1/spl/undelegate-ephemeral-ata":    fmt.Sprintf(`{"payer":%q,"mint":%q}`, alice, mint),
		"/v1/spl/stealth-pool":                fmt.Sprintf(`{"payer":%q,"authority":%q,"handle":"h","destinations":[%q]}`, alice, bob, bob),
		"/v1/spl/login":                       fmt.Sprintf(`{"pubkey":%q,"challenge":"c","signature":"s"}`, alice),
		"/v1/transaction/send":                `{"transactionBase64":"AQ==","sendTo":"ephemeral","confirm":false,"sendRpcEndpoint":"http://er.ferry.test"}`,
		"/v1/swap/swap":                       fmt.Sprintf(`{"userPublicKey":%q,"quoteResponse":{}}`, alice),
		"GET /v1/spl/balance":                 fmt.Sprintf("address=%s&mint=%s", alice, mint),
		"GET /v1/spl/private-balance":         fmt.Sprintf("address=%s&mint=%s&cluster=local", alice, mint),
		"GET /v1/spl/is-mint-initialized":     "mint=" + mint.String(),
		"GET /v1/spl/stealth-pool":            "handle=x%C3%A9",
		"GET /v1/spl/challenge":               "pubkey=" + alice.String() + "&mock=true",
		"GET /v1/swap/quote":                  "inputMint=" + alice.String() + "&outputMint=" + mint.String() + "&amount=1",
	}
	for i, r := range fuzzRoutes {
		key := r.path
		if r.method == "GET" {
			key = "GET " + r.path
		}
		f.Add(uint8(i), []byte(seeds[key]), "Bearer x")
	}
	f.Add(uint8(0), []byte(`{"amount":1e400,"from":null,"to":[],"split":-0}`), "")
	f.Add(uint8(8), []byte(`{"transactionBase64":"`+string(bytes.Repeat([]byte("A"), 1700))+`","sendTo":"base"}`), "Bearer "+alice.String()+".x")
	f.Add(uint8(6), []byte(`{"handle":"\ud800","destinations":[1]}`), "Bearer")

	// A swap upstream that cannot be reached: swaps get as far as the
	// upstream call (a 502), never a 500.
	h := newHarness(f, harnessOptions{offline: true, cfg: func(c *Config) {
		c.DisableBackgroundCrank = true
		c.Swap = SwapConfig{UpstreamURL: "http://swap.ferry.test/metis", HTTPClient: &http.Client{Transport: &guardTransport{offline: true}}}
	}})
	f.Fuzz(func(t *testing.T, which uint8, input []byte, authz string) {
		rt := fuzzRoutes[int(which)%len(fuzzRoutes)]
		var req *http.Request
		if rt.method == "GET" {
			req = httptest.NewRequest("GET", "/", nil)
			req.URL.Path, req.URL.RawQuery = rt.path, string(input)
		} else {
			req = httptest.NewRequest("POST", rt.path, bytes.NewReader(input))
			req.Header.Set("Content-Type", "application/json")
		}
		if utf8.ValidString(authz) {
			req.Header["Authorization"] = []string{authz}
		}
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, req)
		checkEnvelope(t, rec.Code, rec.Header(), rec.Body.Bytes())
	})
}

func checkEnvelope(t *testing.T, status int, hdr http.Header, body []byte) {
	t.Helper()
	if status == http.StatusInternalServerError {
		t.Fatalf("500: %s", body)
	}
	if ct := hdr.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	if status == http.StatusOK {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("200 with a non-object body %q", body)
		}
		return
	}
	var env struct {
		Error *struct {
			Code    *string          `json:"code"`
			Message *string          `json:"message"`
			Issues  []map[string]any `json:"issues"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&env); err != nil || env.Error == nil || env.Error.Code == nil || env.Error.Message == nil || *env.Error.Code == "" {
		t.Fatalf("%d: not an error envelope: %q", status, body)
	}
	if status == http.StatusUnprocessableEntity {
		if *env.Error.Code != "VALIDATION_ERROR" || len(env.Error.Issues) == 0 {
			t.Fatalf("422 without issues: %s", body)
		}
		for _, is := range env.Error.Issues {
			if _, ok := is["path"].([]any); !ok {
				t.Fatalf("issue without path: %s", body)
			}
		}
	}
	if status < 400 || status > 599 {
		t.Fatalf("status %d", status)
	}
}
