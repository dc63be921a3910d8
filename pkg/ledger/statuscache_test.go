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
		if x.slot == 0 {
			continue
		}
		used++
		if x.slot&statusCellFailed != 0 {
			failed++
		}
		if _, ok := c.over[x.key]; ok {
			t.Fatalf("%x is both in a cell and in the map", x.key[:4])
		}
		for j := c.home(x.key); j != uint64(i); j = (j + 1) & mask {
			if c.entries[j].slot == 0 {
				t.Fatalf("cell %d (%x) is cut off from its home by empty cell %d", i, x.key[:4], j)
			}
		}
	}
	if used != c.n {
		t.Fatalf("%d cells used, n is %d", used, c.n)
	}
	for _, v := range c.over {
		if v&statusFailed != 0 {
			failed++
		}
	}
	if used+len(c.over) != len(want) || failed != len(c.errs) {
		t.Fatalf("%d cells used, %d in the map, %d failed, %d errors kept; want %d entries", used, len(c.over), failed, len(c.errs), len(want))
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
		// slots are the slots drawn from: clustered far apart, the
		// cells cannot express them all against one base.
		slots []uint64
	}{
		{"few keys, many replacements", 40, 20_000, 3, nil},
		{"grows past the minimum", 5_000, 20_000, 5, nil},
		{"mostly deletions", 3_000, 30_000, 2, nil},
		{"slots a clock jump apart", 3_000, 30_000, 3, []uint64{0, 7, 1 << 31, 1<<31 + 3, 1 << 40, 1<<40 + 1<<30, 1 << 62}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.keys)))
			keys := make([]statusKey, tc.keys)
			for i := range keys {
				keys[i] = randomStatusKey(r)
			}
			var c statusCache
			want := map[statusKey]statusEntry{}
			overUsed := false
			for op := 0; op < tc.ops; op++ {
				k := keys[r.IntN(len(keys))]
				slot := uint64(r.IntN(8))
				if tc.slots != nil {
					slot = tc.slots[r.IntN(len(tc.slots))]
				}
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
				overUsed = overUsed || len(c.over) > 0
			}
			if tc.slots != nil && !overUsed {
				t.Fatal("no entry went to the map")
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

// TestStatusCacheClockJumps runs the cache as the ledger does, a window
// of blocks whose signatures are put as each block is made and deleted
// as it leaves, through jumps of the clock larger than a cell's slot
// field spans: entries the cells cannot express wait in the map, the
// table moves its base once the entries left allow, and every lookup
// agrees with a map throughout.
func TestStatusCacheClockJumps(t *testing.T) {
	// The widest span cells express, and one slot more.
	var edge statusCache
	k0, k1, k2 := statusKey{1}, statusKey{2}, statusKey{3}
	const lo = 1 << 40
	edge.put(k0, statusEntry{slot: lo})
	edge.put(k1, statusEntry{slot: lo + statusCellSlots - 1})
	edge.put(k2, statusEntry{slot: lo + statusCellSlots})
	checkStatusCache(t, &edge, map[statusKey]statusEntry{k0: {slot: lo}, k1: {slot: lo + statusCellSlots - 1}, k2: {slot: lo + statusCellSlots}})
	if len(edge.over) != 1 {
		t.Fatalf("%d entries in the map, want the one beyond the span", len(edge.over))
	}

	r := rand.New(rand.NewPCG(4, 4))
	const window = 20
	var c statusCache
	want := map[statusKey]statusEntry{}
	type block struct {
		slot uint64
		keys []statusKey
	}
	var blocks []block
	slot := uint64(3)
	overUsed, rebased, reset := false, false, false
	for b := 0; b < 400; b++ {
		switch {
		case b%97 == 50:
			slot += 1<<31 + uint64(r.IntN(1000)) // beyond the cells' span
		case b%61 == 30:
			slot += 1<<30 + uint64(r.IntN(1000)) // within it, past the margin
		default:
			slot += 1 + uint64(r.IntN(3))
		}
		blk := block{slot: slot}
		for range 1 + r.IntN(60) {
			k := randomStatusKey(r)
			e := statusEntry{slot: slot}
			if r.IntN(8) == 0 {
				e.err = &runtime.TxError{}
			}
			base, n := c.base, c.n
			c.put(k, e)
			want[k] = e
			blk.keys = append(blk.keys, k)
			switch {
			case n > 0 && c.n > n && c.base != base:
				rebased = true // the table's entries moved to a new base
			case n == 0 && c.base != base:
				reset = true
			}
			overUsed = overUsed || len(c.over) > 0
		}
		blocks = append(blocks, blk)
		if len(blocks) > window {
			old := blocks[0]
			blocks = blocks[1:]
			for _, k := range old.keys {
				c.deleteAt(k, old.slot)
				delete(want, k)
			}
		}
		checkStatusCache(t, &c, want)
	}
	if !overUsed || !rebased || !reset {
		t.Fatalf("map used %v, rebased %v, base reset when empty %v: the jumps did not reach them", overUsed, rebased, reset)
	}
}

// TestStatusCacheFill checks that fill, what an open rebuilds the cache
// with, leaves the same entries as putting each block's signatures in
// order: a signature repeated in a later block (processed again once
// its first blockhash expired) takes the later slot, failures keep
// their errors, and the cache then takes puts and deletions as usual.
func TestStatusCacheFill(t *testing.T) {
	for _, tc := range []struct {
		perBlock int
		jump     uint64 // added to the slots of the later half of the blocks
	}{{0, 0}, {1, 0}, {300, 0}, {40_000, 0}, {300, 1 << 32}} {
		perBlock := tc.perBlock
		r := rand.New(rand.NewPCG(2, uint64(perBlock)))
		var blocks []*blockRecord
		want := map[statusKey]statusEntry{}
		var all []statusKey
		for slot := uint64(5); slot < 25; slot++ {
			b := &blockRecord{BlockInfo: BlockInfo{Slot: slot}}
			if slot >= 15 {
				b.Slot += tc.jump
			}
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
				want[k] = statusEntry{slot: b.Slot, err: err}
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
		if tc.jump > 0 && len(c.over) == 0 {
			t.Fatal("blocks a clock jump apart all in cells")
		}
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
