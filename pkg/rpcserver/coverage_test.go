package rpcserver

import (
	"slices"
	"testing"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// agaveHTTPMethods are the HTTP methods Agave 2.x/3.x registers (rpc.rs:
// rpc_minimal, rpc_bank, rpc_accounts, rpc_accounts_scan, rpc_full).
var agaveHTTPMethods = []string{
	"getAccountInfo", "getBalance", "getBlock", "getBlockCommitment", "getBlockHeight", "getBlockProduction",
	"getBlockTime", "getBlocks", "getBlocksWithLimit", "getClusterNodes", "getEpochInfo", "getEpochSchedule",
	"getFeeForMessage", "getFirstAvailableBlock", "getGenesisHash", "getHealth", "getHighestSnapshotSlot",
	"getIdentity", "getInflationGovernor", "getInflationRate", "getInflationReward", "getLargestAccounts",
	"getLatestBlockhash", "getLeaderSchedule", "getMaxRetransmitSlot", "getMaxShredInsertSlot",
	"getMinimumBalanceForRentExemption", "getMultipleAccounts", "getProgramAccounts", "getRecentPerformanceSamples",
	"getRecentPrioritizationFees", "getSignatureStatuses", "getSignaturesForAddress", "getSlot", "getSlotLeader",
	"getSlotLeaders", "getStakeMinimumDelegation", "getSupply", "getTokenAccountBalance", "getTokenAccountsByDelegate",
	"getTokenAccountsByOwner", "getTokenLargestAccounts", "getTokenSupply", "getTransaction", "getTransactionCount",
	"getVersion", "getVoteAccounts", "isBlockhashValid", "minimumLedgerSlot", "requestAirdrop", "sendTransaction",
	"simulateTransaction",
}

// removedMethods were removed in Agave 2.0 (or never served by it); Agave
// answers them with "Method not found".
var removedMethods = []string{
	"confirmTransaction", "getConfirmedBlock", "getConfirmedBlocks", "getConfirmedBlocksWithLimit",
	"getConfirmedSignaturesForAddress", "getConfirmedSignaturesForAddress2", "getConfirmedTransaction",
	"getFeeCalculatorForBlockhash", "getFeeRateGovernor", "getFees", "getRecentBlockhash", "getSignatureConfirmation",
	"getSignatureStatus", "getSnapshotSlot", "getStakeActivation", "getTotalSupply",
	"getStorageTurn", "getStorageTurnRate", "getSlotsPerSegment", "getStoragePubkeysForSlot", "registerNode",
	"deregisterNode", "signVote",
}

// TestAgaveMethodCoverage: the handler serves exactly Agave's HTTP
// methods, and the removed ones are not found, as on Agave.
func TestAgaveMethodCoverage(t *testing.T) {
	n := manualNode(t)
	if got := n.h.Methods(); !slices.Equal(got, slices.Sorted(slices.Values(agaveHTTPMethods))) {
		t.Fatalf("registered %v", got)
	}
	for _, m := range removedMethods {
		if _, e := call(t, n.h, m); e == nil || e.Code != CodeMethodNotFound || e.Message != "Method not found" {
			t.Errorf("%s: %+v", m, e)
		}
	}
}

// TestContextOptions covers withContext on the history methods (newer
// Agave) and getMinimumBalanceForRentExemption's limit.
func TestContextOptions(t *testing.T) {
	n := manualNode(t)
	payer := newKey(t)
	if _, err := n.l.Faucet().Airdrop(ctxT(t), pub(payer), 1_000_000_000); err != nil {
		t.Fatal(err)
	}
	bh, _ := n.l.LatestBlockhash(ledger.Processed)
	rec, err := n.l.Process(ctxT(t), signed(t, bh.Blockhash, payer, []txwire.Instruction{spl.Memo("ctx")}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.l.AdvanceSlots(ctxT(t), 3); err != nil {
		t.Fatal(err)
	}
	var sigs struct {
		Context struct{ Slot uint64 } `json:"context"`
		Value   []struct{ Signature string }
	}
	mustCall(t, n.h, &sigs, "getSignaturesForAddress", pub(payer).String(), map[string]any{"withContext": true, "commitment": "confirmed"})
	if sigs.Context.Slot != n.l.Slot(ledger.Confirmed) || len(sigs.Value) != 2 || sigs.Value[0].Signature != rec.Signature.String() {
		t.Fatalf("signatures %+v", sigs)
	}
	var bare []struct{ Signature string }
	mustCall(t, n.h, &bare, "getSignaturesForAddress", pub(payer).String())
	if len(bare) != 2 {
		t.Fatalf("without context %+v", bare)
	}
	var tx struct {
		Context struct{ Slot uint64 } `json:"context"`
		Value   struct{ Slot uint64 } `json:"value"`
	}
	mustCall(t, n.h, &tx, "getTransaction", rec.Signature.String(), map[string]any{"withContext": true, "commitment": "confirmed"})
	if tx.Context.Slot != n.l.Slot(ledger.Confirmed) || tx.Value.Slot != rec.Slot {
		t.Fatalf("transaction %+v", tx)
	}
	res, e := call(t, n.h, "getTransaction", "1111111111111111111111111111111111111111111111111111111111111111", map[string]any{"withContext": true})
	if e != nil || string(res) != `{"context":{"slot":`+uintString(n.l.Slot(ledger.Finalized))+`,"apiVersion":"3.0.0"},"value":null}` {
		t.Fatalf("unknown transaction with context: %s %+v", res, e)
	}
	checkErrors(t, n.h, []errorCase{
		{"getMinimumBalanceForRentExemption", []any{10<<20 + 1}, CodeInvalidRequest, "Invalid request"},
	})
	var rent uint64
	mustCall(t, n.h, &rent, "getMinimumBalanceForRentExemption", 10<<20)
	if rent != n.l.MinimumBalanceForRentExemption(10<<20) {
		t.Fatal(rent)
	}
}
