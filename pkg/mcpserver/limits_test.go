package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/ferry-sh/ferry/pkg/api"
	"github.com/ferry-sh/ferry/pkg/mcpserver"
)

func toolsList(id int) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/list","params":{}}`
}

func batchOf(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = toolsList(i + 1)
	}
	return "[" + strings.Join(items, ",") + "]"
}

// TestBodyPrecheck: deep bodies and batches over the limit are refused
// before the SDK decodes them (issue 13: 10k tools/list in one batch
// answered 279 MB); batches within the limit still work under 2025-03-26,
// the last protocol version that has them.
func TestBodyPrecheck(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"4 MiB of [ (over the body limit: the SDK's 413)", strings.Repeat("[", 4<<20), 413, ""},
		{"deep", strings.Repeat("[", 500_000), 400,
			`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error","data":"JSON nested deeper than 127 levels"},"id":null}`},
		{"deep arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chain.getSlot","arguments":{"x":` +
			strings.Repeat("[", 130) + strings.Repeat("]", 130) + `}}}`, 400,
			`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error","data":"JSON nested deeper than 127 levels"},"id":null}`},
		{"10k tools/list", batchOf(10_000), 400,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: batch of 10000 messages exceeds the limit of 32"},"id":null}`},
		{"33 tools/list", batchOf(mcpserver.DefaultMaxBatch + 1), 400,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: batch of 33 messages exceeds the limit of 32"},"id":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(http.MethodPost, mcpserver.Path, tc.body)
			if r.Status != tc.status || (tc.want != "" && string(r.Body) != tc.want) {
				t.Fatalf("%d %.300s\nwant %d %s", r.Status, r.Body, tc.status, tc.want)
			}
		})
	}
	// 32 messages (no MCP-Protocol-Version header: 2025-03-26) are served.
	r := e.do(http.MethodPost, mcpserver.Path, batchOf(mcpserver.DefaultMaxBatch))
	var items []json.RawMessage
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &items) != nil || len(items) != mcpserver.DefaultMaxBatch {
		t.Fatalf("batch of 32: %d %.200s", r.Status, r.Body)
	}
	// Under 2025-06-18 and later the SDK refuses any batch.
	r = e.do(http.MethodPost, mcpserver.Path, batchOf(2), "MCP-Protocol-Version", "2025-06-18")
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "batching is not supported") {
		t.Fatalf("batch under 2025-06-18: %d %s", r.Status, r.Body)
	}
}

// TestResponseBudget: an answer over MaxResponseBytes is replaced by a
// -32051 error.
func TestResponseBudget(t *testing.T) {
	e := newEnv(t)
	clusters, err := api.NewClusters(api.ClustersConfig{})
	if err != nil {
		t.Fatal(err)
	}
	small, err := mcpserver.New(mcpserver.Config{Service: e.api.Service(), Clusters: clusters, MaxResponseBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(small)
	t.Cleanup(srv.Close)
	post := func(body string) (int, string) {
		resp, err := http.Post(srv.URL+mcpserver.Path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// tools/list is about 30 KiB: over a 4 KiB budget.
	status, body := post(toolsList(1))
	want := `{"jsonrpc":"2.0","error":{"code":-32051,"message":"Response too large: the answer exceeds 4096 bytes; send fewer messages per request"},"id":null}`
	if status != http.StatusOK || body != want {
		t.Fatalf("tools/list over the budget: %d %.300s", status, body)
	}
	// A small answer passes.
	if status, body := post(initializeRequest); status != http.StatusOK || !strings.Contains(body, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize within the budget: %d %s", status, body)
	}
}
