package ledger

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// A values file (path.vals) holds every value of a table's base, in the
// base's order, as of a later position than the base: it replaces the
// values of the base's entries, whose keys it leaves where they are. A
// table with a prefix index whose changes since its base are mostly
// values of its keys changed in place is snapshotted this way, with the
// few other changes (keys created, deleted or sharing a base key's
// prefix) in a run beside it, instead of being rewritten whole. At a
// million accounts the key directory's base is 44 MB, of which 12 MB are
// locations: a transfer moves its accounts' records, not their
// addresses, and the addresses were written again with every snapshot
// that bounds the replay after a kill (~29 B per transfer at a million
// accounts, of which the locations were a quarter).
//
// File: tableValsMagic (16) | entries u64 | meta length u32 | CRC-32C of
// the header and meta u32 | meta | values | CRC-32C of the values u32. The
// meta starts with the checksum of the base it was written for (u32 LE),
// then the owner's meta, as a run's. Runs written on top of it name its
// header checksum instead of the base's: a run from before it (a kill
// after its rename, before the runs' removal) names another and is
// dropped. The values are checksummed, unlike a base's entries: they are
// read whole at open, into the prefix index, and a damaged file cannot be
// passed over (the owner may have deleted what a replay from the base's
// position would need), so it fails the open.
const tableValsMagic = "ferry-tblval-1\n\x00"

// valuesFile is a base's values file, mapped.
type valuesFile struct {
	path   string
	data   []byte // the values, valSize bytes per base entry
	mapped []byte
	unmap  func() error
	sum    uint32 // the header checksum
	meta   []byte // the owner's meta (after the base checksum)
	size   int64
}

func (v *valuesFile) close() error {
	if v == nil {
		return nil
	}
	err := v.unmap()
	v.data, v.mapped, v.unmap = nil, nil, func() error { return nil }
	return err
}

// valsPath is the values file of the table at path.
func valsPath(path string) string { return path + ".vals" }

// openValuesFile maps the values file of base (vs bytes per value), or
// returns nil when there is none. One written for another base (left by
// a kill between a rewrite's rename and its removal) is removed.
func openValuesFile(path string, base *tableFile, vs int) (*valuesFile, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
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
	h, err := readTableHeader(f, path, []string{tableValsMagic})
	if err != nil {
		return nil, err
	}
	n, metaLen, meta, crc := h.n, int64(len(h.meta)), h.meta, h.sum
	if metaLen < 4 || h.size < tableHeader+metaLen+4 || uint64(h.size-tableHeader-metaLen-4) != n*uint64(vs) {
		return nil, fmt.Errorf("%w: %s length", errCorrupt, path)
	}
	if binary.LittleEndian.Uint32(meta) != base.sum {
		// Written for the base a rewrite replaced since.
		f.Close()
		keep = true
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove %s: %w", path, err)
		}
		return nil, nil
	}
	if n != uint64(base.n) {
		return nil, fmt.Errorf("%w: %s holds %d values for a base of %d entries", errCorrupt, path, n, base.n)
	}
	m, unmap, err := mapFile(f, int(h.size))
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	end := tableHeader + metaLen + int64(n)*int64(vs)
	data := m[tableHeader+metaLen : end]
	if crc32.Checksum(data, castagnoli) != binary.LittleEndian.Uint32(m[end:]) {
		unmap()
		return nil, fmt.Errorf("%w: %s values checksum", errCorrupt, path)
	}
	keep = true
	return &valuesFile{path: path, data: data, mapped: m, sum: crc, meta: meta[4:], size: h.size,
		unmap: func() error { return errors.Join(unmap(), f.Close()) }}, nil
}

// ident is the checksum runs on top of t's files name: its values
// file's, else its base's.
func (t *sortedTable[K, V]) ident() uint32 {
	if v := t.base.valFile; v != nil {
		return v.sum
	}
	return t.base.sum
}

// baseMeta is the meta of t's values file, else of its base: where a
// replay starts when the runs are gone.
func (t *sortedTable[K, V]) baseMeta() []byte {
	if v := t.base.valFile; v != nil {
		return v.meta
	}
	return t.base.meta
}

// valuesOnly reports whether t's next snapshot is better a values file
// than a whole base: its base has a prefix index, and few of the changes
// since it are not values of its keys changed in place (keys created or
// deleted, keys sharing a base key's prefix, and the base keys whose
// entries these made stale), which a run beside the values file holds
// (at most half as many as the base has entries: the values file and
// that run then cost less than the whole base). The owner holds its lock.
func (t *sortedTable[K, V]) valuesOnly() bool {
	f := t.base
	return t.codec.prefixIndex && f.prefixes != nil && f.n > 0 && t.frozen == nil &&
		2*(len(t.recent)+t.fresh) <= f.n
}

// valuesCheaper reports whether a values file (valuesOnly) and the run
// beside it are smaller than a run of the changes only memory holds: a
// run costs the key directory 45 B per entry changed in place, a values
// file 12 B per entry of the base, so past about a quarter of the base
// changed the values file is smaller (and a reopen copies it into the
// index instead of applying every run entry).
func (t *sortedTable[K, V]) valuesCheaper() bool {
	e := t.codec.entry() + 1
	return t.valuesOnly() && t.base.nDirty*e > t.base.n*t.codec.valSize+(len(t.recent)+t.fresh)*e
}

// freezeValues is freeze for a values file: the changes in memory are
// set aside, and the base's values and stale marks as they are now are
// copied for writeValuesFrozen (12 MB at a million accounts: what the
// dirty entries' copies freeze takes for a whole base come to there; the
// runs' values are in the index, not in the base's file). The owner
// holds its write lock.
func (t *sortedTable[K, V]) freezeValues() {
	t.frozen, t.recent = t.recent, map[K]tableChange[V]{}
	t.freshFrozen = t.fresh
	t.frozenDirty, t.frozenVals = nil, slices.Clone(t.base.vals)
	t.frozenStale = slices.Clone(t.base.stale)
}

// valuesRun returns the run entries (key | value | flags, sorted) that a
// values file as of freezeValues leaves to a run beside it: the newest
// change of every key the frozen changes and the runs hold, except the
// keys of current index entries, whose values the file has. A key with a
// current entry of its prefix is that entry's key: a change of another
// key marks it stale (change, indexRuns).
func (t *sortedTable[K, V]) valuesRun() []byte {
	f := t.base
	ks, e := t.codec.keySize, t.codec.entry()+1
	placed := func(key []byte) bool {
		i := f.indexAt(key)
		return i >= 0 && t.frozenStale[i/64]&(1<<(i%64)) == 0
	}
	keep := map[K]tableChange[V]{}
	for _, r := range t.runs { // oldest first: newer runs overwrite
		for j := 0; j < r.n; j++ {
			ent := r.data[j*r.entry : (j+1)*r.entry]
			if placed(ent[:ks]) {
				continue
			}
			keep[t.codec.getKey(ent[:ks])] = tableChange[V]{v: t.codec.getVal(ent[ks : e-1]), deleted: ent[e-1]&1 != 0}
		}
		dropMapped(r.mapped)
	}
	var kb [64]byte
	key := kb[:ks]
	for k, c := range t.frozen {
		t.codec.putKey(key, k)
		if !placed(key) {
			keep[k] = tableChange[V]{v: c.v, deleted: c.deleted}
		}
	}
	return t.sortedChanges(keep)
}

// writeValuesFrozen writes the base's values as of freezeValues with meta
// as t's values file, and the changes valuesRun leaves as the first run
// on it, replacing the runs, and returns both mapped (the run nil if
// there are no such changes). It reads nothing the owner changes
// meanwhile. Both files are complete before the old runs go; the new run
// takes its name before the values file does, so that a kill in between
// leaves a run that names a values file not there, which the open drops
// with the old runs gone: the replay then starts at the old values
// file's or base's position, and what the runs held is in the log since.
func (t *sortedTable[K, V]) writeValuesFrozen(meta []byte, sync bool) (*valuesFile, *tableFile, error) {
	f := t.base
	path := valsPath(t.path)
	hdrMeta := onTopMeta(f.sum, meta)
	hdr := encodeTableHeader(tableValsMagic, f.n, hdrMeta)
	vals := t.frozenVals
	var tmps []string
	defer func() {
		for _, p := range tmps {
			os.Remove(p)
		}
	}()
	valsTmp, err := writeFileSynced(path, sync, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		bw.Write(hdr[:])
		bw.Write(hdrMeta)
		bw.Write(vals)
		var tr [4]byte
		binary.LittleEndian.PutUint32(tr[:], crc32.Checksum(vals, castagnoli))
		bw.Write(tr[:])
		return bw.Flush()
	})
	if err != nil {
		return nil, nil, fmt.Errorf("write %s: %w", path, err)
	}
	tmps = append(tmps, valsTmp)
	ents := t.valuesRun()
	runTmp := ""
	if len(ents) > 0 {
		runMeta := onTopMeta(binary.LittleEndian.Uint32(hdr[28:]), meta)
		if runTmp, err = writeFileSynced(t.runPath(1), sync, t.runWriter(ents, false, runMeta)); err != nil {
			return nil, nil, fmt.Errorf("write %s: %w", t.runPath(1), err)
		}
		tmps = append(tmps, runTmp)
	}
	if err := t.removeRuns(); err != nil {
		return nil, nil, fmt.Errorf("write %s: %w", path, err)
	}
	if runTmp != "" {
		if err := os.Rename(runTmp, t.runPath(1)); err != nil {
			return nil, nil, fmt.Errorf("write %s: %w", t.runPath(1), err)
		}
	}
	if err := os.Rename(valsTmp, path); err != nil {
		return nil, nil, fmt.Errorf("write %s: %w", path, err)
	}
	tmps = nil
	if sync {
		if err := syncDir(filepath.Dir(path)); err != nil {
			return nil, nil, err
		}
	}
	vf, err := openValuesFile(path, f, t.codec.valSize)
	if err == nil && vf == nil {
		err = fmt.Errorf("%w: %s vanished", errCorrupt, path)
	}
	if err != nil {
		return nil, nil, err
	}
	dropMapped(vf.mapped)
	t.written.Add(vf.size)
	var run *tableFile
	if runTmp != "" {
		if run, err = openTableFile(t.runPath(1), []string{tableRunMagic}, t.codec.keySize, t.codec.entry()+1, runTrailer, false); err != nil {
			vf.close()
			return nil, nil, err
		}
		dropMapped(run.mapped)
		t.written.Add(run.size)
	}
	return vf, run, nil
}

// adoptValues makes vf and run, which writeValuesFrozen returned, t's
// values file and only run: the runs they replaced go, and the index
// entries changed in place since freezeValues (which the changes in
// memory hold meanwhile) are the dirty ones. The keys the base does not
// hold are still not in it: fresh stays. The owner holds its write lock.
func (t *sortedTable[K, V]) adoptValues(vf *valuesFile, run *tableFile) error {
	f := t.base
	err := f.valFile.close()
	for _, r := range t.runs {
		err = errors.Join(err, r.close())
	}
	f.valFile = vf
	t.runs, t.runEntries, t.meta = nil, 0, vf.meta
	if run != nil {
		t.runs, t.runEntries, t.meta = []*tableFile{run}, run.n, run.meta[4:]
	}
	t.frozen, t.frozenDirty, t.frozenVals, t.frozenStale = nil, nil, nil, nil
	f.clearDirty()
	var kb [64]byte
	key := kb[:t.codec.keySize]
	for k, c := range t.recent {
		if !c.inBase || c.deleted {
			continue
		}
		t.codec.putKey(key, k)
		// An entry changed in place since freeze holds its newest value
		// (setInPlace); one marked stale since moved it to the changes.
		if i := f.indexAt(key); i >= 0 && !f.isStale(i) {
			f.markDirty(i)
			delete(t.recent, k)
		}
	}
	if err != nil {
		return fmt.Errorf("unmap %s: %w", t.path, err)
	}
	return nil
}

// dropPages releases the pages of the base's mapping and its values
// file's that reads touched (dropMapped).
func (f *tableFile) dropPages() {
	dropMapped(f.mapped)
	if v := f.valFile; v != nil {
		dropMapped(v.mapped)
	}
}

// fileVal is base entry i's value as the files hold it: the values
// file's, else the base's own.
func (f *tableFile) fileVal(i int) []byte {
	vs := f.entry - f.keySize
	if f.valFile != nil {
		return f.valFile.data[i*vs : (i+1)*vs]
	}
	return f.data[i*f.entry+f.keySize : (i+1)*f.entry]
}
