package ledger

import (
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func computeUnitPrice(microLamports uint64) txwire.Instruction {
	return txwire.Instruction{ProgramID: rt.ComputeBudgetProgramID, Data: binary.LittleEndian.AppendUint64([]byte{3}, microLamports)}
}

func computeUnitLimit(units uint32) txwire.Instruction {
	return txwire.Instruction{ProgramID: rt.ComputeBudgetProgramID, Data: binary.LittleEndian.AppendUint32([]byte{2}, units)}
}

// TestPrioritizationFees replays Agave's prioritization_fee_cache test:
// three transactions in one block paying 5 (locking a and b), 9 (b and c)
// and 2 (a and c) micro-lamports per unit.
func TestPrioritizationFees(t *testing.T) {
	l := openTest(t, Config{FinalityDepth: 2})
	ctx := ctxT(t)
	a, b, c := fundedWallet(t, l, 1e9), fundedWallet(t, l, 1e9), fundedWallet(t, l, 1e9)
	pa, pb, pc := pubkeyOf(a), pubkeyOf(b), pubkeyOf(c)
	if _, err := l.AdvanceSlot(ctx); err != nil { // the airdrops' slot pays no priority fee
		t.Fatal(err)
	}
	first := len(l.RecentPrioritizationFees(nil))
	pay := func(from ed25519.PrivateKey, to solana.PublicKey, price uint64) {
		t.Helper()
		mustProcess(t, l, buildTx(t, l, from, []txwire.Instruction{computeUnitPrice(price), spl.SystemTransfer(pubkeyOf(from), to, 1)}))
	}
	pay(a, pb, 5)
	pay(b, pc, 9)
	pay(a, pc, 2)
	slot := l.Slot(Processed)
	if got := l.RecentPrioritizationFees(nil); len(got) != first {
		t.Fatalf("a slot that is not confirmed is reported: %v", got)
	}
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		keys []solana.PublicKey
		want uint64
	}{
		{nil, 2},
		{[]solana.PublicKey{pa}, 2}, // a's own minimum is the block's
		{[]solana.PublicKey{pb}, 5},
		{[]solana.PublicKey{pc}, 2},
		{[]solana.PublicKey{pa, pb}, 5},
		{[]solana.PublicKey{pa, pb, pc}, 5},
		{[]solana.PublicKey{{9}}, 2}, // an account no transaction locked
	} {
		got := l.RecentPrioritizationFees(tc.keys)
		if len(got) != first+1 || got[len(got)-1] != (PrioritizationFee{Slot: slot, Fee: tc.want}) {
			t.Errorf("keys %v: %v, want slot %d fee %d last", tc.keys, got, slot, tc.want)
		}
	}

	// A transaction requesting no compute units says nothing about the
	// price (it lands, failing as soon as its first instruction uses a
	// unit); empty slots have no entry.
	if rec, err := l.Process(ctxT(t), buildTx(t, l, c, []txwire.Instruction{computeUnitLimit(0), computeUnitPrice(1), spl.Memo("x")})); err != nil ||
		!errors.Is(rec.Err, rt.InstructionFailed(0, rt.ErrComputationalBudgetExceeded)) {
		t.Fatalf("zero-limit transaction: %v %v", rec, err)
	}
	mustProcess(t, l, buildTx(t, l, c, []txwire.Instruction{computeUnitPrice(7), spl.Memo("y")}))
	if _, err := l.AdvanceSlots(ctx, 3); err != nil {
		t.Fatal(err)
	}
	got := l.RecentPrioritizationFees(nil)
	if len(got) != first+2 || got[len(got)-1].Fee != 7 {
		t.Fatalf("after a zero-limit transaction: %v", got)
	}

	// The statistics keep MaxPrioritizationFeeSlots slots with transactions.
	for i := 0; i < MaxPrioritizationFeeSlots+2; i++ {
		mustProcess(t, l, buildTx(t, l, c, []txwire.Instruction{computeUnitPrice(uint64(100 + i)), spl.Memo("z")}))
		if _, err := l.AdvanceSlot(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got = l.RecentPrioritizationFees(nil)
	if len(got) != MaxPrioritizationFeeSlots || got[len(got)-1].Fee != uint64(100+MaxPrioritizationFeeSlots+1) ||
		!slices.IsSortedFunc(got, func(x, y PrioritizationFee) int { return int(x.Slot) - int(y.Slot) }) {
		t.Fatalf("%d entries, last %v", len(got), got[len(got)-1])
	}
}

// fakeClock is a settable Config.Now.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestPerformanceSamples checks the samples count the slots and
// transactions of each window, with the measured period, and survive a
// restart.
func TestPerformanceSamples(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	cfg := Config{DataDir: dir, Now: clock.Now, PerformanceSamplePeriod: time.Minute, FinalityDepth: -1}
	l, err := Open(withManual(cfg))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	payer := fundedWallet(t, l, 1e9) // one airdrop
	if _, err := l.AdvanceSlots(ctx, 3); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.Memo(string(rune('a' + i)))}))
	}
	if s, _ := l.RecentPerformanceSamples(10); len(s) != 0 {
		t.Fatalf("a sample before the period passed: %v", s)
	}
	clock.add(61 * time.Second)
	last, err := l.AdvanceSlot(ctx) // slot 4 closes the first window (slots 1-4)
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.RecentPerformanceSamples(10)
	want := PerfSample{Slot: last, NumTransactions: 5, NumNonVote: 5, NumSlots: last, SamplePeriodSecs: 61}
	if err != nil || len(s) != 1 || s[0] != want {
		t.Fatalf("samples %+v %v, want %+v", s, err, want)
	}
	if _, err := l.AdvanceSlots(ctx, 2); err != nil {
		t.Fatal(err)
	}
	clock.add(90 * time.Second)
	second, _ := l.AdvanceSlot(ctx)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := Open(withManual(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	s, err = l2.RecentPerformanceSamples(10)
	want2 := PerfSample{Slot: second, NumSlots: 3, SamplePeriodSecs: 90}
	if err != nil || len(s) != 2 || s[0] != want2 || s[1] != want {
		t.Fatalf("after restart %+v %v", s, err)
	}
	if s, _ := l2.RecentPerformanceSamples(1); len(s) != 1 || s[0].Slot != second {
		t.Fatalf("limit 1: %+v", s)
	}
}

func withManual(c Config) Config {
	c.ManualSlots = true
	return c
}

// TestSupplyAtCommitments checks getSupply's counter at each level as
// lamports move, are created (airdrops come from the faucet, so only fees
// change the total) and are burned as fees.
func TestSupplyAtCommitments(t *testing.T) {
	l := openTest(t, Config{FinalityDepth: 1})
	ctx := ctxT(t)
	genesis, _ := l.Supply(Finalized)
	payer := fundedWallet(t, l, 1e9)
	mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.Memo("fee")}))
	p, _ := l.Supply(Processed)
	c, _ := l.Supply(Confirmed)
	if p != genesis-2*5000 || c != genesis {
		t.Fatalf("processed %d confirmed %d genesis %d", p, c, genesis)
	}
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	if c, _ := l.Supply(Confirmed); c != p {
		t.Fatalf("confirmed %d want %d", c, p)
	}
	if f, _ := l.Supply(Finalized); f != genesis {
		t.Fatalf("finalized %d want %d", f, genesis)
	}
	if _, err := l.AdvanceSlots(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if f, slot := l.Supply(Finalized); f != p || slot != l.Slot(Finalized) {
		t.Fatalf("finalized %d at %d, want %d", f, slot, p)
	}
}

// TestValidatorAccounts checks the genesis vote and stake accounts and
// what the ledger derives from them.
func TestValidatorAccounts(t *testing.T) {
	const stake = 1_000_000_000_000_000
	l := openTest(t, Config{ValidatorStake: stake, SlotsPerEpoch: 8, FinalityDepth: 3})
	ctx := ctxT(t)
	id := l.Identity()
	vote, _ := l.Account(ValidatorVoteAccount(id), Finalized)
	st, _ := l.Account(ValidatorStakeAccount(id), Finalized)
	if vote == nil || vote.Owner != solana.VoteProgramID || len(vote.Data) != VoteAccountSize || binary.LittleEndian.Uint32(vote.Data) != 2 ||
		solana.PublicKeyFromBytes(vote.Data[4:36]) != id || vote.Lamports != l.MinimumBalanceForRentExemption(VoteAccountSize) {
		t.Fatalf("vote account %+v", vote)
	}
	reserve := l.MinimumBalanceForRentExemption(StakeAccountSize)
	if st == nil || st.Owner != solana.StakeProgramID || len(st.Data) != StakeAccountSize || st.Lamports != stake+reserve ||
		binary.LittleEndian.Uint64(st.Data[4:]) != reserve || binary.LittleEndian.Uint64(st.Data[156:]) != stake ||
		solana.PublicKeyFromBytes(st.Data[124:156]) != ValidatorVoteAccount(id) || math.Float64frombits(binary.LittleEndian.Uint64(st.Data[180:])) != 0.25 {
		t.Fatalf("stake account %+v", st)
	}

	votes, _ := l.VoteAccounts(Finalized)
	if len(votes) != 1 || votes[0].ActivatedStake != stake || votes[0].Node != id || votes[0].LastVote != 0 || votes[0].EpochCredits != nil {
		t.Fatalf("at genesis %+v", votes)
	}
	if c, total := l.BlockCommitment(0); c == nil || c[31] != stake || total != stake {
		t.Fatalf("genesis commitment %v %d", c, total)
	}
	last, err := l.AdvanceSlots(ctx, 20) // confirmed 20, finalized 17
	if err != nil {
		t.Fatal(err)
	}
	votes, _ = l.VoteAccounts(Confirmed)
	v := votes[0]
	// Slots 1..17 rooted, 16 credits each; epochs of 8 slots.
	wantCredits := []EpochCredits{{0, 7 * 16, 0}, {1, 15 * 16, 7 * 16}, {2, 17 * 16, 15 * 16}}
	if v.LastVote != last || v.RootSlot != last-3 || !slices.Equal(v.EpochCredits, wantCredits) {
		t.Fatalf("after %d slots: %+v", last, v)
	}
	for _, tc := range []struct {
		slot  uint64
		index int // -1: null
	}{
		{last, 0}, {last - 1, 1}, {last - 2, 2}, {last - 3, 31}, {last - 10, 31}, {last + 1, -1},
	} {
		c, total := l.BlockCommitment(tc.slot)
		if total != stake {
			t.Fatalf("total %d", total)
		}
		if tc.index < 0 {
			if c != nil {
				t.Errorf("slot %d: %v, want null", tc.slot, c)
			}
			continue
		}
		var want [32]uint64
		want[tc.index] = stake
		if c == nil || *c != want {
			t.Errorf("slot %d: %v, want stake at %d", tc.slot, c, tc.index)
		}
	}
	if n, err := l.ProducedBlocks(3, last); err != nil || n != last-2 {
		t.Fatalf("produced %d %v", n, err)
	}
	// More than five epochs: the last five.
	last, _ = l.AdvanceSlots(ctx, 40)
	votes, _ = l.VoteAccounts(Processed)
	if ec := votes[0].EpochCredits; len(ec) != 5 || ec[4].Epoch != (last-3)/8 || ec[4].Credits != (last-3)*16 {
		t.Fatalf("credits %+v", ec)
	}
}

// TestValidatorAccountsOnlyAtGenesis: a ledger created without a stake
// keeps none after a restart that asks for one.
func TestValidatorAccountsOnlyAtGenesis(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Config{DataDir: dir, ManualSlots: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l, err = Open(Config{DataDir: dir, ManualSlots: true, ValidatorStake: 1e15})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if votes, _ := l.VoteAccounts(Processed); len(votes) != 0 {
		t.Fatalf("vote accounts appeared on resume: %+v", votes)
	}
	if c, total := l.BlockCommitment(1); c != nil || total != 0 {
		t.Fatalf("commitment %v %d", c, total)
	}
}
