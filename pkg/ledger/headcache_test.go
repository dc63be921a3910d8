package ledger

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/gagliardetto/solana-go"
)

// TestHeadCache checks the heads cache against the heads table for
// addresses created and paid again over many slots, through key-directory
// rewrites (tiny segments make them frequent), the tables' runs and a
// reopen: every value it holds is the table's, it follows the key
// directory's newest base, and after an open it knows every address of
// the base without asking the table.
func TestHeadCache(t *testing.T) {
	cfg := Config{Name: "headcache", DataDir: t.TempDir(), NoSync: true, FinalityDepth: 1, ManualSlots: true,
		accountSegmentBytes: 4 << 10, tableRewriteMin: 40, tableRunChanges: 64}
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { l.Close() }()
	var addrs []solana.PublicKey
	check := func(phase string, afterOpen, covers bool) {
		t.Helper()
		s := l.store.(*boltStore)
		s.mu.RLock()
		defer s.mu.RUnlock()
		if s.hc.base != s.acc.keydir.base {
			t.Fatalf("%s: the cache is not on the key directory's base", phase)
		}
		covered := 0
		for _, a := range addrs {
			p := headKey(a)
			want, _ := s.heads.get(p)
			i := s.hc.index(p)
			kb := s.acc.keydir.base
			if inBase := len(kb.prefixes) > 0 && kb.indexAt(a[:]) >= 0; (i >= 0) != inBase {
				t.Fatalf("%s: %s in the cache: %v, in the key directory's base: %v", phase, a, i >= 0, inBase)
			}
			if i >= 0 {
				covered++
				switch v := atomic.LoadUint32(&s.hc.slots[i]); {
				case v == headUnknown && afterOpen:
					t.Fatalf("%s: %s unknown to the cache after an open", phase, a)
				case v != headUnknown && uint64(v) != want:
					t.Fatalf("%s: cache has %d for %s, the heads table %d", phase, v, a, want)
				}
			}
			if got := s.head(p); got != want || want == 0 {
				t.Fatalf("%s: head of %s is %d, the heads table's %d", phase, a, got, want)
			}
		}
		if covers && covered < 1000 {
			t.Fatalf("%s: %d of %d addresses in the cache", phase, covered, len(addrs))
		}
	}
	payer := fundedWallet(t, l, 1_000_000_000_000)
	var base *tableFile
	bases, fills := 0, 0
	for slot := 0; slot < 300; slot++ {
		var to []solana.PublicKey
		for range 10 {
			to = append(to, randomAddr(t))
		}
		addrs = append(addrs, to...)
		sendTo(t, l, payer, fmt.Sprint(slot), to...)
		// Pay earlier addresses again, so their heads move on (and the
		// log grows, which makes the key directory due for rewrites).
		if slot > 0 {
			to = to[:0]
			for j := range 12 {
				to = append(to, addrs[(slot*7+j*13)%(len(addrs)-10)])
			}
			sendTo(t, l, payer, fmt.Sprint("again ", slot), to...)
		}
		if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("slot %d", slot), false, slot == 299)
		// Now and then, what an open builds from the table as it is: its
		// base, runs and changes in memory.
		s := l.store.(*boltStore)
		s.mu.Lock()
		refill := slot >= 50*(fills+1) && len(s.heads.runs) > 0 && len(s.heads.recent) > 0
		if refill {
			s.fillHeadCache()
			fills++
		}
		s.mu.Unlock()
		if refill {
			check(fmt.Sprintf("slot %d, filled", slot), true, false)
		}
		if b := l.store.(*boltStore).acc.keydir.base; b != base {
			base, bases = b, bases+1
		}
	}
	if fills < 4 {
		t.Fatalf("filled %d times", fills)
	}
	if bases < 3 {
		t.Fatalf("the key directory's base was written %d times", bases)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err = Open(cfg); err != nil {
		t.Fatal(err)
	}
	check("reopened", true, true)
}
