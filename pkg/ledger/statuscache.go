package ledger

import (
	"hash/maphash"
	"math/bits"
	"unsafe"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
)

// statusCache maps the signatures of the recent blocks to the slot that
// processed them (and the error of the few that failed): the duplicate
// check of every transaction and the first answer of
// getSignatureStatuses.
//
// It is an open-addressing table with linear probing rather than a Go
// map because of restarts: after a busy minute it holds half a million
// entries or more, all rebuilt at open, and a map's insert there costs
// a directory, a table and a group visit (~230 ns each on a 2-core VM,
// half of reopening such a ledger). Here an entry is 24 pointer-free
// bytes, one probe sequence in one array, and the rebuild inserts in
// table order (fill), so it walks the array once.
//
// The zero value is an empty cache. Callers synchronize (Ledger.mu).
type statusCache struct {
	seed    maphash.Seed
	entries []statusCacheEntry // len is zero or a power of two
	n       int
	// errs are the errors of the cached signatures that failed; an
	// entry with failed set has one.
	errs map[statusKey]*runtime.TxError
}

// statusCacheEntry is one table cell; slot1 is the slot plus one, so
// the zero cell is empty. Bit 63 of slot1 marks a failed transaction.
type statusCacheEntry struct {
	key   statusKey
	slot1 uint64
}

const (
	statusFailed = 1 << 63
	// statusCacheMin is the smallest table (cells).
	statusCacheMin = 1024
)

// statusCacheCells is the table size for n entries: at most 60 % full
// after a rebuild, so probe runs stay short until the next growth at
// 75 %, yet the table is no larger than it needs to be (at an open,
// every byte of it is a fresh page the kernel must fault in and zero).
func statusCacheCells(n int) int {
	c := statusCacheMin
	for 5*n > 3*c {
		c *= 2
	}
	return c
}

func (c *statusCache) home(k statusKey) uint64 {
	return maphash.Comparable(c.seed, k) & uint64(len(c.entries)-1)
}

// get returns k's entry.
func (c *statusCache) get(k statusKey) (statusEntry, bool) {
	if c.n == 0 {
		return statusEntry{}, false
	}
	mask := uint64(len(c.entries) - 1)
	for i := c.home(k); ; i = (i + 1) & mask {
		e := &c.entries[i]
		if e.slot1 == 0 {
			return statusEntry{}, false
		}
		if e.key == k {
			out := statusEntry{slot: e.slot1&^statusFailed - 1}
			if e.slot1&statusFailed != 0 {
				out.err = c.errs[k]
			}
			return out, true
		}
	}
}

// put sets k's entry.
func (c *statusCache) put(k statusKey, e statusEntry) {
	if len(c.entries) == 0 {
		c.seed = maphash.MakeSeed()
		c.entries = make([]statusCacheEntry, statusCacheMin)
	} else if 4*(c.n+1) > 3*len(c.entries) {
		c.resize(2 * len(c.entries))
	}
	v := e.slot + 1
	if e.err != nil {
		v |= statusFailed
		if c.errs == nil {
			c.errs = map[statusKey]*runtime.TxError{}
		}
		c.errs[k] = e.err
	}
	if old := c.store(statusCacheEntry{key: k, slot1: v}, c.home(k)); old&statusFailed != 0 && e.err == nil {
		delete(c.errs, k)
	}
}

// store sets the cell of e's key to e, probing from home (the key's home
// cell), and returns the value it replaced (0: the key was not there).
// The caller keeps errs.
func (c *statusCache) store(e statusCacheEntry, home uint64) (old uint64) {
	mask := uint64(len(c.entries) - 1)
	for i := home; ; i = (i + 1) & mask {
		x := &c.entries[i]
		if x.slot1 == 0 {
			*x = e
			c.n++
			return 0
		}
		if x.key == e.key {
			old, x.slot1 = x.slot1, e.slot1
			return old
		}
	}
}

// deleteAt removes k if slot processed it (a later slot may have
// processed the same signature again once the first one's blockhash
// expired).
func (c *statusCache) deleteAt(k statusKey, slot uint64) {
	if c.n == 0 {
		return
	}
	mask := uint64(len(c.entries) - 1)
	i := c.home(k)
	for ; ; i = (i + 1) & mask {
		x := &c.entries[i]
		if x.slot1 == 0 {
			return
		}
		if x.key == k {
			if x.slot1&^statusFailed-1 != slot {
				return
			}
			if x.slot1&statusFailed != 0 {
				delete(c.errs, k)
			}
			break
		}
	}
	// Backward-shift deletion: move later cells of the run into the
	// hole when their home allows, so lookups never meet a gap inside
	// a run and no tombstones accumulate.
	hole := i
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		x := c.entries[j]
		if x.slot1 == 0 {
			break
		}
		h := c.home(x.key)
		// x may move to hole if hole lies cyclically in [h, j).
		if (j-h)&mask >= (j-hole)&mask {
			c.entries[hole] = x
			hole = j
		}
	}
	c.entries[hole] = statusCacheEntry{}
	c.n--
	if len(c.entries) > statusCacheMin && 8*c.n < len(c.entries) {
		c.resize(len(c.entries) / 2)
	}
}

// len is the number of cached signatures.
func (c *statusCache) len() int { return c.n }

// resize rehashes into cells cells. Walking the old table in order
// already visits the new homes in order (doubling, a key's new home is
// its old one or that plus the old size; halving, the same folded), so
// unlike fill this needs no bucketing: BenchmarkStatusCacheResize ran
// 121 ms this way and 213-293 ms through rebuild.
func (c *statusCache) resize(cells int) {
	old := c.entries
	c.entries, c.n = make([]statusCacheEntry, cells), 0
	for _, x := range old {
		if x.slot1 != 0 {
			c.store(x, c.home(x.key))
		}
	}
}

// fill puts the signatures of blocks (oldest first; Keys and Errs set)
// into an empty cache: what an open rebuilds from the recent blocks. Of
// a signature in two blocks the later wins, as with put. The blocks'
// keys come in no table order, so it goes through rebuild's buckets.
func (c *statusCache) fill(blocks []*blockRecord) {
	n := 0
	for _, r := range blocks {
		n += len(r.Keys)
		// Errors in block order, so a later success of the same
		// signature drops an earlier failure's.
		for i, k := range r.Keys {
			if err := r.err(i); err != nil {
				if c.errs == nil {
					c.errs = map[statusKey]*runtime.TxError{}
				}
				c.errs[k] = err
			} else if len(c.errs) > 0 {
				delete(c.errs, k)
			}
		}
	}
	if len(c.entries) == 0 {
		c.seed = maphash.MakeSeed()
	}
	c.rebuild(statusCacheCells(n), n, func(yield func(statusCacheEntry) bool) {
		for _, r := range blocks {
			for i, k := range r.Keys {
				v := r.Slot + 1
				if r.err(i) != nil {
					v |= statusFailed
				}
				if !yield(statusCacheEntry{key: k, slot1: v}) {
					return
				}
			}
		}
	})
}

// fillSpan is how many bytes of the table a bucket of rebuild spans.
const fillSpan = 64 << 10

// rebuild makes the table cells cells holding the n entries all yields
// (iterated twice, the same entries in the same order both times; of
// equal keys the last wins), for fill.
//
// Inserted in arrival order, half a million keys would each touch a
// random cell of a table far larger than the CPU's caches (~270 ns
// apiece here). rebuild first scatters the entries into buckets by home
// cell, then places them bucket by bucket, so the cells being probed
// stay in cache; the scatter's reads and writes are sequential streams.
func (c *statusCache) rebuild(cells, n int, all func(yield func(statusCacheEntry) bool)) {
	c.entries, c.n = make([]statusCacheEntry, cells), 0
	if n == 0 {
		return
	}
	shift := bits.Len(uint(fillSpan/unsafe.Sizeof(statusCacheEntry{}))) - 1 // cells per bucket: 1 << shift
	buckets := max(cells>>shift, 1)
	homes := make([]uint32, 0, n)
	next := make([]int, buckets+1)
	for e := range all {
		h := uint32(c.home(e.key))
		homes = append(homes, h)
		next[int(h>>shift)+1]++
	}
	for b := 1; b <= buckets; b++ {
		next[b] += next[b-1]
	}
	// A stable scatter: within a bucket, arrival order is kept.
	sorted := make([]statusCacheEntry, len(homes))
	sortedHomes := make([]uint32, len(homes))
	i := 0
	for e := range all {
		h := homes[i]
		at := next[h>>shift]
		sorted[at], sortedHomes[at] = e, h
		next[h>>shift]++
		i++
	}
	for i, e := range sorted {
		c.store(e, uint64(sortedHomes[i]))
	}
}
