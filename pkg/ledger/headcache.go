package ledger

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// headCache holds the newest slot with a posting for the first 8 bytes
// of every address of the key directory's base, a word per account beside
// the base's own prefix index, whose prefixes it shares. At a million
// accounts nearly every transfer's recipient is a token account no recent
// slot posted, so the commit's lookup of its previous posting read a
// block of the heads file (~1.5 µs of the node's CPU per transfer, Bloom
// filters included); the addresses the heads table holds beside the
// accounts (wallets that own token accounts, programs, sysvars) are
// either posted every slot, so in the table's changes in memory, or rare.
//
// For a live account of the base (its index entry not stale: not
// deleted, not sharing its prefix) the cache alone holds the value: each
// such posting had cost the heads table a change, a run entry and a share
// of its rewrites (17 B per transfer at a million accounts), where the
// cache is saved whole, 4 bytes an account, into a file of its own once
// as many transactions as it has entries were committed (hcTxs), at a
// clean close, and for each new key-directory base, before that base
// takes the old one's place (headCacheHook), so a file for the base on
// disk always exists. A restart replays the postings after the older of
// that file and the heads table's newest file (loadHeads). Every other
// value, and any too large for 32 bits, goes to the heads table too
// (setHeadAt); a slot the cache does not know (headUnknown) is the
// table's, and is filled from it when read.
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
// index (s.hc.index(p)) is i: in the cache alone when it owns the entry
// (hcOwns), else in the heads table too. Callers hold mu for writing.
func (s *boltStore) setHeadAt(p uint64, i int, slot uint64) {
	if i >= 0 {
		s.hc.put(i, slot)
		if s.hcOwns(i) && headSlot(slot) != headUnknown {
			return
		}
	}
	s.heads.set(p, slot)
}

// hcOwns reports whether the cache alone keeps the value of its entry i:
// the key directory's base entry there is a live account, which the next
// base holds (and the cache file written for it). A deleted account's
// entry is stale from the commit that deletes it, which also posts it,
// so the newest value of a prefix a rewrite drops is the heads table's.
// Only the persister calls it.
func (s *boltStore) hcOwns(i int) bool {
	kb := s.acc.keydir.base
	return s.hc.base == kb && !kb.isStale(i)
}

// fillHeadCache builds the cache for the key directory's base from the
// heads table's files: its base file and the base's prefixes merged in
// one pass (both sorted), then each run, oldest first, galloping through
// the prefixes: 25–50 ms at open with a million accounts (two million
// heads). Only loadHeads calls it, before the table has any change in
// memory (the replay after it brings them). Callers hold mu for writing.
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
	s.hc = c
}

// syncHeadCache moves the cache to the key directory's base when a
// rewrite replaced it: the prefixes both bases hold keep their values
// (both are sorted: one pass), the others are left to the heads table,
// which holds them (the base's accounts created since the old base were
// not the cache's, a deleted one's prefix is written to the table too).
// The cache file of the old base goes: the rewrite wrote the new base's
// before the base took the old one's place. Callers hold mu for
// writing, on the persister (the key directory's base changes only
// there).
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
	if len(c.slots) == 0 {
		// A base without a prefix index (more than tableIndexMaxEntries
		// accounts) has no cache: the values only the old one held go to
		// the heads table, once.
		for i, p := range old.prefixes {
			if v := atomic.LoadUint32(&old.slots[i]); v != headUnknown && (i == 0 || old.prefixes[i-1] != p) {
				s.heads.set(p, uint64(v))
			}
		}
	}
	s.hc = c
	s.removeHeadCacheFiles()
}

// headCacheMagic starts a heads cache file:
//
//	magic (16) | the key directory base's position (8: its meta's first
//	8 bytes) | entries n (8) | slot (8) | table slot (8) | the heads
//	table's newest file's slot (8) | CRC-32C of the rest (4) | n values
//	(4 each, little-endian; headUnknown: the heads table's)
//
// The values are the cache's for that base as of the end of the slot.
// The heads table's files held every change of the table up to the
// table slot then (the slot itself when it had none only memory held),
// as long as they include that newest file: without it, a ledger whose
// postings all went to the cache would replay every slot since the
// table's last file at each open, and with it alone, one whose newest
// table files were lost (a damaged run ends their chain) would not
// replay the slots they held.
const headCacheMagic = "ferry-hcache-1\n\x00"

// headCacheHeader is the size of a heads cache file's header.
const headCacheHeader = 16 + 8 + 8 + 8 + 8 + 8 + 4

// headCachePrefix starts the name of every heads cache file; the rest is
// the base's position in hex, which tells a file of an older base.
const headCachePrefix = "headcache."

func headCachePath(dir string, pos []byte) string {
	return filepath.Join(dir, headCachePrefix+hex.EncodeToString(pos))
}

// writeHeadCache writes the values of the base at pos as of slot, and
// the heads table's slot (headCacheMagic).
func writeHeadCache(dir string, pos []byte, slot uint64, table headsTableState, vals []byte, sync bool) error {
	var h [headCacheHeader]byte
	copy(h[:], headCacheMagic)
	copy(h[16:24], pos)
	binary.LittleEndian.PutUint64(h[24:], uint64(len(vals)/4))
	binary.LittleEndian.PutUint64(h[32:], slot)
	binary.LittleEndian.PutUint64(h[40:], table.slot)
	binary.LittleEndian.PutUint64(h[48:], table.file)
	sum := crc32.Update(crc32.Checksum(h[:56], castagnoli), castagnoli, vals)
	binary.LittleEndian.PutUint32(h[56:], sum)
	err := writeFileAtomic(headCachePath(dir, pos), sync, func(w io.Writer) error {
		if _, err := w.Write(h[:]); err != nil {
			return err
		}
		_, err := w.Write(vals)
		return err
	})
	if err != nil {
		return fmt.Errorf("write heads cache: %w", err)
	}
	return nil
}

// headCacheBytes is the size of a heads cache file of n entries.
func headCacheBytes(n int) int64 { return int64(headCacheHeader + 4*n) }

// saveHeadCache writes the cache's file as of the tip, so a replay after
// a crash starts there (or at the heads table's newest file, if older).
// Only the persister calls it (it owns the cache's stores).
func (s *boltStore) saveHeadCache() error {
	c := s.hc
	if len(c.slots) == 0 || len(c.base.meta) < 8 {
		s.hcTxs = 0
		return nil
	}
	vals := make([]byte, 4*len(c.slots))
	for i := range c.slots {
		binary.LittleEndian.PutUint32(vals[4*i:], atomic.LoadUint32(&c.slots[i]))
	}
	table := s.headsTable()
	if err := writeHeadCache(s.dir, c.base.meta[:8], s.tip, table, vals, !s.noSync); err != nil {
		return err
	}
	s.heads.written.Add(headCacheBytes(len(c.slots)))
	s.hcSlot, s.hcTxs = s.tip, 0
	if table.slot == s.tip {
		// A replay after a crash starts at the tip for the table too.
		s.headsTxs = 0
	}
	return nil
}

// headsTableState is what a heads cache file records of the heads table:
// its files held all its changes up to slot, as long as they include
// the one of slot file (its newest then).
type headsTableState struct{ slot, file uint64 }

// headsTable is the heads table's state now: the tip when only its files
// hold changes (none in memory, no rewrite in progress), else its newest
// file's slot. Only the persister calls it.
func (s *boltStore) headsTable() headsTableState {
	st := headsTableState{file: tableSlot(s.heads.meta)}
	st.slot = st.file
	if s.headsRewrite == nil && s.heads.frozen == nil && s.heads.unsaved() == 0 {
		st.slot = s.tip
	}
	return st
}

// headCacheHook is the key directory's onFreeze: a snapshot of its base
// starts. The hook writes the heads cache's file for the new base, with
// the values as of the freeze (the tip: the commit in progress sets its
// heads later), before the new base takes the old one's place; a restart
// then always finds a file for the base on disk. It runs on the persister
// (the freeze), then on the rewrite's goroutine.
func (s *boltStore) headCacheHook(meta []byte) *baseHook {
	if len(meta) < 8 {
		return nil
	}
	old := s.hc
	slots := make([]uint32, len(old.slots))
	for i := range slots {
		slots[i] = atomic.LoadUint32(&old.slots[i])
	}
	pos, slot, sync := slices.Clone(meta[:8]), s.tip, !s.noSync
	table := s.headsTable()
	written := s.heads.written
	vals := make([]byte, 0, 4*len(old.prefixes))
	j := 0
	return &baseHook{
		observe: func(key []byte) {
			p := binary.BigEndian.Uint64(key)
			for j < len(old.prefixes) && old.prefixes[j] < p {
				j++
			}
			v := headUnknown
			if j < len(old.prefixes) && old.prefixes[j] == p {
				v = slots[j]
			}
			vals = binary.LittleEndian.AppendUint32(vals, v)
		},
		beforeRename: func() error {
			if err := writeHeadCache(s.dir, pos, slot, table, vals, sync); err != nil {
				return err
			}
			written.Add(headCacheBytes(len(vals) / 4))
			return nil
		},
	}
}

// readHeadCache overlays the cache with its file for the key directory's
// base, and reports whether there was a valid one (a damaged file is
// treated as none). Callers hold mu for writing, at open.
func (s *boltStore) readHeadCache() (found bool) {
	c := s.hc
	if len(c.slots) == 0 || len(c.base.meta) < 8 {
		return false
	}
	b, err := os.ReadFile(headCachePath(s.dir, c.base.meta[:8]))
	if err != nil || len(b) < headCacheHeader || string(b[:16]) != headCacheMagic ||
		!bytes.Equal(b[16:24], c.base.meta[:8]) || binary.LittleEndian.Uint64(b[24:]) != uint64(len(c.slots)) ||
		len(b) != headCacheHeader+4*len(c.slots) ||
		crc32.Update(crc32.Checksum(b[:56], castagnoli), castagnoli, b[headCacheHeader:]) != binary.LittleEndian.Uint32(b[56:]) {
		return false
	}
	s.hcSlot = binary.LittleEndian.Uint64(b[32:])
	s.hcTable = headsTableState{slot: binary.LittleEndian.Uint64(b[40:]), file: binary.LittleEndian.Uint64(b[48:])}
	vals := b[headCacheHeader:]
	for i := range c.slots {
		if v := binary.LittleEndian.Uint32(vals[4*i:]); v != headUnknown {
			c.slots[i] = v
		}
	}
	return true
}

// removeHeadCacheFiles removes the heads cache files of other bases than
// the cache's (and temporary ones).
func (s *boltStore) removeHeadCacheFiles() {
	keep := ""
	if c := s.hc; len(c.slots) > 0 && len(c.base.meta) >= 8 {
		keep = headCachePath(s.dir, c.base.meta[:8])
	}
	files, _ := filepath.Glob(filepath.Join(s.dir, headCachePrefix+"*"))
	for _, f := range files {
		if f != keep {
			os.Remove(f)
		}
	}
}

// loadHeads brings the heads up to the committed postings at open: the
// cache is filled from the heads table's files and the cache's file for
// the key directory's base, then the postings after the older of the
// two are replayed (replayHeads). Without a file for a base that has a
// cache, every posting is replayed, unless this open upgraded the
// directory (the heads table then holds every value); the file is then
// written at once. It returns how many postings it replayed. Callers
// hold mu for writing.
func (s *boltStore) loadHeads(tx *bolt.Tx) (int, error) {
	s.hcSlot, s.hcTable, s.hcTxs = 0, headsTableState{}, 0
	s.fillHeadCache()
	s.hcFile = s.readHeadCache()
	ts := tableSlot(s.heads.meta)
	from := ts + 1
	switch {
	case len(s.hc.slots) == 0:
	case s.hcFile:
		if ts >= s.hcTable.file {
			// The table's files include those the cache's file counted on.
			ts = max(ts, s.hcTable.slot)
		}
		from = min(ts, s.hcSlot) + 1
	case s.upgradedFrom == "":
		from = 1
	}
	s.headsReplayFrom = from
	n, err := s.replayHeads(tx, from, ts)
	if err != nil {
		return n, err
	}
	s.removeHeadCacheFiles()
	if len(s.hc.slots) > 0 && !s.hcFile {
		return n, s.saveHeadCache()
	}
	return n, nil
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
