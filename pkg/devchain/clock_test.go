package devchain_test

import (
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// clockUnix reads the Clock sysvar's unix_timestamp and slot.
func (n *node) clockUnix() (int64, uint64) {
	n.t.Helper()
	a := n.account(spl.SysvarClockID)
	if a == nil || len(a.Data) != 40 {
		n.t.Fatalf("clock sysvar %+v", a)
	}
	return int64(binary.LittleEndian.Uint64(a.Data[32:])), binary.LittleEndian.Uint64(a.Data)
}

// TestTimeTravelRPC travels by slot, epoch and Unix time (ms) under both
// names; each answers surfpool's EpochInfo and moves the Clock sysvar
// and getEpochInfo together.
func TestTimeTravelRPC(t *testing.T) {
	n := newNode(t, "time-travel")
	per := n.l.Config().SlotsPerEpoch
	for _, c := range []struct {
		method, params string
		slot           func(prev uint64) uint64
	}{
		{devchain.MethodTimeTravel, `[{"absoluteSlot":5000}]`, func(uint64) uint64 { return 5000 }},
		{devchain.FerryTimeTravel, `[{"absoluteEpoch":3}]`, func(uint64) uint64 { return 3 * per }},
	} {
		var info devchain.EpochInfo
		n.ok(c.method, c.params, &info)
		want := c.slot(0)
		if info.AbsoluteSlot != want || info.Epoch != want/per || info.SlotIndex != want%per || info.SlotsInEpoch != per {
			t.Fatalf("%s %s: %+v", c.method, c.params, info)
		}
		var epoch devchain.EpochInfo
		n.ok("getEpochInfo", `[{"commitment":"processed"}]`, &epoch)
		if epoch != info {
			t.Fatalf("getEpochInfo %+v, timeTravel said %+v", epoch, info)
		}
		if _, slot := n.clockUnix(); slot != want {
			t.Fatalf("clock sysvar slot %d, want %d", slot, want)
		}
	}
	// The skipped slots have no block: Agave's "skipped" for them, "not
	// available" past the confirmed slot.
	n.advance()
	n.fails("getBlock", `[4000,{"commitment":"confirmed"}]`, -32007, "Slot 4000 was skipped, or missing due to ledger jump to recent snapshot")
	n.fails("getBlockTime", `[4999]`, -32007, "Slot 4999 was skipped")
	n.fails("getBlock", `[99999999,{"commitment":"confirmed"}]`, -32004, "Block not available for slot 99999999")
	var blocks []uint64
	n.ok("getBlocks", `[4000,5000,{"commitment":"confirmed"}]`, &blocks)
	if len(blocks) != 1 || blocks[0] != 5000 {
		t.Fatalf("getBlocks over the jump: %v", blocks)
	}
	unix, slot := n.clockUnix()
	target := (unix + 600) * 1000
	var info devchain.EpochInfo
	n.ok(devchain.MethodTimeTravel, `[{"absoluteTimestamp":`+strconv.FormatInt(target, 10)+`}]`, &info)
	if got, _ := n.clockUnix(); got < unix+600 || got > unix+602 {
		t.Fatalf("clock unix %d after travelling to %d", got, unix+600)
	}
	// 600 s of 400 ms slots, give or take the working slot's age.
	if info.AbsoluteSlot < slot+1490 || info.AbsoluteSlot > slot+1501 {
		t.Fatalf("slot %d after 600 s from %d", info.AbsoluteSlot, slot)
	}
}

// TestClockRefusals: bad targets are invalid params and change nothing.
func TestClockRefusals(t *testing.T) {
	n := newNode(t, "clock-refusals")
	n.ok(devchain.MethodTimeTravel, `[{"absoluteSlot":100}]`, nil)
	for _, c := range []struct {
		method, params, msg string
	}{
		{devchain.MethodTimeTravel, `[{"absoluteSlot":50}]`, "cannot travel to the past: slot 50 is not after the working slot 100"},
		{devchain.MethodTimeTravel, `[{"absoluteSlot":100}]`, "cannot travel to the past"},
		{devchain.MethodTimeTravel, `[{"absoluteTimestamp":1000}]`, "cannot travel to the past"},
		{devchain.MethodTimeTravel, `[{"absoluteEpoch":0}]`, "cannot travel to the past"},
		{devchain.MethodTimeTravel, `[{"absoluteSlot":18446744073709551615}]`, "cannot travel that far"},
		{devchain.MethodTimeTravel, `[{"absoluteEpoch":18446744073709551615}]`, "beyond the last slot"},
		{devchain.MethodTimeTravel, `[{"absoluteTimestamp":18446744073709551615}]`, "out of range"},
		{devchain.MethodTimeTravel, `[]`, "exactly one of `absoluteSlot`, `absoluteEpoch`, `absoluteTimestamp`"},
		{devchain.MethodTimeTravel, `[{"absoluteSlot":200,"absoluteEpoch":1}]`, "exactly one of"},
		{devchain.MethodTimeTravel, `[{"slot":200}]`, "unknown field `slot`"},
		{devchain.MethodTimeTravel, `[{"absoluteSlot":-1}]`, "invalid type"},
		{devchain.MethodPauseClock, `[1]`, "invalid length"},
		{devchain.MethodAdvanceClock, `[{}]`, "exactly one of `seconds`, `slots`"},
		{devchain.MethodAdvanceClock, `[{"seconds":0}]`, "seconds must be 1.."},
		{devchain.MethodAdvanceClock, `[{"slots":0}]`, "slots must be 1.."},
		{devchain.MethodAdvanceClock, `[{"seconds":1,"slots":1}]`, "exactly one of"},
		{devchain.MethodAdvanceClock, `[]`, "invalid length"},
		{devchain.MethodSetBlockMode, `["sometimes"]`, `unknown block production mode "sometimes"`},
		{devchain.MethodSetBlockMode, `[1]`, "invalid type"},
		{devchain.MethodMineBlocks, `[0]`, "count must be 1..1024"},
		{devchain.MethodMineBlocks, `[1025]`, "count must be 1..1024"},
		{devchain.MethodMineBlocks, `[-3]`, "invalid type"},
	} {
		n.fails(c.method, c.params, devchain.CodeInvalidParams, c.msg)
	}
	if got := n.dev.Clock(); got.AbsoluteSlot != 100 || got.Paused || got.BlockProductionMode != "clock" {
		t.Fatalf("a refused call changed the clock: %+v", got)
	}
}

// TestPauseModesMine: pause and resume answer EpochInfo; block modes and
// mining answer ferry's ClockView; getClock reports all of it.
func TestPauseModesMine(t *testing.T) {
	n := newNode(t, "pause-mine")
	var info devchain.EpochInfo
	n.ok(devchain.MethodPauseClock, `[]`, &info)
	var v devchain.ClockView
	n.ok(devchain.MethodGetClock, `[]`, &v)
	if !v.Paused || v.AbsoluteSlot != info.AbsoluteSlot || v.Node == "" {
		t.Fatalf("paused clock: %+v (pause said %+v)", v, info)
	}
	n.ok(devchain.FerryResumeClock, `[]`, &info)
	n.ok(devchain.MethodGetClock, `[]`, &v)
	if v.Paused {
		t.Fatalf("resumed clock: %+v", v)
	}
	for _, mode := range []string{"manual", "transaction", "clock"} {
		n.ok(devchain.MethodSetBlockMode, `["`+mode+`"]`, &v)
		if v.BlockProductionMode != mode {
			t.Fatalf("set %s: %+v", mode, v)
		}
	}
	before := n.dev.Clock()
	n.ok(devchain.MethodMineBlocks, `[3]`, &v)
	if v.AbsoluteSlot != before.AbsoluteSlot+3 || v.BlockHeight != before.BlockHeight+3 {
		t.Fatalf("mined 3: %+v from %+v", v, before)
	}
	n.ok(devchain.MethodMineBlocks, `[]`, &v)
	if v.AbsoluteSlot != before.AbsoluteSlot+4 {
		t.Fatalf("mined 1 (default): %+v", v)
	}
	var slot uint64
	n.ok("getSlot", `[{"commitment":"confirmed"}]`, &slot)
	if slot != v.AbsoluteSlot-1 {
		t.Fatalf("confirmed slot %d, want %d (mining waits for durability)", slot, v.AbsoluteSlot-1)
	}
}

// TestAdvanceClockRPC: seconds move the Clock sysvar by that much and
// skip the slots they hold; slots skip that many.
func TestAdvanceClockRPC(t *testing.T) {
	n := newNode(t, "advance")
	unix, slot := n.clockUnix()
	var v devchain.ClockView
	n.ok(devchain.MethodAdvanceClock, `[{"seconds":600}]`, &v)
	if v.UnixTimestamp < unix+600 || v.UnixTimestamp > unix+602 || v.AbsoluteSlot < slot+1490 || v.OffsetSeconds < 599 {
		t.Fatalf("advance 600 s from unix %d slot %d: %+v", unix, slot, v)
	}
	if got, _ := n.clockUnix(); got != v.UnixTimestamp {
		t.Fatalf("clock sysvar %d, view %d", got, v.UnixTimestamp)
	}
	prev := v
	n.ok(devchain.MethodAdvanceClock, `[{"slots":25}]`, &v)
	if v.AbsoluteSlot != prev.AbsoluteSlot+25 || v.OffsetSeconds != prev.OffsetSeconds+10 {
		t.Fatalf("advance 25 slots from %+v: %+v", prev, v)
	}
}
