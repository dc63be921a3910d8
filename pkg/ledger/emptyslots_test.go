package ledger

import (
	"testing"
	"time"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TestEmptySlotBatch checks that a durable ledger with its slot clock
// running commits idle slots in batches (Config.EmptySlotBatch), and what
// must not change: no slot is reported confirmed before it is on disk,
// none is skipped, a transaction's slot is committed without waiting for
// the batch, and Close makes every held slot durable.
func TestEmptySlotBatch(t *testing.T) {
	const slot = 10 * time.Millisecond
	for _, tc := range []struct {
		name  string
		batch time.Duration
	}{
		{"batched", 200 * time.Millisecond},
		{"every-slot", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := Config{Name: "idle", DataDir: dir, NoSync: true, SlotDuration: slot, EmptySlotBatch: tc.batch, FinalityDepth: 1}
			l, err := Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { l.Close() }()
			s := l.store.(*boltStore)
			payer := fundedWallet(t, l, 1_000_000_000)
			start, commits0 := l.Slot(Confirmed), s.committed.Load()
			// Idle for ~60 slots, checking that confirmed never runs
			// ahead of what the store committed.
			deadline := time.Now().Add(60 * slot)
			for time.Now().Before(deadline) {
				c := l.Slot(Confirmed)
				s.mu.RLock()
				tip := s.tip
				s.mu.RUnlock()
				if c > tip {
					t.Fatalf("slot %d confirmed, but the store's tip is %d", c, tip)
				}
				time.Sleep(slot / 3)
			}
			idle := l.Slot(Confirmed) - start
			commits := uint64(s.committed.Load() - commits0)
			t.Logf("%d slots confirmed while idle, %d commits", idle, commits)
			if idle < 20 {
				t.Fatalf("only %d slots confirmed in %v", idle, 60*slot)
			}
			if tc.batch > 0 && commits*3 > idle+3 {
				t.Fatalf("%d commits for %d idle slots: empty slots are not batched", commits, idle)
			}
			if tc.batch < 0 && commits+1 < idle {
				t.Fatalf("%d commits for %d slots, want one each", commits, idle)
			}
			// A transfer's slot is committed with the slots held before it.
			rec := mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.SystemTransfer(pubkeyOf(payer), randomAddr(t), 1_000_000)}))
			for l.Slot(Confirmed) < rec.Slot {
				time.Sleep(slot / 3)
			}
			slots, err := l.Blocks(start, rec.Slot, 1<<20, Confirmed)
			if err != nil || uint64(len(slots)) != rec.Slot-start+1 {
				t.Fatalf("%d blocks from %d to the transfer's slot %d, want every slot (%v)", len(slots), start, rec.Slot, err)
			}
			processed := l.Slot(Processed)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if l, err = Open(cfg); err != nil {
				t.Fatal(err)
			}
			// Every slot frozen before Close is durable: a slot that ended
			// later than the read above may be too, the working one is not.
			if got := l.Slot(Confirmed); got+1 < processed {
				t.Fatalf("after a restart the tip is slot %d; slot %d was processed before Close", got, processed)
			}
			if r, err := l.Transaction(rec.Signature, Confirmed); err != nil || r == nil {
				t.Fatalf("transfer after restart: %v %v", r, err)
			}
		})
	}
}
