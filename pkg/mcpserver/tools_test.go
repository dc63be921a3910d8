package mcpserver_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ferry-sh/ferry/pkg/inspect"
	"github.com/ferry-sh/ferry/pkg/mcpserver"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/schema"
	"github.com/ferry-sh/ferry/pkg/submit"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// queryOf renders a flat JSON object as a query string.
func queryOf(t *testing.T, v any) string {
	t.Helper()
	m := asObject(t, v)
	q := url.Values{}
	for k, v := range m {
		q.Set(k, fmt.Sprint(v))
	}
	return "?" + q.Encode()
}

// asObject round-trips v through JSON into a generic object.
func asObject(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %s", b)
	}
	return m
}

// call runs a tool and fails on a protocol error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// success asserts a successful result with the given text (when not
// empty) and returns its structured content as a JSON object.
func success(t *testing.T, res *mcp.CallToolResult, text string) map[string]any {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool failed: %s", texts(res))
	}
	if len(res.Content) != 1 {
		t.Fatalf("want one content block, got %s", texts(res))
	}
	if got := res.Content[0].(*mcp.TextContent).Text; text != "" && got != text {
		t.Errorf("text = %q, want %q", got, text)
	}
	if res.StructuredContent == nil {
		t.Fatal("no structuredContent")
	}
	return asObject(t, res.StructuredContent)
}

func texts(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, " | ")
}

// toolError is the error of an isError result.
type toolError struct {
	Status int
	Code   string
	Text   string         // the first content block
	Body   map[string]any // the REST error body, {"error":{...}}
	Raw    string
}

func failure(t *testing.T, res *mcp.CallToolResult) *toolError {
	t.Helper()
	if !res.IsError {
		t.Fatalf("tool succeeded: %s", texts(res))
	}
	if res.StructuredContent != nil {
		t.Errorf("error result has structuredContent %v", res.StructuredContent)
	}
	if len(res.Content) != 2 {
		t.Fatalf("want two content blocks, got %s", texts(res))
	}
	e := &toolError{Text: res.Content[0].(*mcp.TextContent).Text, Raw: res.Content[1].(*mcp.TextContent).Text}
	if err := json.Unmarshal([]byte(e.Raw), &e.Body); err != nil {
		t.Fatalf("second block is not JSON: %q", e.Raw)
	}
	inner, _ := e.Body["error"].(map[string]any)
	e.Code, _ = inner["code"].(string)
	if msg, _ := inner["message"].(string); e.Text != e.Code+": "+msg {
		t.Errorf("first block %q, want %q", e.Text, e.Code+": "+msg)
	}
	st, ok := res.Meta[mcpserver.MetaHTTPStatus].(float64)
	if !ok {
		t.Fatalf("no %s in _meta: %v", mcpserver.MetaHTTPStatus, res.Meta)
	}
	e.Status = int(st)
	return e
}

// sameAsREST asserts that a tool error is the REST error of the same
// input: same status, same body, byte for byte.
func sameAsREST(t *testing.T, e *toolError, r *rawResponse) {
	t.Helper()
	if e.Status != r.Status || e.Raw != string(r.Body) {
		t.Errorf("tool error %d %s\nREST       %d %s", e.Status, e.Raw, r.Status, r.Body)
	}
}

func TestToolsListMatchesExpectations(t *testing.T) {
	e := newEnv(t)
	x := loadExpectations(t)
	cs := e.connect("", nil)
	init := cs.InitializeResult()
	if got := asObject(t, init.ServerInfo); !reflect.DeepEqual(got, x.ServerInfo) {
		t.Errorf("serverInfo = %v, want %v", got, x.ServerInfo)
	}
	if got := asObject(t, init.Capabilities); !reflect.DeepEqual(got, x.Capabilities) {
		t.Errorf("capabilities = %v, want %v", got, x.Capabilities)
	}
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		byName[tl.Name] = tl
	}
	var want []string
	for _, xt := range x.Tools {
		want = append(want, xt.Name)
		tl := byName[xt.Name]
		if tl == nil {
			t.Errorf("tool %s missing", xt.Name)
			continue
		}
		if tl.Title != xt.Title {
			t.Errorf("%s: title %q, want %q", xt.Name, tl.Title, xt.Title)
		}
		in := asObject(t, tl.InputSchema)
		req := []string{}
		reqs, _ := in["required"].([]any) // absent when nothing is required
		for _, r := range reqs {
			req = append(req, r.(string))
		}
		if !slices.Equal(slices.Sorted(slices.Values(req)), slices.Sorted(slices.Values(xt.Required))) {
			t.Errorf("%s: required %v, want %v", xt.Name, req, xt.Required)
		}
		if tl.OutputSchema == nil || asObject(t, tl.OutputSchema)["type"] != "object" {
			t.Errorf("%s: output schema %v", xt.Name, tl.OutputSchema)
		}
		if tl.Description == "" {
			t.Errorf("%s: no description", xt.Name)
		}
	}
	if got := slices.Sorted(maps.Keys(byName)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("tools %v, want %v", got, want)
	}
	if got := e.mcp.ToolNames(); !slices.Equal(got, want) {
		t.Errorf("ToolNames() = %v, want the expectations' order %v", got, want)
	}

	// One source of truth: the input schemas are the REST request types'
	// and the output schemas the REST response types'.
	same := func(name string, got, want any) {
		t.Helper()
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("%s schema:\n got %s\nwant %s", name, g, w)
		}
	}
	for name, types := range map[string][2]*schema.Type{
		mcpserver.ToolDeposit:           {schema.Of[payments.DepositRequest](), schema.Of[payments.UnsignedTransaction]()},
		mcpserver.ToolWithdraw:          {schema.Of[payments.WithdrawRequest](), schema.Of[payments.UnsignedTransaction]()},
		mcpserver.ToolTransfer:          {schema.Of[payments.TransferRequest](), schema.Of[payments.UnsignedTransaction]()},
		mcpserver.ToolGetBalance:        {schema.Of[payments.BalanceRequest](), schema.Of[payments.BalanceResponse]()},
		mcpserver.ToolGetPrivateBalance: {schema.Of[payments.BalanceRequest](), schema.Of[payments.BalanceResponse]()},
		mcpserver.ToolInitializeMint:    {schema.Of[payments.InitializeMintRequest](), schema.Of[payments.InitializeMintResponse]()},
		mcpserver.ToolSend:              {schema.Of[submit.Request](), schema.Of[submit.Response]()},
		mcpserver.ToolInspect:           {schema.Of[mcpserver.InspectRequest](), schema.Of[inspect.Description]()},
	} {
		same(name+" input", byName[name].InputSchema, types[0].JSONSchema())
		same(name+" output", byName[name].OutputSchema, types[1].JSONSchema())
	}

	// The GET documents list the same tools, in the same order.
	for _, path := range []string{mcpserver.Path, mcpserver.WellKnownPath} {
		r := e.do(http.MethodGet, path, "")
		var doc struct {
			Tools []struct{ Name, Description string } `json:"tools"`
		}
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &doc) != nil {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		var names []string
		for _, tl := range doc.Tools {
			names = append(names, tl.Name)
			if tl.Description != byName[tl.Name].Description {
				t.Errorf("GET %s: %s description differs from tools/list", path, tl.Name)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("GET %s tools %v, want %v", path, names, want)
		}
	}
}

// substitute replaces the expectations' placeholders.
func substitute(v any, vars map[string]string) any {
	switch x := v.(type) {
	case string:
		if r, ok := vars[x]; ok {
			return r
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substitute(e, vars)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = substitute(e, vars)
		}
		return out
	}
	return v
}

// normalizedTx decodes a build's transaction with the blockhash zeroed,
// the only part of a public transfer that changes between two builds.
func normalizedTx(t *testing.T, out map[string]any) string {
	t.Helper()
	tx, err := txwire.DecodeBase64(out["transactionBase64"].(string))
	if err != nil {
		t.Fatalf("decode transaction: %v", err)
	}
	if got := tx.Message.RecentBlockhash.String(); got != out["recentBlockhash"] {
		t.Errorf("transaction blockhash %s, recentBlockhash %v", got, out["recentBlockhash"])
	}
	tx.Message.RecentBlockhash = solana.Hash{}
	return base64.StdEncoding.EncodeToString(tx.Bytes())
}

func TestTransferMatchesREST(t *testing.T) {
	e := newEnv(t)
	x := loadExpectations(t)
	alice := seedKey("alice")
	e.fund(pubOf(alice), 1_000_000)
	vars := map[string]string{"$PAYER": pubOf(alice).String(), "$MINT": e.mint.String()}
	args := substitute(x.Transfer.Arguments, vars).(map[string]any)

	cs := e.connect("", nil)
	res := call(t, cs, x.Transfer.Tool, args)
	got := success(t, res, x.Transfer.Text)
	rest := e.rest(http.MethodPost, "/v1/spl/transfer", args)
	if rest.Status != http.StatusOK {
		t.Fatalf("REST: %d %s", rest.Status, rest.Body)
	}
	var want map[string]any
	if err := json.Unmarshal(rest.Body, &want); err != nil {
		t.Fatal(err)
	}
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, slices.Sorted(slices.Values(x.Transfer.StructuredContentKeys))) {
		t.Errorf("structuredContent keys %v, want %v", keys, x.Transfer.StructuredContentKeys)
	}
	for k, v := range substitute(x.Transfer.StructuredContent, vars).(map[string]any) {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("structuredContent.%s = %v, want %v", k, got[k], v)
		}
	}
	// Equal to the REST response apart from the blockhash (and what
	// depends on it).
	if a, b := normalizedTx(t, got), normalizedTx(t, want); a != b {
		t.Errorf("transactions differ beyond the blockhash:\nMCP  %s\nREST %s", a, b)
	}
	for _, k := range []string{"recentBlockhash", "lastValidBlockHeight", "transactionBase64"} {
		delete(got, k)
		delete(want, k)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("structuredContent %v\nREST response     %v", got, want)
	}

	// The shared invalid call: the REST error, as a tool error.
	res = call(t, cs, x.TransferInvalid.Tool, x.TransferInvalid.Arguments)
	te := failure(t, res)
	if te.Status != x.TransferInvalid.HTTPStatus || te.Text != x.TransferInvalid.Text || !reflect.DeepEqual(te.Body["error"], x.TransferInvalid.Error) {
		t.Errorf("invalid transfer: %d %q %v\nwant %d %q %v", te.Status, te.Text, te.Body["error"],
			x.TransferInvalid.HTTPStatus, x.TransferInvalid.Text, x.TransferInvalid.Error)
	}
	sameAsREST(t, te, e.rest(http.MethodPost, "/v1/spl/transfer", x.TransferInvalid.Arguments))
}

func TestToolErrorsMatchREST(t *testing.T) {
	e := newEnv(t)
	cs := e.connect("", nil)
	alice, bob := pubOf(seedKey("alice")).String(), pubOf(seedKey("bob")).String()
	unknownMint := pubOf(seedKey("no such mint")).String()
	transfer := func(over map[string]any) map[string]any {
		m := map[string]any{"from": alice, "to": bob, "mint": e.mint.String(), "amount": 10,
			"visibility": "public", "fromBalance": "base", "toBalance": "base"}
		maps.Copy(m, over)
		for k, v := range m {
			if v == nil {
				delete(m, k)
			}
		}
		return m
	}
	for _, tc := range []struct {
		name, tool, method, path string
		args                     any
		status                   int
		code                     string
	}{
		{"missing fields", mcpserver.ToolTransfer, http.MethodPost, "/v1/spl/transfer", map[string]any{"amount": 5}, 422, "VALIDATION_ERROR"},
		{"no arguments", mcpserver.ToolDeposit, http.MethodPost, "/v1/spl/deposit", map[string]any{}, 422, "VALIDATION_ERROR"},
		{"bad values", mcpserver.ToolTransfer, http.MethodPost, "/v1/spl/transfer",
			transfer(map[string]any{"from": "not-a-key", "amount": 1.5, "visibility": "secret", "split": 99}), 422, "VALIDATION_ERROR"},
		{"wrong types", mcpserver.ToolWithdraw, http.MethodPost, "/v1/spl/withdraw",
			map[string]any{"owner": 7, "mint": true, "amount": "10"}, 422, "VALIDATION_ERROR"},
		{"unsafe integer", mcpserver.ToolTransfer, http.MethodPost, "/v1/spl/transfer", transfer(map[string]any{"amount": 1 << 60}), 422, "VALIDATION_ERROR"},
		{"unknown mint", mcpserver.ToolTransfer, http.MethodPost, "/v1/spl/transfer", transfer(map[string]any{"mint": unknownMint}), 400, "MINT_NOT_FOUND"},
		{"unsupported route", mcpserver.ToolTransfer, http.MethodPost, "/v1/spl/transfer",
			transfer(map[string]any{"fromBalance": "ephemeral", "toBalance": "base"}), 400, "UNSUPPORTED_TRANSFER_ROUTE"},
		{"private transfer rule", mcpserver.ToolTransfer, http.MethodPost, "/v1/spl/transfer",
			transfer(map[string]any{"visibility": "private", "minDelayMs": "10", "maxDelayMs": "5"}), 400, "INVALID_PRIVATE_TRANSFER"},
		{"invalid cluster", mcpserver.ToolGetBalance, http.MethodGet, "/v1/spl/balance",
			map[string]any{"address": alice, "mint": e.mint.String(), "cluster": "moon"}, 400, "INVALID_CLUSTER"},
		{"balance missing mint", mcpserver.ToolGetBalance, http.MethodGet, "/v1/spl/balance", map[string]any{"address": alice}, 422, "VALIDATION_ERROR"},
		{"initialize-mint unknown mint", mcpserver.ToolInitializeMint, http.MethodPost, "/v1/spl/initialize-mint",
			map[string]any{"payer": alice, "mint": unknownMint}, 400, "MINT_NOT_FOUND"},
		{"send bad base64", mcpserver.ToolSend, http.MethodPost, "/v1/transaction/send",
			map[string]any{"transactionBase64": "not base64!", "sendTo": "base"}, 400, "INVALID_TRANSACTION"},
		{"send confirm without blockhash", mcpserver.ToolSend, http.MethodPost, "/v1/transaction/send",
			map[string]any{"transactionBase64": "AQID", "sendTo": "base", "confirm": true}, 422, "VALIDATION_ERROR"},
		{"send endpoint with base", mcpserver.ToolSend, http.MethodPost, "/v1/transaction/send",
			map[string]any{"transactionBase64": "AQID", "sendTo": "base", "sendRpcEndpoint": "http://er.example"}, 422, "VALIDATION_ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := failure(t, call(t, cs, tc.tool, tc.args))
			if te.Status != tc.status || te.Code != tc.code {
				t.Errorf("got %d %s, want %d %s: %s", te.Status, te.Code, tc.status, tc.code, te.Raw)
			}
			sameAsREST(t, te, e.rest(tc.method, tc.path, tc.args))
		})
	}

	// An upstream failure is the REST 502, and its cause is logged.
	args := map[string]any{"address": alice, "mint": e.mint.String(), "cluster": testBrokenURL}
	te := failure(t, call(t, cs, mcpserver.ToolGetBalance, args))
	if te.Status != http.StatusBadGateway || te.Code != "RPC_ERROR" || strings.Contains(te.Raw, "broken.ferry.test") {
		t.Errorf("upstream failure: %d %s", te.Status, te.Raw)
	}
	sameAsREST(t, te, e.rest(http.MethodGet, "/v1/spl/balance", args))
	if logs := e.logs.String(); !strings.Contains(logs, `"msg":"MCP tool failed","tool":"spl.getBalance","status":502`) {
		t.Errorf("no log line for the 502: %s", logs)
	}

	// Arguments that are not an object fail as a REST body that is not an
	// object does. (The Go SDK client only sends objects; send it raw.)
	r := e.do(http.MethodPost, mcpserver.Path, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"spl.transfer","arguments":[1,2]}}`,
		"MCP-Protocol-Version", "2025-11-25")
	var resp struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(r.Body, &resp); err != nil || !resp.Result.IsError || len(resp.Result.Content) != 2 {
		t.Fatalf("array arguments: %d %s", r.Status, r.Body)
	}
	if rest := e.do(http.MethodPost, "/v1/spl/transfer", `[1,2]`); resp.Result.Content[1].Text != string(rest.Body) {
		t.Errorf("array arguments: tool %s, REST %s", resp.Result.Content[1].Text, rest.Body)
	}

	// An unknown tool is a protocol error (JSON-RPC -32602), not a result.
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "spl.nope", Arguments: map[string]any{}}); err == nil ||
		!strings.Contains(err.Error(), `unknown tool "spl.nope"`) {
		t.Errorf("unknown tool: err = %v", err)
	}
}

func TestBuildToolsMatchREST(t *testing.T) {
	e := newEnv(t)
	cs := e.connect("", nil)
	owner := pubOf(seedKey("owner")).String()
	e.fund(solana.MustPublicKeyFromBase58(owner), 5_000)
	for _, tc := range []struct {
		tool, path, text string
		args             map[string]any
	}{
		{mcpserver.ToolDeposit, "/v1/spl/deposit", mcpserver.TextDeposit, map[string]any{"owner": owner, "mint": e.mint.String(), "amount": 100}},
		{mcpserver.ToolWithdraw, "/v1/spl/withdraw", mcpserver.TextWithdraw, map[string]any{"owner": owner, "mint": e.mint.String(), "amount": 100}},
		{mcpserver.ToolInitializeMint, "/v1/spl/initialize-mint", mcpserver.TextInitializeMint, map[string]any{"payer": owner, "mint": e.mint.String()}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			got := success(t, call(t, cs, tc.tool, tc.args), tc.text)
			rest := e.rest(http.MethodPost, tc.path, tc.args)
			var want map[string]any
			if rest.Status != http.StatusOK || json.Unmarshal(rest.Body, &want) != nil {
				t.Fatalf("REST: %d %s", rest.Status, rest.Body)
			}
			// Deposits and withdrawals carry a random shuttle id, so only
			// the fields that do not depend on it or on the blockhash are
			// compared.
			for _, k := range []string{"recentBlockhash", "lastValidBlockHeight", "transactionBase64"} {
				if got[k] == nil {
					t.Errorf("no %s", k)
				}
				delete(got, k)
				delete(want, k)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("structuredContent %v\nREST response     %v", got, want)
			}
		})
	}
}
