package ledger

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"sort"
	"sync"
)

// sortedTable is a map with fixed-size keys and values, kept as a file of
// entries sorted by key plus the changes made since the file was written,
// in memory. The file is mapped read-only: opening it decodes nothing,
// its pages cost no Go heap, and only the pages lookups touch are read.
// save merges the changes into a new file. The durable stores use it for
// the account key directory, the address heads and the signature index,
// each of which can be rebuilt from the file and what was committed after
// the position its meta records.
//
// File: magic (16) | entries u64 | meta length u32 | CRC-32C of the
// header and meta u32 | meta | entries (key | value). The entries are
// not checksummed (reading them would defeat the mapping); what they point
// to is checked where it is read.
//
// A sortedTable is not safe for concurrent use; its owner locks.
type sortedTable[K comparable, V any] struct {
	codec  *tableCodec[K, V]
	path   string
	data   []byte // the entries
	mapped []byte // the whole file as mapped (data is within it)
	// file is the open table file and dataOff where the entries start in
	// it. Lookups read one block of entries with ReadAt instead of
	// touching the mapping (see get).
	file    *os.File
	dataOff int64
	// fences holds the first key of every block of blockEntries entries,
	// so a lookup knows which block to read.
	fences       []byte
	blockEntries int
	// bufs are the block buffers of lookups (a stack buffer would escape
	// through ReadAt).
	bufs   *sync.Pool
	unmap  func() error
	n      int
	meta   []byte
	size   int64 // file size
	recent map[K]tableChange[V]
}

type tableChange[V any] struct {
	v       V
	deleted bool
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
}

const tableHeader = 16 + 8 + 4 + 4

func (c *tableCodec[K, V]) entry() int { return c.keySize + c.valSize }

// openTable maps the table at path (an empty one if there is no file).
func openTable[K comparable, V any](path string, c *tableCodec[K, V]) (*sortedTable[K, V], error) {
	t := &sortedTable[K, V]{codec: c, path: path, recent: map[K]tableChange[V]{}, unmap: func() error { return nil }}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return t, nil
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
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	var hdr [tableHeader]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil || string(hdr[:16]) != c.magic {
		return nil, fmt.Errorf("%w: %s header", errCorrupt, path)
	}
	n := binary.LittleEndian.Uint64(hdr[16:])
	metaLen := int64(binary.LittleEndian.Uint32(hdr[24:]))
	if fi.Size() < tableHeader+metaLen || uint64(fi.Size()-tableHeader-metaLen) != n*uint64(c.entry()) {
		return nil, fmt.Errorf("%w: %s length", errCorrupt, path)
	}
	meta := make([]byte, metaLen)
	if _, err := f.ReadAt(meta, tableHeader); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	crc := crc32.Update(crc32.Checksum(hdr[:28], castagnoli), castagnoli, meta)
	if crc != binary.LittleEndian.Uint32(hdr[28:]) {
		return nil, fmt.Errorf("%w: %s header checksum", errCorrupt, path)
	}
	m, unmap, err := mapFile(f, int(fi.Size()))
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	t.data, t.mapped, t.n, t.meta, t.size = m[tableHeader+metaLen:], m, int(n), meta, fi.Size()
	t.file, t.dataOff = f, tableHeader+metaLen
	t.unmap = func() error { return errors.Join(unmap(), f.Close()) }
	keep = true
	e := c.entry()
	t.blockEntries = max(tableBlockBytes/e, 1)
	t.bufs = &sync.Pool{New: func() any { return new([tableBlockBytes]byte) }}
	ks := c.keySize
	t.fences = make([]byte, 0, (t.n+t.blockEntries-1)/t.blockEntries*ks)
	for i := 0; i < t.n; i += t.blockEntries {
		t.fences = append(t.fences, t.data[i*e:i*e+ks]...)
	}
	// Building the fences touched every page: leave none resident.
	dropMapped(m)
	return t, nil
}

func (t *sortedTable[K, V]) at(i int) []byte {
	e := t.codec.entry()
	return t.data[i*e : (i+1)*e]
}

// tableBlockBytes is the most a lookup reads from a table file: the
// fences (the first key of each block, in memory) name the one block of
// entries that can hold a key, and get reads just that block with ReadAt.
// Reading rather than touching the mapping keeps lookups from mapping
// pages into the process: the kernel maps the 64 KiB around each faulting
// page, so random lookups in a mapped table of tens of MB left all of it
// resident within a slot. The fences cost one key per block (heads at a
// million accounts: ~1 MB).
const tableBlockBytes = 2048

func (t *sortedTable[K, V]) get(k K) (V, bool) {
	if c, ok := t.recent[k]; ok {
		return c.v, !c.deleted
	}
	var zero V
	if t.n == 0 {
		return zero, false
	}
	var kb [64]byte
	key := kb[:t.codec.keySize]
	t.codec.putKey(key, k)
	ks, e := t.codec.keySize, t.codec.entry()
	// The last block whose first key is at most key.
	nb := len(t.fences) / ks
	b := sort.Search(nb, func(i int) bool { return bytes.Compare(t.fences[i*ks:(i+1)*ks], key) > 0 }) - 1
	if b < 0 {
		return zero, false
	}
	lo := b * t.blockEntries
	cnt := min(t.blockEntries, t.n-lo)
	buf := t.bufs.Get().(*[tableBlockBytes]byte)
	defer t.bufs.Put(buf)
	var blk []byte
	if cnt*e <= len(buf) {
		blk = buf[:cnt*e]
	} else {
		blk = make([]byte, cnt*e) // entries wider than a block
	}
	if _, err := t.file.ReadAt(blk, t.dataOff+int64(lo*e)); err != nil {
		// The file is the table's own, complete at open; a failing read
		// falls back to the mapping, which faults the same way an
		// unreadable page always did.
		blk = t.data[lo*e : (lo+cnt)*e]
	}
	i := sort.Search(cnt, func(i int) bool { return bytes.Compare(blk[i*e:i*e+ks], key) >= 0 })
	if i < cnt && bytes.Equal(blk[i*e:i*e+ks], key) {
		return t.codec.getVal(blk[i*e+ks : (i+1)*e]), true
	}
	return zero, false
}

func (t *sortedTable[K, V]) set(k K, v V) { t.recent[k] = tableChange[V]{v: v} }

func (t *sortedTable[K, V]) del(k K) { t.recent[k] = tableChange[V]{deleted: true} }

// changes is how many keys changed since the file was written.
func (t *sortedTable[K, V]) changes() int { return len(t.recent) }

// entries is the number of entries in the file.
func (t *sortedTable[K, V]) entries() int { return t.n }

// each calls fn for every key and value until fn returns false: the
// file's (those not changed since) in key order, then the changed ones.
func (t *sortedTable[K, V]) each(fn func(K, V) bool) {
	ks := t.codec.keySize
	for i := 0; i < t.n; i++ {
		e := t.at(i)
		k := t.codec.getKey(e[:ks])
		if _, ok := t.recent[k]; ok {
			continue
		}
		if !fn(k, t.codec.getVal(e[ks:])) {
			return
		}
	}
	for k, c := range t.recent {
		if !c.deleted && !fn(k, c.v) {
			return
		}
	}
}

// write writes the merged table with meta to the file and returns it
// mapped; t is left as it was (readers may go on using it meanwhile) until
// replace adopts the new one. Entries for which keep returns false are
// left out (nil keeps every entry).
func (t *sortedTable[K, V]) write(meta []byte, sync bool, keep func(K, V) bool) (*sortedTable[K, V], error) {
	c := t.codec
	ks, e := c.keySize, c.entry()
	type change struct {
		key []byte
		ch  tableChange[V]
	}
	changed := make([]change, 0, len(t.recent))
	keys := make([]byte, len(t.recent)*ks)
	for k, ch := range t.recent {
		kb := keys[len(changed)*ks : (len(changed)+1)*ks]
		c.putKey(kb, k)
		changed = append(changed, change{kb, ch})
	}
	slices.SortFunc(changed, func(a, b change) int { return bytes.Compare(a.key, b.key) })
	n := 0
	err := writeFileAtomic(t.path, sync, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		// The count goes in the header before the entries are known: write
		// a placeholder and patch it through the file afterwards.
		var hdr [tableHeader]byte
		bw.Write(hdr[:])
		bw.Write(meta)
		buf := make([]byte, e)
		i, j := 0, 0
		for i < t.n || j < len(changed) {
			var fileKey []byte
			if i < t.n {
				fileKey = t.at(i)[:ks]
			}
			switch {
			case j == len(changed) || (fileKey != nil && bytes.Compare(fileKey, changed[j].key) < 0):
				if ent := t.at(i); keep == nil || keep(c.getKey(ent[:ks]), c.getVal(ent[ks:])) {
					bw.Write(ent)
					n++
				}
				i++
			default:
				if fileKey != nil && bytes.Equal(fileKey, changed[j].key) {
					i++
				}
				if ch := changed[j].ch; !ch.deleted && (keep == nil || keep(c.getKey(changed[j].key), ch.v)) {
					copy(buf, changed[j].key)
					c.putVal(buf[ks:], changed[j].ch.v)
					bw.Write(buf)
					n++
				}
				j++
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		f, ok := w.(*os.File)
		if !ok {
			return errors.New("table: not a file")
		}
		copy(hdr[:16], c.magic)
		binary.LittleEndian.PutUint64(hdr[16:], uint64(n))
		binary.LittleEndian.PutUint32(hdr[24:], uint32(len(meta)))
		binary.LittleEndian.PutUint32(hdr[28:], crc32.Update(crc32.Checksum(hdr[:28], castagnoli), castagnoli, meta))
		_, err := f.WriteAt(hdr[:], 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", t.path, err)
	}
	return openTable(t.path, c)
}

// replace makes t the table write returned.
func (t *sortedTable[K, V]) replace(nt *sortedTable[K, V]) error {
	err := t.unmap()
	*t = *nt
	if err != nil {
		return fmt.Errorf("unmap %s: %w", t.path, err)
	}
	return nil
}

// dropPages releases the file's pages lookups touched from the
// process's resident set (dropMapped). Callers hold the lock that guards
// replace.
func (t *sortedTable[K, V]) dropPages() { dropMapped(t.mapped) }

func (t *sortedTable[K, V]) close() error {
	err := t.unmap()
	t.data, t.mapped, t.n, t.unmap = nil, nil, 0, func() error { return nil }
	t.file, t.fences = nil, nil
	return err
}
