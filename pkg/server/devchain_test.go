package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gagliardetto/solana-go"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/keyfile"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/mcpserver"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// devTools are the MCP tools of the cheatcodes and rollup controls.
var devTools = []string{
	mcpserver.ToolDevSetAccount, mcpserver.ToolDevSetTokenAccount, mcpserver.ToolDevSetMint, mcpserver.ToolDevResetAccount,
	mcpserver.ToolDevProfile, mcpserver.ToolDevExportSnapshot, mcpserver.ToolDevImportSnapshot, mcpserver.ToolDevHaltLedger,
	mcpserver.ToolDevCommitAccount, mcpserver.ToolDevUndelegateAccount, mcpserver.ToolDevCrankQueue, mcpserver.ToolDevGetQueue,
}

func mcpConnect(t *testing.T, endpoint string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "ferry-dev-test", Version: "1.0.0"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range list.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// callTool calls a tool and decodes its structured result; it fails the
// test when the result is an error unless wantErr, in which case it
// returns the error body.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any, out any) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError {
		t.Fatalf("%s %v: %s", name, args, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %s: %v", name, b, err)
		}
	}
}

// toolError calls a tool that must fail and returns its error body.
func toolError(t *testing.T, cs *mcp.ClientSession, name string, args any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !res.IsError {
		t.Fatalf("%s %v succeeded", name, args)
	}
	var body struct {
		Error map[string]any `json:"error"`
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			json.Unmarshal([]byte(tc.Text), &body)
		}
	}
	if body.Error == nil {
		b, _ := json.Marshal(res)
		t.Fatalf("%s: no error body in %s", name, b)
	}
	return body.Error
}

// TestCheatcodesServed: in ferry serve's local mode the cheatcodes are on
// both chain nodes (local-only: a browser needs an allowed origin), a
// cheat write reaches websocket subscribers, and every cheatcode and
// rollup control works as an MCP tool, including a commit and an
// undelegation of a real deposit.
func TestCheatcodesServed(t *testing.T) {
	serveNode(t, fast("", ""), func(n *Node, info *Info) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p := n.Local.Pair
		if n.Local.Dev == nil {
			t.Fatal("no cheatcodes in local mode")
		}

		// PubSub: an accountSubscribe at processed sees a cheat write.
		key := solana.NewWallet().PublicKey()
		ws, _, err := websocket.Dial(ctx, info.URLs[KeyRPCWS], nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.CloseNow()
		sub := `{"jsonrpc":"2.0","id":1,"method":"accountSubscribe","params":["` + key.String() + `",{"commitment":"processed","encoding":"base64"}]}`
		if err := ws.Write(ctx, websocket.MessageText, []byte(sub)); err != nil {
			t.Fatal(err)
		}
		if _, b, err := ws.Read(ctx); err != nil || !strings.Contains(string(b), `"result":`) {
			t.Fatalf("subscribe: %s %v", b, err)
		}
		var set struct {
			Error *rpcserver.Error `json:"error"`
		}
		postJSON(t, info.URLs[KeyRPC], `{"jsonrpc":"2.0","id":1,"method":"surfnet_setAccount","params":["`+key.String()+`",{"lamports":4242000}]}`, &set)
		if set.Error != nil {
			t.Fatalf("setAccount: %+v", set.Error)
		}
		_, b, err := ws.Read(ctx)
		if err != nil || !strings.Contains(string(b), `"accountNotification"`) || !strings.Contains(string(b), `"lamports":4242000`) {
			t.Fatalf("notification: %s %v", b, err)
		}

		// Local-only: a browser from an origin not allowed is refused.
		req, _ := http.NewRequest(http.MethodPost, info.URLs[KeyEphemeral], strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ferry_crankQueue","params":[]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://evil.example")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var refused struct {
			Error *rpcserver.Error `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&refused)
		resp.Body.Close()
		if refused.Error == nil || refused.Error.Code != rpcserver.CodeOriginNotAllowed {
			t.Fatalf("browser call from another origin: %+v", refused.Error)
		}

		// MCP: every dev tool is listed.
		cs := mcpConnect(t, info.MCP)
		names := toolNames(t, cs)
		for _, tool := range devTools {
			if !slices.Contains(names, tool) {
				t.Fatalf("tools/list %v lacks %s", names, tool)
			}
		}
		alice := info.Demo.Wallets[0]
		aliceKey, err := keyfile.Read(alice.Keypair)
		if err != nil {
			t.Fatal(err)
		}
		mint := info.Demo.Mint

		var wr devchain.WriteResult
		other := solana.NewWallet().PublicKey().String()
		callTool(t, cs, mcpserver.ToolDevSetAccount, map[string]any{"address": other, "lamports": 7_000_000, "dataBase64": "AQID"}, &wr)
		if wr.Node != devchain.NodeBase || len(wr.Accounts) != 1 || wr.Accounts[0] != other {
			t.Fatalf("setAccount result %+v", wr)
		}
		if a, _ := p.Base.Account(solana.MustPublicKeyFromBase58(other), ledger.Processed); a == nil || a.Lamports != 7_000_000 || len(a.Data) != 3 {
			t.Fatalf("account after dev.setAccount %+v", a)
		}
		callTool(t, cs, mcpserver.ToolDevSetAccount, map[string]any{"layer": "ephemeral", "address": other, "lamports": 1_000_000}, &wr)
		if a, _ := p.Ephemeral.Account(solana.MustPublicKeyFromBase58(other), ledger.Processed); wr.Node != devchain.NodeEphemeral || a == nil || a.Lamports != 1_000_000 {
			t.Fatalf("ephemeral setAccount %+v %+v", wr, a)
		}
		callTool(t, cs, mcpserver.ToolDevSetTokenAccount, map[string]any{"owner": alice.Address, "mint": mint, "amount": 2_000_000_000}, &wr)
		ata := spl.AssociatedTokenAddress(solana.MustPublicKeyFromBase58(alice.Address), solana.MustPublicKeyFromBase58(mint), spl.TokenProgramID)
		if a, _ := p.Base.Account(ata, ledger.Processed); spl.TokenAmountOf(a.Data) != 2_000_000_000 {
			t.Fatalf("alice's ATA after dev.setTokenAccount: %d", spl.TokenAmountOf(a.Data))
		}
		newMint := solana.NewWallet().PublicKey().String()
		callTool(t, cs, mcpserver.ToolDevSetMint, map[string]any{"mint": newMint, "decimals": 2, "supply": 100}, &wr)
		callTool(t, cs, mcpserver.ToolDevResetAccount, map[string]any{"address": other}, &wr)
		if a, _ := p.Base.Account(solana.MustPublicKeyFromBase58(other), ledger.Processed); a != nil {
			t.Fatal("dev.resetAccount left the account")
		}
		var snap devchain.ExportResult
		callTool(t, cs, mcpserver.ToolDevExportSnapshot, map[string]any{"accounts": []string{newMint, ata.String()}, "includeParsedAccounts": true}, &snap)
		if len(snap.Accounts) != 2 || snap.Accounts[newMint] == nil || !strings.Contains(string(snap.Accounts[newMint].ParsedData), `"decimals":2`) {
			t.Fatalf("export %+v", snap)
		}
		// The mint (not alice's balance: an imported token account is not
		// backed on base) goes to the rollup.
		var imported devchain.ImportResult
		raw, _ := json.Marshal(devchain.Snapshot{newMint: snap.Accounts[newMint]})
		var accounts map[string]any
		json.Unmarshal(raw, &accounts)
		callTool(t, cs, mcpserver.ToolDevImportSnapshot, map[string]any{"layer": "ephemeral", "accounts": accounts}, &imported)
		if len(imported.Accounts) != 1 || imported.Node != devchain.NodeEphemeral {
			t.Fatalf("import %+v", imported)
		}
		if a, _ := p.Ephemeral.Account(solana.MustPublicKeyFromBase58(newMint), ledger.Processed); a == nil || a.Lamports != snap.Accounts[newMint].Lamports {
			t.Fatalf("imported mint on the rollup %+v", a)
		}
		bh, _ := p.Base.LatestBlockhash(ledger.Processed)
		msg, err := txwire.Compile(solana.MustPublicKeyFromBase58(alice.Address),
			[]txwire.Instruction{spl.SystemTransfer(solana.MustPublicKeyFromBase58(alice.Address), solana.NewWallet().PublicKey(), 1_000_000)}, bh.Blockhash)
		if err != nil {
			t.Fatal(err)
		}
		var prof struct {
			Key                 string `json:"key"`
			InstructionProfiles []any  `json:"instructionProfiles"`
			TransactionProfile  struct {
				ComputeUnitsConsumed uint64 `json:"computeUnitsConsumed"`
			} `json:"transactionProfile"`
		}
		callTool(t, cs, mcpserver.ToolDevProfile, map[string]any{"transaction": txwire.NewUnsigned(msg).Base64(), "depth": "transaction"}, &prof)
		if prof.TransactionProfile.ComputeUnitsConsumed == 0 || prof.InstructionProfiles != nil || prof.Key == "" {
			t.Fatalf("profile %+v", prof)
		}

		// Refusals: the schema's (422), and the cheatcode's own (400
		// CHEATCODE_REFUSED with the JSON-RPC code).
		if e := toolError(t, cs, mcpserver.ToolDevSetTokenAccount, map[string]any{"owner": alice.Address, "mint": mint, "state": "melted"}); e["code"] != "VALIDATION_ERROR" {
			t.Fatalf("bad state: %v", e)
		}
		if e := toolError(t, cs, mcpserver.ToolDevSetTokenAccount, map[string]any{"owner": alice.Address, "mint": other, "amount": 1}); e["code"] != mcpserver.CodeCheatcodeRefused ||
			!strings.Contains(e["message"].(string), "does not exist") {
			t.Fatalf("missing mint: %v", e)
		}
		if e := toolError(t, cs, mcpserver.ToolDevCommitAccount, map[string]any{"account": alice.Address, "mint": mint}); e["code"] != mcpserver.CodeCheatcodeRefused ||
			!strings.Contains(e["message"].(string), "not delegated") {
			t.Fatalf("commit before a deposit: %v", e)
		}

		// A real deposit, built and sent through the MCP tools, then
		// committed and undelegated by the rollup controls.
		var dep struct {
			TransactionBase64    string `json:"transactionBase64"`
			SendTo               string `json:"sendTo"`
			RecentBlockhash      string `json:"recentBlockhash"`
			LastValidBlockHeight int64  `json:"lastValidBlockHeight"`
		}
		callTool(t, cs, mcpserver.ToolDeposit, map[string]any{"owner": alice.Address, "mint": mint, "amount": 3_000_000}, &dep)
		rawTx, _ := base64.StdEncoding.DecodeString(dep.TransactionBase64)
		tx, err := txwire.Decode(rawTx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Sign(aliceKey); err != nil {
			t.Fatal(err)
		}
		callTool(t, cs, mcpserver.ToolSend, map[string]any{"transactionBase64": tx.Base64(), "sendTo": dep.SendTo, "confirm": true, "waitForOutcome": true,
			"recentBlockhash": dep.RecentBlockhash, "lastValidBlockHeight": dep.LastValidBlockHeight}, nil)

		// A private payout to bob delayed ten minutes, settled now by
		// dev.crankQueue after dev.getQueue shows it pending.
		bob := info.Demo.Wallets[1]
		var tr struct {
			TransactionBase64    string `json:"transactionBase64"`
			SendTo               string `json:"sendTo"`
			RecentBlockhash      string `json:"recentBlockhash"`
			LastValidBlockHeight int64  `json:"lastValidBlockHeight"`
		}
		callTool(t, cs, mcpserver.ToolTransfer, map[string]any{"from": alice.Address, "to": bob.Address, "mint": mint, "amount": 1_000_000,
			"visibility": "private", "fromBalance": "ephemeral", "toBalance": "base", "minDelayMs": "600000", "clientRefId": "9"}, &tr)
		rawTx, _ = base64.StdEncoding.DecodeString(tr.TransactionBase64)
		if tx, err = txwire.Decode(rawTx); err != nil {
			t.Fatal(err)
		}
		if err := tx.Sign(aliceKey); err != nil {
			t.Fatal(err)
		}
		callTool(t, cs, mcpserver.ToolSend, map[string]any{"transactionBase64": tx.Base64(), "sendTo": tr.SendTo, "confirm": true,
			"recentBlockhash": tr.RecentBlockhash, "lastValidBlockHeight": tr.LastValidBlockHeight}, nil)
		var q devchain.QueueView
		for wait := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			callTool(t, cs, mcpserver.ToolDevGetQueue, map[string]any{"mint": mint}, &q)
			if len(q.Queues) == 1 && len(q.Queues[0].Entries) == 1 {
				break
			}
			if time.Now().After(wait) {
				t.Fatalf("the payout was never queued: %+v", q)
			}
		}
		if e := q.Queues[0].Entries[0]; e.State != devchain.StatePending || e.ClientRefID != "9" || e.Destination != bob.Address || e.ReadyAt < q.NowMs+599_000 {
			t.Fatalf("queued payout %+v (now %d)", e, q.NowMs)
		}
		bobATA := spl.AssociatedTokenAddress(solana.MustPublicKeyFromBase58(bob.Address), solana.MustPublicKeyFromBase58(mint), spl.TokenProgramID)
		before, _ := p.Base.Account(bobATA, ledger.Confirmed)
		var cr devchain.CrankResult
		callTool(t, cs, mcpserver.ToolDevCrankQueue, map[string]any{"mint": mint, "clientRefId": "9"}, &cr)
		if len(cr.Settled) != 1 || cr.Settled[0].Amount != "1000000" {
			t.Fatalf("crank %+v", cr)
		}
		if after, _ := p.Base.Account(bobATA, ledger.Confirmed); spl.TokenAmountOf(after.Data)-spl.TokenAmountOf(before.Data) != 1_000_000 {
			t.Fatalf("bob received %d", spl.TokenAmountOf(after.Data)-spl.TokenAmountOf(before.Data))
		}

		// Commit, then undelegate what is left on the rollup (3 tokens
		// deposited, 1 paid out).
		var rr devchain.RollupResult
		callTool(t, cs, mcpserver.ToolDevCommitAccount, map[string]any{"account": alice.Address, "mint": mint}, &rr)
		if rr.Amount != "2000000" || rr.Owner != alice.Address || len(rr.Transactions) == 0 {
			t.Fatalf("commit %+v", rr)
		}
		callTool(t, cs, mcpserver.ToolDevUndelegateAccount, map[string]any{"account": rr.Account}, &rr)
		if rr.Amount != "2000000" {
			t.Fatalf("undelegate %+v", rr)
		}

		// Halting the rollup through MCP: its health turns.
		var halt devchain.HaltResult
		callTool(t, cs, mcpserver.ToolDevHaltLedger, map[string]any{"layer": "ephemeral", "reason": "mcp test"}, &halt)
		if halt.Halting != "mcp test" {
			t.Fatalf("halt %+v", halt)
		}
		deadline := time.Now().Add(10 * time.Second)
		for p.Ephemeral.Health() == nil {
			if time.Now().After(deadline) {
				t.Fatal("the rollup did not halt")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestNoCheatcodes: with NoCheatcodes the methods answer Method not
// found on both nodes (ferry_haltLedger and ferry_advanceSlot too) and MCP has no dev tools;
// a gateway never has them.
func TestNoCheatcodes(t *testing.T) {
	o := fast("", "")
	o.NoCheatcodes, o.Demo.Disabled = true, true
	serveNode(t, o, func(n *Node, info *Info) {
		if n.Local.Dev != nil {
			t.Fatal("cheatcodes built with NoCheatcodes")
		}
		for _, c := range []struct{ url, method string }{
			{info.URLs[KeyRPC], devchain.MethodSetAccount}, {info.URLs[KeyRPC], devchain.MethodHaltLedger},
			{info.URLs[KeyRPC], devchain.MethodAdvanceSlot}, {info.URLs[KeyEphemeral], devchain.MethodAdvanceSlot},
			{info.URLs[KeyEphemeral], devchain.FerrySetTokenAccount}, {info.URLs[KeyEphemeral], devchain.MethodCrankQueue},
			{info.URLs[KeyRPC], devchain.MethodTimeTravel}, {info.URLs[KeyEphemeral], devchain.MethodAdvanceClock},
			{info.URLs[KeyRPC], devchain.MethodPauseClock}, {info.URLs[KeyRPC], devchain.MethodMineBlocks},
		} {
			c2, _ := chainclient.New(c.url)
			err := c2.Call(t.Context(), c.method, []any{}, nil)
			var re *chainclient.RPCError
			if !errors.As(err, &re) || re.Code != rpcserver.CodeMethodNotFound {
				t.Fatalf("%s at %s: %v", c.method, c.url, err)
			}
		}
		if names := toolNames(t, mcpConnect(t, info.MCP)); slices.ContainsFunc(names, func(s string) bool { return strings.HasPrefix(s, "dev.") }) {
			t.Fatalf("tools %v", names)
		}
	})

	base, err := ledger.Open(ledger.Config{Name: "up-base", SlotDuration: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { base.Close() })
	bs := httptest.NewServer(rpcserver.New(base, rpcserver.Options{}))
	t.Cleanup(bs.Close)
	g := Options{Cluster: bs.URL, DataDir: t.TempDir(), APIAddr: "127.0.0.1:0", RouterAddr: "127.0.0.1:0",
		Getenv: func(k string) string { return map[string]string{"EPHEMERAL_RPC_URL": bs.URL}[k] },
		Routes: []chainclient.Route{{FQDN: bs.URL, Identity: base.Identity()}}}
	serveNode(t, g, func(n *Node, info *Info) {
		if names := toolNames(t, mcpConnect(t, info.MCP)); slices.ContainsFunc(names, func(s string) bool { return strings.HasPrefix(s, "dev.") }) {
			t.Fatalf("gateway tools %v", names)
		}
	})
}

// TestDevToolsMatchExpectations: ferry serve in local mode lists the tools
// of testdata/mcp/expectations.json followed by its devTools, with their
// titles and required inputs (the file the TypeScript client check that
// .ci/run runs against ferry serve reads too).
func TestDevToolsMatchExpectations(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mcp", "expectations.json"))
	if err != nil {
		t.Fatal(err)
	}
	type tool struct {
		Name     string   `json:"name"`
		Title    string   `json:"title"`
		Required []string `json:"required"`
	}
	var x struct {
		Tools    []tool `json:"tools"`
		DevTools []tool `json:"devTools"`
	}
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	want := append(append([]tool{}, x.Tools...), x.DevTools...)
	serveNode(t, fast("", ""), func(n *Node, info *Info) {
		cs := mcpConnect(t, info.URLs[KeyAPI]+"/mcp")
		list, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []tool
		for _, tl := range list.Tools {
			b, _ := json.Marshal(tl.InputSchema)
			var in struct{ Required []string }
			if err := json.Unmarshal(b, &in); err != nil {
				t.Fatal(err)
			}
			slices.Sort(in.Required)
			got = append(got, tool{Name: tl.Name, Title: tl.Title, Required: in.Required})
		}
		slices.SortFunc(got, func(a, b tool) int { return strings.Compare(a.Name, b.Name) })
		slices.SortFunc(want, func(a, b tool) int { return strings.Compare(a.Name, b.Name) })
		if len(got) != len(want) {
			t.Fatalf("%d tools, want %d: %v", len(got), len(want), got)
		}
		for i := range want {
			w := want[i]
			w.Required = slices.Sorted(slices.Values(w.Required))
			if got[i].Name != w.Name || got[i].Title != w.Title || !slices.Equal(got[i].Required, w.Required) {
				t.Errorf("tool %+v, want %+v", got[i], w)
			}
		}
	})
}
