package rpcserver

import (
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TestSolanaGoDecodesNewMethods calls every method added for Agave parity
// through solana-go's rpc.Client over HTTP, proving the answers decode
// into its types, and checks the values it reads.
func TestSolanaGoDecodesNewMethods(t *testing.T) {
	n := startNode(t, ledger.Config{Name: "solana-go", ManualSlots: true, FinalityDepth: 2, SlotsPerEpoch: 32, ValidatorStake: testStake})
	n.h.SetClusterNode(ClusterNode{RPC: "127.0.0.1:8899", PubSub: "127.0.0.1:8900"})
	ctx := ctxT(t)
	c := n.client
	id := n.l.Identity()
	alice, spender := newKey(t), newKey(t)
	if _, err := n.l.Faucet().Airdrop(ctx, pub(alice), 5_000_000_000); err != nil {
		t.Fatal(err)
	}
	mint, _, err := n.l.Faucet().CreateMint(ctx, ledger.MintOptions{Decimals: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.l.Faucet().MintTo(ctx, mint, pub(alice), 7_000); err != nil {
		t.Fatal(err)
	}
	ata := spl.AssociatedTokenAddress(pub(alice), mint, spl.TokenProgramID)
	// The approval pays a priority fee, alone in its slot.
	if _, err := n.l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	bh, _ := n.l.LatestBlockhash(ledger.Processed)
	if _, err := n.l.Process(ctx, signed(t, bh.Blockhash, alice, []txwire.Instruction{
		{ProgramID: spl.ComputeBudgetProgramID, Data: append([]byte{3}, leU64(4242)...)},
		spl.TokenApprove(spl.TokenProgramID, ata, pub(spender), pub(alice), 500),
	})); err != nil {
		t.Fatal(err)
	}
	if _, err := n.l.AdvanceSlots(ctx, 5); err != nil {
		t.Fatal(err)
	}

	pa, err := c.GetProgramAccountsWithOpts(ctx, spl.TokenProgramID, &rpc.GetProgramAccountsOpts{
		Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentConfirmed,
		Filters: []rpc.RPCFilter{
			{DataSize: spl.TokenAccountSize},
			{Memcmp: &rpc.RPCFilterMemcmp{Offset: 32, Bytes: solana.Base58(pub(alice).Bytes())}},
		},
	})
	if err != nil || len(pa) != 1 || pa[0].Pubkey != ata {
		t.Fatalf("getProgramAccounts %+v %v", pa, err)
	}
	if ta, err := spl.DecodeTokenAccount(pa[0].Account.Data.GetBinary()); err != nil || ta.Amount != 7_000 {
		t.Fatalf("token account %+v %v", ta, err)
	}
	del, err := c.GetTokenAccountsByDelegate(ctx, pub(spender), &rpc.GetTokenAccountsConfig{Mint: &mint},
		&rpc.GetTokenAccountsOpts{Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentConfirmed})
	if err != nil || len(del.Value) != 1 || del.Value[0].Pubkey != ata {
		t.Fatalf("getTokenAccountsByDelegate %+v %v", del, err)
	}

	supply, err := c.GetSupply(ctx, rpc.CommitmentFinalized)
	total, _ := n.l.Supply(ledger.Finalized)
	if err != nil || supply.Value.Total != total || supply.Value.Circulating != total || supply.Value.NonCirculatingAccounts == nil {
		t.Fatalf("getSupply %+v %v", supply, err)
	}
	largest, err := c.GetLargestAccounts(ctx, rpc.CommitmentFinalized, rpc.LargestAccountsFilterCirculating)
	if err != nil || len(largest.Value) == 0 || largest.Value[0].Address != n.l.Faucet().PublicKey() {
		t.Fatalf("getLargestAccounts %+v %v", largest, err)
	}

	nodes, err := c.GetClusterNodes(ctx)
	if err != nil || len(nodes) != 1 || nodes[0].Pubkey != id || nodes[0].RPC == nil || *nodes[0].RPC != "127.0.0.1:8899" ||
		nodes[0].PubSub == nil || *nodes[0].PubSub != "127.0.0.1:8900" || nodes[0].Version == nil || nodes[0].ShredVersion == 0 {
		t.Fatalf("getClusterNodes %+v %v", nodes, err)
	}
	votes, err := c.GetVoteAccounts(ctx, &rpc.GetVoteAccountsOpts{Commitment: rpc.CommitmentConfirmed})
	if err != nil || len(votes.Current) != 1 || votes.Current[0].NodePubkey != id || votes.Current[0].ActivatedStake != testStake ||
		votes.Current[0].VotePubkey != ledger.ValidatorVoteAccount(id) || votes.Current[0].LastVote != n.l.Slot(ledger.Confirmed) ||
		len(votes.Current[0].EpochCredits) != 1 || votes.Current[0].EpochCredits[0][1] != int64(n.l.Slot(ledger.Finalized))*16 {
		t.Fatalf("getVoteAccounts %+v %v", votes, err)
	}
	sched, err := c.GetLeaderSchedule(ctx)
	if err != nil || len(sched) != 1 || len(sched[id]) != 32 || sched[id][31] != 31 {
		t.Fatalf("getLeaderSchedule %v %v", sched, err)
	}
	leaders, err := c.GetSlotLeaders(ctx, 3, 4)
	if err != nil || len(leaders) != 4 || leaders[3] != id {
		t.Fatalf("getSlotLeaders %v %v", leaders, err)
	}
	prod, err := c.GetBlockProduction(ctx)
	if err != nil || prod.Value.ByIdentity[id] != [2]int64{int64(prod.Value.Range.LastSlot + 1), int64(prod.Value.Range.LastSlot + 1)} {
		t.Fatalf("getBlockProduction %+v %v", prod, err)
	}
	conf := n.l.Slot(ledger.Confirmed)
	bc, err := c.GetBlockCommitment(ctx, conf)
	if err != nil || bc.TotalStake != testStake || len(bc.Commitment) != 32 || bc.Commitment[0] != testStake {
		t.Fatalf("getBlockCommitment %+v %v", bc, err)
	}
	samples, err := c.GetRecentPerformanceSamples(ctx, nil)
	if err != nil || samples == nil {
		t.Fatalf("getRecentPerformanceSamples %v %v", samples, err)
	}
	if _, err := c.GetHighestSnapshotSlot(ctx); err == nil {
		t.Fatal("getHighestSnapshotSlot: a snapshot")
	}
	if gov, err := c.GetInflationGovernor(ctx, rpc.CommitmentFinalized); err != nil || gov.Initial != 0.08 || gov.FoundationTerm != 7 {
		t.Fatalf("getInflationGovernor %+v %v", gov, err)
	}
	if rate, err := c.GetInflationRate(ctx); err != nil || rate.Epoch != 0 || rate.Total != 0.08 {
		t.Fatalf("getInflationRate %+v %v", rate, err)
	}
	// Epoch 0's rewards are in the first block of epoch 1, not produced yet.
	if _, err := c.GetInflationReward(ctx, []solana.PublicKey{pub(alice)}, nil); err == nil {
		t.Fatal("getInflationReward answered before epoch 1")
	}
	if m, err := c.GetStakeMinimumDelegation(ctx, rpc.CommitmentFinalized); err != nil || m.Value != 1_000_000_000 {
		t.Fatalf("getStakeMinimumDelegation %+v %v", m, err)
	}
	if s, err := c.GetMaxRetransmitSlot(ctx); err != nil || s != 0 {
		t.Fatalf("getMaxRetransmitSlot %d %v", s, err)
	}
	if s, err := c.GetMaxShredInsertSlot(ctx); err != nil || s != 0 {
		t.Fatalf("getMaxShredInsertSlot %d %v", s, err)
	}
	fees, err := c.GetRecentPrioritizationFees(ctx, nil)
	if err != nil || !containsFee(fees, 4242) {
		t.Fatalf("getRecentPrioritizationFees %+v %v", fees, err)
	}
	fees, err = c.GetRecentPrioritizationFees(ctx, solana.PublicKeySlice{ata})
	if err != nil || !containsFee(fees, 4242) {
		t.Fatalf("getRecentPrioritizationFees(ata) %+v %v", fees, err)
	}
}

func containsFee(fees []rpc.PriorizationFeeResult, fee uint64) bool {
	for _, f := range fees {
		if f.PrioritizationFee == fee {
			return true
		}
	}
	return false
}
