package ledger

import (
	"context"
	"errors"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// nextEvents collects events until one of kind want arrives.
func nextEvents(t *testing.T, o *Observer, want EventKind) []Event {
	t.Helper()
	var out []Event
	for {
		evs, err := o.Next(ctxT(t))
		if err != nil {
			t.Fatalf("observer: %v (have %+v)", err, out)
		}
		out = append(out, evs...)
		for _, ev := range evs {
			if ev.Kind == want {
				return out
			}
		}
	}
}

// TestObserveOrder checks that an observer sees a transaction processed
// in the working slot, then the slot frozen, then its block confirmed,
// then finalized, in that order and with the right payloads.
func TestObserveOrder(t *testing.T) {
	l := openTest(t, Config{FinalityDepth: 1})
	o := l.Observe(1000)
	defer o.Close()
	ctx := ctxT(t)
	payer := fundedWallet(t, l, 1_000_000_000)
	dest := pubkeyOf(newKey(t))
	evs := nextEvents(t, o, EventProcessed) // the airdrop
	if len(evs[len(evs)-1].Txs) != 1 {
		t.Fatalf("airdrop event %+v", evs)
	}

	rec := mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.SystemTransfer(pubkeyOf(payer), dest, 5_000_000)}))
	evs = nextEvents(t, o, EventProcessed)
	ev := evs[len(evs)-1]
	if ev.Slot != rec.Slot || len(ev.Txs) != 1 || ev.Txs[0].Signature != rec.Signature {
		t.Fatalf("processed event %+v, want slot %d sig %s", ev, rec.Slot, rec.Signature)
	}
	var sawDest bool
	for _, w := range ev.Txs[0].Writes {
		sawDest = sawDest || (w.Key == dest && w.Account.Lamports == 5_000_000)
	}
	if !sawDest {
		t.Fatalf("processed writes %+v lack the destination", ev.Txs[0].Writes)
	}

	slot, err := l.AdvanceSlot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	evs = nextEvents(t, o, EventConfirmed)
	var kinds []EventKind
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind)
		switch ev.Kind {
		case EventFrozen:
			if ev.Slot != slot || ev.Parent != slot-1 || len(ev.Txs) != 2 {
				t.Errorf("frozen %+v, want slot %d with 2 transactions", ev, slot)
			}
		case EventConfirmed:
			if ev.Block == nil || ev.Slot != slot || ev.Block.Slot != slot || len(ev.Block.Transactions) != 2 {
				t.Errorf("confirmed %+v", ev)
			}
		}
	}
	if len(kinds) != 2 || kinds[0] != EventFrozen || kinds[1] != EventConfirmed {
		t.Fatalf("events %v, want frozen then confirmed", kinds)
	}
	// With depth 1, the next slot finalizes this one.
	next, err := l.AdvanceSlot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	evs = nextEvents(t, o, EventFinalized)
	last := evs[len(evs)-1]
	if last.Slot != slot || last.Parent != slot-1 || l.Slot(Finalized) != slot || next != slot+1 {
		t.Fatalf("finalized %+v, ledger finalized %d", last, l.Slot(Finalized))
	}
}

// TestObserveApply checks that Apply writes are published as processed.
func TestObserveApply(t *testing.T) {
	l := openTest(t, Config{})
	o := l.Observe(10)
	defer o.Close()
	key := solana.PublicKey{7}
	slot, err := l.Apply(ctxT(t), func(w AccountWriter) error {
		w.Set(key, &Account{Lamports: 42, Owner: spl.SystemProgramID})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	evs := nextEvents(t, o, EventProcessed)
	ev := evs[len(evs)-1]
	if ev.Slot != slot || len(ev.Applied) != 1 || ev.Applied[0].Key != key || ev.Applied[0].Account.Lamports != 42 {
		t.Fatalf("apply event %+v", ev)
	}
}

// TestObserveOverflow checks that an observer that does not keep up is
// dropped instead of holding up the ledger, while another one keeps
// receiving everything.
func TestObserveOverflow(t *testing.T) {
	l := openTest(t, Config{FinalityDepth: -1})
	slow := l.Observe(3)
	fast := l.Observe(1000)
	defer fast.Close()
	ctx := ctxT(t)
	for i := 0; i < 5; i++ {
		if _, err := l.AdvanceSlot(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// 5 frozen + 5 confirmed + 5 finalized events: far more than 3.
	if _, err := slow.Next(ctx); !errors.Is(err, ErrObserverOverflow) {
		t.Fatalf("slow observer: %v, want overflow", err)
	}
	n := 0
	for n < 15 {
		evs, err := fast.Next(ctx)
		if err != nil {
			t.Fatalf("fast observer after %d events: %v", n, err)
		}
		n += len(evs)
	}
	if l.obs.active.Load() != true {
		t.Fatal("fast observer detached")
	}
}

// TestObserveClose checks that Next reports the end after the last events
// and that closing the only observer turns event building off.
func TestObserveClose(t *testing.T) {
	l, err := Open(Config{Name: "close", ManualSlots: true})
	if err != nil {
		t.Fatal(err)
	}
	o := l.Observe(100)
	if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var n int
	for {
		evs, err := o.Next(context.Background())
		if errors.Is(err, ErrClosed) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n += len(evs)
	}
	if n < 2 {
		t.Fatalf("got %d events before the end, want frozen and confirmed", n)
	}
	l2 := openTest(t, Config{})
	o2 := l2.Observe(1)
	o2.Close()
	if l2.obs.active.Load() {
		t.Fatal("closed observer still counted")
	}
	if _, err := o2.Next(ctxT(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed observer: %v", err)
	}
}
