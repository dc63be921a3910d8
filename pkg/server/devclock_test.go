package server

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"slices"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/keyfile"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/mcpserver"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// clockTools are the MCP tools of the clock controls.
var clockTools = []string{
	mcpserver.ToolDevTimeTravel, mcpserver.ToolDevAdvanceClock, mcpserver.ToolDevPauseClock, mcpserver.ToolDevResumeClock,
	mcpserver.ToolDevSetBlockMode, mcpserver.ToolDevMineBlocks, mcpserver.ToolDevGetClock,
}

// sendBuilt signs a transaction an MCP build tool returned and sends it
// with transaction.send, confirmed.
func sendBuilt(t *testing.T, cs *mcp.ClientSession, key ed25519.PrivateKey, built map[string]any) {
	t.Helper()
	raw, _ := base64.StdEncoding.DecodeString(built["transactionBase64"].(string))
	tx, err := txwire.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Sign(key); err != nil {
		t.Fatal(err)
	}
	callTool(t, cs, mcpserver.ToolSend, map[string]any{"transactionBase64": tx.Base64(), "sendTo": built["sendTo"], "confirm": true, "waitForOutcome": true,
		"recentBlockhash": built["recentBlockhash"], "lastValidBlockHeight": built["lastValidBlockHeight"]}, nil)
}

// TestClockControlsServed: ferry serve's nodes answer the clock methods
// over JSON-RPC (surfpool's names with EpochInfo, ferry's with the clock
// view) and MCP, and advancing the rollup clock ten minutes makes a
// private payout delayed ten minutes due: the local validator pays it
// without a crank request.
func TestClockControlsServed(t *testing.T) {
	serveNode(t, fast("", ""), func(n *Node, info *Info) {
		p := n.Local.Pair
		base, err := chainclient.New(info.URLs[KeyRPC])
		if err != nil {
			t.Fatal(err)
		}
		// JSON-RPC on base: surfnet_timeTravel answers EpochInfo and the
		// node's getEpochInfo agrees.
		var ei devchain.EpochInfo
		target := p.Base.Slot(ledger.Processed) + 10_000
		if err := base.Call(t.Context(), devchain.MethodTimeTravel, []any{map[string]any{"absoluteSlot": target}}, &ei); err != nil {
			t.Fatal(err)
		}
		if ei.AbsoluteSlot != target {
			t.Fatalf("timeTravel %+v, want slot %d", ei, target)
		}
		var v devchain.ClockView
		if err := base.Call(t.Context(), devchain.MethodGetClock, []any{}, &v); err != nil {
			t.Fatal(err)
		}
		if v.Node != devchain.NodeBase || v.AbsoluteSlot < target || v.OffsetSeconds < 199 {
			t.Fatalf("getClock after travel %+v", v)
		}

		cs := mcpConnect(t, info.MCP)
		names := toolNames(t, cs)
		for _, tool := range clockTools {
			if !slices.Contains(names, tool) {
				t.Fatalf("tools/list %v lacks %s", names, tool)
			}
		}
		// MCP on the rollup: pause, manual mode, mine, resume.
		callTool(t, cs, mcpserver.ToolDevPauseClock, map[string]any{"layer": "ephemeral"}, &v)
		if !v.Paused || v.Node != devchain.NodeEphemeral {
			t.Fatalf("pause %+v", v)
		}
		callTool(t, cs, mcpserver.ToolDevSetBlockMode, map[string]any{"layer": "ephemeral", "mode": "manual"}, &v)
		before := v
		callTool(t, cs, mcpserver.ToolDevMineBlocks, map[string]any{"layer": "ephemeral", "count": 4}, &v)
		if v.AbsoluteSlot != before.AbsoluteSlot+4 || v.BlockProductionMode != "manual" {
			t.Fatalf("mine 4 from %+v: %+v", before, v)
		}
		callTool(t, cs, mcpserver.ToolDevSetBlockMode, map[string]any{"layer": "ephemeral", "mode": "clock"}, &v)
		callTool(t, cs, mcpserver.ToolDevResumeClock, map[string]any{"layer": "ephemeral"}, &v)
		callTool(t, cs, mcpserver.ToolDevGetClock, map[string]any{"layer": "ephemeral"}, &v)
		if v.Paused || v.BlockProductionMode != "clock" {
			t.Fatalf("clock after resume %+v", v)
		}
		callTool(t, cs, mcpserver.ToolDevTimeTravel, map[string]any{"layer": "base", "absoluteEpoch": 1}, &v)
		if v.Epoch != 1 || v.SlotIndex != 0 {
			t.Fatalf("travel to epoch 1: %+v", v)
		}
		if e := toolError(t, cs, mcpserver.ToolDevTimeTravel, map[string]any{"absoluteSlot": 1}); e["code"] != mcpserver.CodeCheatcodeRefused {
			t.Fatalf("travel to the past: %v", e)
		}
		if e := toolError(t, cs, mcpserver.ToolDevSetBlockMode, map[string]any{"mode": "sometimes"}); e["code"] != "VALIDATION_ERROR" {
			t.Fatalf("unknown mode: %v", e)
		}

		// The rollup clock: a private payout delayed ten minutes.
		alice, bob := info.Demo.Wallets[0], info.Demo.Wallets[1]
		aliceKey, err := keyfile.Read(alice.Keypair)
		if err != nil {
			t.Fatal(err)
		}
		mint := info.Demo.Mint
		var built map[string]any
		callTool(t, cs, mcpserver.ToolDeposit, map[string]any{"owner": alice.Address, "mint": mint, "amount": 3_000_000}, &built)
		sendBuilt(t, cs, aliceKey, built)
		callTool(t, cs, mcpserver.ToolTransfer, map[string]any{"from": alice.Address, "to": bob.Address, "mint": mint, "amount": 1_000_000,
			"visibility": "private", "fromBalance": "ephemeral", "toBalance": "base", "minDelayMs": "600000", "clientRefId": "77"}, &built)
		sendBuilt(t, cs, aliceKey, built)
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
		entry := q.Queues[0].Entries[0]
		if entry.State != devchain.StatePending || entry.ReadyAt < q.NowMs+599_000 {
			t.Fatalf("queued payout %+v (now %d)", entry, q.NowMs)
		}
		bobATA := spl.AssociatedTokenAddress(solana.MustPublicKeyFromBase58(bob.Address), solana.MustPublicKeyFromBase58(mint), spl.TokenProgramID)
		start, _ := p.Base.Account(bobATA, ledger.Confirmed)
		callTool(t, cs, mcpserver.ToolDevAdvanceClock, map[string]any{"layer": "ephemeral", "seconds": 601}, &v)
		if v.UnixTimestamp*1000 < entry.ReadyAt {
			t.Fatalf("rollup clock %d s, payout due at %d ms", v.UnixTimestamp, entry.ReadyAt)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		for {
			a, _ := p.Base.Account(bobATA, ledger.Confirmed)
			if spl.TokenAmountOf(a.Data)-spl.TokenAmountOf(start.Data) == 1_000_000 {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("the payout was not paid after the rollup clock passed its due time (bob has %d)", spl.TokenAmountOf(a.Data))
			case <-time.After(20 * time.Millisecond):
			}
		}

		// Rollup controls still finish while both nodes make blocks only
		// on demand: the validator ends the slots it waits for.
		for _, layer := range []string{"base", "ephemeral"} {
			callTool(t, cs, mcpserver.ToolDevSetBlockMode, map[string]any{"layer": layer, "mode": "manual"}, &v)
		}
		callTool(t, cs, mcpserver.ToolDevPauseClock, map[string]any{"layer": "base"}, &v)
		var rr devchain.RollupResult
		callTool(t, cs, mcpserver.ToolDevCommitAccount, map[string]any{"account": alice.Address, "mint": mint}, &rr)
		if rr.Amount != "2000000" || len(rr.Transactions) == 0 {
			t.Fatalf("commit with manual block production: %+v", rr)
		}
	})
}
