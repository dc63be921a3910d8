package rpcserver

import (
	"fmt"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
)

// TestPrunedHistory: with a history limit, the slots pruned answer as
// Agave answers for purged ones: getBlock and getBlockTime -32001 naming
// the first available block, getTransaction and the statuses null,
// getBlocks from the first kept slot; minimumLedgerSlot and
// getFirstAvailableBlock report it.
func TestPrunedHistory(t *testing.T) {
	n := startNode(t, ledger.Config{Name: "pruned", ManualSlots: true, FinalityDepth: -1, LimitLedgerSize: 10})
	ctx := ctxT(t)
	var sigs []solana.Signature
	for i := 0; i < 400; i++ {
		sig, err := n.l.Faucet().Airdrop(ctx, pub(newKey(t)), 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, sig)
		if _, err := n.l.AdvanceSlot(ctx); err != nil {
			t.Fatal(err)
		}
	}
	first := n.l.FirstAvailableBlock()
	if first == 0 {
		t.Fatal("nothing was pruned")
	}
	for _, m := range []string{"getFirstAvailableBlock", "minimumLedgerSlot"} {
		var got uint64
		mustCall(t, n.h, &got, m)
		if got != first {
			t.Fatalf("%s = %d, want %d", m, got, first)
		}
	}
	want := fmt.Sprintf("Block %d cleaned up, does not exist on node. First available block: %d", first-1, first)
	for _, tc := range []struct {
		method string
		params []any
	}{
		{"getBlock", []any{first - 1, map[string]any{"commitment": "confirmed"}}},
		{"getBlockTime", []any{first - 1}},
	} {
		_, e := call(t, n.h, tc.method, tc.params...)
		if e == nil || e.Code != CodeBlockCleanedUp || e.Message != want {
			t.Fatalf("%s of a pruned slot: %+v, want %d %q", tc.method, e, CodeBlockCleanedUp, want)
		}
	}
	mustCall(t, n.h, nil, "getBlock", first, map[string]any{"commitment": "confirmed"})
	// A slot not confirmed yet is still "not available".
	if _, e := call(t, n.h, "getBlock", n.l.Slot(ledger.Processed)+10, map[string]any{"commitment": "confirmed"}); e == nil || e.Code != CodeBlockNotAvailable {
		t.Fatalf("getBlock of a future slot: %+v", e)
	}
	var blocks []uint64
	mustCall(t, n.h, &blocks, "getBlocks", 0, first+2, map[string]any{"commitment": "confirmed"})
	if len(blocks) != 3 || blocks[0] != first {
		t.Fatalf("getBlocks(0, %d) = %v", first+2, blocks)
	}
	oldest, newest := sigs[0], sigs[len(sigs)-1]
	res, e := call(t, n.h, "getTransaction", oldest.String(), map[string]any{"commitment": "confirmed"})
	if e != nil || string(res) != "null" {
		t.Fatalf("getTransaction of a pruned transaction: %s %+v", res, e)
	}
	var st struct {
		Value []*struct {
			Slot uint64 `json:"slot"`
		} `json:"value"`
	}
	mustCall(t, n.h, &st, "getSignatureStatuses", []string{oldest.String(), newest.String()}, map[string]any{"searchTransactionHistory": true})
	if len(st.Value) != 2 || st.Value[0] != nil || st.Value[1] == nil {
		t.Fatalf("statuses of a pruned and a kept transaction: %+v", st.Value)
	}
}
