package ledger

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TestLimitLedgerSize fills a ledger with one transfer per slot past its
// history limit and checks what is kept and what answers as pruned, in
// memory and on disk (where a restart must keep both).
func TestLimitLedgerSize(t *testing.T) {
	const (
		limit = 200
		slots = 480
	)
	for _, tc := range []struct {
		name    string
		durable bool
		nested  int // nestedValueMin: 1 nests every stored value
	}{
		{"memory", false, 0},
		{"durable", true, 0},
		{"durable-nested", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Name: "prune", FinalityDepth: 2, LimitLedgerSize: limit, ManualSlots: true, tableRewriteMin: 16, tableRunChanges: 4, nestedValueMin: tc.nested}
			if tc.durable {
				cfg.DataDir, cfg.NoSync = t.TempDir(), true
			}
			l, err := Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { l.Close() }()
			ctx := ctxT(t)
			s := setupToken(t, l, 1_000_000)
			type sent struct {
				sig  solana.Signature
				slot uint64
			}
			var txs []sent
			for i := 0; i < slots; i++ {
				rec := mustProcess(t, l, buildTx(t, l, s.alice, []txwire.Instruction{
					spl.TokenTransferChecked(spl.TokenProgramID, s.aliceAta, s.mint, s.bobA, pubkeyOf(s.alice), 1, 6),
				}))
				txs = append(txs, sent{rec.Signature, rec.Slot})
				if _, err := l.AdvanceSlot(ctx); err != nil {
					t.Fatal(err)
				}
			}
			check := func(t *testing.T, l *Ledger) {
				t.Helper()
				first := l.FirstAvailableBlock()
				tip := l.Slot(Confirmed)
				if first == 0 {
					t.Fatal("nothing was pruned")
				}
				kept := 0
				for i, tx := range txs {
					r, err := l.Transaction(tx.sig, Confirmed)
					if err != nil {
						t.Fatal(err)
					}
					st, err := l.SignatureStatuses([]solana.Signature{tx.sig})
					if err != nil {
						t.Fatal(err)
					}
					if tx.slot >= first {
						kept++
						if r == nil || r.Slot != tx.slot || st[0] == nil {
							t.Fatalf("kept transaction %d (slot %d, first %d) not found: %v %v", i, tx.slot, first, r, st[0])
						}
						continue
					}
					if r != nil || st[0] != nil {
						t.Fatalf("pruned transaction %d (slot %d, first %d) still answers: %v %v", i, tx.slot, first, r, st[0])
					}
					if len(txs)-i <= limit {
						t.Fatalf("transaction %d is among the newest %d but was pruned (first %d)", i, limit, first)
					}
				}
				if max := limit + int(pruneSlack(limit)) + 1; kept > max {
					t.Fatalf("%d transfers kept, the limit allows at most %d", kept, max)
				}
				if tip-first < recentBlocks {
					t.Fatalf("first kept slot %d is within the recent %d blocks of tip %d", first, recentBlocks, tip)
				}
				info, _, err := l.Block(first-1, Confirmed)
				if err != nil || info != nil {
					t.Fatalf("pruned block %d: %v %v", first-1, info, err)
				}
				if info, _, err := l.Block(first, Confirmed); err != nil || info == nil {
					t.Fatalf("first kept block %d: %v %v", first, info, err)
				}
				slotsList, err := l.Blocks(0, tip, 1<<20, Confirmed)
				if err != nil || len(slotsList) == 0 || slotsList[0] != first || uint64(len(slotsList)) != tip-first+1 {
					t.Fatalf("blocks from 0: %d slots starting at %v, want %d from %d (%v)", len(slotsList), slotsList[:min(1, len(slotsList))], tip-first+1, first, err)
				}
				// Address history pages through exactly the kept transfers,
				// newest first, and ends where history was pruned.
				var got []solana.Signature
				var before *solana.Signature
				for {
					page, err := l.SignaturesForAddress(s.aliceAta, AddressQuery{Before: before, Limit: 64}, Confirmed)
					if err != nil {
						t.Fatal(err)
					}
					if len(page) == 0 {
						break
					}
					for _, r := range page {
						got = append(got, r.Signature)
					}
					sig := page[len(page)-1].Signature
					before = &sig
				}
				if len(got) != kept {
					t.Fatalf("signatures for alice's account: %d, want the %d kept", len(got), kept)
				}
				for i, sig := range got {
					if want := txs[len(txs)-1-i].sig; sig != want {
						t.Fatalf("signature %d for alice's account = %s, want %s", i, sig, want)
					}
				}
				// State is not history: every transfer still counts.
				if got := tokenAmount(t, l, s.bobA, Confirmed); got != slots {
					t.Fatalf("bob holds %d, want %d", got, slots)
				}
				replayed := 0
				sub := l.SubscribeFrom(ctx, 0)
				for b := range sub {
					if !b.Replayed {
						break
					}
					if b.Slot < first {
						t.Fatalf("replayed pruned slot %d", b.Slot)
					}
					replayed++
					if b.Slot == tip {
						break
					}
				}
				if uint64(replayed) != tip-first+1 {
					t.Fatalf("replayed %d blocks, want %d", replayed, tip-first+1)
				}
			}
			check(t, l)
			if !tc.durable {
				return
			}
			first := l.FirstAvailableBlock()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if l, err = Open(cfg); err != nil {
				t.Fatal(err)
			}
			if got := l.FirstAvailableBlock(); got != first {
				t.Fatalf("first available block after restart = %d, want %d", got, first)
			}
			check(t, l)
		})
	}
}

// TestPrunedReadersStopAtFirst: pruning moves the first kept slot before
// it deletes the history below it, so that no reader walks into a record
// being deleted; between the two, every history reader must already
// answer as if the slots below were gone (getFirstAvailableBlock and
// getBlock of a slot below it must agree). The first slot is moved here
// without deleting anything, which is that moment held still.
func TestPrunedReadersStopAtFirst(t *testing.T) {
	cfg := Config{Name: "prune-first", FinalityDepth: 2, ManualSlots: true, DataDir: t.TempDir(), NoSync: true}
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := ctxT(t)
	s := setupToken(t, l, 1_000_000)
	var sigs []solana.Signature
	var slots []uint64
	for range 6 {
		rec := mustProcess(t, l, buildTx(t, l, s.alice, []txwire.Instruction{
			spl.TokenTransferChecked(spl.TokenProgramID, s.aliceAta, s.mint, s.bobA, pubkeyOf(s.alice), 1, 6),
		}))
		sigs, slots = append(sigs, rec.Signature), append(slots, rec.Slot)
		if _, err := l.AdvanceSlot(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 4 {
		if _, err := l.AdvanceSlot(ctx); err != nil {
			t.Fatal(err)
		}
	}
	store := l.store.(*boltStore)
	cut := slots[3]
	store.mu.Lock()
	store.first = cut
	store.mu.Unlock()
	if got := l.FirstAvailableBlock(); got != cut {
		t.Fatalf("first available block %d, want %d", got, cut)
	}
	for i, slot := range slots {
		info, txs, err := l.Block(slot, Confirmed)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := l.Transaction(sigs[i], Confirmed)
		if err != nil {
			t.Fatal(err)
		}
		if below := slot < cut; below != (info == nil) || below != (tx == nil) || !below && len(txs) != 1 {
			t.Fatalf("slot %d (first kept %d): block %v with %d transactions, transaction %v", slot, cut, info, len(txs), tx)
		}
	}
	listed, err := l.Blocks(0, slots[5], 100, Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) == 0 || listed[0] < cut {
		t.Fatalf("blocks listed from %v, first kept %d", listed, cut)
	}
	if n, err := store.countBlocks(0, slots[5]); err != nil || n != uint64(len(listed)) {
		t.Fatalf("counted %d blocks (%v), listed %d", n, err, len(listed))
	}
}
