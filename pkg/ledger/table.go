package ledger

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// sortedTable is a map with fixed-size keys and values, kept as a file of
// entries sorted by key (the base), runs written on top of it, and the
// changes made since the newest run, in memory. The files are mapped
// read-only: opening them decodes nothing, their pages cost no Go heap,
// and only the pages lookups touch are read (except with a codec's
// prefixIndex, whose base is copied into memory at open, 8 bytes of key
// and the value per entry). The durable stores use it
// for the account key directory, the address heads and the signature
// index, each of which can be rebuilt from its files and what was
// committed after the position the newest file's meta records.
//
// The changes are bounded twice. Once runAt of them accumulated, they
// are written as a run: a sorted file of just those keys (deleted ones
// marked), with a Bloom filter of its keys in memory, so the changes in
// memory never exceed runAt however large the table is. Once the runs
// and changes together reach what the owner decides (half the base, for
// the store), write merges base, runs and changes into a new base. A
// change is written once in a run and about twice by base rewrites; the
// rewrites alone would cost the same per change, but would need every
// change since the last one in memory: at a million addresses, tens of
// MB of map entries held through a whole load test.
//
// File: magic (16) | entries u64 | meta length u32 | CRC-32C of the
// header and meta u32 | meta | entries. A base's entries are key |
// value; a run's are key | value | flags (1: deleted), and its meta
// starts with the base checksum (u32 LE) it was written on top of, so a
// run left over from an older base is recognised and dropped. Runs are
// named path.run000001, path.run000002, … from the base on; a missing
// or damaged run ends the chain (it and later runs are removed, and the
// owner replays from the newest meta left). The entries are not
// checksummed (reading them would defeat the mapping); what they point
// to is checked where it is read.
//
// A sortedTable is not safe for concurrent use; its owner locks.
type sortedTable[K comparable, V any] struct {
	codec *tableCodec[K, V]
	path  string
	base  *tableFile
	runs  []*tableFile // oldest first
	// runEntries is the number of entries in runs (a key may repeat).
	runEntries int
	// runAt is how many changes make a run (0: tableRunChanges).
	runAt int
	// onFreeze, if set, is called by startRewrite when it freezes the
	// changes (on the owner's goroutine, under its lock) with the new
	// base's meta; the hook it returns follows the rewrite (baseHook).
	onFreeze func(meta []byte) *baseHook
	// meta is the newest file's meta (the newest run's, else the base's);
	// n and size are the base's entries and file size.
	meta   []byte
	n      int
	size   int64
	recent map[K]tableChange[V]
	// frozen are the changes a rewrite in progress merges (freeze,
	// writeFrozen): lookups read them after recent, and the owner adds
	// no run until adopt.
	frozen map[K]tableChange[V]
	// fresh counts the keys change created that the base does not hold
	// (about: a key created, deleted and created again counts twice), and
	// freshFrozen those of them a rewrite in progress writes into the new
	// base. Their lookups read the runs; the owner decides when enough of
	// them make a rewrite worth it.
	fresh, freshFrozen int
	// frozenDirty and frozenVals are the base's dirty index entries as
	// of freeze (positions, ascending, and values), for the rewrite in
	// progress: the owner goes on changing the index in place meanwhile.
	frozenDirty []uint32
	frozenVals  []byte
	// frozenStale is the base's stale marks as of freezeValues, for the
	// values file in progress (tablevals.go).
	frozenStale []uint64
	// keysMapped makes exact lookups compare keys in the base's mapping
	// instead of reading them (set while a replay at open looks up every
	// record's key; the pages are dropped after).
	keysMapped bool
	bufs       *sync.Pool
	// pruned says that the base was written with a keep function, which
	// may have left out keys of the base it replaces (adopt).
	pruned bool
	// adoptCompared is how many keys the last adopt compared in the new
	// base's mapping (compareMapped), for tests.
	adoptCompared int
	// written counts the bytes of the files t wrote (bases and runs);
	// shared with the table a rewrite replaces t with.
	written *atomic.Int64
}

// tableRunChanges is how many changes a sortedTable keeps in memory
// before writing them as a run (4–7 MB of map entries, as the map grows, for the
// widest table, the key directory).
const tableRunChanges = 1 << 16

// tableMaxRuns bounds the runs on a base. A clean close writes the
// changes in memory as a run instead of rewriting the whole base (at a
// million accounts the three tables are ~170 MB, which every restart
// rewrote); a close with this many runs already rewrites the base, so
// that restarts in quick succession do not pile up runs for every
// lookup to check.
const tableMaxRuns = 16

// tableRunMagic marks a run file of any table; the entry width, checked
// against the file length, differs between tables.
const tableRunMagic = "ferry-tblrun-2\n\x00"

// tableRunMagicV1 marks a run written before its Bloom filter was stored
// in it (after the entries): opening one builds the filter from its keys.
const tableRunMagicV1 = "ferry-tblrun-1\n\x00"

// runBloomBytes is the size of the Bloom filter stored after a run's n
// entries.
func runBloomBytes(n uint64) int64 { return int64(len(newBloom(int(n)))) * 8 }

// tableFile is one mapped file of a table: its base or a run.
type tableFile struct {
	path    string
	data    []byte // the entries
	mapped  []byte // the whole file as mapped (data is within it)
	file    *os.File
	dataOff int64
	entry   int // bytes per entry
	keySize int
	// fences holds the first key of every block of blockEntries entries,
	// so a lookup knows which block to read.
	fences       []byte
	blockEntries int
	n            int
	meta         []byte
	sum          uint32 // the header checksum
	size         int64
	bloom        []uint64 // runs only
	// prefixes and vals are a base's entries in memory, for a codec with
	// prefixIndex: the first 8 bytes of each key (big-endian, so in key
	// order) and each value, kept current by sortedTable.change after the
	// base was written. stale marks (one bit per entry) the entries whose
	// value in memory is not to be trusted: keys of the base that share
	// their first 8 bytes, deleted keys, and keys whose change the index
	// could not attribute; lookups of their prefixes read the files.
	prefixes []uint64
	vals     []byte
	stale    []uint64
	// dirty marks (one bit per entry) the entries sortedTable.change
	// updated in place since the base and its runs were written: their
	// newest value is in memory only (the account log's records are its
	// redo log), and the next run or rewrite writes it. A dirty entry is
	// never stale: marking one stale moves its value to the changes in
	// memory first. nDirty counts them.
	dirty  []uint64
	nDirty int
	// dir[b] is the first entry of prefixes whose top dirBits bits are at
	// least b (dir[len(dir)-1] = n): a search starts within a few dozen
	// entries instead of halving megabytes of prefixes, a cache miss a
	// step.
	dir     []uint32
	dirBits uint
	unmap   func() error
	// valFile (nil: none) is a base's values file (tablevals.go): the
	// values the files hold for its entries are there, not in data.
	valFile *valuesFile
}

type tableChange[V any] struct {
	v       V
	deleted bool
	// inBase says that k is the key of its base index entry: the change
	// was made there in place while a rewrite was in progress
	// (setInPlace). The rewrite's base holds every key of the old one
	// that was not deleted, so adopt finds k's entry in the new index by
	// its prefix alone, without comparing keys in the new file.
	inBase bool
}

// tableCodec describes a table's entries. Encoded keys must sort as
// bytes in key order.
type tableCodec[K comparable, V any] struct {
	magic            string // 16 bytes
	keySize, valSize int
	putKey           func([]byte, K)
	getKey           func([]byte) K
	putVal           func([]byte, V)
	getVal           func([]byte) V
	// prefixIndex keeps the base's key prefixes and values in memory (up
	// to tableIndexMaxEntries entries), updated in place as the base's
	// keys change, so that lookup reads no file. Only for a table whose
	// reader can tell whether a value is its key's (the key directory's
	// values point to records that name their address) and whose values
	// are unique to a key (a location holds one record), which change
	// relies on to tell a key's entry from another's with the same
	// prefix.
	prefixIndex bool
}

// tableIndexMaxEntries bounds the base a prefix index is kept for (8 bytes
// of key and the value per entry, and a bit: 80 MB for the key directory
// at this many accounts); a larger base is looked up through its file.
const tableIndexMaxEntries = 1 << 22

const tableHeader = 16 + 8 + 4 + 4

func (c *tableCodec[K, V]) entry() int { return c.keySize + c.valSize }

// openTable maps the table at path and its runs (an empty table if there
// is no file). Run files that do not continue the chain from the base
// are removed.
func openTable[K comparable, V any](path string, c *tableCodec[K, V]) (*sortedTable[K, V], error) {
	t := &sortedTable[K, V]{codec: c, path: path, recent: map[K]tableChange[V]{}, written: new(atomic.Int64)}
	t.bufs = &sync.Pool{New: func() any { return new([tableBlockBytes]byte) }}
	base, err := openTableFile(path, []string{c.magic}, c.keySize, c.entry(), nil, c.prefixIndex)
	if err != nil {
		return nil, err
	}
	t.base = base
	t.meta, t.n, t.size = base.meta, base.n, base.size
	vf, err := openValuesFile(valsPath(path), base, c.valSize)
	if err != nil {
		base.close()
		return nil, err
	}
	if vf != nil {
		base.valFile, t.meta = vf, vf.meta
		if base.vals != nil {
			copy(base.vals, vf.data)
		}
		dropMapped(vf.mapped)
	}
	if err := t.openRuns(); err != nil {
		t.close()
		return nil, err
	}
	t.indexRuns()
	return t, nil
}

// indexRuns brings the base's prefix index up to date with the runs
// opened on it, oldest first: each run entry whose key is a base key
// (compared in full in the mapped base) sets that entry's value, or
// marks it stale when the key was deleted; a run key that only shares a
// base key's prefix marks that entry stale. A run's keys are sorted, so
// the index is searched forward from the previous key's position. The
// other keys the runs hold count as fresh.
func (t *sortedTable[K, V]) indexRuns() {
	f := t.base
	if len(t.runs) == 0 || !t.codec.prefixIndex || f.prefixes == nil && f.n > 0 {
		return
	}
	ks := t.codec.keySize
	for ri, r := range t.runs {
		lo := 0
		for j := 0; j < r.n; j++ {
			e := r.data[j*r.entry : (j+1)*r.entry]
			deleted := e[len(e)-1]&1 != 0
			if f.n > 0 {
				p := binary.BigEndian.Uint64(e)
				lo = gallop(f.prefixes, lo, p)
				if lo < f.n && f.prefixes[lo] == p && bytes.Equal(f.data[lo*f.entry:lo*f.entry+ks], e[:ks]) {
					switch {
					case f.isStale(lo):
					case deleted:
						f.markStale(lo)
					default:
						copy(f.val(lo), e[ks:len(e)-1])
					}
					continue
				}
				if lo < f.n && f.prefixes[lo] == p {
					// Another key with a base key's prefix: which of the two
					// a value is, the entry cannot tell (as when change
					// creates one).
					f.markStale(lo)
				}
			}
			if !deleted && !t.inRuns(e[:ks], ri) {
				t.fresh++ // neither a base key nor in an earlier run
			}
		}
		dropMapped(r.mapped)
	}
	dropMapped(f.mapped)
}

// inRuns reports whether the Bloom filter of one of the first n runs
// has key (rarely, a key none of them holds).
func (t *sortedTable[K, V]) inRuns(key []byte, n int) bool {
	probe := bloomProbe{h: bloomKeyHash(key)}
	for _, r := range t.runs[:n] {
		if probe.has(r.bloom) {
			return true
		}
	}
	return false
}

// gallop returns the first position at or after lo where s holds at
// least x (len(s) if none): an exponential then binary search, cheap when
// the answer is near lo.
func gallop(s []uint64, lo int, x uint64) int {
	step := 1
	hi := lo
	for hi < len(s) && s[hi] < x {
		lo = hi + 1
		hi += step
		step *= 2
	}
	hi = min(hi, len(s))
	i, _ := slices.BinarySearch(s[lo:hi], x)
	return lo + i
}

// runPath is the file name of run seq (from 1).
func (t *sortedTable[K, V]) runPath(seq int) string {
	return fmt.Sprintf("%s.run%06d", t.path, seq)
}

// openRuns maps the runs written on top of the base, in order, and
// removes the temporary files of interrupted run writes and every run
// from the first one that is missing, damaged or written on another base.
func (t *sortedTable[K, V]) openRuns() error {
	names, err := filepath.Glob(t.path + ".run*")
	if err != nil {
		return err
	}
	seqs := map[int]string{}
	for _, name := range names {
		rest := strings.TrimPrefix(name, t.path+".run")
		seq, err := strconv.Atoi(rest)
		if err != nil || seq <= 0 {
			// A temporary file (path.run000003.tmp…) or a stranger.
			if strings.Contains(rest, ".tmp") {
				if err := os.Remove(name); err != nil {
					return fmt.Errorf("remove %s: %w", name, err)
				}
			}
			continue
		}
		seqs[seq] = name
	}
	ks := t.codec.keySize
	for seq := 1; ; seq++ {
		name, ok := seqs[seq]
		if !ok {
			break
		}
		f, err := openTableFile(name, []string{tableRunMagic, tableRunMagicV1}, ks, t.codec.entry()+1, runTrailer, false)
		if errors.Is(err, errCorrupt) {
			break
		}
		if err != nil {
			return err
		}
		if len(f.meta) < 4 || binary.LittleEndian.Uint32(f.meta) != t.ident() {
			// Written on top of an older base or values file, or a
			// damaged one replaced.
			f.close()
			break
		}
		if f.bloom == nil {
			f.bloom = runBloom(f.data, f.entry, ks)
		}
		dropMapped(f.mapped)
		t.runs = append(t.runs, f)
		t.runEntries += f.n
		t.meta = f.meta[4:]
		delete(seqs, seq)
	}
	// What is left does not continue the chain: remove it, newest first,
	// so that a kill in between leaves a chain that is still a prefix.
	rest := make([]int, 0, len(seqs))
	for seq := range seqs {
		rest = append(rest, seq)
	}
	slices.Sort(rest)
	for i := len(rest) - 1; i >= 0; i-- {
		if err := os.Remove(seqs[rest[i]]); err != nil {
			return fmt.Errorf("remove %s: %w", seqs[rest[i]], err)
		}
	}
	return nil
}

// runTrailer is what follows a run's entries: its Bloom filter, except
// in runs of the first format.
func runTrailer(magic string, n uint64) int64 {
	if magic == tableRunMagicV1 {
		return 0
	}
	return runBloomBytes(n)
}

// openTableFile maps one table file whose header carries one of magics;
// a missing one is an empty file. trailer (nil: none) is the size of what
// follows the entries: a run's Bloom filter, which is read into bloom.
// With index, the entries are also kept in memory as prefixes and vals.
func openTableFile(path string, magics []string, keySize, entry int, trailer func(magic string, n uint64) int64, index bool) (*tableFile, error) {
	tf := &tableFile{path: path, entry: entry, keySize: keySize, unmap: func() error { return nil }}
	tf.blockEntries = max(tableBlockBytes/entry, 1)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	h, err := readTableHeader(f, path, magics)
	if err != nil {
		return nil, err
	}
	n, metaLen, meta, crc := h.n, int64(len(h.meta)), h.meta, h.sum
	var extra int64
	if trailer != nil {
		extra = trailer(h.magic, n)
	}
	if h.size < tableHeader+metaLen+extra || uint64(h.size-tableHeader-metaLen-extra) != n*uint64(entry) {
		return nil, fmt.Errorf("%w: %s length", errCorrupt, path)
	}
	m, unmap, err := mapFile(f, int(h.size))
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	end := tableHeader + metaLen + int64(n)*int64(entry)
	tf.data, tf.mapped, tf.n, tf.meta, tf.size, tf.sum = m[tableHeader+metaLen:end], m, int(n), meta, h.size, crc
	if extra > 0 {
		tf.bloom = make([]uint64, extra/8)
		for i := range tf.bloom {
			tf.bloom[i] = binary.LittleEndian.Uint64(m[end+int64(i)*8:])
		}
	}
	tf.file, tf.dataOff = f, tableHeader+metaLen
	tf.unmap = func() error { return errors.Join(unmap(), f.Close()) }
	keep = true
	// Building the fences (and the index) reads every page of the file:
	// release them as it goes, as a merge does, and the rest at the end,
	// so that opening a base of tens of MB (at a rewrite's adoption, beside
	// the load) does not make all of it resident at once.
	indexed := index && keySize >= 8 && tf.n <= tableIndexMaxEntries
	vs := entry - keySize
	if indexed {
		tf.prefixes, tf.vals = make([]uint64, tf.n), make([]byte, tf.n*vs)
	}
	tf.fences = make([]byte, 0, (tf.n+tf.blockEntries-1)/tf.blockEntries*keySize)
	dropped := 0
	for i := 0; i < tf.n; i++ {
		e := tf.data[i*entry : (i+1)*entry]
		if i%tf.blockEntries == 0 {
			tf.fences = append(tf.fences, e[:keySize]...)
			dropBehind(m, int(tf.dataOff)+i*entry, &dropped)
		}
		if indexed {
			tf.prefixes[i] = binary.BigEndian.Uint64(e)
			copy(tf.vals[i*vs:], e[keySize:])
		} else {
			i += tf.blockEntries - 1
		}
	}
	if indexed {
		tf.buildDir()
		// Keys sharing a prefix: which entry a change is to is unknown.
		tf.stale = make([]uint64, (tf.n+63)/64)
		tf.dirty = make([]uint64, (tf.n+63)/64)
		for i := 1; i < tf.n; i++ {
			if tf.prefixes[i] == tf.prefixes[i-1] {
				tf.markStale(i - 1)
				tf.markStale(i)
			}
		}
	}
	dropMapped(m)
	return tf, nil
}

// tableFileHeader is a table file's header and meta.
type tableFileHeader struct {
	magic string
	n     uint64 // entries
	meta  []byte
	sum   uint32 // the header checksum
	size  int64  // the file's
}

// readTableHeader reads the header and meta of the table file f (at
// path), which must carry one of magics, and checks them.
func readTableHeader(f *os.File, path string, magics []string) (tableFileHeader, error) {
	fi, err := f.Stat()
	if err != nil {
		return tableFileHeader{}, fmt.Errorf("open %s: %w", path, err)
	}
	var hdr [tableHeader]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil || !slices.Contains(magics, string(hdr[:16])) {
		return tableFileHeader{}, fmt.Errorf("%w: %s header", errCorrupt, path)
	}
	h := tableFileHeader{magic: string(hdr[:16]), n: binary.LittleEndian.Uint64(hdr[16:]), size: fi.Size()}
	metaLen := int64(binary.LittleEndian.Uint32(hdr[24:]))
	if h.n > uint64(h.size) || metaLen > h.size-tableHeader {
		return tableFileHeader{}, fmt.Errorf("%w: %s length", errCorrupt, path)
	}
	h.meta = make([]byte, metaLen)
	if _, err := f.ReadAt(h.meta, tableHeader); err != nil {
		return tableFileHeader{}, fmt.Errorf("read %s: %w", path, err)
	}
	h.sum = crc32.Update(crc32.Checksum(hdr[:28], castagnoli), castagnoli, h.meta)
	if h.sum != binary.LittleEndian.Uint32(hdr[28:]) {
		return tableFileHeader{}, fmt.Errorf("%w: %s header checksum", errCorrupt, path)
	}
	return h, nil
}

func (f *tableFile) close() error {
	err := errors.Join(f.unmap(), f.valFile.close())
	f.valFile = nil
	f.data, f.mapped, f.n, f.unmap = nil, nil, 0, func() error { return nil }
	f.file, f.fences, f.bloom, f.prefixes, f.vals, f.stale, f.dir = nil, nil, nil, nil, nil, nil, nil
	f.dirty, f.nDirty = nil, 0
	return err
}

// tableDirMaxBits bounds the prefix index's directory (dir): 2^16 + 1
// entries, 256 KiB, from 512 Ki keys on (one bucket per ~8 keys below).
const tableDirMaxBits = 16

// buildDir builds the directory of the prefix index.
func (f *tableFile) buildDir() {
	f.dirBits = uint(min(tableDirMaxBits, max(bits.Len(uint(f.n))-3, 0)))
	nb := 1 << f.dirBits
	f.dir = make([]uint32, nb+1)
	i := 0
	for b := range nb {
		for i < f.n && f.bucket(f.prefixes[i]) < b {
			i++
		}
		f.dir[b] = uint32(i)
	}
	f.dir[nb] = uint32(f.n)
}

// bucket is the directory entry of prefix p: its top dirBits bits (a
// shift by 64 is 0).
func (f *tableFile) bucket(p uint64) int { return int(p >> (64 - f.dirBits)) }

// indexAt is the position in the prefix index of the first entry whose
// key starts with key's first 8 bytes (which may be another key), or -1
// when no key of the base does.
func (f *tableFile) indexAt(key []byte) int {
	return prefixIndexAt(f.prefixes, f.dir, f.dirBits, binary.BigEndian.Uint64(key))
}

// prefixIndexAt is the position of the first of prefixes (sorted, with
// its directory dir of dirBits bits) equal to p, or -1.
func prefixIndexAt(prefixes []uint64, dir []uint32, dirBits uint, p uint64) int {
	b := int(p >> (64 - dirBits))
	lo, hi := int(dir[b]), int(dir[b+1])
	i, found := slices.BinarySearch(prefixes[lo:hi], p)
	if !found {
		return -1
	}
	return lo + i
}

// val is entry i's value in the prefix index.
func (f *tableFile) val(i int) []byte {
	vs := f.entry - f.keySize
	return f.vals[i*vs : (i+1)*vs]
}

func (f *tableFile) isStale(i int) bool { return f.stale[i/64]&(1<<(i%64)) != 0 }

func (f *tableFile) markStale(i int) { f.stale[i/64] |= 1 << (i % 64) }

func (f *tableFile) isDirty(i int) bool { return f.dirty[i/64]&(1<<(i%64)) != 0 }

func (f *tableFile) markDirty(i int) {
	if !f.isDirty(i) {
		f.dirty[i/64] |= 1 << (i % 64)
		f.nDirty++
	}
}

func (f *tableFile) unmarkDirty(i int) {
	if f.isDirty(i) {
		f.dirty[i/64] &^= 1 << (i % 64)
		f.nDirty--
	}
}

func (f *tableFile) clearDirty() {
	clear(f.dirty)
	f.nDirty = 0
}

// eachDirty calls fn with every dirty entry's position, ascending.
func (f *tableFile) eachDirty(fn func(i int)) {
	for w, x := range f.dirty {
		for x != 0 {
			fn(w*64 + bits.TrailingZeros64(x))
			x &= x - 1
		}
	}
}

// keyAt is entry i's key, read from the file into buf (or taken from
// the mapping, with mapped: cheaper for many lookups in a row, which
// then drop the pages).
func (f *tableFile) keyAt(i int, buf []byte, mapped bool) []byte {
	off := i * f.entry
	if !mapped {
		if _, err := f.file.ReadAt(buf[:f.keySize], f.dataOff+int64(off)); err == nil {
			return buf[:f.keySize]
		}
	}
	return f.data[off : off+f.keySize]
}

// tableBlockBytes is the most a lookup reads from a table file: the
// fences (the first key of each block, in memory) name the one block of
// entries that can hold a key, and find reads just that block with
// ReadAt. Reading rather than touching the mapping keeps lookups from
// mapping pages into the process: the kernel maps the 64 KiB around each
// faulting page, so random lookups in a mapped table of tens of MB left
// all of it resident within a slot. The fences cost one key per block
// (heads at a million accounts: ~1 MB).
const tableBlockBytes = 2048

// mergeDropBytes is how much of a mapped file a merge reads between
// releases of the pages it has read (sortedTable.merged; and opening a
// file, which reads it whole for the fences). Every file being merged
// holds up to this much until its next release, the base and each run:
// 8 MiB let a rewrite at a million accounts add ~40 MiB to the peak RSS.
const mergeDropBytes = 1 << 20

// dropBehind releases the pages of mapped before offset off, once they
// reach mergeDropBytes past *dropped (which it advances): a reader going
// through a mapping in order keeps at most that much of it resident.
func dropBehind(mapped []byte, off int, dropped *int) {
	page := os.Getpagesize()
	if at := off / page * page; at-*dropped >= mergeDropBytes {
		dropMapped(mapped[*dropped:at])
		*dropped = at
	}
}

// find looks key up in the file and calls fn with its position and entry
// (valid only during the call; a base's values file, if any, holds the
// entry's value: fileVal).
func (f *tableFile) find(key []byte, bufs *sync.Pool, fn func(i int, entry []byte)) bool {
	if f.n == 0 {
		return false
	}
	ks, e := f.keySize, f.entry
	// The last block whose first key is at most key.
	nb := len(f.fences) / ks
	b := sort.Search(nb, func(i int) bool { return bytes.Compare(f.fences[i*ks:(i+1)*ks], key) > 0 }) - 1
	if b < 0 {
		return false
	}
	lo := b * f.blockEntries
	cnt := min(f.blockEntries, f.n-lo)
	buf := bufs.Get().(*[tableBlockBytes]byte)
	defer bufs.Put(buf)
	var blk []byte
	if cnt*e <= len(buf) {
		blk = buf[:cnt*e]
	} else {
		blk = make([]byte, cnt*e) // entries wider than a block
	}
	if _, err := f.file.ReadAt(blk, f.dataOff+int64(lo*e)); err != nil {
		// The file is the table's own, complete at open; a failing read
		// falls back to the mapping, which faults the same way an
		// unreadable page always did.
		blk = f.data[lo*e : (lo+cnt)*e]
	}
	i := sort.Search(cnt, func(i int) bool { return bytes.Compare(blk[i*e:i*e+ks], key) >= 0 })
	if i < cnt && bytes.Equal(blk[i*e:i*e+ks], key) {
		fn(lo+i, blk[i*e:(i+1)*e])
		return true
	}
	return false
}

func (t *sortedTable[K, V]) get(k K) (V, bool) {
	v, ok, _ := t.lookupIn(k, false)
	return v, ok
}

// lookup is get for a reader that can tell whether a value is k's: a
// key that is not among the changes in memory is answered from the
// base's prefix index, before the runs (change keeps it current), and
// exact false says that the value is the newest of the base key starting
// with k's first 8 bytes, which is k's unless k is not a key of the base.
// The reader checks; if it is not k's, get answers.
func (t *sortedTable[K, V]) lookup(k K) (v V, ok, exact bool) { return t.lookupIn(k, true) }

func (t *sortedTable[K, V]) lookupIn(k K, candidates bool) (V, bool, bool) {
	if c, ok := t.recent[k]; ok {
		return c.v, !c.deleted, true
	}
	if c, ok := t.frozen[k]; ok {
		return c.v, !c.deleted, true
	}
	var zero V
	var kb [64]byte
	ks := t.codec.keySize
	key := kb[:ks]
	t.codec.putKey(key, k)
	inBase := true // whether a key of the base may be k
	if f := t.base; f.prefixes != nil {
		i := f.indexAt(key)
		inBase = i >= 0
		if i >= 0 && !f.isStale(i) {
			// The one key of the base with k's prefix; the entry holds its
			// newest value (change keeps it so, and it may be newer than
			// anything in the files).
			if candidates {
				return t.codec.getVal(f.val(i)), true, false
			}
			var bk [64]byte
			if bytes.Equal(f.keyAt(i, bk[:], t.keysMapped), key) {
				return t.codec.getVal(f.val(i)), true, true
			}
			inBase = false
		}
	}
	if len(t.runs) > 0 {
		probe := bloomProbe{h: bloomKeyHash(key)}
		for i := len(t.runs) - 1; i >= 0; i-- {
			r := t.runs[i]
			if !probe.has(r.bloom) {
				continue
			}
			var v V
			var deleted bool
			if r.find(key, t.bufs, func(_ int, e []byte) {
				v, deleted = t.codec.getVal(e[ks:len(e)-1]), e[len(e)-1]&1 != 0
			}) {
				if deleted {
					return zero, false, true
				}
				return v, true, true
			}
		}
	}
	if !inBase {
		return zero, false, true
	}
	var v V
	found := t.base.find(key, t.bufs, func(i int, e []byte) {
		if t.base.valFile != nil {
			v = t.codec.getVal(t.base.fileVal(i))
		} else {
			v = t.codec.getVal(e[ks:])
		}
	})
	return v, found, true
}

func (t *sortedTable[K, V]) set(k K, v V) { t.recent[k] = tableChange[V]{v: v} }

func (t *sortedTable[K, V]) del(k K) { t.recent[k] = tableChange[V]{deleted: true} }

// change is set (or del, with deleted) for a table with a prefix index:
// prev is k's value it replaces (had: k had one), which tells whether
// the index entry with k's prefix is k's. If it holds prev, it is k's
// newest value so far, and takes v in place: the entry becomes dirty,
// and the change goes nowhere else (while a rewrite is in progress,
// also to the changes in memory, which the new base's index takes over
// at adopt). A deleted key's entry, or one that holds another value
// (another key's, when k is new or not a key of the base), is marked
// stale, lookups of its prefix read the changes in memory and the files
// from then on, and the change is kept in memory like any change of a
// table without an index.
func (t *sortedTable[K, V]) change(k K, prev V, had bool, v V, deleted bool) {
	if !had && !deleted {
		t.fresh++
	}
	if f := t.base; f.prefixes != nil {
		var kb, pb [64]byte
		key, pv := kb[:t.codec.keySize], pb[:t.codec.valSize]
		t.codec.putKey(key, k)
		if i := f.indexAt(key); i >= 0 && !f.isStale(i) {
			if had {
				t.codec.putVal(pv, prev)
			}
			if had && !deleted && bytes.Equal(f.val(i), pv) {
				t.setInPlace(i, k, v)
				return
			}
			t.markStale(i)
		}
	}
	if deleted {
		t.del(k)
	} else {
		t.set(k, v)
	}
}

// swap is get and then change of k to v (or its deletion), for the
// replay at open: when k is the base's key of a current index entry and
// no change in memory overrides it, the entry is found once, not twice.
// It returns what get would have.
func (t *sortedTable[K, V]) swap(k K, v V, deleted bool) (V, bool) {
	if f := t.base; f.prefixes != nil && !deleted {
		_, inRecent := t.recent[k]
		_, inFrozen := t.frozen[k]
		var kb, bk [64]byte
		key := kb[:t.codec.keySize]
		t.codec.putKey(key, k)
		if i := f.indexAt(key); !inRecent && !inFrozen && i >= 0 && !f.isStale(i) &&
			bytes.Equal(f.keyAt(i, bk[:], t.keysMapped), key) {
			prev := t.codec.getVal(f.val(i))
			t.setInPlace(i, k, v) // what change does with prev held
			return prev, true
		}
	}
	prev, had := t.get(k)
	t.change(k, prev, had, v, deleted)
	return prev, had
}

// setInPlace gives base index entry i, k's, the value v and marks it
// dirty. While a rewrite is in progress the change also goes to the
// changes in memory: the new base's index is as of its freeze, and adopt
// takes the changes made since from memory.
func (t *sortedTable[K, V]) setInPlace(i int, k K, v V) {
	t.codec.putVal(t.base.val(i), v)
	t.base.markDirty(i)
	if t.frozen != nil {
		t.recent[k] = tableChange[V]{v: v, inBase: true}
	}
}

// markStale marks base index entry i stale; a dirty entry's value is
// moved to the changes in memory first (unless they hold a newer one for
// its key), since lookups no longer take it from the index.
func (t *sortedTable[K, V]) markStale(i int) {
	f := t.base
	if f.isDirty(i) {
		var kb [64]byte
		k := t.codec.getKey(f.keyAt(i, kb[:], t.keysMapped))
		if _, ok := t.recent[k]; !ok {
			t.recent[k] = tableChange[V]{v: t.codec.getVal(f.val(i)), inBase: true}
		}
		f.unmarkDirty(i)
	}
	f.markStale(i)
}

// unsaved is the number of changes only memory holds: the changes in
// memory and the dirty index entries.
func (t *sortedTable[K, V]) unsaved() int { return len(t.recent) + t.base.nDirty }

// changes is how many keys changed since the base was written (keys
// changed again after a run count again).
func (t *sortedTable[K, V]) changes() int { return len(t.recent) + len(t.frozen) + t.runEntries }

// entries is the number of entries in the base.
func (t *sortedTable[K, V]) entries() int { return t.n }

// runCount is the number of runs on the base.
func (t *sortedTable[K, V]) runCount() int { return len(t.runs) }

// runDue reports whether the changes in memory should be written as a
// run.
func (t *sortedTable[K, V]) runDue() bool {
	at := t.runAt
	if at <= 0 {
		at = tableRunChanges
	}
	return len(t.recent) >= at
}

// sortedRecent encodes the changes in memory as run entries (key | value
// | flags), sorted by key.
func (t *sortedTable[K, V]) sortedRecent() []byte { return t.sortedChanges(t.recent) }

// sortedChanges encodes changes as run entries, sorted by key.
func (t *sortedTable[K, V]) sortedChanges(changes map[K]tableChange[V]) []byte {
	c := t.codec
	ks, e := c.keySize, c.entry()+1
	out := make([]byte, len(changes)*e)
	i := 0
	for k, ch := range changes {
		ent := out[i*e : (i+1)*e]
		c.putKey(ent[:ks], k)
		if ch.deleted {
			ent[e-1] = 1
		} else {
			c.putVal(ent[ks:e-1], ch.v)
		}
		i++
	}
	sortEntries(out, e, ks)
	return out
}

// sortEntries sorts fixed-size entries by their first ks bytes: a radix
// sort of each entry's first 8 key bytes, as a number, beside its
// position, then a comparison sort by the rest of the key of any stretch
// of entries whose first 8 bytes are equal. A run of the key directory is
// 65 536 entries of 32-byte keys, and comparing them as byte slices
// through their positions was most of writing it.
func sortEntries(b []byte, e, ks int) {
	type keyed struct {
		prefix uint64
		i      int32
	}
	n := len(b) / e
	if n < 2 {
		return
	}
	idx := make([]keyed, n)
	var word [8]byte
	for i := range idx {
		copy(word[:], b[i*e:i*e+min(ks, 8)]) // zero-padded: still in key order
		idx[i] = keyed{binary.BigEndian.Uint64(word[:]), int32(i)}
	}
	// Least significant byte first; each pass is stable, and one whose
	// byte all entries share is skipped.
	tmp := make([]keyed, n)
	for shift := 0; shift < 64; shift += 8 {
		var start [257]int
		for _, k := range idx {
			start[(k.prefix>>shift)&0xff+1]++
		}
		if start[(idx[0].prefix>>shift)&0xff+1] == n {
			continue
		}
		for d := 1; d < len(start); d++ {
			start[d] += start[d-1]
		}
		for _, k := range idx {
			d := (k.prefix >> shift) & 0xff
			tmp[start[d]] = k
			start[d]++
		}
		idx, tmp = tmp, idx
	}
	if ks > 8 {
		for lo := 0; lo < n; {
			hi := lo + 1
			for hi < n && idx[hi].prefix == idx[lo].prefix {
				hi++
			}
			if hi-lo > 1 {
				slices.SortFunc(idx[lo:hi], func(x, y keyed) int {
					return bytes.Compare(b[int(x.i)*e+8:int(x.i)*e+ks], b[int(y.i)*e+8:int(y.i)*e+ks])
				})
			}
			lo = hi
		}
	}
	sorted := make([]byte, len(b))
	for i, k := range idx {
		copy(sorted[i*e:(i+1)*e], b[int(k.i)*e:(int(k.i)+1)*e])
	}
	copy(b, sorted)
}

// writeRun writes the changes in memory as the next run, with meta; t is
// left as it was (readers may go on using it) until addRun adopts it.
func (t *sortedTable[K, V]) writeRun(meta []byte, sync bool) (*tableFile, error) {
	path := t.runPath(len(t.runs) + 1)
	if err := writeFileAtomic(path, sync, t.runWriter(t.sortedRecent(), true, onTopMeta(t.ident(), meta))); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	f, err := openTableFile(path, []string{tableRunMagic}, t.codec.keySize, t.codec.entry()+1, runTrailer, false)
	if err != nil {
		return nil, err
	}
	t.written.Add(f.size)
	return f, nil
}

// onTopMeta is the meta of a file written on top of another (a run on a
// base or values file, a values file on a base): that file's header
// checksum (u32 LE), then the owner's meta.
func onTopMeta(sum uint32, meta []byte) []byte {
	return append(binary.LittleEndian.AppendUint32(nil, sum), meta...)
}

// runWriter writes a run file of ents (sorted changes), merged with the
// base's dirty index entries with dirty, with runMeta.
func (t *sortedTable[K, V]) runWriter(ents []byte, dirty bool, runMeta []byte) func(io.Writer) error {
	ks := t.codec.keySize
	each := t.eachRunEntry
	if !dirty {
		e := t.codec.entry() + 1
		each = func(ents []byte, fn func([]byte)) {
			for ; len(ents) > 0; ents = ents[e:] {
				fn(ents[:e])
			}
		}
	}
	// The Bloom filter goes in the file, after the entries: a restart
	// reads it instead of hashing every key of every run again. The
	// entries are streamed (a clean close at a million accounts may
	// write most of the key directory's index): counted, hashed, written.
	return func(w io.Writer) error {
		n := 0
		each(ents, func([]byte) { n++ })
		bloom := newBloom(n)
		each(ents, func(ent []byte) { bloomAdd(bloom, bloomKeyHash(ent[:ks])) })
		return writeTableFile(w, tableRunMagic, runMeta, n, func(bw *bufio.Writer) error {
			each(ents, func(ent []byte) { bw.Write(ent) })
			var word [8]byte
			for _, x := range bloom {
				binary.LittleEndian.PutUint64(word[:], x)
				bw.Write(word[:])
			}
			return nil
		})
	}
}

// eachRunEntry calls fn, in key order, with the run entries (key |
// value | flags) of ents (sorted changes) merged with the base's dirty
// index entries; a change in ents is newer than a dirty entry of its key
// (there is none outside a rewrite: a changed key's entry is stale). The
// dirty entries' keys are read from the base's mapping, in file order,
// its pages dropped as it goes. fn must not keep the entry.
func (t *sortedTable[K, V]) eachRunEntry(ents []byte, fn func(ent []byte)) {
	f := t.base
	ks, e := t.codec.keySize, t.codec.entry()+1
	if f.nDirty > 0 {
		buf := make([]byte, e)
		dropped := 0
		f.eachDirty(func(i int) {
			key := f.keyAt(i, nil, true)
			for len(ents) > 0 && bytes.Compare(ents[:ks], key) < 0 {
				fn(ents[:e])
				ents = ents[e:]
			}
			if len(ents) == 0 || !bytes.Equal(ents[:ks], key) {
				copy(buf, key)
				copy(buf[ks:], f.val(i))
				buf[e-1] = 0
				fn(buf)
			}
			dropBehind(f.mapped, int(f.dataOff)+i*f.entry, &dropped)
		})
		dropMapped(f.mapped)
	}
	for ; len(ents) > 0; ents = ents[e:] {
		fn(ents[:e])
	}
}

// addRun makes the run writeRun returned part of t and forgets the
// changes in memory it holds, and the dirty marks of the index entries
// it wrote.
func (t *sortedTable[K, V]) addRun(f *tableFile) {
	t.runs = append(t.runs, f)
	t.runEntries += f.n
	t.meta = f.meta[4:]
	t.recent = map[K]tableChange[V]{}
	if t.base.dirty != nil {
		t.base.clearDirty()
	}
}

// encodeTableHeader is a table file's header for n entries and meta.
func encodeTableHeader(magic string, n int, meta []byte) [tableHeader]byte {
	var hdr [tableHeader]byte
	copy(hdr[:16], magic)
	binary.LittleEndian.PutUint64(hdr[16:], uint64(n))
	binary.LittleEndian.PutUint32(hdr[24:], uint32(len(meta)))
	binary.LittleEndian.PutUint32(hdr[28:], crc32.Update(crc32.Checksum(hdr[:28], castagnoli), castagnoli, meta))
	return hdr
}

// writeTableFile writes a table file's header, meta and n entries (put
// writes the entries) to w.
func writeTableFile(w io.Writer, magic string, meta []byte, n int, put func(*bufio.Writer) error) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	hdr := encodeTableHeader(magic, n, meta)
	bw.Write(hdr[:])
	bw.Write(meta)
	if err := put(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// merged calls fn, in key order, with every live key of the table as
// encoded bytes and its encoded value: the newest of the changes in
// memory, the runs (newest first) and the base wins. Deleted keys are
// left out. The mapped pages it reads are dropped as it goes, every
// mergeDropBytes of a file, and the rest at the end: a rewrite reads the
// whole base, which at a million accounts is ~100 MB that would
// otherwise all count in the process's resident set at once.
func (t *sortedTable[K, V]) merged(fn func(key, val []byte) bool) {
	changes := t.recent
	if len(t.frozen) > 0 {
		// A rewrite is merging the frozen changes: they are still changes
		// over the base and runs, under the newer ones.
		changes = maps.Clone(t.frozen)
		maps.Copy(changes, t.recent)
	}
	t.mergedWith(changes, t.dirtyVals(), fn)
}

// dirtyVals is mergedWith's dirty for the base's index as it is (nil
// when no entry is dirty). Only the owner changes it: callers hold the
// table's lock.
func (t *sortedTable[K, V]) dirtyVals() func(int) []byte {
	f := t.base
	if f.nDirty == 0 {
		return nil
	}
	return func(i int) []byte {
		if f.isDirty(i) {
			return f.val(i)
		}
		return nil
	}
}

// mergedWith is merged with changes in place of the changes in memory,
// and dirty (nil: none) giving the value of base entry i if its index
// entry is dirty: newer than the runs and the base's file, older than
// changes.
func (t *sortedTable[K, V]) mergedWith(changes map[K]tableChange[V], dirty func(int) []byte, fn func(key, val []byte) bool) {
	ks := t.codec.keySize
	// Sources by priority: the changes in memory, then the runs newest
	// first, then the base.
	type cursor struct {
		data  []byte
		e     int
		flags bool
		i, n  int
		// file is the mapped file data is in (nil: memory), whose
		// pages before dropped have been released.
		file    *tableFile
		dropped int
	}
	rec := t.sortedChanges(changes)
	cs := []*cursor{{data: rec, e: t.codec.entry() + 1, flags: true, n: len(rec) / (t.codec.entry() + 1)}}
	for i := len(t.runs) - 1; i >= 0; i-- {
		r := t.runs[i]
		cs = append(cs, &cursor{data: r.data, e: r.entry, flags: true, n: r.n, file: r})
	}
	cs = append(cs, &cursor{data: t.base.data, e: t.base.entry, n: t.base.n, file: t.base})
	baseCursor := cs[len(cs)-1]
	release := func(c *cursor) {
		if c.file != nil {
			dropBehind(c.file.mapped, int(c.file.dataOff)+c.i*c.e, &c.dropped)
		}
	}
	key := func(c *cursor) []byte { return c.data[c.i*c.e : c.i*c.e+ks] }
	// h is a binary heap of the cursors with entries left, ordered by
	// their current key, then by priority.
	less := func(a, b int) bool {
		if d := bytes.Compare(key(cs[a]), key(cs[b])); d != 0 {
			return d < 0
		}
		return a < b
	}
	var h []int
	down := func(i int) {
		for {
			l, s := 2*i+1, i
			if l < len(h) && less(h[l], h[s]) {
				s = l
			}
			if r := l + 1; r < len(h) && less(h[r], h[s]) {
				s = r
			}
			if s == i {
				return
			}
			h[i], h[s] = h[s], h[i]
			i = s
		}
	}
	for i, c := range cs {
		if c.n > 0 {
			h = append(h, i)
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	// advance moves the cursor at the top of the heap on.
	advance := func() {
		c := cs[h[0]]
		release(c)
		if c.i++; c.i == c.n {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		if len(h) > 0 {
			down(0)
		}
	}
	defer func() {
		for _, r := range t.runs {
			dropMapped(r.mapped)
		}
		t.base.dropPages()
	}()
	for len(h) > 0 {
		c := cs[h[0]]
		ent := c.data[c.i*c.e : (c.i+1)*c.e]
		k := ent[:ks]
		deleted := c.flags && ent[c.e-1]&1 != 0
		val := ent[ks:]
		if c.flags {
			val = ent[ks : c.e-1]
		}
		fromChanges, baseAt := c == cs[0], -1
		if c == baseCursor {
			baseAt = c.i
			val = t.base.fileVal(c.i) // the values file's, if any
		}
		advance()
		// Older sources with the same key are shadowed.
		for len(h) > 0 && bytes.Equal(key(cs[h[0]]), k) {
			if cs[h[0]] == baseCursor {
				baseAt = baseCursor.i
			}
			advance()
		}
		if baseAt >= 0 && !fromChanges && dirty != nil {
			if v := dirty(baseAt); v != nil {
				val, deleted = v, false
			}
		}
		if deleted {
			continue
		}
		if !fn(k, val) {
			return
		}
	}
}

// each calls fn for every key and value, in key order, until fn returns
// false.
func (t *sortedTable[K, V]) each(fn func(K, V) bool) {
	t.merged(func(k, v []byte) bool { return fn(t.codec.getKey(k), t.codec.getVal(v)) })
}

// freeze sets the changes in memory aside for writeFrozen; new changes
// go to a fresh map. The owner holds its write lock.
func (t *sortedTable[K, V]) freeze() {
	t.frozen, t.recent = t.recent, map[K]tableChange[V]{}
	t.freshFrozen = t.fresh
	t.frozenDirty, t.frozenVals = nil, nil
	if f := t.base; f.nDirty > 0 {
		t.frozenDirty = make([]uint32, 0, f.nDirty)
		t.frozenVals = make([]byte, 0, f.nDirty*t.codec.valSize)
		f.eachDirty(func(i int) {
			t.frozenDirty = append(t.frozenDirty, uint32(i))
			t.frozenVals = append(t.frozenVals, f.val(i)...)
		})
	}
}

// writeFrozen is writeWith over the frozen changes. It reads nothing the
// owner changes meanwhile (the changes in memory), so it can run while the
// owner goes on, provided no run is added before adopt takes its result.
func (t *sortedTable[K, V]) writeFrozen(meta []byte, sync bool, keep func(K, V) bool) (*sortedTable[K, V], error) {
	return t.writeFrozenHook(meta, sync, keep, nil)
}

// writeFrozenHook is writeFrozen followed by hook (nil: none).
func (t *sortedTable[K, V]) writeFrozenHook(meta []byte, sync bool, keep func(K, V) bool, hook *baseHook) (*sortedTable[K, V], error) {
	var dirty func(int) []byte
	if d, vals := t.frozenDirty, t.frozenVals; len(d) > 0 {
		// The merge visits base entries in order.
		vs := t.codec.valSize
		dirty = func(i int) []byte {
			for len(d) > 0 && int(d[0]) < i {
				d, vals = d[1:], vals[vs:]
			}
			if len(d) > 0 && int(d[0]) == i {
				return vals[:vs]
			}
			return nil
		}
	}
	return t.writeWithHook(t.frozen, dirty, meta, sync, keep, hook)
}

// baseHook follows the writing of a new base: observe sees the key of
// every entry the new base holds, in order, and beforeRename runs once
// the file is complete (and synced), before it takes the old base's
// place; an error from it stops the rewrite.
type baseHook struct {
	observe      func(key []byte)
	beforeRename func() error
}

// adopt makes t the table writeFrozen returned, keeping the changes
// made since freeze. The owner holds its write lock. The new base's
// prefix index holds the values as of freeze: a key changed since that
// is the new base's key of its entry (compared in the mapping) takes its
// newest value there, dirty, and leaves the changes in memory; the
// entries of the others' prefixes are marked stale.
func (t *sortedTable[K, V]) adopt(nt *sortedTable[K, V]) error {
	live, fresh := t.recent, t.fresh-t.freshFrozen
	// A key changed in place in the old index is a key of the new base
	// unless the rewrite left keys out (keep).
	inBase := !nt.pruned
	err := t.replace(nt)
	t.recent, t.frozen, t.fresh = live, nil, fresh
	if f := t.base; f.prefixes != nil && len(live) > 0 {
		var kb [64]byte
		key := kb[:t.codec.keySize]
		compared := 0
		for k, c := range live {
			t.codec.putKey(key, k)
			i := f.indexAt(key)
			switch {
			case i < 0 || f.isStale(i):
			case !c.deleted && c.inBase && inBase:
				// The one key of the new base with k's prefix is k.
				t.setInPlace(i, k, c.v)
				delete(live, k)
			case !c.deleted && t.compareMapped(f, i, key, &compared):
				t.setInPlace(i, k, c.v)
				delete(live, k)
			default:
				t.markStale(i)
			}
		}
		t.adoptCompared = compared
		if compared > 0 {
			dropMapped(f.mapped)
		}
	}
	return err
}

// compareMapped reports whether base entry i's key is key, comparing in
// the mapping (*n counts the comparisons). adopt compares only the keys
// it cannot attribute otherwise: at a million accounts the changes made
// during a rewrite are tens of thousands of base keys at random places
// in a file of tens of MB, and comparing each in the mapping made all of
// it resident for a moment (+42 MiB of RSS at each rewrite).
func (t *sortedTable[K, V]) compareMapped(f *tableFile, i int, key []byte, n *int) bool {
	*n++
	return bytes.Equal(f.keyAt(i, nil, true), key)
}

// writeWith writes the merged table (base, runs and changes) with meta
// as the new base and returns it mapped; t is left as it was (readers may
// go on using it meanwhile) until replace or adopt takes the new one.
// Entries for which keep returns false are left out (nil keeps every
// entry). The runs' files are removed, newest first, before the new base
// takes the place of the old one: a kill in between leaves the old base
// with a prefix of its runs, which the owner's replay completes.
func (t *sortedTable[K, V]) writeWith(changes map[K]tableChange[V], dirty func(int) []byte, meta []byte, sync bool, keep func(K, V) bool) (*sortedTable[K, V], error) {
	return t.writeWithHook(changes, dirty, meta, sync, keep, nil)
}

// writeWithHook is writeWith followed by hook (nil: none).
func (t *sortedTable[K, V]) writeWithHook(changes map[K]tableChange[V], dirty func(int) []byte, meta []byte, sync bool, keep func(K, V) bool, hook *baseHook) (*sortedTable[K, V], error) {
	c := t.codec
	before := t.removeRuns
	if hook != nil {
		before = func() error {
			if err := hook.beforeRename(); err != nil {
				return err
			}
			return t.removeRuns()
		}
	}
	err := writeBase(t.path, c.magic, meta, sync, func(emit func(k, v []byte)) {
		t.mergedWith(changes, dirty, func(k, v []byte) bool {
			if keep == nil || keep(c.getKey(k), c.getVal(v)) {
				if hook != nil {
					hook.observe(k)
				}
				emit(k, v)
			}
			return true
		})
	}, before)
	if err != nil {
		return nil, err
	}
	nt, err := openTable(t.path, c)
	if err != nil {
		return nil, err
	}
	nt.pruned = keep != nil
	t.written.Add(nt.size)
	return nt, nil
}

// removeRuns removes the files of t's runs, newest first, so that a
// kill part way leaves the base with an unbroken prefix of them.
func (t *sortedTable[K, V]) removeRuns() error {
	for i := len(t.runs) - 1; i >= 0; i-- {
		if err := os.Remove(t.runs[i].path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// writeBase writes a table base at path through a temporary file: the
// header with magic and meta, then the entries put emits, in key order.
// beforeRename runs once the file is complete (and synced, with sync),
// before it takes path's place.
func writeBase(path, magic string, meta []byte, sync bool, put func(emit func(k, v []byte)), beforeRename func() error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	err = func() error {
		// The count goes in the header before the entries are known:
		// write a placeholder and patch it through the file afterwards.
		n := 0
		err := writeTableFile(tmp, magic, meta, 0, func(bw *bufio.Writer) error {
			put(func(k, v []byte) {
				bw.Write(k)
				bw.Write(v)
				n++
			})
			return nil
		})
		if err != nil {
			return err
		}
		hdr := encodeTableHeader(magic, n, meta)
		if _, err := tmp.WriteAt(hdr[:], 0); err != nil {
			return err
		}
		if sync {
			if err := tmp.Sync(); err != nil {
				return err
			}
		}
		if err := tmp.Close(); err != nil {
			return err
		}
		if beforeRename != nil {
			if err := beforeRename(); err != nil {
				return err
			}
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			return err
		}
		if sync {
			return syncDir(filepath.Dir(path))
		}
		return nil
	}()
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// replace makes t the table write returned.
func (t *sortedTable[K, V]) replace(nt *sortedTable[K, V]) error {
	err := t.unmapAll()
	runAt, written, onFreeze := t.runAt, t.written, t.onFreeze
	*t = *nt
	t.runAt, t.written, t.onFreeze = runAt, written, onFreeze
	if err != nil {
		return fmt.Errorf("unmap %s: %w", t.path, err)
	}
	return nil
}

func (t *sortedTable[K, V]) unmapAll() error {
	var errs []error
	if t.base != nil {
		errs = append(errs, t.base.close())
	}
	for _, r := range t.runs {
		errs = append(errs, r.close())
	}
	return errors.Join(errs...)
}

// dropPages releases the files' pages lookups touched from the
// process's resident set (dropMapped). Callers hold the lock that guards
// replace.
func (t *sortedTable[K, V]) dropPages() {
	t.base.dropPages()
	for _, r := range t.runs {
		dropMapped(r.mapped)
	}
}

func (t *sortedTable[K, V]) close() error {
	err := t.unmapAll()
	t.base, t.runs, t.n, t.runEntries = &tableFile{unmap: func() error { return nil }}, nil, 0, 0
	return err
}

// removeTableFiles removes a table's base, runs and values file (a
// damaged base is rebuilt from history; what was written on top of it
// must not outlive it).
func removeTableFiles(path string) error {
	runs, err := filepath.Glob(path + ".run*")
	if err != nil {
		return err
	}
	slices.Sort(runs)
	for i := len(runs) - 1; i >= 0; i-- {
		if err := os.Remove(runs[i]); err != nil {
			return err
		}
	}
	if err := os.Remove(valsPath(path)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// A Bloom filter of a run's keys tells a lookup which runs can hold its
// key, so a miss costs no read: 10 bits and 6 probes per key, about 1 %
// false positives.
const (
	bloomBitsPerKey = 10
	bloomProbes     = 6
)

func newBloom(n int) []uint64 { return make([]uint64, max((n*bloomBitsPerKey+63)/64, 1)) }

// runBloom is the Bloom filter of a run's entries (e bytes each, keys of
// ks bytes first).
func runBloom(ents []byte, e, ks int) []uint64 {
	b := newBloom(len(ents) / e)
	for i := 0; i+e <= len(ents); i += e {
		bloomAdd(b, bloomKeyHash(ents[i:i+ks]))
	}
	return b
}

// bloomKeyHash hashes an encoded key for the run filters: FNV-1a, then
// splitmix64's finalizer so that both halves (the two probe hashes) mix
// every byte. Fixed, not seeded: the filters are stored in the runs.
func bloomKeyHash(key []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, b := range key {
		h ^= uint64(b)
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

func bloomAdd(b []uint64, h uint64) {
	m := uint64(len(b)) * 64
	h1, h2 := h, h>>32|1
	for i := uint64(0); i < bloomProbes; i++ {
		bit := (h1 + i*h2) % m
		b[bit/64] |= 1 << (bit % 64)
	}
}

// bloomProbe is a key's probes (its hash h) into filters of m bits,
// each computed when first needed and kept for the next filter of the
// same size: a lookup checks every run's filter, newest first, and runs
// written at tableRunChanges changes all have one size, so a key costs
// its divisions once instead of once per run (a 64-bit division was most
// of a check: ~23 ns a run, and a table may carry dozens of runs).
type bloomProbe struct {
	h, m uint64
	n    int // probes computed for m
	bits [bloomProbes]uint64
}

// has reports whether filter b may hold the key: each probe's bit is
// (h1 + i*h2) mod m, h1 and h2 the hash's halves as bloomAdd sets them.
func (p *bloomProbe) has(b []uint64) bool {
	m := uint64(len(b)) * 64
	if m != p.m {
		p.m, p.n = m, 0
	}
	h1, h2 := p.h, p.h>>32|1
	for i := 0; i < bloomProbes; i++ {
		if i == p.n {
			p.bits[i] = (h1 + uint64(i)*h2) % m
			p.n++
		}
		bit := p.bits[i]
		if b[bit/64]&(1<<(bit%64)) == 0 {
			return false
		}
	}
	return true
}
