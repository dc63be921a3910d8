package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestErrorContract(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: func(c *Config) { c.MaxBodyBytes = 1024 }})

	// Unknown route.
	r := h.do("GET", "/v1/nope", nil)
	if r.Status != 404 || string(r.Body) != `{"error":{"code":"NOT_FOUND","message":"Route not found"}}` {
		t.Fatalf("404: %d %s", r.Status, r.Body)
	}
	// Wrong method: 405 with Allow.
	r = h.do("GET", "/v1/spl/transfer", nil)
	apiError(t, r, 405, "METHOD_NOT_ALLOWED")
	if r.Header.Get("Allow") != "OPTIONS, POST" {
		t.Fatalf("Allow %q", r.Header.Get("Allow"))
	}
	r = h.do("DELETE", "/v1/spl/stealth-pool", nil)
	if apiError(t, r, 405, "METHOD_NOT_ALLOWED"); r.Header.Get("Allow") != "GET, HEAD, OPTIONS, POST" {
		t.Fatalf("Allow %q", r.Header.Get("Allow"))
	}
	// Oversized body.
	big := `{"memo":"` + strings.Repeat("x", 2000) + `"}`
	apiError(t, h.do("POST", "/v1/spl/transfer", big), 413, "PAYLOAD_TOO_LARGE")
	// Non-JSON body.
	apiError(t, h.do("POST", "/v1/spl/transfer", "from=x", "Content-Type", "application/x-www-form-urlencoded"), 415, "UNSUPPORTED_MEDIA_TYPE")
	apiError(t, h.do("POST", "/v1/spl/transfer", "{}", "Content-Type", ""), 415, "UNSUPPORTED_MEDIA_TYPE")
	// JSON with parameters and +json types are JSON.
	apiError(t, h.do("POST", "/v1/spl/transfer", "{}", "Content-Type", "application/json; charset=utf-8"), 422, "VALIDATION_ERROR")
	apiError(t, h.do("POST", "/v1/spl/transfer", "{}", "Content-Type", "application/vnd.api+json"), 422, "VALIDATION_ERROR")
	// An empty body is {}.
	e := apiError(t, h.do("POST", "/v1/spl/initialize-mint", "", "Content-Type", ""), 422, "VALIDATION_ERROR")
	if e["message"] != "Missing required fields: payer, mint" {
		t.Fatal(e["message"])
	}
	// Malformed JSON.
	e = apiError(t, h.do("POST", "/v1/spl/transfer", `{"from":`), 400, "INVALID_JSON")
	if e["message"] != "Malformed JSON in request body" || e["details"] == nil {
		t.Fatal(e)
	}
	apiError(t, h.do("POST", "/v1/spl/transfer", `{} {}`), 400, "INVALID_JSON")
	// A body that is JSON but not an object.
	e = apiError(t, h.do("POST", "/v1/spl/transfer", `[1]`), 422, "VALIDATION_ERROR")
	if e["message"] != "Request validation failed" {
		t.Fatal(e)
	}

	// The reference's example: balance without its query parameters.
	r = h.do("GET", "/v1/spl/balance", nil)
	want := `{"error":{"code":"VALIDATION_ERROR","message":"Missing required fields: address, mint","issues":[{"code":"invalid_type","message":"address is required","path":["address"]},{"code":"invalid_type","message":"mint is required","path":["mint"]}]}}`
	if r.Status != 422 || string(r.Body) != want {
		t.Fatalf("balance: %d %s", r.Status, r.Body)
	}
	// The interface spec's example: confirm without blockhash is a 422.
	r = h.do("POST", "/v1/transaction/send", `{"transactionBase64":"AQ==","sendTo":"base","confirm":true}`)
	e = apiError(t, r, 422, "VALIDATION_ERROR")
	issues := e["issues"].([]any)
	if len(issues) != 2 || issues[0].(map[string]any)["path"].([]any)[0] != "recentBlockhash" || issues[1].(map[string]any)["path"].([]any)[0] != "lastValidBlockHeight" {
		t.Fatalf("issues %v", issues)
	}
	e = apiError(t, h.do("POST", "/v1/transaction/send", `{"transactionBase64":"AQ==","sendTo":"base","sendRpcEndpoint":"https://er.example"}`), 422, "VALIDATION_ERROR")
	if e["issues"].([]any)[0].(map[string]any)["message"] != "sendRpcEndpoint can only be used when sendTo is ephemeral" {
		t.Fatal(e)
	}
	// Invalid values: zod-style issues.
	e = apiError(t, h.do("GET", "/v1/spl/balance?address=nope&mint=x", nil), 422, "VALIDATION_ERROR")
	if e["message"] != "Request validation failed" || e["issues"].([]any)[0].(map[string]any)["message"] != "Invalid public key" {
		t.Fatal(e)
	}
	// Invalid cluster.
	pk := pubOf(seedKey("alice")).String()
	e = apiError(t, h.do("GET", "/v1/spl/balance?address="+pk+"&mint="+h.mint.String()+"&cluster=moon", nil), 400, "INVALID_CLUSTER")
	if e["message"] != `cluster must be "mainnet", "devnet", "mainnet-private", "devnet-private", or a valid http(s) URL` {
		t.Fatal(e["message"])
	}
	apiError(t, h.do("POST", "/v1/spl/deposit", fmt.Sprintf(`{"owner":%q,"amount":1,"cluster":"ftp://x"}`, pk)), 400, "INVALID_CLUSTER")
}

func TestInternalErrorsDoNotLeak(t *testing.T) {
	h := newHarness(t)
	h.srv.Handle(Operation{Method: "GET", Path: "/boom"}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret database password at http://internal.example/?token=abc")
	}), true)
	r := h.do("GET", "/boom", nil)
	if r.Status != 500 || string(r.Body) != `{"error":{"code":"INTERNAL_ERROR","message":"Unexpected server error"}}` {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, `"status":500`) || !strings.Contains(logs, "[redacted-url]") || strings.Contains(logs, "token=abc") {
		t.Fatalf("log: %s", logs)
	}
	// A plain error from a service is a 500 without details.
	rec := &responseWriter{ResponseWriter: newRecorder()}
	h.srv.writeError(rec, nil, errors.New("dial tcp 10.1.2.3:8899: connection refused"))
	if rec.status != 500 || !strings.Contains(rec.ResponseWriter.(*recorderRW).body.String(), `"Unexpected server error"`) {
		t.Fatal(rec.status)
	}
}

func TestRedactsURLsInMessages(t *testing.T) {
	h := newHarness(t, harnessOptions{allow: []string{"http://127.0.0.1:*"}})
	// A custom cluster URL that cannot be reached: the message must not
	// name it (the hosted API's "redacts RPC URLs").
	pk := pubOf(seedKey("alice")).String()
	r := h.do("GET", "/v1/spl/balance?address="+pk+"&mint="+h.mint.String()+"&cluster=http://127.0.0.1:1/rpc?api-key=SECRET", nil)
	e := apiError(t, r, 502, "RPC_ERROR")
	if strings.Contains(string(r.Body), "http://127.0.0.1") || strings.Contains(string(r.Body), "SECRET") || !strings.Contains(string(r.Body), "[redacted-url]") {
		t.Fatalf("%s", r.Body)
	}
	if e["message"] != "Failed to resolve mint token program" {
		t.Fatal(e["message"])
	}
	if logs := h.logs.String(); strings.Contains(logs, "SECRET") || strings.Contains(logs, "api-key") {
		t.Fatalf("query logged: %s", logs)
	}
}

func TestCORSAndPreflight(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/health", nil, "Origin", "https://app.example")
	if r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatal(r.Header)
	}
	r = h.do("OPTIONS", "/v1/spl/transfer", nil, "Origin", "https://app.example", "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "content-type,authorization")
	if r.Status != 204 || r.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		r.Header.Get("Access-Control-Allow-Headers") != "content-type,authorization" {
		t.Fatalf("%d %v", r.Status, r.Header)
	}
	if r := h.do("OPTIONS", "/v1/spl/transfer", nil); r.Status != 204 || r.Header.Get("Allow") != "OPTIONS, POST" {
		t.Fatalf("plain OPTIONS %d %v", r.Status, r.Header)
	}

	h2 := newHarness(t, harnessOptions{cfg: func(c *Config) { c.CORSOrigin = "https://a.example, https://b.example" }})
	if got := h2.do("GET", "/health", nil, "Origin", "https://b.example").Header.Get("Access-Control-Allow-Origin"); got != "https://b.example" {
		t.Fatalf("allowed origin %q", got)
	}
	r = h2.do("GET", "/health", nil, "Origin", "https://evil.example")
	if got := r.Header.Get("Access-Control-Allow-Origin"); got != "" || r.Header.Get("Vary") != "Origin" {
		t.Fatalf("other origin %q", got)
	}
}

func TestRequestLogAndIDs(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/v1/spl/balance?address=x&mint=y", nil, "X-Request-Id", "client-id-1", "Authorization", "Bearer supersecret")
	if r.Header.Get("X-Request-Id") != "client-id-1" {
		t.Fatal(r.Header)
	}
	r = h.do("GET", "/health", nil, "X-Request-Id", "bad id with spaces")
	gen := r.Header.Get("X-Request-Id")
	if gen == "" || strings.Contains(gen, " ") {
		t.Fatal(gen)
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "http request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d request lines: %s", len(lines), h.logs.String())
	}
	l := lines[0]
	if l["id"] != "client-id-1" || l["method"] != "GET" || l["path"] != "/v1/spl/balance" || l["status"] != 422.0 || l["duration"] == nil {
		t.Fatalf("%v", l)
	}
	if lines[1]["id"] != gen {
		t.Fatal(lines[1])
	}
	if strings.Contains(h.logs.String(), "supersecret") || strings.Contains(h.logs.String(), "address=x") {
		t.Fatal("log carries secrets or queries")
	}
}

// recorderRW is a minimal http.ResponseWriter for direct writeError calls.
type recorderRW struct {
	h    http.Header
	code int
	body strings.Builder
}

func newRecorder() *recorderRW                    { return &recorderRW{h: http.Header{}} }
func (r *recorderRW) Header() http.Header         { return r.h }
func (r *recorderRW) WriteHeader(c int)           { r.code = c }
func (r *recorderRW) Write(p []byte) (int, error) { return r.body.Write(p) }
