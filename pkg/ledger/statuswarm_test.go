package ledger

import (
	"errors"
	"maps"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TestStatusWarmup reopens a ledger with the status cache's warm-up held
// back and checks what stands in for the cache meanwhile: the recent
// blocks' transactions (one of them failed) are refused as already
// processed and their statuses answered; one whose block leaves the
// window while the cache warms up is no longer "seen"; new transactions
// are processed. Once the table is in place it must hold exactly what a
// fresh open's would: the new transactions in, the departed block's out.
func TestStatusWarmup(t *testing.T) {
	ctx := ctxT(t)
	cfg := Config{Name: "warm", DataDir: t.TempDir(), NoSync: true, ManualSlots: true, FinalityDepth: 1}
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := setupToken(t, l, 10_000)
	transfer := func(l *Ledger, amount uint64) []byte {
		return buildTx(t, l, s.alice, []txwire.Instruction{
			spl.TokenTransferChecked(spl.TokenProgramID, s.aliceAta, s.mint, s.bobA, pubkeyOf(s.alice), amount, 6),
		})
	}
	advance := func(l *Ledger, n int) {
		for range n {
			if _, err := l.AdvanceSlot(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	old := transfer(l, 1)
	oldRec := mustProcess(t, l, old)
	advance(l, 100)
	recent := [][]byte{transfer(l, 2), transfer(l, 3)}
	var recs []*TxRecord
	for _, raw := range recent {
		recs = append(recs, mustProcess(t, l, raw))
	}
	failing := transfer(l, 1_000_000) // more than alice holds: lands, fails
	frec, err := l.Process(ctx, failing)
	if err != nil || frec.Err == nil {
		t.Fatalf("overdraft: %v, %+v", err, frec)
	}
	recent, recs = append(recent, failing), append(recs, frec)
	advance(l, 1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	gate := make(chan struct{})
	cfg.statusWarmGate = gate
	l2, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { l2.Close() }()
	seen := func(l *Ledger, rec *TxRecord) bool {
		l.mu.RLock()
		defer l.mu.RUnlock()
		_, ok := l.recentStatus(rec.Signature)
		return ok
	}
	warming := func(l *Ledger) bool {
		l.mu.RLock()
		defer l.mu.RUnlock()
		return l.statusWarm != nil
	}
	if !warming(l2) {
		t.Fatal("no warm-up after reopening a ledger with recent transactions")
	}
	for i, raw := range append([][]byte{old}, recent...) {
		if _, err := l2.Process(ctx, raw); !errors.Is(err, runtime.ErrAlreadyProcessed) {
			t.Fatalf("transaction %d processed again while the cache warms up: %v", i, err)
		}
	}
	sts, err := l2.SignatureStatuses([]solana.Signature{recs[0].Signature, recs[2].Signature})
	if err != nil {
		t.Fatal(err)
	}
	if sts[0] == nil || sts[0].Slot != recs[0].Slot || sts[0].Err != nil || sts[1] == nil || sts[1].Slot != recs[2].Slot || sts[1].Err == nil {
		t.Fatalf("statuses while warming: %+v, %+v", sts[0], sts[1])
	}
	fresh := mustProcess(t, l2, transfer(l2, 4))
	// 70 more blocks: the old transaction's block leaves the window.
	advance(l2, 70)
	if seen(l2, oldRec) {
		t.Fatal("a signature older than the window is still seen while warming")
	}
	if _, err := l2.Process(ctx, old); !errors.Is(err, runtime.ErrBlockhashNotFound) {
		t.Fatalf("resending the old transaction: %v, want BlockhashNotFound", err)
	}
	for _, rec := range append(recs, fresh) {
		if !seen(l2, rec) {
			t.Fatalf("%s not seen while warming", rec.Signature)
		}
	}
	if !warming(l2) {
		t.Fatal("the warm-up did not wait for its gate")
	}
	close(gate)
	<-l2.warmDone
	if warming(l2) {
		t.Fatal("warm-up not over")
	}
	if seen(l2, oldRec) {
		t.Fatal("the departed block's signature is in the filled cache")
	}
	for _, rec := range append(recs, fresh) {
		if !seen(l2, rec) {
			t.Fatalf("%s not in the filled cache", rec.Signature)
		}
	}
	entries := func(l *Ledger) map[statusCellKey]statusEntry {
		l.mu.RLock()
		defer l.mu.RUnlock()
		m := map[statusCellKey]statusEntry{}
		l.status.each(func(k statusCellKey, e statusEntry) { m[k] = e })
		if len(m) != l.status.len() {
			t.Fatalf("each visited %d entries of %d", len(m), l.status.len())
		}
		return m
	}
	got := entries(l2)
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	cfg.statusWarmGate = nil
	l3, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l3.warmDone != nil {
		<-l3.warmDone
	}
	want := entries(l3)
	if err := l3.Close(); err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(got, want, func(a, b statusEntry) bool { return a.slot == b.slot && (a.err == nil) == (b.err == nil) }) {
		t.Fatalf("warmed-up cache holds %d entries, a fresh open's %d", len(got), len(want))
	}
	if len(want) < len(recs)+1 {
		t.Fatalf("fresh open's cache holds %d entries, want at least %d", len(want), len(recs)+1)
	}

	// A close while the warm-up waits does not hang.
	cfg.statusWarmGate = make(chan struct{})
	l4, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := l4.Close(); err != nil {
		t.Fatal(err)
	}
}
