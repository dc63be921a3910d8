package mcpserver_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/ferry-sh/ferry/pkg/mcpserver"
)

// TestToolsRefuseDisallowedUpstreams: every tool argument that names a
// cluster or an endpoint follows the REST API's allow-list: a URL that is
// neither configured nor allowed is an error result, 400
// UPSTREAM_NOT_ALLOWED, and the named listener never sees a request.
func TestToolsRefuseDisallowedUpstreams(t *testing.T) {
	var n atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	defer target.Close()
	e := newEnv(t)
	aliceKey := seedKey("alice")
	alice, bob := pubOf(aliceKey).String(), pubOf(seedKey("bob")).String()
	cs := e.connect("", http.Header{"Authorization": {"Bearer " + e.login(aliceKey)}})
	mint := e.mint.String()
	u := target.URL + "/?api-key=SECRET"
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{mcpserver.ToolDeposit, map[string]any{"owner": alice, "mint": mint, "amount": 1, "cluster": u}},
		{mcpserver.ToolWithdraw, map[string]any{"owner": alice, "mint": mint, "amount": 1, "cluster": u}},
		{mcpserver.ToolTransfer, map[string]any{"from": alice, "to": bob, "mint": mint, "amount": 1, "visibility": "public",
			"fromBalance": "base", "toBalance": "base", "cluster": u}},
		{mcpserver.ToolGetBalance, map[string]any{"address": alice, "mint": mint, "cluster": u}},
		{mcpserver.ToolGetPrivateBalance, map[string]any{"address": alice, "mint": mint, "cluster": u}},
		{mcpserver.ToolInitializeMint, map[string]any{"payer": alice, "mint": mint, "cluster": u}},
		{mcpserver.ToolSend, map[string]any{"transactionBase64": "AQ==", "sendTo": "base", "cluster": u}},
		{mcpserver.ToolSend, map[string]any{"transactionBase64": "AQ==", "sendTo": "ephemeral", "sendRpcEndpoint": u}},
		{mcpserver.ToolRoutes, map[string]any{"cluster": u}},
		{mcpserver.ToolSignatureStatuses, map[string]any{"signatures": []string{"1111111111111111111111111111111111111111111111111111111111111111"}, "cluster": u}},
		{mcpserver.ToolGetTransaction, map[string]any{"signature": "1111111111111111111111111111111111111111111111111111111111111111", "cluster": u}},
		{mcpserver.ToolGetSlot, map[string]any{"cluster": u, "layer": "ephemeral"}},
	} {
		te := failure(t, call(t, cs, tc.tool, tc.args))
		if te.Status != http.StatusBadRequest || te.Code != "UPSTREAM_NOT_ALLOWED" {
			t.Errorf("%s %v: %d %s", tc.tool, tc.args, te.Status, te.Raw)
		}
	}
	if got := n.Load(); got != 0 {
		t.Fatalf("the disallowed listener got %d requests", got)
	}
}
