package rpcserver

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/ferry-sh/ferry/pkg/ledger"
)

// TestHaltLedger: ferry_haltLedger exists only once enabled, checks its
// parameters, and halts the node as a full disk does: the next slot
// commit fails and getHealth answers -32005.
func TestHaltLedger(t *testing.T) {
	l, err := ledger.Open(ledger.Config{Name: "halt", ManualSlots: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	h := New(l, Options{})
	if _, e := faucetCall(t, h, MethodHaltLedger, `[]`); e == nil || e.Code != CodeMethodNotFound {
		t.Fatalf("before EnableDevMethods: %+v", e)
	}
	h.EnableDevMethods()
	if !h.LocalOnly(MethodHaltLedger) {
		t.Error("ferry_haltLedger is not local-only")
	}
	for _, params := range []string{`[{"reason": 5}]`, `[{}, {}]`, `[{"reason": "` + strings.Repeat("x", maxHaltReason+1) + `"}]`} {
		if _, e := faucetCall(t, h, MethodHaltLedger, params); e == nil || e.Code != CodeInvalidParams {
			t.Errorf("%.40s: %+v", params, e)
		}
	}
	if err := l.Health(); err != nil {
		t.Fatalf("refused calls halted the node: %v", err)
	}
	res, e := faucetCall(t, h, MethodHaltLedger, `[{"reason": "disk full (test)"}]`)
	if e != nil || string(res) != `{"halting":"disk full (test)"}` {
		t.Fatalf("halt: %s %+v", res, e)
	}
	if _, err := l.AdvanceSlot(context.Background()); err == nil {
		t.Fatal("a slot was committed after ferry_haltLedger")
	}
	if err := l.Health(); err == nil || !strings.Contains(err.Error(), "disk full (test)") {
		t.Fatalf("health after the halt: %v", err)
	}
	if _, e := faucetCall(t, h, "getHealth", `[]`); e == nil || e.Code != CodeNodeUnhealthy {
		t.Fatalf("getHealth after the halt: %+v", e)
	}
}

// TestAdvanceSlot: ferry_advanceSlot ends the working slot (or as many as
// its "slots" option says) and answers with the last one and the new
// latest blockhash.
func TestAdvanceSlot(t *testing.T) {
	l, err := ledger.Open(ledger.Config{Name: "advance", ManualSlots: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	h := New(l, Options{})
	h.EnableDevMethods()
	if !h.LocalOnly(MethodAdvanceSlot) {
		t.Error("ferry_advanceSlot is not local-only")
	}
	for _, bad := range []string{`[1]`, `[{"slots":0}]`, `[{"slots":1025}]`, `[{"slots":"2"}]`, `[{},{}]`} {
		if _, e := faucetCall(t, h, MethodAdvanceSlot, bad); e == nil || e.Code != CodeInvalidParams {
			t.Fatalf("params %s: %+v", bad, e)
		}
	}
	before := l.Slot(ledger.Processed)
	res, e := faucetCall(t, h, MethodAdvanceSlot, `[]`)
	if e != nil {
		t.Fatal(e)
	}
	bh, _ := l.LatestBlockhash(ledger.Processed)
	want := `{"blockhash":"` + bh.Blockhash.String() + `","slot":` + strconv.FormatUint(before, 10) + `}`
	if string(res) != want {
		t.Fatalf("answer %s, want %s", res, want)
	}
	if got := l.Slot(ledger.Processed); got != before+1 {
		t.Fatalf("working slot %d after advancing from %d", got, before)
	}
	if got := l.Slot(ledger.Confirmed); got != before {
		t.Fatalf("confirmed slot %d, want %d (the answer waits for durability)", got, before)
	}
	res, e = faucetCall(t, h, MethodAdvanceSlot, `[{"slots":600}]`)
	if e != nil {
		t.Fatal(e)
	}
	bh, _ = l.LatestBlockhash(ledger.Processed)
	want = `{"blockhash":"` + bh.Blockhash.String() + `","slot":` + strconv.FormatUint(before+600, 10) + `}`
	if string(res) != want || l.Slot(ledger.Processed) != before+601 {
		t.Fatalf("600 slots: answer %s, want %s", res, want)
	}
}
