package api

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/ferry-sh/ferry/pkg/apierr"
)

// TestHealthAndHaltedBuilds: a failing ledger check turns /health into a
// 503 "halted" with the reason, and every build and send on a cluster
// behind that ledger into 503 LEDGER_HALTED; clusters elsewhere and reads
// are unaffected.
func TestHealthAndHaltedBuilds(t *testing.T) {
	var fault atomic.Pointer[error]
	check := func() error {
		if p := fault.Load(); p != nil {
			return *p
		}
		return nil
	}
	h := newHarness(t, harnessOptions{health: map[string]HealthCheck{testBaseURL + "/": {Name: "base ledger", Check: check}}})
	alice, bob := pubOf(seedKey("alice")), pubOf(seedKey("bob"))
	h.fund(alice, 1000)
	r := h.do("GET", "/health", nil)
	if r.Status != 200 || string(r.Body) != `{"status":"ok"}` {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	builds := []struct{ path, body string }{
		{"/v1/spl/deposit", fmt.Sprintf(`{"owner":%q,"mint":%q,"amount":1}`, alice, h.mint)},
		{"/v1/spl/withdraw", fmt.Sprintf(`{"owner":%q,"mint":%q,"amount":1}`, alice, h.mint)},
		{"/v1/spl/transfer", transferBody(alice, bob, h.mint, "public", "base", "base", "")},
		{"/v1/spl/initialize-mint", fmt.Sprintf(`{"payer":%q,"mint":%q}`, alice, h.mint)},
		{"/v1/spl/transfer-queue/ensure-crank", fmt.Sprintf(`{"mint":%q}`, h.mint)},
		{"/v1/spl/undelegate-ephemeral-ata", fmt.Sprintf(`{"payer":%q,"mint":%q}`, alice, h.mint)},
		{"/v1/transaction/send", `{"transactionBase64":"AQ==","sendTo":"base"}`},
	}
	ok[struct{}](t, h.do("POST", builds[0].path, builds[0].body))

	err := errors.New("ledger halted: write: no space left on device")
	fault.Store(&err)
	r = h.do("GET", "/health", nil)
	want := `{"status":"halted","reason":"base ledger: ledger halted: write: no space left on device","ledgers":[{"name":"base ledger","status":"halted","reason":"ledger halted: write: no space left on device"}]}`
	if r.Status != 503 || string(r.Body) != want {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	for _, b := range builds {
		e := apiError(t, h.do("POST", b.path, b.body), 503, apierr.CodeLedgerHalted)
		if e["details"].(map[string]any)["ledger"] != "base ledger" {
			t.Fatalf("%s: %v", b.path, e)
		}
	}
	// Reads still work.
	ok[struct{}](t, h.do("GET", fmt.Sprintf("/v1/spl/balance?address=%s&mint=%s", alice, h.mint), nil))

	fault.Store(nil)
	if r := h.do("GET", "/health", nil); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	ok[struct{}](t, h.do("POST", builds[0].path, builds[0].body))
}
