package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ferry-sh/ferry/pkg/mcpserver"
)

// initializeRequest is service-interface.md §2.7's initialize request.
const initializeRequest = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw-client","version":"1.0.0"}}}`

// TestInitializeExchange checks the exact §2.7 exchange and the hosted
// initialize result with a plain HTTP client, then the 202 for the
// notification that follows.
func TestInitializeExchange(t *testing.T) {
	e := newEnv(t)
	const want = `{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"tools":{"listChanged":true}},"protocolVersion":"2025-11-25",` +
		`"serverInfo":{"name":"spl-private-payments-api","version":"0.1.0","websiteUrl":"https://www.magicblock.xyz/"}}}`
	for _, tc := range []struct {
		name    string
		headers []string
	}{
		{"JSON only Accept", []string{"Accept", "application/json"}},
		{"both Accept types", []string{"Accept", "application/json, text/event-stream"}},
		{"no Accept", []string{"Accept", ""}},
		{"no Content-Type", []string{"Content-Type", ""}},
		{"text/plain", []string{"Content-Type", "text/plain;charset=UTF-8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(http.MethodPost, mcpserver.Path, initializeRequest, tc.headers...)
			if r.Status != http.StatusOK || string(r.Body) != want {
				t.Fatalf("initialize: %d %s\nwant 200 %s", r.Status, r.Body, want)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
				t.Errorf("stateless server issued session %q", sid)
			}
		})
	}
	r := e.do(http.MethodPost, mcpserver.Path, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"Accept", "application/json", "MCP-Protocol-Version", "2025-11-25")
	if r.Status != http.StatusAccepted || len(r.Body) != 0 {
		t.Errorf("notifications/initialized: %d %q", r.Status, r.Body)
	}
	// Without the initialize before it (stateless), tools/list works.
	r = e.do(http.MethodPost, mcpserver.Path, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, "MCP-Protocol-Version", "2025-11-25")
	var list struct {
		ID     int `json:"id"`
		Result struct {
			Tools []struct{ Name string }
		}
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &list) != nil || list.ID != 2 || len(list.Result.Tools) != len(e.mcp.ToolNames()) {
		t.Errorf("tools/list: %d %s", r.Status, r.Body)
	}
}

func TestTransportErrors(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, body string
		headers    []string
		status     int
		want       string // exact body, or a prefix ending in "…"
	}{
		{"parse error", `{"jsonrpc":"2.0","id":1,"method":`, nil, 400,
			`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}`},
		{"parse error, text/plain", `not json`, []string{"Content-Type", "text/plain"}, 400,
			`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}`},
		{"not a JSON-RPC message", `{"hello":"world"}`, nil, 400,
			`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}`},
		{"unsupported media type", initializeRequest, []string{"Content-Type", "application/xml"}, 415,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Unsupported Media Type: Content-Type must be application/json"},"id":null}`},
		{"unknown method", `{"jsonrpc":"2.0","id":3,"method":"tools/frobnicate","params":{}}`, nil, 400,
			`{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found: \"tools/frobnicate\" unsupported"},"id":null}`},
		{"call without id", `{"jsonrpc":"2.0","method":"tools/list","params":{}}`, nil, 400,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: missing id for \"tools/list\""},"id":null}`},
		{"DNS rebinding", initializeRequest, []string{"Host", "evil.example"}, 403,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Forbidden: invalid Host header \"evil.example\""},"id":null}`},
		{"unsupported protocol version header", initializeRequest, []string{"MCP-Protocol-Version", "2023-01-01"}, 400,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Unsupported protocol version (supported versions: …`},
		{"body too large", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"` + strings.Repeat("a", mcpserver.DefaultMaxBodyBytes) + `"}}`, nil, 413,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"request body exceeds 1048576 bytes"},"id":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(http.MethodPost, mcpserver.Path, tc.body, tc.headers...)
			ok := string(r.Body) == tc.want
			if prefix, cut := strings.CutSuffix(tc.want, "…"); cut {
				ok = strings.HasPrefix(string(r.Body), prefix) && json.Valid(r.Body)
			}
			if r.Status != tc.status || !ok {
				t.Errorf("%d %s\nwant %d %s", r.Status, r.Body, tc.status, tc.want)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

func TestGETAndDELETE(t *testing.T) {
	e := newEnv(t)
	origin := e.srv.URL
	r := e.do(http.MethodGet, mcpserver.Path, "")
	var info map[string]any
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &info) != nil {
		t.Fatalf("GET /mcp: %d %s", r.Status, r.Body)
	}
	for k, v := range map[string]any{"name": "spl-private-payments-api", "version": "0.1.0", "transport": "streamable-http",
		"mode": "stateless-json-response", "endpoint": origin + "/mcp", "discovery": origin + "/.well-known/mcp.json"} {
		if info[k] != v {
			t.Errorf("GET /mcp %s = %v, want %v", k, info[k], v)
		}
	}
	if insp, _ := info["inspector"].(map[string]any); insp["url"] != origin+"/mcp" || insp["transport"] != "Streamable HTTP" {
		t.Errorf("inspector %v", info["inspector"])
	}
	// The hosted document's keys, in its order.
	if !strings.HasPrefix(string(r.Body), `{"name":"spl-private-payments-api","version":"0.1.0","transport":"streamable-http","mode":"stateless-json-response","endpoint":`) {
		t.Errorf("GET /mcp body %s", r.Body)
	}

	for _, tc := range []struct {
		method  string
		headers []string
	}{
		{http.MethodGet, []string{"Accept", "text/event-stream"}},
		{http.MethodDelete, nil},
	} {
		r := e.do(tc.method, mcpserver.Path, "", tc.headers...)
		if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST" || strings.TrimSpace(string(r.Body)) != "Method Not Allowed" {
			t.Errorf("%s /mcp %v: %d Allow=%q %q", tc.method, tc.headers, r.Status, r.Header.Get("Allow"), r.Body)
		}
	}

	r = e.do(http.MethodGet, mcpserver.WellKnownPath, "")
	var disc struct {
		Name, Version, Description, WebsiteURL, DocumentationURL, OpenAPIURL string
		Transport                                                            struct {
			Type, Endpoint          string
			Stateless, JSONResponse bool
			Methods                 []string
		}
		Capabilities map[string]bool
		Tools        []struct{ Name string }
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &disc) != nil {
		t.Fatalf("GET well-known: %d %s", r.Status, r.Body)
	}
	if disc.Name != "spl-private-payments-api" || disc.WebsiteURL != "https://www.magicblock.xyz/" || disc.DocumentationURL != origin+"/reference" ||
		disc.OpenAPIURL != origin+"/doc" || disc.Transport.Type != "streamable-http" || disc.Transport.Endpoint != origin+"/mcp" ||
		!disc.Transport.Stateless || !disc.Transport.JSONResponse || !slices.Equal(disc.Transport.Methods, []string{"POST"}) ||
		!disc.Capabilities["tools"] || disc.Capabilities["resources"] || disc.Capabilities["prompts"] || len(disc.Tools) != len(e.mcp.ToolNames()) {
		t.Errorf("discovery document %s", r.Body)
	}

	// /doc documents POST /mcp only, as the hosted API does.
	r = e.do(http.MethodGet, "/doc", "")
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatalf("/doc: %v", err)
	}
	if _, ok := doc.Paths["/mcp"]["post"]; !ok || len(doc.Paths["/mcp"]) != 1 {
		t.Errorf("/doc /mcp: %v", doc.Paths["/mcp"])
	}
	if _, ok := doc.Paths["/.well-known/mcp.json"]; ok {
		t.Error("/doc lists the discovery document")
	}
}

// TestStandaloneHandler serves the handler without the payments API.
func TestStandaloneHandler(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.mcp)
	t.Cleanup(srv.Close)
	post := func(path, body string) *http.Response {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post(mcpserver.Path, initializeRequest); resp.StatusCode != http.StatusOK {
		t.Errorf("POST /mcp: %d", resp.StatusCode)
	}
	if resp := post("/v1/spl/transfer", "{}"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("other path: %d", resp.StatusCode)
	}
	if resp := post(mcpserver.WellKnownPath, "{}"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST well-known: %d", resp.StatusCode)
	}
	// A Go SDK client whose standalone SSE stream is refused (405) still
	// works.
	c := mcp.NewClient(&mcp.Implementation{Name: "sse-client", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + mcpserver.Path, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Errorf("tools/list with standalone SSE: %v", err)
	}
}

// TestProtocolVersions drives the endpoint with the Go SDK client at each
// protocol version: the initialize handshake up to 2025-11-25,
// server/discover and the Mcp-Method/Mcp-Name headers at 2026-07-28.
func TestProtocolVersions(t *testing.T) {
	e := newEnv(t)
	alice := pubOf(seedKey("alice"))
	e.fund(alice, 42)
	for _, v := range []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			cs := e.connect(v, nil)
			init := cs.InitializeResult()
			// At 2026-07-28 this also proves that server/discover succeeded:
			// the client falls back to initialize (2025-11-25) otherwise.
			if init.ProtocolVersion != v {
				t.Errorf("negotiated %q", init.ProtocolVersion)
			}
			if init.ServerInfo == nil || init.ServerInfo.Name != mcpserver.ServerName || init.Capabilities.Tools == nil || init.Capabilities.Logging != nil {
				t.Errorf("initialize result %+v", init)
			}
			list, err := cs.ListTools(t.Context(), nil)
			if err != nil || len(list.Tools) != len(e.mcp.ToolNames()) {
				t.Fatalf("tools/list: %v", err)
			}
			out := success(t, call(t, cs, mcpserver.ToolGetBalance, map[string]any{"address": alice.String(), "mint": e.mint.String()}), mcpserver.TextGetBalance)
			if out["balance"] != "42" {
				t.Errorf("balance %v", out)
			}
			te := failure(t, call(t, cs, mcpserver.ToolGetBalance, map[string]any{"mint": e.mint.String()}))
			if te.Text != "VALIDATION_ERROR: Missing required fields: address" {
				t.Errorf("error %q", te.Text)
			}
		})
	}
}

// TestProtocol20260728Headers checks the 2026-07-28 rules on raw requests.
func TestProtocol20260728Headers(t *testing.T) {
	e := newEnv(t)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	discover := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`
	r := e.do(http.MethodPost, mcpserver.Path, discover, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover")
	var disc struct {
		Result struct {
			SupportedVersions []string       `json:"supportedVersions"`
			Capabilities      map[string]any `json:"capabilities"`
			Meta              map[string]any `json:"_meta"`
		} `json:"result"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &disc) != nil {
		t.Fatalf("server/discover: %d %s", r.Status, r.Body)
	}
	for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"} {
		if !slices.Contains(disc.Result.SupportedVersions, v) {
			t.Errorf("supportedVersions %v lacks %s", disc.Result.SupportedVersions, v)
		}
	}
	if b, _ := json.Marshal(disc.Result.Capabilities); string(b) != `{"tools":{"listChanged":true}}` {
		t.Errorf("capabilities %s", b)
	}
	if si, _ := disc.Result.Meta["io.modelcontextprotocol/serverInfo"].(map[string]any); si["name"] != mcpserver.ServerName {
		t.Errorf("serverInfo %v", disc.Result.Meta)
	}

	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chain.getSlot","arguments":{},` + meta + `}}`
	for _, tc := range []struct {
		name, body string
		headers    []string
		status     int
		code       int
		msg        string
	}{
		{"no Mcp-Method", discover, []string{"MCP-Protocol-Version", "2026-07-28"}, 400, -32020, "missing required Mcp-Method header"},
		{"Mcp-Method mismatch", discover, []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"}, 400, -32020, "header mismatch"},
		{"no Mcp-Name", call, []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call"}, 400, -32020,
			`missing required Mcp-Name header for method "tools/call"`},
		{"no _meta", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`,
			[]string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover"}, 400, -32602, "missing or invalid _meta field"},
		{"initialize", initializeRequest, []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "initialize"}, 400, -32602, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(http.MethodPost, mcpserver.Path, tc.body, tc.headers...)
			var resp struct {
				Error *struct {
					Code    int
					Message string
				}
			}
			if r.Status != tc.status || json.Unmarshal(r.Body, &resp) != nil || resp.Error == nil || resp.Error.Code != tc.code ||
				!strings.Contains(resp.Error.Message, tc.msg) {
				t.Errorf("%d %s\nwant %d code %d %q", r.Status, r.Body, tc.status, tc.code, tc.msg)
			}
		})
	}
	r = e.do(http.MethodPost, mcpserver.Path, call, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "chain.getSlot")
	var res struct {
		Result struct {
			StructuredContent map[string]any `json:"structuredContent"`
		}
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &res) != nil || res.Result.StructuredContent["layer"] != "base" {
		t.Errorf("tools/call with headers: %d %s", r.Status, r.Body)
	}
}

// TestConcurrentClients: one Handler serves many stateless clients at
// once (run with -race).
func TestConcurrentClients(t *testing.T) {
	e := newEnv(t)
	alice := pubOf(seedKey("alice"))
	e.fund(alice, 7)
	const clients, calls = 6, 4
	errs := make(chan error, clients*calls)
	var wg sync.WaitGroup
	for i := range clients {
		cs := e.connect([]string{"2025-06-18", "2025-11-25", "2026-07-28"}[i%3], nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolGetBalance,
					Arguments: map[string]any{"address": alice.String(), "mint": e.mint.String()}})
				switch {
				case err != nil:
					errs <- err
				case res.IsError:
					errs <- fmt.Errorf("tool error: %s", texts(res))
				default:
					b, _ := json.Marshal(res.StructuredContent)
					if !strings.Contains(string(b), `"balance":"7"`) {
						errs <- fmt.Errorf("result %s", b)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The SDK's per-request session chatter stays out of the log.
	if logs := e.logs.String(); strings.Contains(logs, "server session connected") {
		t.Error("the SDK logs every stateless session")
	}
}
