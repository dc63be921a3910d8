package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/inspect"
	"github.com/ferry-sh/ferry/pkg/mcpserver"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TestPaymentFlow builds a transfer, inspects it, has the test (never the
// server) sign it, sends it through transaction.send with confirm, and
// follows it with the balance and chain tools.
func TestPaymentFlow(t *testing.T) {
	e := newEnv(t)
	aliceKey := seedKey("alice")
	aliceToken := e.login(aliceKey)
	cs := e.connect("", http.Header{"Authorization": {"Bearer " + aliceToken}})
	alice, bob := pubOf(aliceKey), pubOf(seedKey("bob"))
	e.fund(alice, 1_000_000)
	e.fund(bob, 1)
	mint := e.mint.String()

	// Balances, equal to REST.
	bal := success(t, call(t, cs, mcpserver.ToolGetBalance, map[string]any{"address": alice.String(), "mint": mint}), mcpserver.TextGetBalance)
	if bal["balance"] != "1000000" || bal["location"] != "base" {
		t.Errorf("base balance %v", bal)
	}
	if r := e.rest(http.MethodGet, "/v1/spl/balance", map[string]any{"address": alice.String(), "mint": mint}); !reflect.DeepEqual(asObject(t, json.RawMessage(r.Body)), bal) {
		t.Errorf("REST balance %s, tool %v", r.Body, bal)
	}
	priv := success(t, call(t, cs, mcpserver.ToolGetPrivateBalance, map[string]any{"address": alice.String(), "mint": mint}), mcpserver.TextGetPrivateBalance)
	if priv["balance"] != "0" || priv["location"] != "ephemeral" {
		t.Errorf("private balance %v", priv)
	}
	// The same token on REST: the same answer.
	r := e.do(http.MethodGet, "/v1/spl/private-balance"+queryOf(t, map[string]any{"address": alice.String(), "mint": mint}), "",
		"Authorization", "Bearer "+aliceToken)
	if !reflect.DeepEqual(asObject(t, json.RawMessage(r.Body)), priv) {
		t.Errorf("REST private balance %s, tool %v", r.Body, priv)
	}

	// Build, inspect, sign (here, in the test), inspect again.
	out := success(t, call(t, cs, mcpserver.ToolTransfer, map[string]any{"from": alice.String(), "to": bob.String(), "mint": mint,
		"amount": 250, "visibility": "public", "fromBalance": "base", "toBalance": "base", "memo": "mcp flow"}), mcpserver.TextTransfer)
	unsigned := out["transactionBase64"].(string)
	desc := success(t, call(t, cs, mcpserver.ToolInspect, map[string]any{"transaction": unsigned}), "")
	tx, err := txwire.DecodeBase64(unsigned)
	if err != nil {
		t.Fatal(err)
	}
	if want := asObject(t, inspect.New().Describe(tx)); !reflect.DeepEqual(desc, want) {
		t.Errorf("inspect %v\nwant    %v", desc, want)
	}
	if desc["feePayer"] != alice.String() {
		t.Errorf("fee payer %v", desc["feePayer"])
	}
	if err := tx.Sign(aliceKey); err != nil {
		t.Fatal(err)
	}
	signed := tx.Base64()
	// The whole build response's JSON is accepted too, and base58.
	js, _ := json.Marshal(map[string]any{"transactionBase64": signed})
	for _, in := range []string{string(js), base58.Encode(tx.Bytes())} {
		res := call(t, cs, mcpserver.ToolInspect, map[string]any{"transaction": in})
		if got := success(t, res, ""); got["signatures"].([]any)[0].(map[string]any)["signed"] != true {
			t.Errorf("signed transaction: %v", got["signatures"])
		}
		if text := texts(res); !strings.Contains(text, "1 of 1 required signature(s) present") {
			t.Errorf("inspect text %q", text)
		}
	}

	// Send with confirm.
	sent := success(t, call(t, cs, mcpserver.ToolSend, map[string]any{"transactionBase64": signed, "sendTo": out["sendTo"], "confirm": true,
		"recentBlockhash": out["recentBlockhash"], "lastValidBlockHeight": out["lastValidBlockHeight"]}), "")
	sig := tx.Signatures[0].String()
	if sent["signature"] != sig || sent["confirmed"] != true || sent["sendTo"] != "base" || sent["confirmationRequiresAuthToken"] != false {
		t.Fatalf("send: %v", sent)
	}
	e.settle()
	if b := success(t, call(t, cs, mcpserver.ToolGetBalance, map[string]any{"address": bob.String(), "mint": mint}), ""); b["balance"] != "251" {
		t.Errorf("bob's balance after the transfer: %v", b)
	}

	// Chain reads.
	unknown := solana.SignatureFromBytes(make([]byte, 64)).String()
	st := success(t, call(t, cs, mcpserver.ToolSignatureStatuses, map[string]any{"signatures": []string{sig, unknown}}), "")
	sts := st["statuses"].([]any)
	first, second := sts[0].(map[string]any), sts[1].(map[string]any)
	if first["signature"] != sig || first["found"] != true || first["slot"] == nil || first["err"] != nil ||
		(first["confirmationStatus"] != "confirmed" && first["confirmationStatus"] != "finalized") {
		t.Errorf("status of the transfer: %v", first)
	}
	if second["found"] != false || len(second) != 2 {
		t.Errorf("status of an unknown signature: %v", second)
	}
	te := failure(t, call(t, cs, mcpserver.ToolSignatureStatuses, map[string]any{"signatures": []string{sig, "xyz"}}))
	if te.Status != 422 || !strings.Contains(te.Raw, `{"code":"custom","message":"Invalid signature","path":["signatures",1]}`) {
		t.Errorf("invalid signature: %d %s", te.Status, te.Raw)
	}
	te = failure(t, call(t, cs, mcpserver.ToolSignatureStatuses, map[string]any{"signatures": []string{}}))
	if te.Status != 422 || !strings.Contains(te.Raw, "Array must contain at least 1 element(s)") {
		t.Errorf("no signatures: %d %s", te.Status, te.Raw)
	}

	got := success(t, call(t, cs, mcpserver.ToolGetTransaction, map[string]any{"signature": sig}), "Fetched transaction "+sig+" from base.")
	txr, _ := got["transaction"].(map[string]any)
	meta, _ := txr["meta"].(map[string]any)
	if got["found"] != true || meta == nil || meta["err"] != nil || meta["fee"] != float64(5000) {
		t.Errorf("getTransaction: %v", got)
	}
	got = success(t, call(t, cs, mcpserver.ToolGetTransaction, map[string]any{"signature": unknown}), "")
	if got["found"] != false || got["transaction"] != nil {
		t.Errorf("getTransaction of an unknown signature: %v", got)
	}
	if te := failure(t, call(t, cs, mcpserver.ToolGetTransaction, map[string]any{"signature": "1"})); te.Status != 422 {
		t.Errorf("invalid signature: %d %s", te.Status, te.Raw)
	}

	for _, layer := range []string{"base", "ephemeral"} {
		s := success(t, call(t, cs, mcpserver.ToolGetSlot, map[string]any{"layer": layer, "commitment": "processed"}), "")
		if s["layer"] != layer || s["commitment"] != "processed" || s["slot"].(float64) <= 0 {
			t.Errorf("slot of %s: %v", layer, s)
		}
	}
	if s := success(t, call(t, cs, mcpserver.ToolGetSlot, map[string]any{}), ""); s["layer"] != "base" || s["commitment"] != "confirmed" {
		t.Errorf("slot defaults: %v", s)
	}
	if te := failure(t, call(t, cs, mcpserver.ToolGetSlot, map[string]any{"layer": "moon"})); te.Status != 422 ||
		!strings.Contains(te.Raw, "Invalid enum value. Expected 'base' | 'ephemeral', received 'moon'") {
		t.Errorf("bad layer: %d %s", te.Status, te.Raw)
	}

	// A send that fails is the REST error.
	args := map[string]any{"transactionBase64": signed, "sendTo": "base"}
	sameAsREST(t, failure(t, call(t, cs, mcpserver.ToolSend, args)), e.rest(http.MethodPost, "/v1/transaction/send", args))
}

func TestInspectErrors(t *testing.T) {
	e := newEnv(t)
	cs := e.connect("", nil)
	for _, tc := range []struct{ in, msg string }{
		{"!!!", "transaction is neither base64 nor base58"},
		{`{"kind":"transfer"}`, "input looks like JSON but has no transactionBase64 field"},
		{"AQID", "decode transaction"},
	} {
		te := failure(t, call(t, cs, mcpserver.ToolInspect, map[string]any{"transaction": tc.in}))
		if te.Status != 400 || te.Code != "INVALID_TRANSACTION" || !strings.Contains(te.Text, tc.msg) {
			t.Errorf("inspect %q: %d %s", tc.in, te.Status, te.Raw)
		}
	}
	if te := failure(t, call(t, cs, mcpserver.ToolInspect, map[string]any{})); te.Status != 422 || te.Text != "VALIDATION_ERROR: Missing required fields: transaction" {
		t.Errorf("inspect without a transaction: %d %s", te.Status, te.Raw)
	}
}

func TestRoutesList(t *testing.T) {
	e := newEnv(t)
	cs := e.connect("", nil)
	out := success(t, call(t, cs, mcpserver.ToolRoutes, nil), "Listed 1 ephemeral rollup route(s) of cluster=local.")
	routes := out["routes"].([]any)
	if out["cluster"] != "local" || len(routes) != 1 {
		t.Fatalf("routes %v", out)
	}
	r := routes[0].(map[string]any)
	if r["identity"] != pubOf(erIdentityKey).String() || r["fqdn"] != testERURL {
		t.Errorf("route %v", r)
	}
	// A custom RPC URL has no router, as on the hosted API.
	te := failure(t, call(t, cs, mcpserver.ToolRoutes, map[string]any{"cluster": testBaseURL}))
	if te.Status != 400 || te.Code != mcpserver.CodeNoRouter {
		t.Errorf("custom cluster: %d %s", te.Status, te.Raw)
	}
	te = failure(t, call(t, cs, mcpserver.ToolRoutes, map[string]any{"cluster": "moon"}))
	if te.Status != 400 || te.Code != "INVALID_CLUSTER" {
		t.Errorf("invalid cluster: %d %s", te.Status, te.Raw)
	}
}

// TestBearerHeader: a token sent as the Authorization header of the MCP
// HTTP requests is applied as on REST; the tools never take one as an
// argument. spl.getPrivateBalance needs one that verifies for address.
func TestBearerHeader(t *testing.T) {
	e := newEnv(t)
	aliceKey, bobKey := seedKey("alice"), seedKey("bob")
	alice, bob := pubOf(aliceKey).String(), pubOf(bobKey).String()
	aliceToken, bobToken := e.login(aliceKey), e.login(bobKey)
	args := map[string]any{"address": alice, "mint": e.mint.String()}
	transfer := map[string]any{"from": alice, "to": bob, "mint": e.mint.String(), "amount": 1, "visibility": "public",
		"fromBalance": "ephemeral", "toBalance": "ephemeral"}
	transferBody, _ := json.Marshal(transfer)

	// Another wallet's valid token: 403, for the read and for a transfer
	// from alice's rollup balance.
	cs := e.connect("", http.Header{"Authorization": {"Bearer " + bobToken}})
	te := failure(t, call(t, cs, mcpserver.ToolGetPrivateBalance, args))
	if te.Status != http.StatusForbidden || te.Code != "TOKEN_IDENTITY_MISMATCH" {
		t.Errorf("private balance with bob's token: %d %s", te.Status, te.Raw)
	}
	sameAsREST(t, te, e.do(http.MethodGet, "/v1/spl/private-balance"+queryOf(t, args), "", "Authorization", "Bearer "+bobToken))
	te = failure(t, call(t, cs, mcpserver.ToolTransfer, transfer))
	if te.Code != "TOKEN_IDENTITY_MISMATCH" {
		t.Errorf("ephemeral transfer with bob's token: %s", te.Raw)
	}
	sameAsREST(t, te, e.do(http.MethodPost, "/v1/spl/transfer", string(transferBody), "Authorization", "Bearer "+bobToken))

	// No token: the private read is refused (the hosted tool takes none).
	te = failure(t, call(t, e.connect("", nil), mcpserver.ToolGetPrivateBalance, args))
	if te.Status != http.StatusUnauthorized || te.Code != "MISSING_AUTH_TOKEN" {
		t.Errorf("private balance without a token: %d %s", te.Status, te.Raw)
	}
	// Tokens this server did not issue: 401, as on REST.
	_, inner, _ := strings.Cut(aliceToken, ".")
	claims := strings.Split(inner, ".")[1]
	for name, bad := range map[string]string{
		"opaque":           alice + ".some-token",
		"mock":             alice + ".mock-auth-token",
		"alg none":         alice + ".eyJhbGciOiJub25lIn0." + claims + ".",
		"forged signature": alice + "." + strings.Join(strings.Split(inner, ".")[:2], ".") + "." + strings.Repeat("A", 86),
		"rebound to alice": alice + "." + strings.SplitN(bobToken, ".", 2)[1],
	} {
		h := http.Header{"Authorization": {"Bearer " + bad}}
		te := failure(t, call(t, e.connect("", h), mcpserver.ToolGetPrivateBalance, args))
		if te.Status != http.StatusUnauthorized || te.Code != "INVALID_AUTH_TOKEN" {
			t.Errorf("%s: %d %s", name, te.Status, te.Raw)
		}
		sameAsREST(t, te, e.do(http.MethodGet, "/v1/spl/private-balance"+queryOf(t, args), "", "Authorization", "Bearer "+bad))
	}
	// Alice's own token: the read works.
	cs = e.connect("", http.Header{"Authorization": {"Bearer " + aliceToken}})
	if out := success(t, call(t, cs, mcpserver.ToolGetPrivateBalance, args), ""); out["balance"] != "0" {
		t.Errorf("private balance with alice's token: %v", out)
	}
	// No tool asks for a key or a token.
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		props := asObject(t, tl.InputSchema)["properties"].(map[string]any)
		for name := range props {
			l := strings.ToLower(name)
			if strings.Contains(l, "secret") || strings.Contains(l, "privatekey") || strings.Contains(l, "keypair") ||
				strings.Contains(l, "token") || strings.Contains(l, "seed") || strings.Contains(l, "mnemonic") {
				t.Errorf("%s takes %q", tl.Name, name)
			}
		}
	}
}
