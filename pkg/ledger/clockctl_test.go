package ledger

import (
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// clockSysvar decodes the working slot's Clock sysvar: slot, epoch, unix.
func clockSysvar(t *testing.T, l *Ledger) (uint64, uint64, int64) {
	t.Helper()
	a, _ := l.Account(spl.SysvarClockID, Processed)
	if a == nil || len(a.Data) != 40 {
		t.Fatalf("clock sysvar: %+v", a)
	}
	d := a.Data
	return binary.LittleEndian.Uint64(d), binary.LittleEndian.Uint64(d[16:]), int64(binary.LittleEndian.Uint64(d[32:]))
}

func transferTx(t *testing.T, bh solana.Hash, payer ed25519.PrivateKey, to solana.PublicKey, lamports uint64) []byte {
	t.Helper()
	return buildTxWith(t, bh, payer, []txwire.Instruction{spl.SystemTransfer(pubkeyOf(payer), to, lamports)})
}

// TestTimeTravelToSlot checks a jump: the Clock sysvar, the epoch and the
// time move together, the skipped slots have no blocks, the new block's
// parent is the slot before the jump, and the past is refused.
func TestTimeTravelToSlot(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	l := openTest(t, Config{Now: clock.Now, SlotsPerEpoch: 100, SlotDuration: 400 * time.Millisecond})
	ctx := ctxT(t)
	if _, err := l.AdvanceSlots(ctx, 2); err != nil {
		t.Fatal(err)
	}
	before := l.ClockState()
	if before.AbsoluteSlot != 3 || before.UnixTimestamp != 1_700_000_000 {
		t.Fatalf("before: %+v", before)
	}
	st, err := l.TimeTravelToSlot(ctx, 1003)
	if err != nil {
		t.Fatal(err)
	}
	// 1000 slots of 400 ms: 400 s later.
	if st.AbsoluteSlot != 1003 || st.Epoch != 10 || st.SlotIndex != 3 || st.UnixTimestamp != 1_700_000_400 || st.Offset != 400*time.Second {
		t.Fatalf("after: %+v", st)
	}
	if st.BlockHeight != before.BlockHeight+1 {
		t.Fatalf("block height %d, want %d (the jump is one block)", st.BlockHeight, before.BlockHeight+1)
	}
	slot, epoch, unix := clockSysvar(t, l)
	if slot != 1003 || epoch != 10 || unix != 1_700_000_400 {
		t.Fatalf("clock sysvar: slot %d epoch %d unix %d", slot, epoch, unix)
	}
	if _, err := l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	blocks, err := l.Blocks(0, 2000, 100, Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{0, 1, 2, 3, 1003}; !equalSlots(blocks, want) {
		t.Fatalf("blocks %v, want %v", blocks, want)
	}
	info, _, err := l.Block(1003, Confirmed)
	if err != nil || info == nil || info.ParentSlot != 3 || info.Time != 1_700_000_400 {
		t.Fatalf("block 1003: %+v %v", info, err)
	}
	for _, target := range []uint64{1003, 1004, 5} {
		if _, err := l.TimeTravelToSlot(ctx, target); !errors.Is(err, ErrTimeTravelPast) {
			t.Fatalf("travel to %d: %v, want ErrTimeTravelPast", target, err)
		}
	}
	if got := l.ClockState().AbsoluteSlot; got != 1004 {
		t.Fatalf("a refused travel moved the slot to %d", got)
	}
}

func equalSlots(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTimeTravelToTime checks travel to a Unix time and relative
// advances: the clock lands on the time and the slots the span holds are
// skipped.
func TestTimeTravelToTime(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	l := openTest(t, Config{Now: clock.Now, SlotDuration: 500 * time.Millisecond})
	ctx := ctxT(t)
	st, err := l.TimeTravelToTime(ctx, time.Unix(1_700_000_600, 0)) // ten minutes
	if err != nil {
		t.Fatal(err)
	}
	if st.UnixTimestamp != 1_700_000_600 || st.AbsoluteSlot != 1+1200 {
		t.Fatalf("after: %+v", st)
	}
	if _, _, unix := clockSysvar(t, l); unix != 1_700_000_600 {
		t.Fatalf("clock sysvar unix %d", unix)
	}
	// The wall clock moving on moves the chain's time with it.
	clock.add(10 * time.Second)
	st, err = l.AdvanceClock(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if st.UnixTimestamp != 1_700_000_600+10+3600 || st.AbsoluteSlot != 1201+7200 {
		t.Fatalf("after advance: %+v", st)
	}
	for _, bad := range []time.Time{time.Unix(1_700_000_000, 0), time.Unix(st.UnixTimestamp, 0)} {
		if _, err := l.TimeTravelToTime(ctx, bad); !errors.Is(err, ErrTimeTravelPast) {
			t.Fatalf("travel to %v: %v, want ErrTimeTravelPast", bad, err)
		}
	}
	for _, d := range []time.Duration{0, -time.Second} {
		if _, err := l.AdvanceClock(ctx, d); !errors.Is(err, ErrTimeTravelPast) {
			t.Fatalf("advance %v: %v, want ErrTimeTravelPast", d, err)
		}
	}
}

// TestBlockhashExpiryCountsBlocks checks that a blockhash from before a
// time travel is still valid (the jump is one block, as in Agave's
// blockhash queue) and expires after MaxProcessingAge more blocks.
func TestBlockhashExpiryCountsBlocks(t *testing.T) {
	l := openTest(t, Config{})
	ctx := ctxT(t)
	payer := fundedWallet(t, l, 1e9)
	to := pubkeyOf(newKey(t))
	old, _ := l.LatestBlockhash(Processed)
	if _, err := l.TimeTravelToSlot(ctx, 500_000); err != nil {
		t.Fatal(err)
	}
	mustProcess(t, l, transferTx(t, old.Blockhash, payer, to, 1_000_000))
	if _, err := l.MineBlocks(ctx, MaxProcessingAge); err != nil {
		t.Fatal(err)
	}
	_, err := l.Process(ctx, transferTx(t, old.Blockhash, payer, to, 1_000_001))
	if !isTxErr(err, rt.ErrBlockhashNotFound) {
		t.Fatalf("old blockhash after %d blocks: %v, want BlockhashNotFound", MaxProcessingAge+1, err)
	}
}

// TestPauseResume checks the time spent paused does not count, and that
// a paused clock's tick produces no block.
func TestPauseResume(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	l := openTest(t, Config{Now: clock.Now})
	ctx := ctxT(t)
	st, err := l.PauseClock(ctx)
	if err != nil || !st.Paused {
		t.Fatalf("pause: %+v %v", st, err)
	}
	if l.tickEndsSlot() {
		t.Fatal("a tick ends the slot while paused")
	}
	clock.add(time.Hour)
	if st, err = l.MineBlocks(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if st.UnixTimestamp != 1_700_000_000 {
		t.Fatalf("paused clock moved to %d", st.UnixTimestamp)
	}
	if _, err := l.PauseClock(ctx); err != nil { // pausing twice changes nothing
		t.Fatal(err)
	}
	if st, err = l.ResumeClock(ctx); err != nil || st.Paused {
		t.Fatalf("resume: %+v %v", st, err)
	}
	if !l.tickEndsSlot() {
		t.Fatal("a tick does not end the slot after resume")
	}
	clock.add(5 * time.Second)
	if st, err = l.MineBlocks(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if st.UnixTimestamp != 1_700_000_005 || st.Offset != -time.Hour {
		t.Fatalf("resumed clock: %+v", st)
	}
}

// TestPausedClockProducesNoBlocks runs the real slot clock (1 ms slots):
// while paused the slot stands still; resumed, it moves again.
func TestPausedClockProducesNoBlocks(t *testing.T) {
	l, err := Open(Config{Name: "ticking", SlotDuration: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := ctxT(t)
	st, err := l.PauseClock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Let the ticker fire many times; none of them may end the slot.
	for i := 0; i < 20; i++ {
		time.Sleep(2 * time.Millisecond)
		if got := l.Slot(Processed); got != st.AbsoluteSlot {
			t.Fatalf("slot moved from %d to %d while paused", st.AbsoluteSlot, got)
		}
	}
	if _, err := l.ResumeClock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitForSlot(ctx, st.AbsoluteSlot+3, Processed); err != nil {
		t.Fatal(err)
	}
}

// TestBlockModes checks each mode's tick and that transaction mode gives
// every transaction a block of its own.
func TestBlockModes(t *testing.T) {
	l := openTest(t, Config{})
	ctx := ctxT(t)
	for _, tc := range []struct {
		mode  BlockMode
		ticks bool
	}{{BlockModeManual, false}, {BlockModeTransaction, false}, {BlockModeClock, true}} {
		st, err := l.SetBlockMode(ctx, tc.mode)
		if err != nil || st.Mode != tc.mode {
			t.Fatalf("set %s: %+v %v", tc.mode, st, err)
		}
		if got := l.tickEndsSlot(); got != tc.ticks {
			t.Fatalf("%s: tick ends slot = %v", tc.mode, got)
		}
		m, err := ParseBlockMode(tc.mode.String())
		if err != nil || m != tc.mode {
			t.Fatalf("parse %q: %v %v", tc.mode, m, err)
		}
	}
	if _, err := ParseBlockMode("sometimes"); err == nil {
		t.Fatal("unknown mode parsed")
	}
	if _, err := l.SetBlockMode(ctx, BlockMode(9)); err == nil {
		t.Fatal("mode 9 set")
	}

	payer := fundedWallet(t, l, 1e9)
	if _, err := l.SetBlockMode(ctx, BlockModeTransaction); err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for i := 0; i < 3; i++ {
		rec := mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.SystemTransfer(pubkeyOf(payer), pubkeyOf(newKey(t)), 1_000_000)}))
		if seen[rec.Slot] {
			t.Fatalf("two transactions in slot %d", rec.Slot)
		}
		seen[rec.Slot] = true
		if err := l.WaitForSlot(ctx, rec.Slot, Confirmed); err != nil {
			t.Fatal(err)
		}
		info, txs, err := l.Block(rec.Slot, Confirmed)
		if err != nil || info == nil || len(txs) != 1 || txs[0].Signature != rec.Signature {
			t.Fatalf("block %d: %+v %d txs %v", rec.Slot, info, len(txs), err)
		}
	}
}

// TestMineBlocks checks mining moves slot and height by n, in range only.
func TestMineBlocks(t *testing.T) {
	l := openTest(t, Config{})
	ctx := ctxT(t)
	if _, err := l.SetBlockMode(ctx, BlockModeManual); err != nil {
		t.Fatal(err)
	}
	before := l.ClockState()
	st, err := l.MineBlocks(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if st.AbsoluteSlot != before.AbsoluteSlot+5 || st.BlockHeight != before.BlockHeight+5 {
		t.Fatalf("mined: %+v from %+v", st, before)
	}
	if got := l.Slot(Confirmed); got != st.AbsoluteSlot-1 {
		t.Fatalf("confirmed %d, want %d", got, st.AbsoluteSlot-1)
	}
	for _, n := range []int{0, -1, MaxMineBlocks + 1} {
		if _, err := l.MineBlocks(ctx, n); err == nil {
			t.Fatalf("mined %d blocks", n)
		}
	}
}

// TestTimeTravelSurvivesRestart checks a reopened ledger keeps the
// travelled slots and its clock does not go back to the wall clock.
func TestTimeTravelSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	cfg := Config{Name: "restart", DataDir: dir, Now: clock.Now, ManualSlots: true}
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if _, err := l.TimeTravelToTime(ctx, time.Unix(1_700_086_400, 0)); err != nil {
		l.Close()
		t.Fatal(err)
	}
	if _, err := l.AdvanceSlot(ctx); err != nil {
		l.Close()
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openTest(t, cfg)
	st := l.ClockState()
	if st.UnixTimestamp < 1_700_086_400 || st.AbsoluteSlot < 216_000 {
		t.Fatalf("reopened clock went back: %+v", st)
	}
}

// TestTimeTravelReportsLanding checks a time travel reports the slot it
// opened even when the clock moves on before the block it ended is
// durable (a running clock under load): a caller travelling to an
// epoch's first slot reads slot index 0.
func TestTimeTravelReportsLanding(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	l := openTest(t, Config{Now: clock.Now, SlotsPerEpoch: 100, SlotDuration: 400 * time.Millisecond})
	ctx := ctxT(t)
	l.travelled = func() {
		if _, err := l.AdvanceSlots(ctx, 1); err != nil {
			t.Error(err)
		}
	}
	st, err := l.TimeTravelToSlot(ctx, 200)
	if err != nil {
		t.Fatal(err)
	}
	if st.AbsoluteSlot != 200 || st.Epoch != 2 || st.SlotIndex != 0 {
		t.Fatalf("travel to slot 200 reported %+v", st)
	}
	if now := l.ClockState(); now.AbsoluteSlot != 201 {
		t.Fatalf("the clock moved on to %d, want 201", now.AbsoluteSlot)
	}
}
