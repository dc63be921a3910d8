package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ferry-sh/ferry/internal/openapicheck"
)

// TestOpenAPIWithMCP: the /doc of the payments API with /mcp mounted is a
// valid OpenAPI 3.1 document (openapicheck: $refs, schemas, examples and
// error responses of every operation, examples matching their schemas),
// with what the hosted API's document test asserts: POST /mcp with its
// request schema (and no GET /mcp, no discovery document), the hosted
// component names, the swap examples and descriptions, the deposit and
// withdraw examples, the transfer request's example.
func TestOpenAPIWithMCP(t *testing.T) {
	e := newEnv(t)
	r := e.do(http.MethodGet, "/doc", "")
	if r.Status != http.StatusOK {
		t.Fatal(r.Status)
	}
	for _, err := range openapicheck.Check(r.Body) {
		t.Error(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	get := func(path ...string) any {
		var cur any = doc
		for _, p := range path {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = m[p]
		}
		return cur
	}
	has := func(path ...string) {
		t.Helper()
		if get(path...) == nil {
			t.Errorf("/doc has no %v", path)
		}
	}
	hasNot := func(path ...string) {
		t.Helper()
		if get(path...) != nil {
			t.Errorf("/doc has %v", path)
		}
	}
	has("paths", "/mcp", "post", "requestBody", "content", "application/json", "schema")
	hasNot("paths", "/mcp", "get")
	hasNot("paths", "/.well-known/mcp.json")
	if get("paths", "/mcp", "post", "requestBody", "content", "application/json", "schema", "$ref") != "#/components/schemas/McpRequest" {
		t.Error("POST /mcp does not take an McpRequest")
	}
	for _, p := range []string{"/v1/spl/deposit", "/v1/spl/private-balance", "/v1/spl/challenge", "/v1/spl/login", "/v1/spl/is-mint-initialized",
		"/v1/spl/initialize-mint", "/v1/spl/transfer-queue/ensure-crank", "/v1/spl/undelegate-ephemeral-ata", "/v1/spl/stealth-pool",
		"/v1/swap/quote", "/v1/swap/swap", "/v1/transaction/send"} {
		has("paths", p)
	}
	for _, p := range []string{"/v1/spl/transfer-stealth", "/v1/swap/swap-instructions", "/v1/swap/program-id-to-label"} {
		hasNot("paths", p)
	}
	swapTag := false
	for _, tg := range get("tags").([]any) {
		m := tg.(map[string]any)
		swapTag = swapTag || m["name"] == "Swap" && m["description"] == "Provide quoting and execution for public and private swaps."
	}
	if !swapTag {
		t.Error("Swap tag description")
	}
	params := map[string]bool{}
	for _, p := range get("paths", "/v1/swap/quote", "get", "parameters").([]any) {
		m := p.(map[string]any)
		params[m["name"].(string)] = m["required"].(bool)
	}
	for name, required := range map[string]bool{"inputMint": true, "outputMint": true, "amount": true, "slippageBps": false, "swapMode": false} {
		if req, ok := params[name]; !ok || req != required {
			t.Errorf("quote parameter %s: %v %v", name, ok, req)
		}
	}
	quote := get("paths", "/v1/swap/quote", "get", "responses", "200", "content", "application/json", "example").(map[string]any)
	if quote["inputMint"] != "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" || quote["outputMint"] != "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB" ||
		quote["inAmount"] != "1000000" || quote["outAmount"] != "999519" {
		t.Errorf("quote example %v", quote)
	}
	swapReq := []string{"paths", "/v1/swap/swap", "post", "requestBody", "content", "application/json"}
	has(append(swapReq, "schema")...)
	pub := get(append(swapReq, "examples", "public", "value")...).(map[string]any)
	priv := get(append(swapReq, "examples", "private", "value")...).(map[string]any)
	if pub["userPublicKey"] != "3rXKwQ1kpjBd5tdcco32qsvqUh1BnZjcYnS5kYrP7AYE" || pub["quoteResponse"].(map[string]any)["outAmount"] != "999519" ||
		priv["visibility"] != "private" || priv["destination"] == nil || priv["minDelayMs"] != "0" || priv["maxDelayMs"] != "0" || priv["split"] != 1.0 {
		t.Errorf("swap request examples %v %v", pub, priv)
	}
	for _, f := range []string{"visibility", "destination", "minDelayMs", "maxDelayMs", "split", "clientRefId", "validator"} {
		has("components", "schemas", "SwapRequest", "properties", f)
	}
	has("components", "schemas", "SwapResponse", "properties", "privateTransfer")
	pt := get("paths", "/v1/swap/swap", "post", "responses", "200", "content", "application/json", "examples", "private", "value", "privateTransfer").(map[string]any)
	if _, ok := pt["stashAta"].(string); !ok || pt["hydraCrankPda"] == nil || pt["shuttleId"] == nil {
		t.Errorf("privateTransfer example %v", pt)
	}
	for path, want := range map[string][2]any{"/v1/spl/deposit": {"deposit", 3.0}, "/v1/spl/withdraw": {"withdraw", 2.0}} {
		ex := get("paths", path, "post", "responses", "200", "content", "application/json", "example").(map[string]any)
		if ex["kind"] != want[0] || ex["instructionCount"] != want[1] {
			t.Errorf("%s example %v", path, ex)
		}
	}
	if p := get("components", "schemas", "DepositRequest", "properties", "private").(map[string]any); p["type"] != "boolean" || p["example"] != true {
		t.Errorf("DepositRequest.private %v", p)
	}
	tr := get("components", "schemas", "TransferRequest").(map[string]any)
	props := tr["properties"].(map[string]any)
	if g := props["gasless"].(map[string]any); g["type"] != "boolean" || g["example"] != true {
		t.Errorf("TransferRequest.gasless %v", g)
	}
	if d, _ := props["to"].(map[string]any)["description"].(string); !strings.Contains(d, "stealth handle") {
		t.Errorf("TransferRequest.to %q", d)
	}
	ex := tr["example"].(map[string]any)
	if ex["amount"] != 5000000.0 || ex["gasless"] != true {
		t.Errorf("TransferRequest example %v", ex)
	}
	for _, f := range []string{"initIfMissing", "initAtasIfMissing", "initVaultIfMissing", "split"} {
		if _, ok := ex[f]; ok {
			t.Errorf("TransferRequest example has %s", f)
		}
	}
	has("components", "schemas", "UnsignedTransactionResponse", "properties", "fees")
	has("components", "schemas", "UnsignedTransactionResponse", "properties", "sendRpcEndpoint")
	has("components", "schemas", "SendTransactionRequest", "properties", "sendRpcEndpoint")
	hasNot("components", "schemas", "StealthTransferRequest")
}
