package ledger

import (
	"hash/maphash"
	"math"
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
// half of reopening such a ledger). Here an entry is 16 pointer-free
// bytes, one probe sequence in one array, and the rebuild inserts in
// table order (fill), so it walks the array once.
//
// A cell keeps 12 bytes of the signature and the slot as 31 bits above a
// base: at 25 000 transactions per second the cache holds 1.5 million
// signatures in 2 million cells, 32 MB instead of the 48 MB of 24-byte
// cells (the node's largest single allocation, and memory the garbage
// collector's headroom under the runtime's memory limit does not have).
// A slot the cells cannot express against the base (only after a jump
// of the clock by more than 2^30 slots) moves the base when every entry
// still fits (rebase), else waits in a map until the older entries
// leave.
//
// The zero value is an empty cache. Callers synchronize (Ledger.mu).
type statusCache struct {
	seed    maphash.Seed
	entries []statusCacheEntry // len is zero or a power of two
	n       int                // entries in the table
	// base is the slot a cell's slot field counts from.
	base uint64
	// over holds the entries whose slot the table cannot express:
	// slot plus one, statusFailed for a failure. Almost always empty.
	over map[statusCellKey]uint64
	// rebaseFailed is n when a rebase last found the table's entries
	// too far apart (0: none since). The next try waits until half of
	// them left: each try is a pass over the cells.
	rebaseFailed int
	// errs are the errors of the cached signatures that failed; an
	// entry with failed set has one.
	errs map[statusCellKey]*runtime.TxError
}

// statusCellKey is the part of a statusKey the cache keeps: 96 bits.
// Two distinct ed25519 signatures of the last 150 blocks sharing them
// is a chance of one in 2^96 / 1.5 million per lookup; an attacker
// cannot choose another's signature, and grinding one of their own to
// match any of 1.5 million takes ~2^75 signings.
type statusCellKey [12]byte

func cellKeyOf(k statusKey) (c statusCellKey) {
	copy(c[:], k[:12])
	return c
}

// statusCacheEntry is one table cell. slot is the slot minus the
// cache's base, plus one, so the zero cell is empty; bit 31 marks a
// failed transaction.
type statusCacheEntry struct {
	key  statusCellKey
	slot uint32
}

const (
	statusFailed = 1 << 63
	// statusCellFailed is statusFailed in a cell.
	statusCellFailed = 1 << 31
	// statusCellSlots is how many slots a cell can express above the
	// base (slot fields 1 to 2^31-1).
	statusCellSlots = statusCellFailed - 1
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

func (c *statusCache) home(k statusCellKey) uint64 {
	return maphash.Comparable(c.seed, k) & uint64(len(c.entries)-1)
}

// cellSlot is slot (failed: the transaction failed) as a cell's slot
// field, if the base lets a cell express it.
func (c *statusCache) cellSlot(slot uint64, failed bool) (uint32, bool) {
	if slot < c.base || slot-c.base >= statusCellSlots {
		return 0, false
	}
	v := uint32(slot-c.base) + 1
	if failed {
		v |= statusCellFailed
	}
	return v, true
}

// entry is a cell's slot field (or an over value, with over) as an
// entry of key k.
func (c *statusCache) entry(k statusCellKey, slot1 uint64, failed bool) statusEntry {
	e := statusEntry{slot: slot1 - 1}
	if failed {
		e.err = c.errs[k]
	}
	return e
}

func (c *statusCache) cellEntry(x *statusCacheEntry) statusEntry {
	return c.entry(x.key, c.slotOf(x)+1, x.slot&statusCellFailed != 0)
}

// slotOf is the slot a used cell holds.
func (c *statusCache) slotOf(x *statusCacheEntry) uint64 {
	return c.base + uint64(x.slot&^statusCellFailed) - 1
}

// centeredBase is the base that lets cells express every slot from lo
// to hi (hi-lo < statusCellSlots), the slack half below, half above.
func centeredBase(lo, hi uint64) uint64 {
	return lo - min(lo, (statusCellSlots-1-(hi-lo))/2)
}

// find is the index of k's cell, or -1.
func (c *statusCache) find(k statusCellKey) int {
	if c.n == 0 {
		return -1
	}
	mask := uint64(len(c.entries) - 1)
	for i := c.home(k); ; i = (i + 1) & mask {
		x := &c.entries[i]
		if x.slot == 0 {
			return -1
		}
		if x.key == k {
			return int(i)
		}
	}
}

// get returns k's entry.
func (c *statusCache) get(k statusKey) (statusEntry, bool) {
	ck := cellKeyOf(k)
	if i := c.find(ck); i >= 0 {
		return c.cellEntry(&c.entries[i]), true
	}
	if v, ok := c.over[ck]; ok {
		return c.entry(ck, v&^statusFailed, v&statusFailed != 0), true
	}
	return statusEntry{}, false
}

// put sets k's entry.
func (c *statusCache) put(k statusKey, e statusEntry) { c.putCell(cellKeyOf(k), e) }

// putCell is put by the cell's key.
func (c *statusCache) putCell(k statusCellKey, e statusEntry) {
	if len(c.entries) == 0 {
		c.seed = maphash.MakeSeed()
		c.entries = make([]statusCacheEntry, statusCacheMin)
	}
	if e.err != nil {
		if c.errs == nil {
			c.errs = map[statusCellKey]*runtime.TxError{}
		}
		c.errs[k] = e.err
	} else if len(c.errs) > 0 {
		delete(c.errs, k)
	}
	if len(c.over) > 0 {
		delete(c.over, k)
	}
	v, ok := c.cellSlot(e.slot, e.err != nil)
	if !ok && (c.rebaseFailed == 0 || 2*c.n <= c.rebaseFailed) {
		if c.rebase(e.slot) {
			c.rebaseFailed = 0
			v, ok = c.cellSlot(e.slot, e.err != nil)
		} else {
			c.rebaseFailed = max(c.n, 1)
		}
	}
	if !ok {
		if i := c.find(k); i >= 0 {
			c.removeAt(uint64(i))
		}
		if c.over == nil {
			c.over = map[statusCellKey]uint64{}
		}
		v := e.slot + 1
		if e.err != nil {
			v |= statusFailed
		}
		c.over[k] = v
		return
	}
	if 4*(c.n+1) > 3*len(c.entries) {
		c.resize(2 * len(c.entries))
	}
	c.store(statusCacheEntry{key: k, slot: v}, c.home(k))
}

// rebase moves the base so that cells can express slot as well as every
// entry of the table, if their span allows, rewriting the cells' slot
// fields (homes do not change). The span's slack goes half below, half
// above: an empty table's first slot gets 2^30 slots either way.
func (c *statusCache) rebase(slot uint64) bool {
	lo, hi := slot, slot
	for i := range c.entries {
		if x := &c.entries[i]; x.slot != 0 {
			s := c.slotOf(x)
			lo, hi = min(lo, s), max(hi, s)
		}
	}
	if hi-lo >= statusCellSlots {
		return false
	}
	base := centeredBase(lo, hi)
	for i := range c.entries {
		if x := &c.entries[i]; x.slot != 0 {
			x.slot = uint32(c.slotOf(x)-base) + 1 | x.slot&statusCellFailed
		}
	}
	c.base = base
	return true
}

// store sets the cell of e's key to e, probing from home (the key's home
// cell). The caller keeps errs.
func (c *statusCache) store(e statusCacheEntry, home uint64) {
	mask := uint64(len(c.entries) - 1)
	for i := home; ; i = (i + 1) & mask {
		x := &c.entries[i]
		if x.slot == 0 {
			*x = e
			c.n++
			return
		}
		if x.key == e.key {
			x.slot = e.slot
			return
		}
	}
}

// deleteAt removes k if slot processed it (a later slot may have
// processed the same signature again once the first one's blockhash
// expired).
func (c *statusCache) deleteAt(k statusKey, slot uint64) {
	ck := cellKeyOf(k)
	if i := c.find(ck); i >= 0 {
		if c.cellEntry(&c.entries[i]).slot != slot {
			return
		}
		if c.entries[i].slot&statusCellFailed != 0 {
			delete(c.errs, ck)
		}
		c.removeAt(uint64(i))
		if len(c.entries) > statusCacheMin && 8*c.n < len(c.entries) {
			c.resize(len(c.entries) / 2)
		}
		return
	}
	if v, ok := c.over[ck]; ok && v&^statusFailed-1 == slot {
		if v&statusFailed != 0 {
			delete(c.errs, ck)
		}
		delete(c.over, ck)
	}
}

// removeAt empties cell i.
func (c *statusCache) removeAt(i uint64) {
	mask := uint64(len(c.entries) - 1)
	// Backward-shift deletion: move later cells of the run into the
	// hole when their home allows, so lookups never meet a gap inside
	// a run and no tombstones accumulate.
	hole := i
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		x := c.entries[j]
		if x.slot == 0 {
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
}

// len is the number of cached signatures.
func (c *statusCache) len() int { return c.n + len(c.over) }

// resize rehashes into cells cells. Walking the old table in order
// already visits the new homes in order (doubling, a key's new home is
// its old one or that plus the old size; halving, the same folded), so
// unlike fill this needs no bucketing: BenchmarkStatusCacheResize ran
// 121 ms this way and 213-293 ms through rebuild.
func (c *statusCache) resize(cells int) {
	old := c.entries
	c.entries, c.n = make([]statusCacheEntry, cells), 0
	for _, x := range old {
		if x.slot != 0 {
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
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for _, r := range blocks {
		if len(r.Keys) > 0 {
			n += len(r.Keys)
			lo, hi = min(lo, r.Slot), max(hi, r.Slot)
		}
	}
	if len(c.entries) == 0 {
		c.seed = maphash.MakeSeed()
	}
	if n > 0 && hi-lo >= statusCellSlots {
		// Blocks on both sides of a jump of the clock: entry by entry,
		// some to the map.
		c.entries, c.n = make([]statusCacheEntry, statusCacheCells(n)), 0
		for _, r := range blocks {
			for i, k := range r.Keys {
				c.put(k, statusEntry{slot: r.Slot, err: r.err(i)})
			}
		}
		return
	}
	if n > 0 {
		c.base = centeredBase(lo, hi)
	}
	for _, r := range blocks {
		// Errors in block order, so a later success of the same
		// signature drops an earlier failure's.
		for i, k := range r.Keys {
			if err := r.err(i); err != nil {
				if c.errs == nil {
					c.errs = map[statusCellKey]*runtime.TxError{}
				}
				c.errs[cellKeyOf(k)] = err
			} else if len(c.errs) > 0 {
				delete(c.errs, cellKeyOf(k))
			}
		}
	}
	c.rebuild(statusCacheCells(n), n, func(yield func(statusCacheEntry) bool) {
		for _, r := range blocks {
			for i, k := range r.Keys {
				v, _ := c.cellSlot(r.Slot, r.err(i) != nil)
				if !yield(statusCacheEntry{key: cellKeyOf(k), slot: v}) {
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
