package rpcserver

import (
	"context"
	"strings"
	"testing"

	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/ledger"
)

// TestHaltLedger: ferry_haltLedger exists only once the dev methods are
// enabled, checks its parameters, and halts the node as a full disk does:
// the next slot commit fails and getHealth answers -32005.
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
	dev, err := devchain.New(devchain.Config{Ledger: l, Encode: h.AccountEncoder()})
	if err != nil {
		t.Fatal(err)
	}
	h.EnableDevMethods(dev.Methods())
	// Every name of every cheatcode is local-only, surfnet_* included.
	for _, m := range dev.Methods() {
		for _, name := range m.Names {
			if !h.LocalOnly(name) || h.Method(name) == nil {
				t.Errorf("%s: registered %v, local-only %v", name, h.Method(name) != nil, h.LocalOnly(name))
			}
		}
	}
	if !h.LocalOnly(MethodHaltLedger) {
		t.Error("ferry_haltLedger is not local-only")
	}
	for _, params := range []string{`[{"reason": 5}]`, `[{}, {}]`, `[{"reason": "` + strings.Repeat("x", devchain.MaxHaltReason+1) + `"}]`} {
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
