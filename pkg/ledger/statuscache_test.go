package ledger

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
)

// checkStatusCache compares c with the reference map want entry by
// entry, and checks that c holds nothing else and that every entry is
// reachable from its home cell without crossing an empty one (what
// backward-shift deletion must preserve).
func checkStatusCache(t *testing.T, c *statusCache, want map[statusKey]statusEntry) {
	t.Helper()
	if c.len() != len(want) {
		t.Fatalf("len %d, want %d", c.len(), len(want))
	}
	for k, w := range want {
		got, ok := c.get(k)
		if !ok || got.slot != w.slot || got.err != w.err {
			t.Fatalf("get(%x) = %+v %v, want %+v", k[:4], got, ok, w)
		}
	}
	mask := uint64(len(c.entries) - 1)
	used, failed := 0, 0
	for i, x := range c.entries {
		if x.slot1 == 0 {
			continue
		}
		used++
		if x.slot1&statusFailed != 0 {
			failed++
		}
		for j := c.home(x.key); j != uint64(i); j = (j + 1) & mask {
			if c.entries[j].slot1 == 0 {
				t.Fatalf("cell %d (%x) is cut off from its home by empty cell %d", i, x.key[:4], j)
			}
		}
	}
	if used != len(want) || failed != len(c.errs) {
		t.Fatalf("%d cells used, %d failed, %d errors kept; want %d entries", used, failed, len(c.errs), len(want))
	}
	if len(c.entries) > statusCacheMin && 8*c.n < len(c.entries) {
		t.Fatalf("%d entries in %d cells: the table did not shrink", c.n, len(c.entries))
	}
}

func randomStatusKey(r *rand.Rand) (k statusKey) {
	for i := range k {
		k[i] = byte(r.Uint32())
	}
	return k
}

// TestStatusCache runs random puts, replacements and deletions against a
// map, with tables small enough that probe runs collide and wrap, and
// through growth to thousands of entries and shrinkage back.
func TestStatusCache(t *testing.T) {
	failure := &runtime.TxError{}
	for _, tc := range []struct {
		name     string
		keys     int // distinct keys drawn from
		ops      int
		deleteOf int // one op in deleteOf is a deletion
	}{
		{"few keys, many replacements", 40, 20_000, 3},
		{"grows past the minimum", 5_000, 20_000, 5},
		{"mostly deletions", 3_000, 30_000, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.keys)))
			keys := make([]statusKey, tc.keys)
			for i := range keys {
				keys[i] = randomStatusKey(r)
			}
			var c statusCache
			want := map[statusKey]statusEntry{}
			for op := 0; op < tc.ops; op++ {
				k := keys[r.IntN(len(keys))]
				slot := uint64(r.IntN(8))
				if r.IntN(tc.deleteOf) == 0 {
					c.deleteAt(k, slot)
					if e, ok := want[k]; ok && e.slot == slot {
						delete(want, k)
					}
					continue
				}
				e := statusEntry{slot: slot}
				if r.IntN(4) == 0 {
					e.err = failure
				}
				c.put(k, e)
				want[k] = e
			}
			checkStatusCache(t, &c, want)
			// Emptied, the table shrinks back.
			for k, e := range want {
				c.deleteAt(k, e.slot)
			}
			checkStatusCache(t, &c, nil)
			if len(c.entries) > 4*statusCacheMin {
				t.Fatalf("empty cache kept %d cells", len(c.entries))
			}
		})
	}
}

// TestStatusCacheFill checks that fill, what an open rebuilds the cache
// with, leaves the same entries as putting each block's signatures in
// order: a signature repeated in a later block (processed again once
// its first blockhash expired) takes the later slot, failures keep
// their errors, and the cache then takes puts and deletions as usual.
func TestStatusCacheFill(t *testing.T) {
	for _, perBlock := range []int{0, 1, 300, 40_000} {
		r := rand.New(rand.NewPCG(2, uint64(perBlock)))
		var blocks []*blockRecord
		want := map[statusKey]statusEntry{}
		var all []statusKey
		for slot := uint64(5); slot < 25; slot++ {
			b := &blockRecord{BlockInfo: BlockInfo{Slot: slot}}
			for i := 0; i < perBlock; i++ {
				k := randomStatusKey(r)
				if len(all) > 0 && r.IntN(50) == 0 {
					k = all[r.IntN(len(all))]
				}
				var err *runtime.TxError
				if r.IntN(10) == 0 {
					err = &runtime.TxError{}
				}
				b.Keys, b.Errs = append(b.Keys, k), append(b.Errs, err)
				want[k] = statusEntry{slot: slot, err: err}
				all = append(all, k)
			}
			if !slices.ContainsFunc(b.Errs, func(e *runtime.TxError) bool { return e != nil }) {
				b.Errs = nil // as decodeBlockKeys leaves a block without failures
			}
			blocks = append(blocks, b)
		}
		var c statusCache
		c.fill(blocks)
		checkStatusCache(t, &c, want)
		if perBlock > 0 && 5*c.len() > 3*len(c.entries) {
			t.Fatalf("%d entries in %d cells after fill: more than 60 %% full", c.len(), len(c.entries))
		}
		k := randomStatusKey(r)
		c.put(k, statusEntry{slot: 30})
		want[k] = statusEntry{slot: 30}
		for _, b := range blocks[:10] {
			for _, k := range b.Keys {
				c.deleteAt(k, b.Slot)
				if want[k].slot == b.Slot {
					delete(want, k)
				}
			}
		}
		checkStatusCache(t, &c, want)
	}
}

// BenchmarkStatusCacheResize measures one doubling of a cache holding
// 1.5 million signatures (150 blocks at 25 000 transfers/s): the pause
// the slot loop takes, holding the ledger's lock, when traffic grows the
// cache past 75 %.
//
//	go test -run '^$' -bench StatusCacheResize ./pkg/ledger/
func BenchmarkStatusCacheResize(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	var c statusCache
	for i := 0; i < 1_500_000; i++ {
		c.put(randomStatusKey(r), statusEntry{slot: uint64(i / 10_000)})
	}
	cells := len(c.entries)
	for b.Loop() {
		c.resize(2 * cells)
		b.StopTimer()
		c.resize(cells)
		b.StartTimer()
	}
}
