package rpcserver

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

const testStake = 5_000_000_000_000_000

// stakedNode is a manual-slot node with a genesis vote account, 16-slot
// epochs and a performance sample at every slot, advanced to confirmed
// slot 20 (finalized 18, working slot 21).
func stakedNode(t *testing.T) *node {
	t.Helper()
	n := startNode(t, ledger.Config{Name: "staked", ManualSlots: true, FinalityDepth: 2, SlotsPerEpoch: 16,
		ValidatorStake: testStake, PerformanceSamplePeriod: time.Nanosecond})
	if last, err := n.l.AdvanceSlots(ctxT(t), 20); err != nil || last != 20 {
		t.Fatal(last, err)
	}
	return n
}

// errorCase is a request that must fail with code and message.
type errorCase struct {
	method string
	params []any
	code   int
	msg    string
}

func checkErrors(t *testing.T, h *Handler, cases []errorCase) {
	t.Helper()
	for _, tc := range cases {
		_, e := call(t, h, tc.method, tc.params...)
		if e == nil || e.Code != tc.code || e.Message != tc.msg {
			t.Errorf("%s %v: error %+v, want %d %q", tc.method, tc.params, e, tc.code, tc.msg)
		}
	}
}

func TestGetClusterNodes(t *testing.T) {
	n := stakedNode(t)
	var got []map[string]any
	mustCall(t, n.h, &got, "getClusterNodes")
	g := n.l.GenesisHash()
	var x0, x1 byte
	for i := 0; i < 32; i += 2 {
		x0, x1 = x0^g[i], x1^g[i+1]
	}
	shred := float64(uint16(x0)<<8|uint16(x1)) + 1
	if len(got) != 1 || got[0]["pubkey"] != n.l.Identity().String() || got[0]["rpc"] != nil || got[0]["gossip"] != nil ||
		got[0]["version"] != "3.0.0" || got[0]["shredVersion"] != shred {
		t.Fatalf("before SetClusterNode: %v", got)
	}
	for _, k := range []string{"gossip", "tvu", "tpu", "tpuQuic", "tpuForwards", "tpuForwardsQuic", "tpuVote", "serveRepair", "rpc", "pubsub", "featureSet"} {
		if _, ok := got[0][k]; !ok {
			t.Errorf("field %s missing", k)
		}
	}
	n.h.SetClusterNode(ClusterNode{RPC: "127.0.0.1:8899", PubSub: "127.0.0.1:8900"})
	mustCall(t, n.h, &got, "getClusterNodes")
	if got[0]["rpc"] != "127.0.0.1:8899" || got[0]["pubsub"] != "127.0.0.1:8900" {
		t.Fatalf("after SetClusterNode: %v", got)
	}
	checkErrors(t, n.h, []errorCase{{"getClusterNodes", []any{1}, -32602, "Invalid params: invalid length 1, expected fewer elements in array."}})
}

type voteInfo struct {
	VotePubkey       solana.PublicKey `json:"votePubkey"`
	NodePubkey       solana.PublicKey `json:"nodePubkey"`
	ActivatedStake   uint64           `json:"activatedStake"`
	EpochVoteAccount bool             `json:"epochVoteAccount"`
	Commission       uint8            `json:"commission"`
	LastVote         uint64           `json:"lastVote"`
	RootSlot         uint64           `json:"rootSlot"`
	EpochCredits     [][3]uint64      `json:"epochCredits"`
}

type voteStatus struct {
	Current    []voteInfo `json:"current"`
	Delinquent []voteInfo `json:"delinquent"`
}

func TestGetVoteAccounts(t *testing.T) {
	n := stakedNode(t)
	id := n.l.Identity()
	vote := ledger.ValidatorVoteAccount(id)
	want := voteInfo{
		VotePubkey: vote, NodePubkey: id, ActivatedStake: testStake, EpochVoteAccount: true, LastVote: 20, RootSlot: 18,
		// Rooted slots 1..18 earn 16 credits each; epochs of 16 slots.
		EpochCredits: [][3]uint64{{0, 15 * 16, 0}, {1, 18 * 16, 15 * 16}},
	}
	for _, tc := range []struct {
		name   string
		params []any
		want   voteStatus
	}{
		{"default", nil, voteStatus{Current: []voteInfo{want}, Delinquent: []voteInfo{}}},
		{"by vote pubkey", []any{map[string]any{"votePubkey": vote.String()}}, voteStatus{Current: []voteInfo{want}, Delinquent: []voteInfo{}}},
		{"another vote pubkey", []any{map[string]any{"votePubkey": id.String()}}, voteStatus{Current: []voteInfo{}, Delinquent: []voteInfo{}}},
		{"delinquent past the distance", []any{map[string]any{"commitment": "processed", "delinquentSlotDistance": 1}},
			voteStatus{Current: []voteInfo{}, Delinquent: []voteInfo{want}}},
	} {
		var got voteStatus
		mustCall(t, n.h, &got, "getVoteAccounts", tc.params...)
		if !votesEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	checkErrors(t, n.h, []errorCase{
		{"getVoteAccounts", []any{map[string]any{"votePubkey": "nope"}}, -32602, "Invalid param: Invalid"},
		{"getVoteAccounts", []any{map[string]any{"commitment": "max2"}}, -32602,
			"Invalid params: unknown variant `max2`, expected one of `processed`, `confirmed`, `finalized`."},
		{"getVoteAccounts", []any{"finalized"}, -32602, "Invalid params: invalid type: string, expected a configuration object."},
	})

	// A ledger without a validator stake has no vote accounts; the raw JSON
	// has empty lists, not nulls.
	plain := manualNode(t)
	res, e := call(t, plain.h, "getVoteAccounts")
	if e != nil || string(res) != `{"current":[],"delinquent":[]}` {
		t.Fatalf("plain ledger: %s %+v", res, e)
	}
}

func votesEqual(a, b voteStatus) bool {
	eq := func(x, y []voteInfo) bool {
		return slices.EqualFunc(x, y, func(p, q voteInfo) bool {
			return p.VotePubkey == q.VotePubkey && p.NodePubkey == q.NodePubkey && p.ActivatedStake == q.ActivatedStake &&
				p.EpochVoteAccount == q.EpochVoteAccount && p.Commission == q.Commission && p.LastVote == q.LastVote &&
				p.RootSlot == q.RootSlot && slices.Equal(p.EpochCredits, q.EpochCredits)
		})
	}
	return eq(a.Current, b.Current) && eq(a.Delinquent, b.Delinquent)
}

func TestLeaderScheduleAndSlotLeaders(t *testing.T) {
	n := stakedNode(t)
	id := n.l.Identity().String()
	epoch := make([]uint64, 16)
	for i := range epoch {
		epoch[i] = uint64(i)
	}
	for _, tc := range []struct {
		name   string
		params []any
		want   string // JSON
	}{
		{"current epoch", nil, `{"` + id + `":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}`},
		{"a slot", []any{3}, `{"` + id + `":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}`},
		{"next epoch is known", []any{21 + 16}, `{"` + id + `":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}`},
		{"later epochs are not", []any{16 * 3}, `null`},
		{"config first", []any{map[string]any{"identity": id, "commitment": "processed"}}, `{"` + id + `":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}`},
		{"null slot then config", []any{nil, map[string]any{"identity": spl.SystemProgramID.String()}}, `{}`},
	} {
		res, e := call(t, n.h, "getLeaderSchedule", tc.params...)
		if e != nil || string(res) != tc.want {
			t.Errorf("%s: %s %+v, want %s", tc.name, res, e, tc.want)
		}
	}
	var leaders []string
	mustCall(t, n.h, &leaders, "getSlotLeaders", 10, 5)
	if len(leaders) != 5 || slices.ContainsFunc(leaders, func(s string) bool { return s != id }) {
		t.Fatalf("slot leaders %v", leaders)
	}
	mustCall(t, n.h, &leaders, "getSlotLeaders", 30, 0)
	if len(leaders) != 0 {
		t.Fatalf("limit 0: %v", leaders)
	}
	checkErrors(t, n.h, []errorCase{
		{"getLeaderSchedule", []any{"soon"}, -32602, "Invalid params: data did not match any variant of untagged enum RpcLeaderScheduleConfigWrapper."},
		{"getLeaderSchedule", []any{nil, map[string]any{"identity": "bad"}}, -32602, "Invalid param: Invalid"},
		{"getLeaderSchedule", []any{1, 2, 3}, -32602, "Invalid params: invalid length 3, expected fewer elements in array."},
		{"getSlotLeaders", []any{0, 5001}, -32602, "Invalid limit; max 5000"},
		// Epoch 2 (slots 32-47) is known, epoch 3 is not.
		{"getSlotLeaders", []any{40, 10}, -32602, "Invalid slot range: leader schedule for epoch 3 is unavailable"},
		{"getSlotLeaders", []any{48, 1}, -32602, "Invalid slot range: leader schedule for epoch 3 is unavailable"},
		{"getSlotLeaders", []any{0}, -32602, "Invalid params: invalid length 1, expected at least 2 parameters."},
		{"getSlotLeaders", []any{-1, 1}, -32602, "Invalid params: invalid type: number -1, expected u64."},
	})
}

func TestBlockProductionAndCommitment(t *testing.T) {
	n := stakedNode(t)
	id := n.l.Identity().String()
	type production struct {
		Context struct{ Slot uint64 } `json:"context"`
		Value   struct {
			ByIdentity map[string][2]uint64 `json:"byIdentity"`
			Range      struct {
				FirstSlot uint64 `json:"firstSlot"`
				LastSlot  uint64 `json:"lastSlot"`
			} `json:"range"`
		} `json:"value"`
	}
	for _, tc := range []struct {
		name                     string
		params                   []any
		first, last, slots, slot uint64
		blocks                   uint64
		other                    bool
	}{
		{"current epoch at finalized", nil, 16, 18, 3, 18, 3, false},
		{"a range", []any{map[string]any{"range": map[string]any{"firstSlot": 0, "lastSlot": 10}}}, 0, 10, 11, 18, 11, false},
		// The working slot 21 is a leader slot whose block is not produced yet.
		{"processed includes the working slot", []any{map[string]any{"commitment": "processed"}}, 16, 21, 6, 21, 5, false},
		{"another identity", []any{map[string]any{"identity": spl.SystemProgramID.String()}}, 16, 18, 0, 18, 0, true},
		{"this identity", []any{map[string]any{"identity": id, "range": map[string]any{"firstSlot": 5}}}, 5, 18, 14, 18, 14, false},
	} {
		var got production
		mustCall(t, n.h, &got, "getBlockProduction", tc.params...)
		if got.Value.Range.FirstSlot != tc.first || got.Value.Range.LastSlot != tc.last || got.Context.Slot != tc.slot {
			t.Errorf("%s: range %+v at %d", tc.name, got.Value.Range, got.Context.Slot)
		}
		if tc.other {
			if len(got.Value.ByIdentity) != 0 {
				t.Errorf("%s: %v", tc.name, got.Value.ByIdentity)
			}
			continue
		}
		if got.Value.ByIdentity[id] != [2]uint64{tc.slots, tc.blocks} || len(got.Value.ByIdentity) != 1 {
			t.Errorf("%s: %v, want [%d %d]", tc.name, got.Value.ByIdentity, tc.slots, tc.blocks)
		}
	}
	checkErrors(t, n.h, []errorCase{
		{"getBlockProduction", []any{map[string]any{"range": map[string]any{"firstSlot": 10, "lastSlot": 9}}}, -32602, "lastSlot, 9, cannot be less than firstSlot, 10"},
		{"getBlockProduction", []any{map[string]any{"range": map[string]any{"firstSlot": 1, "lastSlot": 19}}}, -32602, "lastSlot, 19, is too large; max 18"},
		{"getBlockProduction", []any{map[string]any{"identity": "x"}}, -32602, "Invalid param: Invalid"},
		{"getBlockCommitment", []any{}, -32602, "Invalid params: invalid length 0, expected at least one parameter."},
		{"getBlockCommitment", []any{"20"}, -32602, "Invalid params: invalid type: string, expected u64."},
	})

	for _, tc := range []struct {
		slot  uint64
		index int // -1: null
	}{{20, 0}, {19, 1}, {18, 31}, {2, 31}, {21, -1}, {1000, -1}} {
		var got struct {
			Commitment []uint64 `json:"commitment"`
			TotalStake uint64   `json:"totalStake"`
		}
		mustCall(t, n.h, &got, "getBlockCommitment", tc.slot)
		if got.TotalStake != testStake {
			t.Errorf("slot %d: total %d", tc.slot, got.TotalStake)
		}
		if tc.index < 0 {
			if got.Commitment != nil {
				t.Errorf("slot %d: %v, want null", tc.slot, got.Commitment)
			}
			continue
		}
		want := make([]uint64, 32)
		want[tc.index] = testStake
		if !slices.Equal(got.Commitment, want) {
			t.Errorf("slot %d: %v, want stake at %d", tc.slot, got.Commitment, tc.index)
		}
	}
}

func TestPerformanceSamplesAndWatermarks(t *testing.T) {
	n := stakedNode(t)
	var samples []struct {
		Slot                   uint64  `json:"slot"`
		NumTransactions        uint64  `json:"numTransactions"`
		NumNonVoteTransactions *uint64 `json:"numNonVoteTransactions"`
		NumSlots               uint64  `json:"numSlots"`
		SamplePeriodSecs       uint16  `json:"samplePeriodSecs"`
	}
	mustCall(t, n.h, &samples, "getRecentPerformanceSamples", 3)
	if len(samples) != 3 || samples[0].Slot != 20 || samples[2].Slot != 18 || samples[0].NumSlots != 1 || samples[0].NumNonVoteTransactions == nil {
		t.Fatalf("samples %+v", samples)
	}
	mustCall(t, n.h, &samples, "getRecentPerformanceSamples")
	// One per frozen slot at a 1 ns period, from slot 2: the first window
	// opened when slot 1 was frozen.
	if len(samples) != 19 || samples[18].Slot != 2 || samples[18].NumSlots != 2 {
		t.Fatalf("%d samples, oldest %+v", len(samples), samples[len(samples)-1])
	}
	mustCall(t, n.h, &samples, "getRecentPerformanceSamples", nil)
	if len(samples) != 19 {
		t.Fatalf("null limit: %d samples", len(samples))
	}
	for _, m := range []string{"getMaxRetransmitSlot", "getMaxShredInsertSlot"} {
		if res, e := call(t, n.h, m); e != nil || string(res) != "0" {
			t.Errorf("%s: %s %+v", m, res, e)
		}
	}
	checkErrors(t, n.h, []errorCase{
		{"getRecentPerformanceSamples", []any{721}, -32602, "Invalid limit; max 720"},
		{"getRecentPerformanceSamples", []any{"3"}, -32602, "Invalid params: invalid type: string, expected u64."},
		{"getHighestSnapshotSlot", nil, CodeNoSnapshot, "No snapshot"},
		{"getMaxRetransmitSlot", []any{1}, -32602, "Invalid params: invalid length 1, expected fewer elements in array."},
	})
}

func TestSupplyInflationAndStake(t *testing.T) {
	n := stakedNode(t)
	h := n.h
	type supply struct {
		Context struct{ Slot uint64 } `json:"context"`
		Value   struct {
			Total, Circulating, NonCirculating uint64
			NonCirculatingAccounts             []solana.PublicKey
		} `json:"value"`
	}
	var s supply
	mustCall(t, h, &s, "getSupply")
	total, _ := n.l.Supply(ledger.Finalized)
	if s.Context.Slot != 18 || s.Value.Total != total || s.Value.Circulating != total || s.Value.NonCirculating != 0 || s.Value.NonCirculatingAccounts == nil {
		t.Fatalf("supply %+v", s)
	}
	// A fee burns lamports: the processed total drops by it.
	payer := n.fund(t, 1_000_000_000)
	before := s.Value.Total
	mustCall(t, h, &s, "getSupply", map[string]any{"commitment": "processed", "excludeNonCirculatingAccountsList": true})
	if s.Value.Total != before-5000 || s.Context.Slot != 21 {
		t.Fatalf("after an airdrop's fee: %+v (before %d)", s, before)
	}

	var gov map[string]float64
	mustCall(t, h, &gov, "getInflationGovernor", map[string]any{"commitment": "confirmed"})
	if gov["initial"] != 0.08 || gov["terminal"] != 0.015 || gov["taper"] != 0.15 || gov["foundation"] != 0.05 || gov["foundationTerm"] != 7 {
		t.Fatalf("governor %v", gov)
	}
	var rate map[string]float64
	mustCall(t, h, &rate, "getInflationRate")
	// Epoch 1 starts at slot 16: 16 slots of 400 ms into the first year.
	year := 16 * 0.4 / (365.242199 * 24 * 3600)
	wantTotal := 0.08 * math.Pow(0.85, year)
	if rate["epoch"] != 1 || rate["total"] != wantTotal || rate["foundation"] != wantTotal*0.05 || rate["validator"] != wantTotal-wantTotal*0.05 {
		t.Fatalf("rate %v, want total %v", rate, wantTotal)
	}

	var rewards []any
	mustCall(t, h, &rewards, "getInflationReward", []string{payer.String(), ledger.ValidatorVoteAccount(n.l.Identity()).String()})
	if len(rewards) != 2 || rewards[0] != nil || rewards[1] != nil {
		t.Fatalf("rewards %v", rewards)
	}
	var minimum struct {
		Context struct{ Slot uint64 } `json:"context"`
		Value   uint64                `json:"value"`
	}
	mustCall(t, h, &minimum, "getStakeMinimumDelegation", map[string]any{"commitment": "confirmed"})
	if minimum.Value != 1_000_000_000 || minimum.Context.Slot != 20 {
		t.Fatalf("stake minimum %+v", minimum)
	}
	checkErrors(t, h, []errorCase{
		{"getSupply", []any{"finalized"}, -32602, "Invalid params: invalid type: string, expected a configuration object."},
		{"getInflationRate", []any{map[string]any{}}, -32602, "Invalid params: invalid length 1, expected fewer elements in array."},
		{"getInflationReward", []any{[]string{"bad"}}, -32602, "Invalid param: Invalid"},
		{"getInflationReward", []any{[]string{}, map[string]any{"epoch": 1}}, CodeBlockNotAvailable, "Block not available for slot 32"},
		{"getInflationReward", []any{[]string{}, map[string]any{"commitment": "processed"}}, -32602, "Method does not support commitment below `confirmed`"},
		{"getInflationReward", []any{[]string{}, map[string]any{"minContextSlot": 99}}, CodeMinContextSlotNotReached, "Minimum context slot has not been reached"},
		{"getInflationReward", []any{}, -32602, "Invalid params: invalid length 0, expected at least one parameter."},
		{"getStakeMinimumDelegation", []any{map[string]any{"minContextSlot": 99}}, CodeMinContextSlotNotReached, "Minimum context slot has not been reached"},
	})
}

func TestGetLargestAccounts(t *testing.T) {
	n := stakedNode(t)
	type largest struct {
		Context struct{ Slot uint64 } `json:"context"`
		Value   []struct {
			Address  solana.PublicKey `json:"address"`
			Lamports uint64           `json:"lamports"`
		} `json:"value"`
	}
	var got largest
	mustCall(t, n.h, &got, "getLargestAccounts")
	faucet := n.l.Faucet().PublicKey()
	stake := ledger.ValidatorStakeAccount(n.l.Identity())
	if len(got.Value) < 5 || len(got.Value) > 20 || got.Value[0].Address != faucet || got.Value[1].Address != stake || got.Context.Slot != 18 {
		t.Fatalf("largest %+v", got)
	}
	for i := 1; i < len(got.Value); i++ {
		if got.Value[i].Lamports > got.Value[i-1].Lamports {
			t.Fatalf("not sorted at %d: %+v", i, got.Value)
		}
	}
	mustCall(t, n.h, &got, "getLargestAccounts", map[string]any{"filter": "nonCirculating"})
	if len(got.Value) != 0 || got.Value == nil {
		t.Fatalf("nonCirculating %+v", got)
	}
	mustCall(t, n.h, &got, "getLargestAccounts", map[string]any{"filter": "circulating", "sortResults": false})
	if got.Value[0].Address != faucet {
		t.Fatalf("circulating %+v", got)
	}
	checkErrors(t, n.h, []errorCase{
		{"getLargestAccounts", []any{map[string]any{"filter": "all"}}, -32602, "Invalid params: unknown variant `all`, expected `circulating` or `nonCirculating`."},
	})

	// An answer is reused for LargestAccountsCacheTTL: a new whale shows
	// only in a handler that does not cache.
	cached := New(n.l, Options{LargestAccountsCacheTTL: time.Hour})
	fresh := New(n.l, Options{LargestAccountsCacheTTL: -1})
	mustCall(t, cached, &got, "getLargestAccounts", map[string]any{"commitment": "processed"})
	whale := solana.PublicKey{0x77, 0x68}
	if _, err := n.l.Apply(ctxT(t), func(w ledger.AccountWriter) error {
		w.Set(whale, &ledger.Account{Lamports: 1 << 62, Owner: solana.SystemProgramID})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	mustCall(t, cached, &got, "getLargestAccounts", map[string]any{"commitment": "processed"})
	if got.Value[0].Address == whale {
		t.Fatal("the cached answer changed")
	}
	mustCall(t, fresh, &got, "getLargestAccounts", map[string]any{"commitment": "processed"})
	if got.Value[0].Address != whale {
		t.Fatalf("uncached %+v", got.Value[0])
	}
}

func TestGetRecentPrioritizationFees(t *testing.T) {
	n := manualNode(t)
	ctx := ctxT(t)
	a, b := newKey(t), newKey(t)
	for _, k := range []solana.PublicKey{pub(a), pub(b)} {
		if _, err := n.l.Faucet().Airdrop(ctx, k, 1_000_000_000); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := n.l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	priced := func(from solana.PublicKey, key []byte, to solana.PublicKey, price uint64) []byte {
		bh, _ := n.l.LatestBlockhash(ledger.Processed)
		return signed(t, bh.Blockhash, key, []txwire.Instruction{
			{ProgramID: spl.ComputeBudgetProgramID, Data: append([]byte{3}, leU64(price)...)},
			spl.SystemTransfer(from, to, 1),
		})
	}
	sink := solana.PublicKey{0x51}
	for _, tx := range [][]byte{priced(pub(a), a, sink, 1000), priced(pub(b), b, sink, 250)} {
		if _, err := n.l.Process(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	slot, err := n.l.AdvanceSlot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type fee struct {
		Slot              uint64 `json:"slot"`
		PrioritizationFee uint64 `json:"prioritizationFee"`
	}
	for _, tc := range []struct {
		params []any
		want   uint64
	}{
		{nil, 250},
		{[]any{nil}, 250},
		{[]any{[]string{}}, 250},
		{[]any{[]string{pub(a).String()}}, 1000},
		{[]any{[]string{pub(b).String()}}, 250},
		{[]any{[]string{sink.String()}}, 250}, // b's transaction also locked it
		{[]any{[]string{pub(b).String(), pub(a).String()}}, 1000},
	} {
		var got []fee
		mustCall(t, n.h, &got, "getRecentPrioritizationFees", tc.params...)
		if len(got) == 0 || got[len(got)-1] != (fee{slot, tc.want}) {
			t.Errorf("%v: %+v, want last {%d %d}", tc.params, got, slot, tc.want)
		}
		// The airdrops' slot paid nothing.
		if len(got) != 2 || got[0].PrioritizationFee != 0 {
			t.Errorf("%v: %+v", tc.params, got)
		}
	}
	checkErrors(t, n.h, []errorCase{
		{"getRecentPrioritizationFees", []any{[]string{"bad"}}, -32602, "Invalid param: Invalid"},
		{"getRecentPrioritizationFees", []any{strings.Split(strings.Repeat(pub(a).String()+",", 129), ",")[:129]}, -32602, "Too many inputs provided; max 128"},
		{"getRecentPrioritizationFees", []any{pub(a).String()}, -32602, "Invalid params: invalid type: string, expected a sequence."},
	})
}

func leU64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// TestNewMethodsUnderLoad reads through the new methods while transfers
// land and the slot clock runs (for the race detector), checking what
// must hold at any moment: the finalized supply never grows (fees burn),
// the program index answer always lists exactly the wallets it should,
// and the vote account's last vote never goes back.
func TestNewMethodsUnderLoad(t *testing.T) {
	n := startNode(t, ledger.Config{Name: "load", SlotDuration: 5 * time.Millisecond, FinalityDepth: 2, ValidatorStake: testStake,
		PerformanceSamplePeriod: 20 * time.Millisecond})
	ctx := ctxT(t)
	payer := newKey(t)
	if _, err := n.l.Faucet().Airdrop(ctx, pub(payer), 100_000_000_000); err != nil {
		t.Fatal(err)
	}
	owner := solana.PublicKey{0x6c, 0x6f}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 60; i++ {
			fresh := newKey(t)
			bh, _ := n.l.LatestBlockhash(ledger.Processed)
			raw := signed(t, bh.Blockhash, payer, []txwire.Instruction{
				{ProgramID: spl.ComputeBudgetProgramID, Data: append([]byte{3}, leU64(uint64(i))...)},
				spl.SystemCreateAccount(pub(payer), pub(fresh), 1_000_000, 4, owner),
			}, fresh)
			if rec, err := n.l.Process(ctx, raw); err != nil || rec.Err != nil {
				t.Errorf("create %d: %v %v", i, err, rec)
				return
			}
		}
	}()
	lastSupply, lastVote, lastOwned := uint64(1<<63), uint64(0), 0
	for reading := true; reading; {
		select {
		case <-done:
			reading = false
		default:
		}
		var s struct{ Value struct{ Total uint64 } }
		mustCall(t, n.h, &s, "getSupply")
		if s.Value.Total > lastSupply {
			t.Fatalf("finalized supply grew: %d -> %d", lastSupply, s.Value.Total)
		}
		lastSupply = s.Value.Total
		var owned []keyed
		mustCall(t, n.h, &owned, "getProgramAccounts", owner.String(), map[string]any{"encoding": "base64", "commitment": "processed"})
		if len(owned) < lastOwned {
			t.Fatalf("program accounts went from %d to %d", lastOwned, len(owned))
		}
		lastOwned = len(owned)
		var v voteStatus
		mustCall(t, n.h, &v, "getVoteAccounts", map[string]any{"commitment": "processed"})
		if len(v.Current)+len(v.Delinquent) != 1 {
			t.Fatalf("vote accounts %+v", v)
		}
		for _, x := range append(v.Current, v.Delinquent...) {
			if x.LastVote < lastVote {
				t.Fatalf("last vote went back: %d -> %d", lastVote, x.LastVote)
			}
			lastVote = x.LastVote
		}
		mustCall(t, n.h, nil, "getRecentPrioritizationFees", []string{owner.String()})
		mustCall(t, n.h, nil, "getRecentPerformanceSamples", 5)
		mustCall(t, n.h, nil, "getBlockProduction")
		mustCall(t, n.h, nil, "getLargestAccounts", map[string]any{"commitment": "confirmed"})
		mustCall(t, n.h, nil, "getBlockCommitment", n.l.Slot(ledger.Confirmed))
	}
	if lastOwned != 60 {
		t.Fatalf("%d program accounts at the end", lastOwned)
	}
}
