package api

import (
	"encoding/json"

	"github.com/ferry-sh/ferry/internal/openapicheck"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestHealthRootAndReference(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/health", nil)
	if r.Status != 200 || string(r.Body) != `{"status":"ok"}` || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s %v", r.Status, r.Body, r.Header)
	}
	if r := h.do("HEAD", "/health", nil); r.Status != 200 {
		t.Fatalf("HEAD %d", r.Status)
	}
	r = h.do("GET", "/", nil)
	if r.Status != http.StatusFound || r.Header.Get("Location") != "/reference" {
		t.Fatalf("root: %d %v", r.Status, r.Header)
	}
	r = h.do("GET", "/reference", nil)
	page := string(r.Body)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(page, "<title>ferry | SPL Private Payments API</title>") || !strings.Contains(page, `fetch("doc"`) {
		t.Fatalf("reference: %d %v", r.Status, r.Header)
	}
	// Self-contained: no external scripts, styles, fonts or images.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//`).FindString(page); m != "" {
		t.Fatalf("reference loads an external resource: %s", m)
	}
	if strings.Contains(page, "@import") || strings.Contains(page, "url(") {
		t.Fatal("reference CSS loads something")
	}
	if !strings.Contains(r.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatal("no CSP")
	}
}

func TestOpenAPIDocument(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/doc", nil)
	if r.Status != 200 {
		t.Fatal(r.Status)
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Info    struct {
			Title, Version string
		} `json:"info"`
		Tags []struct {
			Name string `json:"name"`
		} `json:"tags"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas         map[string]map[string]any `json:"schemas"`
			SecuritySchemes map[string]any            `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	// A valid OpenAPI 3.1 document: every $ref resolves, every operation
	// has a schema, an example and error responses, every example
	// matches its schema.
	for _, err := range openapicheck.Check(r.Body) {
		t.Error(err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Title != "SPL Private Payments API" || doc.Info.Version != "0.1.0" {
		t.Fatalf("%+v", doc.Info)
	}
	var tags []string
	for _, tg := range doc.Tags {
		tags = append(tags, tg.Name)
	}
	if strings.Join(tags, ",") != "SPL,Swap,Transaction,MCP,Meta" {
		t.Fatalf("tags %v", tags)
	}
	// Every documented route is served and every served route documented,
	// except /, /doc and /reference (and, later, GET /mcp and
	// /.well-known/mcp.json).
	want := map[string][]string{
		"/health": {"get"}, "/v1/spl/challenge": {"get"}, "/v1/spl/login": {"post"}, "/v1/spl/deposit": {"post"},
		"/v1/spl/transfer": {"post"}, "/v1/spl/withdraw": {"post"}, "/v1/spl/initialize-mint": {"post"},
		"/v1/spl/is-mint-initialized": {"get"}, "/v1/spl/transfer-queue/ensure-crank": {"post"},
		"/v1/spl/undelegate-ephemeral-ata": {"post"}, "/v1/spl/balance": {"get"}, "/v1/spl/private-balance": {"get"},
		"/v1/spl/stealth-pool": {"get", "post"}, "/v1/swap/quote": {"get"}, "/v1/swap/swap": {"post"},
		"/v1/transaction/send": {"post"},
	}
	if len(doc.Paths) != len(want) {
		t.Errorf("documented paths: %v", keys(doc.Paths))
	}
	for p, ms := range want {
		var got []string
		for m := range doc.Paths[p] {
			got = append(got, m)
		}
		slices.Sort(got)
		if strings.Join(got, ",") != strings.Join(ms, ",") {
			t.Errorf("%s: documented %v, want %v", p, got, ms)
		}
		for _, m := range ms {
			if r := h.do(strings.ToUpper(m), p, nil); r.Status == http.StatusNotFound || r.Status == http.StatusMethodNotAllowed {
				t.Errorf("%s %s documented but answers %d", m, p, r.Status)
			}
		}
	}
	for _, hidden := range []string{"/", "/doc", "/reference", "/mcp", "/.well-known/mcp.json"} {
		if _, ok := doc.Paths[hidden]; ok {
			t.Errorf("%s is documented", hidden)
		}
	}
	for _, name := range []string{"UnsignedTransactionResponse", "TransferFees", "BalanceResponse", "MintInitializationRequest",
		"MintInitializationResponse", "TransferQueueEnsureCrankRequest", "TransferQueueEnsureCrankResponse", "InitializeMintRequest",
		"InitializeMintResponse", "UndelegateEphemeralAtaRequest", "UndelegateEphemeralAtaResponse", "StealthPoolRequest",
		"StealthPoolResponse", "StealthPoolStatusRequest", "StealthPoolStatusResponse", "DepositRequest", "WithdrawRequest",
		"TransferRequest", "ErrorResponse", "ValidationErrorResponse"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("component %s missing", name)
		}
	}
	// Generated from the handlers' types: the transfer request's rules.
	tr := doc.Components.Schemas["TransferRequest"]
	req := tr["required"].([]any)
	if len(req) != 7 || req[0] != "from" {
		t.Errorf("TransferRequest.required = %v", req)
	}
	split := tr["properties"].(map[string]any)["split"].(map[string]any)
	if split["maximum"] != 15.0 || split["minimum"] != 1.0 || split["default"] != 1.0 {
		t.Errorf("split %v", split)
	}
	fees := doc.Components.Schemas["UnsignedTransactionResponse"]["properties"].(map[string]any)["fees"].(map[string]any)
	if fees["$ref"] != "#/components/schemas/TransferFees" {
		t.Errorf("fees %v", fees)
	}
	und := doc.Components.Schemas["UndelegateEphemeralAtaResponse"]["required"].([]any)
	if !slices.Contains(und, any("sendRpcEndpoint")) {
		t.Errorf("undelegate required %v", und)
	}
	// Operations: query parameters, security, error codes.
	var bal struct {
		Parameters []struct {
			Name     string `json:"name"`
			In       string `json:"in"`
			Required bool   `json:"required"`
		} `json:"parameters"`
		Security   []map[string]any `json:"security"`
		Responses  map[string]any   `json:"responses"`
		ErrorCodes []ErrorDoc       `json:"x-error-codes"`
	}
	json.Unmarshal(doc.Paths["/v1/spl/private-balance"]["get"], &bal)
	if len(bal.Parameters) != 3 || bal.Parameters[0].Name != "address" || !bal.Parameters[0].Required || bal.Parameters[0].In != "query" || bal.Parameters[2].Required {
		t.Errorf("parameters %+v", bal.Parameters)
	}
	if len(bal.Security) != 1 || bal.Responses["422"] == nil || bal.Responses["403"] == nil {
		t.Errorf("security %v responses %v", bal.Security, keys(bal.Responses))
	}
	codes := map[string]bool{}
	for _, e := range bal.ErrorCodes {
		codes[e.Code] = true
	}
	for _, c := range []string{"VALIDATION_ERROR", "MISSING_AUTH_TOKEN", "TOKEN_IDENTITY_MISMATCH", "EATA_DELEGATED_ELSEWHERE", "INTERNAL_ERROR"} {
		if !codes[c] {
			t.Errorf("private-balance does not document %s", c)
		}
	}
	var send struct {
		RequestBody map[string]any   `json:"requestBody"`
		Security    []map[string]any `json:"security"`
		Tags        []string         `json:"tags"`
	}
	json.Unmarshal(doc.Paths["/v1/transaction/send"]["post"], &send)
	if send.RequestBody == nil || len(send.Security) != 2 || send.Tags[0] != "Transaction" {
		t.Errorf("send %+v", send)
	}
}

func keys[M ~map[string]V, V any](m M) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestHandleMountsExtraRoutes(t *testing.T) {
	h := newHarness(t)
	h.srv.Handle(Operation{Method: "POST", Path: "/mcp", ID: "mcp", Tag: "MCP", Summary: "MCP"},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"jsonrpc":"2.0"}`)) }), false)
	h.srv.Handle(Operation{Method: "GET", Path: "/mcp"},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"name":"x"}`)) }), true)
	if r := h.do("POST", "/mcp", `{}`); r.Status != 200 || string(r.Body) != `{"jsonrpc":"2.0"}` {
		t.Fatal(r.Status, string(r.Body))
	}
	if r := h.do("DELETE", "/mcp", nil); r.Status != 405 || r.Header.Get("Allow") != "GET, HEAD, OPTIONS, POST" {
		t.Fatal(r.Status, r.Header)
	}
	doc := string(h.do("GET", "/doc", nil).Body)
	if !strings.Contains(doc, `"/mcp"`) || !strings.Contains(doc, `"operationId": "mcp"`) || strings.Count(doc, `"/mcp"`) != 1 {
		t.Fatal("POST /mcp not documented (or GET /mcp documented)")
	}
	var d struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	json.Unmarshal([]byte(doc), &d)
	if _, ok := d.Paths["/mcp"]["get"]; ok {
		t.Fatal("GET /mcp is documented")
	}
}
