package ledger

import "sync/atomic"

// headCache holds the heads table's value (the newest slot with a
// posting) for the first 8 bytes of every address of the key directory's
// base, a word per account beside the base's own prefix index, whose
// prefixes it shares. At a million accounts nearly every transfer's
// recipient is a token account no recent slot posted, so the commit's
// lookup of its previous posting read a block of the heads file (~1.5
// µs of the node's CPU per transfer, Bloom filters included); the
// addresses the heads table holds beside the accounts (wallets that own
// token accounts, programs, sysvars) are either posted every slot, so in
// the table's changes in memory, or rare.
//
// Every slot is the heads table's value for its prefix or headUnknown
// (then the table answers and the slot is filled): sets change both
// (boltStore.setHeadAt), the open fills it from the table's files and
// changes (fillHeadCache), and a new key-directory base takes the values
// of the prefixes the old one had (syncHeadCache). The heads table stays
// the durable copy; the cache is memory only (4 MB at a million
// accounts).
type headCache struct {
	// base is the key directory's base the cache is for; prefixes, dir
	// and dirBits are its prefix index (immutable once built; kept here
	// because closing the base forgets them).
	base     *tableFile
	prefixes []uint64
	dir      []uint32
	dirBits  uint
	// slots[i] is the value for prefixes[i] (the first of equal
	// prefixes), read and filled atomically under the store's read lock.
	slots []uint32
}

// headUnknown marks a slot whose value only the heads table knows (not
// yet looked up, or too large for 32 bits).
const headUnknown = ^uint32(0)

// index is the position of prefix p (its first occurrence), or -1.
func (c *headCache) index(p uint64) int {
	if len(c.prefixes) == 0 {
		return -1
	}
	return prefixIndexAt(c.prefixes, c.dir, c.dirBits, p)
}

// put stores slot's value at i.
func (c *headCache) put(i int, slot uint64) { atomic.StoreUint32(&c.slots[i], headSlot(slot)) }

// headSlot is slot as a cache value.
func headSlot(slot uint64) uint32 {
	if slot < uint64(headUnknown) {
		return uint32(slot)
	}
	return headUnknown
}

// head returns the newest slot with a posting for an address starting
// with p (0: none). Callers hold mu, for reading at least.
func (s *boltStore) head(p uint64) uint64 { return s.headAt(p, s.hc.index(p)) }

// headAt is head for a prefix whose cache index (s.hc.index(p)) is i.
func (s *boltStore) headAt(p uint64, i int) uint64 {
	if i >= 0 {
		if v := atomic.LoadUint32(&s.hc.slots[i]); v != headUnknown {
			return uint64(v)
		}
	}
	v, _ := s.heads.get(p)
	if i >= 0 {
		// Under the read lock the table cannot change, so the value is
		// current whoever fills it.
		s.hc.put(i, v)
	}
	return v
}

// setHeadAt records slot as the newest posting of prefix p, whose cache
// index (s.hc.index(p)) is i. Callers hold mu for writing.
func (s *boltStore) setHeadAt(p uint64, i int, slot uint64) {
	s.heads.set(p, slot)
	if i >= 0 {
		s.hc.put(i, slot)
	}
}

// fillHeadCache builds the cache for the key directory's base from the
// heads table as it is: its base file and the base's prefixes merged in
// one pass (both sorted), then each run, oldest first, galloping through
// the prefixes, then the changes in memory: 25–50 ms at open with a
// million accounts (two million heads). Callers hold mu for writing.
func (s *boltStore) fillHeadCache() {
	c := headCacheFor(s.acc.keydir.base)
	if len(c.slots) == 0 || s.heads == nil {
		s.hc = c
		return
	}
	// c is not shared yet: plain stores (an atomic store is an exchange).
	t := s.heads
	ks := t.codec.keySize
	if b := t.base; b.n > 0 {
		// Both sorted: one pass over the two.
		p, j := c.prefixes, 0
		for i := 0; i < b.n && j < len(p); i++ {
			ent := b.data[i*b.entry : (i+1)*b.entry]
			k := t.codec.getKey(ent)
			for j < len(p) && p[j] < k {
				j++
			}
			if j < len(p) && p[j] == k {
				c.slots[j] = headSlot(t.codec.getVal(ent[ks:]))
			}
		}
		dropMapped(b.mapped)
	}
	for _, r := range t.runs {
		j := 0
		for i := range r.n {
			// A run's entry: key, value, flags (bit 0: deleted).
			ent := r.data[i*r.entry : (i+1)*r.entry]
			k := t.codec.getKey(ent)
			if j = gallop(c.prefixes, j, k); j == len(c.prefixes) {
				break
			}
			if c.prefixes[j] == k {
				v := t.codec.getVal(ent[ks : r.entry-1])
				if ent[r.entry-1]&1 != 0 {
					v = 0 // deleted
				}
				c.slots[j] = headSlot(v)
			}
		}
		dropMapped(r.mapped)
	}
	for _, changes := range []map[uint64]tableChange[uint64]{t.frozen, t.recent} {
		for k, ch := range changes {
			if i := c.index(k); i >= 0 {
				v := ch.v
				if ch.deleted {
					v = 0
				}
				c.slots[i] = headSlot(v)
			}
		}
	}
	s.hc = c
}

// syncHeadCache moves the cache to the key directory's base when a
// rewrite replaced it: the prefixes both bases hold keep their values
// (both are sorted: one pass), the others are left to the heads table.
// Callers hold mu for writing, on the persister (the key directory's
// base changes only there).
func (s *boltStore) syncHeadCache() {
	f := s.acc.keydir.base
	if f == s.hc.base {
		return
	}
	old, c := s.hc, headCacheFor(f)
	j := 0
	for i, p := range c.prefixes {
		for j < len(old.prefixes) && old.prefixes[j] < p {
			j++
		}
		v := headUnknown
		if j < len(old.prefixes) && old.prefixes[j] == p {
			v = atomic.LoadUint32(&old.slots[j])
		}
		c.slots[i] = v
	}
	s.hc = c
}

// headCacheFor is an empty cache (every value 0) over f's prefix index;
// without one (no base, or one too large for an index) it holds nothing.
func headCacheFor(f *tableFile) headCache {
	c := headCache{base: f}
	if f != nil && len(f.prefixes) > 0 {
		c.prefixes, c.dir, c.dirBits = f.prefixes, f.dir, f.dirBits
		c.slots = make([]uint32, len(c.prefixes))
	}
	return c
}
