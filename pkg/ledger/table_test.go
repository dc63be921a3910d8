package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
)

var testTableCodec = &tableCodec[uint64, uint64]{
	magic: "ferry-test-tbl\n\x00", keySize: 8, valSize: 8,
	putKey: func(b []byte, k uint64) { binary.BigEndian.PutUint64(b, k) },
	getKey: func(b []byte) uint64 { return binary.BigEndian.Uint64(b) },
	putVal: func(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) },
	getVal: func(b []byte) uint64 { return binary.LittleEndian.Uint64(b) },
}

// TestSortedTable applies random sets and deletions to a table and a map,
// writing and reopening the table now and then, and compares lookups and
// iteration.
func TestSortedTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t")
	tbl, err := openTable(path, testTableCodec)
	if err != nil {
		t.Fatal(err)
	}
	model := map[uint64]uint64{}
	rng := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 30; round++ {
		changeRandomly(tbl, model, rng, 200, 500, 4)
		switch round % 3 {
		case 1:
			nt, err := tbl.write([]byte{byte(round)}, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := tbl.replace(nt); err != nil {
				t.Fatal(err)
			}
		case 2:
			nt, err := tbl.write([]byte{byte(round)}, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			nt.close()
			tbl.close()
			if tbl, err = openTable(path, testTableCodec); err != nil {
				t.Fatal(err)
			}
			if tbl.changes() != 0 || tbl.entries() != len(model) || string(tbl.meta) != string([]byte{byte(round)}) {
				t.Fatalf("round %d: reopened with %d changes, %d entries (model %d), meta %v", round, tbl.changes(), tbl.entries(), len(model), tbl.meta)
			}
		}
		for k := uint64(0); k < 500; k++ {
			v, ok := tbl.get(k)
			if want, has := model[k]; ok != has || v != want {
				t.Fatalf("round %d: get(%d) = %d, %v; want %d, %v", round, k, v, ok, want, has)
			}
		}
		seen := 0
		tbl.each(func(k, v uint64) bool {
			if model[k] != v {
				t.Fatalf("each: %d = %d, want %d", k, v, model[k])
			}
			seen++
			return true
		})
		if seen != len(model) {
			t.Fatalf("each visited %d, model has %d", seen, len(model))
		}
	}
	tbl.close()
	b, _ := os.ReadFile(path)
	b[20] ^= 1 // the entry count
	os.WriteFile(path, b, 0o600)
	if _, err := openTable(path, testTableCodec); !errors.Is(err, errCorrupt) {
		t.Fatalf("damaged header: %v", err)
	}
}

// TestSortedTableRuns drives a table whose changes go to runs (runAt 40)
// and whose base is rewritten now and then, against a map: lookups, the
// merged iteration (in key order) and reopening after every file written
// must all agree, and the changes in memory never exceed runAt.
func TestSortedTableRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t")
	open := func() *sortedTable[uint64, uint64] {
		tbl, err := openTable(path, testTableCodec)
		if err != nil {
			t.Fatal(err)
		}
		tbl.runAt = 40
		return tbl
	}
	tbl := open()
	model := map[uint64]uint64{}
	rng := rand.New(rand.NewPCG(7, 8))
	check := func(step int) {
		t.Helper()
		checkLookups(t, tbl, model, 700, fmt.Sprint("step ", step))
		seen, last := 0, -1
		tbl.each(func(k, v uint64) bool {
			if model[k] != v || int(k) <= last {
				t.Fatalf("step %d: each: %d = %d (after %d), want %d", step, k, v, last, model[k])
			}
			last = int(k)
			seen++
			return true
		})
		if seen != len(model) {
			t.Fatalf("step %d: each visited %d, model has %d", step, seen, len(model))
		}
	}
	runsSeen := 0
	for step := 0; step < 3000; step++ {
		changeRandomly(tbl, model, rng, 1, 700, 5)
		meta := binary.LittleEndian.AppendUint64(nil, uint64(step))
		switch {
		case tbl.changes() >= max(tbl.entries()/2, 150):
			nt, err := tbl.write(meta, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := tbl.replace(nt); err != nil {
				t.Fatal(err)
			}
			if m, _ := filepath.Glob(path + ".run*"); len(m) != 0 {
				t.Fatalf("step %d: runs left after a rewrite: %v", step, m)
			}
		case tbl.runDue():
			run, err := tbl.writeRun(meta, false)
			if err != nil {
				t.Fatal(err)
			}
			tbl.addRun(run)
			runsSeen = max(runsSeen, len(tbl.runs))
		default:
			if len(tbl.recent) > tbl.runAt {
				t.Fatalf("step %d: %d changes in memory", step, len(tbl.recent))
			}
			continue
		}
		if string(tbl.meta) != string(meta) {
			t.Fatalf("step %d: meta %x, want %x", step, tbl.meta, meta)
		}
		check(step)
		if rng.IntN(3) == 0 {
			tbl.close()
			tbl = open()
			if string(tbl.meta) != string(meta) || len(tbl.recent) != 0 {
				t.Fatalf("step %d: reopened with meta %x (want %x), %d changes in memory", step, tbl.meta, meta, len(tbl.recent))
			}
			check(step)
		}
	}
	if runsSeen < 2 {
		t.Fatalf("at most %d runs at once: the test did not exercise stacked runs", runsSeen)
	}
	tbl.close()
}

// TestSortedTableRunChain checks what openTable keeps of runs a kill or
// damage left: only an unbroken chain written on the current base, and
// nothing of temporary files.
func TestSortedTableRunChain(t *testing.T) {
	type state struct {
		model map[uint64]uint64
		meta  string
	}
	// build writes a base (keys 0..99 = 1) and three runs, each setting
	// ten keys to its number, and returns the state after each file.
	build := func(t *testing.T, path string) []state {
		tbl, err := openTable(path, testTableCodec)
		if err != nil {
			t.Fatal(err)
		}
		model := map[uint64]uint64{}
		for k := uint64(0); k < 100; k++ {
			tbl.set(k, 1)
			model[k] = 1
		}
		nt, err := tbl.write([]byte("base"), false, nil)
		if err != nil {
			t.Fatal(err)
		}
		tbl.replace(nt)
		states := []state{{maps.Clone(model), "base"}}
		for r := uint64(1); r <= 3; r++ {
			for k := r * 10; k < r*10+10; k++ {
				tbl.set(k, r+1)
				model[k] = r + 1
			}
			tbl.del(90 + r)
			delete(model, 90+r)
			run, err := tbl.writeRun([]byte{'r', byte('0' + r)}, false)
			if err != nil {
				t.Fatal(err)
			}
			tbl.addRun(run)
			states = append(states, state{maps.Clone(model), string([]byte{'r', byte('0' + r)})})
		}
		tbl.close()
		return states
	}
	verify := func(t *testing.T, path string, want state) {
		t.Helper()
		tbl, err := openTable(path, testTableCodec)
		if err != nil {
			t.Fatal(err)
		}
		defer tbl.close()
		if string(tbl.meta) != want.meta {
			t.Fatalf("meta %q, want %q", tbl.meta, want.meta)
		}
		for k := uint64(0); k < 120; k++ {
			v, ok := tbl.get(k)
			if w, has := want.model[k]; ok != has || v != w {
				t.Fatalf("get(%d) = %d, %v; want %d, %v", k, v, ok, w, has)
			}
		}
	}
	cases := []struct {
		name string
		harm func(t *testing.T, path string)
		keep int // the state the table must open as
		left []string
	}{
		{"intact", func(*testing.T, string) {}, 3, []string{".run000001", ".run000002", ".run000003"}},
		{"second run missing", func(t *testing.T, p string) { os.Remove(p + ".run000002") }, 1, []string{".run000001"}},
		{"second run cut short", func(t *testing.T, p string) {
			fi, _ := os.Stat(p + ".run000002")
			os.Truncate(p+".run000002", fi.Size()-3)
		}, 1, []string{".run000001"}},
		{"first run garbage", func(t *testing.T, p string) { os.WriteFile(p+".run000001", randomBytes(300), 0o600) }, 0, nil},
		{"runs of the first format (no stored filter)", func(t *testing.T, p string) {
			for i := 1; i <= 3; i++ {
				toFirstRunFormat(t, fmt.Sprintf("%s.run%06d", p, i), testTableCodec.entry()+1)
			}
		}, 3, []string{".run000001", ".run000002", ".run000003"}},
		{"temporary run file", func(t *testing.T, p string) { os.WriteFile(p+".run000004.tmp77", randomBytes(50), 0o600) }, 3, []string{".run000001", ".run000002", ".run000003"}},
		{"runs of an older base", func(t *testing.T, p string) {
			// A rewrite killed after renaming its base but before the
			// runs were removed cannot happen (they go first); runs of
			// another base are dropped all the same.
			tbl, err := openTable(p, testTableCodec)
			if err != nil {
				t.Fatal(err)
			}
			var saved [][]byte
			for i := 1; i <= 3; i++ {
				b, _ := os.ReadFile(fmt.Sprintf("%s.run%06d", p, i))
				saved = append(saved, b)
			}
			tbl.set(500, 5)
			nt, err := tbl.write([]byte("base2"), false, nil)
			if err != nil {
				t.Fatal(err)
			}
			nt.close()
			tbl.close()
			for i, b := range saved {
				os.WriteFile(fmt.Sprintf("%s.run%06d", p, i+1), b, 0o600)
			}
		}, -1, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t")
			states := build(t, path)
			tc.harm(t, path)
			want := state{}
			if tc.keep >= 0 {
				want = states[tc.keep]
			} else {
				want = state{maps.Clone(states[3].model), "base2"}
				want.model[500] = 5
			}
			verify(t, path, want)
			left, _ := filepath.Glob(path + ".run*")
			var got []string
			for _, l := range left {
				got = append(got, strings.TrimPrefix(l, path))
			}
			if !slices.Equal(got, tc.left) {
				t.Fatalf("run files left %v, want %v", got, tc.left)
			}
		})
	}
}

// FuzzOpenTable opens arbitrary bytes as a table's base and as its first
// run: opening either refuses them as damaged or maps them, and lookups,
// iteration and a rewrite of what was accepted never panic.
func FuzzOpenTable(f *testing.F) {
	dir := f.TempDir()
	good := filepath.Join(dir, "seed")
	tbl, err := openTable(good, testTableCodec)
	if err != nil {
		f.Fatal(err)
	}
	for k := uint64(0); k < 300; k++ {
		tbl.set(k*7, k)
	}
	nt, err := tbl.write([]byte("m"), false, nil)
	if err != nil {
		f.Fatal(err)
	}
	tbl.replace(nt)
	tbl.set(3, 3)
	tbl.del(14)
	run, err := tbl.writeRun([]byte("r"), false)
	if err != nil {
		f.Fatal(err)
	}
	tbl.addRun(run)
	base, _ := os.ReadFile(good)
	runBytes, _ := os.ReadFile(good + ".run000001")
	tbl.close()
	f.Add(base, runBytes)
	f.Add(base[:40], runBytes[:len(runBytes)-1])
	f.Add([]byte{}, []byte("ferry-tblrun-1\n\x00"))
	f.Fuzz(func(t *testing.T, baseBytes, runBytes []byte) {
		path := filepath.Join(t.TempDir(), "t")
		if len(baseBytes) > 0 {
			os.WriteFile(path, baseBytes, 0o600)
		}
		os.WriteFile(path+".run000001", runBytes, 0o600)
		tbl, err := openTable(path, testTableCodec)
		if err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("open: %v (not errCorrupt)", err)
			}
			return
		}
		defer tbl.close()
		for k := uint64(0); k < 50; k++ {
			tbl.get(k * 7)
		}
		// The same files with the base kept in memory: whatever the bytes,
		// lookups answer without panicking.
		indexed := *testTableCodec
		indexed.prefixIndex = true
		itbl, err := openTable(path, &indexed)
		if err != nil {
			t.Fatalf("open with a prefix index: %v (opened without)", err)
		}
		for k := uint64(0); k < 50; k++ {
			itbl.lookup(k * 7)
		}
		itbl.close()
		tbl.each(func(uint64, uint64) bool { return true })
		nt, err := tbl.write([]byte("x"), false, nil)
		if err != nil {
			t.Fatal(err)
		}
		tbl.replace(nt)
	})
}

// BenchmarkOpenTableRuns times opening the key directory with eight runs
// of 65 536 changes on a base of a million entries, the state a restart
// at a million accounts finds: with the runs' Bloom filters stored in
// them, and with runs of the first format, whose filters are built from
// their keys at open.
//
//	go test -run '^$' -bench OpenTableRuns ./pkg/ledger/
func BenchmarkOpenTableRuns(b *testing.B) {
	path := filepath.Join(b.TempDir(), "keydir")
	tbl, err := openTable(path, keydirCodec)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() (k solana.PublicKey) {
		for i := 0; i < 32; i += 8 {
			binary.LittleEndian.PutUint64(k[i:], rng.Uint64())
		}
		return k
	}
	for i := 0; i < 1_000_000; i++ {
		tbl.set(key(), accLoc{1, uint32(i), 200})
	}
	nt, err := tbl.write(nil, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	tbl.replace(nt)
	for r := 0; r < 8; r++ {
		for i := 0; i < tableRunChanges; i++ {
			tbl.set(key(), accLoc{2, uint32(i), 200})
		}
		run, err := tbl.writeRun(nil, false)
		if err != nil {
			b.Fatal(err)
		}
		tbl.addRun(run)
	}
	tbl.close()
	open := func(b *testing.B) {
		for b.Loop() {
			t, err := openTable(path, keydirCodec)
			if err != nil || len(t.runs) != 8 {
				b.Fatalf("%d runs, %v", len(t.runs), err)
			}
			t.close()
		}
	}
	b.Run("stored-filters", open)
	for i := 1; i <= 8; i++ {
		toFirstRunFormat(b, fmt.Sprintf("%s.run%06d", path, i), keydirCodec.entry()+1)
	}
	b.Run("first-format", open)
}

// toFirstRunFormat rewrites the run at name (entries of entry bytes) as
// the first run format wrote it: its magic, no stored Bloom filter.
func toFirstRunFormat(t testing.TB, name string, entry int) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(b[16:])
	metaLen := int(binary.LittleEndian.Uint32(b[24:]))
	meta := b[tableHeader : tableHeader+metaLen]
	ents := b[tableHeader+metaLen : tableHeader+metaLen+int(n)*entry]
	hdr := encodeTableHeader(tableRunMagicV1, int(n), meta)
	if err := os.WriteFile(name, slices.Concat(hdr[:], meta, ents), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSortedTableRewriteBeside checks a rewrite that runs beside the
// table's owner (freeze, writeFrozen, adopt): while it merges, lookups
// see the frozen changes under the ones made since, which the owner goes
// on making concurrently; after adopt the table answers as the model
// does and keeps only the changes made since the freeze in memory; the
// file written holds the state as of the freeze.
func TestSortedTableRewriteBeside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t")
	tbl, err := openTable(path, testTableCodec)
	if err != nil {
		t.Fatal(err)
	}
	tbl.runAt = 64
	model := map[uint64]uint64{}
	rng := rand.New(rand.NewPCG(11, 12))
	change := func(n int) { changeRandomly(tbl, model, rng, n, 600, 5) }
	check := func(what string) {
		t.Helper()
		checkLookups(t, tbl, model, 600, what)
	}
	for round := 0; round < 5; round++ {
		// A base, runs on it, changes in memory.
		change(300)
		for i := 0; i < 3; i++ {
			run, err := tbl.writeRun([]byte{byte(round), byte(i)}, false)
			if err != nil {
				t.Fatal(err)
			}
			tbl.addRun(run)
			change(100)
		}
		frozenModel := maps.Clone(model)
		tbl.freeze()
		check("just frozen")
		meta := []byte{byte(round), 9}
		type result struct {
			nt  *sortedTable[uint64, uint64]
			err error
		}
		done := make(chan result)
		go func() {
			nt, err := tbl.writeFrozen(meta, false, nil)
			done <- result{nt, err}
		}()
		// The owner goes on changing the table (not its runs) meanwhile.
		change(200)
		check("while merging")
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		since := len(tbl.recent)
		if err := tbl.adopt(r.nt); err != nil {
			t.Fatal(err)
		}
		check("adopted")
		if tbl.frozen != nil || len(tbl.recent) != since || tbl.runCount() != 0 || tbl.entries() != len(frozenModel) || string(tbl.meta) != string(meta) {
			t.Fatalf("round %d: after adopt %d changes in memory (want %d), %d runs, %d entries (want %d), meta %v",
				round, len(tbl.recent), since, tbl.runCount(), tbl.entries(), len(frozenModel), tbl.meta)
		}
		// The file alone is the state as of the freeze.
		onDisk, err := openTable(path, testTableCodec)
		if err != nil {
			t.Fatal(err)
		}
		got := map[uint64]uint64{}
		onDisk.each(func(k, v uint64) bool { got[k] = v; return true })
		onDisk.close()
		if !maps.Equal(got, frozenModel) {
			t.Fatalf("round %d: the new base holds %d entries, the model at the freeze %d", round, len(got), len(frozenModel))
		}
	}
	tbl.close()
}

// changeRandomly applies n random changes to tbl and model alike: sets,
// and one in delOneIn a deletion, of keys below keys.
func changeRandomly(tbl *sortedTable[uint64, uint64], model map[uint64]uint64, rng *rand.Rand, n int, keys uint64, delOneIn int) {
	for range n {
		k := rng.Uint64N(keys)
		if rng.IntN(delOneIn) == 0 {
			tbl.del(k)
			delete(model, k)
		} else {
			v := rng.Uint64()
			tbl.set(k, v)
			model[k] = v
		}
	}
}

// checkLookups checks tbl.get against model for every key below keys.
func checkLookups(t *testing.T, tbl *sortedTable[uint64, uint64], model map[uint64]uint64, keys uint64, what string) {
	t.Helper()
	for k := uint64(0); k < keys; k++ {
		v, ok := tbl.get(k)
		if want, has := model[k]; ok != has || v != want {
			t.Fatalf("%s: get(%d) = %d, %v; want %d, %v", what, k, v, ok, want, has)
		}
	}
}

// write rewrites the table in one step over the changes in memory; the
// store itself rewrites beside its commits (freeze, writeFrozen, adopt).
func (t *sortedTable[K, V]) write(meta []byte, sync bool, keep func(K, V) bool) (*sortedTable[K, V], error) {
	return t.writeWith(t.recent, t.dirtyVals(), meta, sync, keep)
}

// prefixTableCodec has 16-byte keys, so that keys can share the 8 bytes
// its prefix index keeps.
var prefixTableCodec = &tableCodec[[2]uint64, uint64]{
	magic: "ferry-test-pfx\n\x00", keySize: 16, valSize: 8, prefixIndex: true,
	putKey: func(b []byte, k [2]uint64) {
		binary.BigEndian.PutUint64(b, k[0])
		binary.BigEndian.PutUint64(b[8:], k[1])
	},
	getKey: func(b []byte) [2]uint64 { return [2]uint64{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])} },
	putVal: func(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) },
	getVal: func(b []byte) uint64 { return binary.LittleEndian.Uint64(b) },
}

// TestSortedTableLookup checks lookup against get and a model on a base
// with a prefix index, changes over it written as runs, a rewrite that
// keys change during (freeze, writeFrozen, adopt), and a reopen, with
// keys that share their first 8 bytes. An answer not marked exact must
// be the newest value of the one base key with the probe's prefix, which
// is the probe's own when it is that key: the index answers for base keys
// changed in runs without reading them, and keys that share a prefix, or
// whose entry a change could not be attributed to, are answered exactly
// from the files; so are keys the runs created whose prefix a base key
// has, when they change again after a reopen.
func TestSortedTableLookup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p")
	tbl, err := openTable(path, prefixTableCodec)
	if err != nil {
		t.Fatal(err)
	}
	model := map[[2]uint64]uint64{}
	rng := rand.New(rand.NewPCG(9, 10))
	// Prefixes 0..399; the second half of the key 1..3, so that up to
	// three keys share one prefix and a probe of another second half
	// shares it with keys that are there.
	key := func() [2]uint64 { return [2]uint64{uint64(rng.IntN(400)), uint64(rng.IntN(3) + 1)} }
	// change makes one random change as the key directory does: with the
	// value it replaces, looked up exactly.
	change := func() {
		k := key()
		prev, had := tbl.get(k)
		if rng.IntN(4) == 0 {
			tbl.change(k, prev, had, 0, true)
			delete(model, k)
			return
		}
		v := uint64(rng.Uint32())
		tbl.change(k, prev, had, v, false)
		model[k] = v
	}
	saveRuns := func() {
		if tbl.runDue() {
			f, err := tbl.writeRun(tbl.meta, false)
			if err != nil {
				t.Fatal(err)
			}
			tbl.addRun(f)
		}
	}
	for range 500 {
		k := key()
		tbl.set(k, uint64(rng.Uint32()))
		model[k] = tbl.recent[k].v
	}
	nt, err := tbl.write(nil, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.replace(nt); err != nil {
		t.Fatal(err)
	}
	tbl.runAt = 40
	for range 120 {
		change()
		saveRuns()
	}
	// A rewrite with changes made while it writes, then more runs.
	tbl.freeze()
	base := maps.Clone(model)
	for range 60 {
		change()
	}
	if nt, err = tbl.writeFrozen(nil, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := tbl.adopt(nt); err != nil {
		t.Fatal(err)
	}
	for range 150 {
		change()
		saveRuns()
	}
	if len(tbl.runs) == 0 || len(tbl.recent) == 0 {
		t.Fatalf("%d runs, %d changes in memory: the test needs both", len(tbl.runs), len(tbl.recent))
	}
	check := func(when string) {
		var kb [16]byte
		changed := func(k [2]uint64) bool {
			_, in := tbl.recent[k]
			prefixTableCodec.putKey(kb[:], k)
			for _, r := range tbl.runs {
				in = in || r.find(kb[:], tbl.bufs, func(int, []byte) {})
			}
			return in
		}
		fromIndex, fromIndexChanged, otherKeys, exactShared := 0, 0, 0, 0
		for p := range uint64(405) {
			var sharing [][2]uint64 // base keys with prefix p
			for bk := range base {
				if bk[0] == p {
					sharing = append(sharing, bk)
				}
			}
			for s := range uint64(5) {
				k := [2]uint64{p, s}
				want, wantOK := model[k]
				if v, ok := tbl.get(k); ok != wantOK || v != want {
					t.Fatalf("%s: get %v = %d, %v; model %d, %v", when, k, v, ok, want, wantOK)
				}
				v, ok, exact := tbl.lookup(k)
				if exact {
					if ok != wantOK || v != want {
						t.Fatalf("%s: lookup %v = %d, %v (exact); model %d, %v", when, k, v, ok, want, wantOK)
					}
					if len(sharing) > 0 && !changed(k) && !slices.Contains(sharing, k) {
						exactShared++
					}
					continue
				}
				if len(sharing) != 1 {
					t.Fatalf("%s: lookup %v: from the index, but %d base keys have its prefix", when, k, len(sharing))
				}
				b := sharing[0]
				if bv, live := model[b]; !ok || !live || v != bv {
					t.Fatalf("%s: lookup %v = %d, %v (not exact); the base key with its prefix, %v, is %d, %v", when, k, v, ok, b, bv, live)
				}
				switch {
				case b != k && changed(k):
					// A key the changes or runs hold marks the entry of a
					// base key sharing its prefix stale (change, indexRuns).
					t.Fatalf("%s: lookup %v, a key of the runs or changes, answered with %v's value", when, k, b)
				case b != k:
					otherKeys++
				case changed(k):
					fromIndexChanged++
				default:
					fromIndex++
				}
			}
		}
		if fromIndex == 0 || fromIndexChanged == 0 || otherKeys == 0 || exactShared == 0 {
			t.Fatalf("%s: %d keys from the index, %d of them changed in runs or memory, %d answered with another key's value, %d exact beside a base key with their prefix: the test needs each",
				when, fromIndex+fromIndexChanged, fromIndexChanged, otherKeys, exactShared)
		}
	}
	check("before reopening")
	// Reopened, the index is rebuilt from the base and the runs.
	f, err := tbl.writeRun(tbl.meta, false)
	if err != nil {
		t.Fatal(err)
	}
	tbl.addRun(f)
	tbl.close()
	if tbl, err = openTable(path, prefixTableCodec); err != nil {
		t.Fatal(err)
	}
	check("after reopening")
	// Changes to keys the runs created, whose prefix a base key has.
	tbl.runAt = 40
	for range 150 {
		change()
		saveRuns()
	}
	check("after changes on the reopened table")
	tbl.close()
}

// TestSortedTableAdoptKnownKeys checks that adopt gives the new base's
// index the changes made in place during the rewrite (keys of the old
// base) by their prefix alone, and compares in the new file only the
// keys it cannot attribute so: those the frozen changes created and that
// changed again. A rewrite that may leave keys out (keep) compares them
// all. Either way every key answers its newest value afterwards.
func TestSortedTableAdoptKnownKeys(t *testing.T) {
	for _, tc := range []struct {
		name         string
		keep         func([2]uint64, uint64) bool
		wantCompared int
	}{
		{"every key kept", nil, 50},
		{"keys left out", func(k [2]uint64, _ uint64) bool { return k[0] != 995 }, 249},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := openTable(filepath.Join(t.TempDir(), "p"), prefixTableCodec)
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.close()
			model := map[[2]uint64]uint64{}
			change := func(k [2]uint64, v uint64) {
				prev, had := tbl.get(k)
				tbl.change(k, prev, had, v, false)
				model[k] = v
			}
			for p := range uint64(1000) {
				tbl.set([2]uint64{p, 1}, p)
				model[[2]uint64{p, 1}] = p
			}
			nt, err := tbl.write(nil, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := tbl.replace(nt); err != nil {
				t.Fatal(err)
			}
			for p := uint64(1000); p < 1050; p++ {
				change([2]uint64{p, 1}, p) // created: the frozen changes
			}
			tbl.freeze()
			for p := range uint64(200) {
				change([2]uint64{p * 5, 1}, 7000+p) // base keys, in place
			}
			for p := uint64(1000); p < 1050; p++ {
				change([2]uint64{p, 1}, 8000+p) // frozen keys, changed again
			}
			for p := uint64(2000); p < 2030; p++ {
				change([2]uint64{p, 1}, 9000+p) // created during the rewrite
			}
			if nt, err = tbl.writeFrozen(nil, false, tc.keep); err != nil {
				t.Fatal(err)
			}
			if err := tbl.adopt(nt); err != nil {
				t.Fatal(err)
			}
			if tbl.adoptCompared != tc.wantCompared {
				t.Fatalf("adopt compared %d keys in the file, want %d", tbl.adoptCompared, tc.wantCompared)
			}
			wantLeft := 30
			if tc.keep != nil {
				wantLeft++ // 995's change: the new base has no entry for it
			}
			if len(tbl.recent) != wantLeft {
				t.Fatalf("%d changes left in memory, want %d", len(tbl.recent), wantLeft)
			}
			for k, want := range model {
				if v, ok := tbl.get(k); !ok || v != want {
					t.Fatalf("get %v = %d, %v; want %d", k, v, ok, want)
				}
				if v, ok, _ := tbl.lookup(k); !ok || v != want {
					t.Fatalf("lookup %v = %d, %v; want %d", k, v, ok, want)
				}
			}
		})
	}
}

// TestPrefixIndexDirectory checks indexAt, which searches the bucket the
// directory names, against a search of all the prefixes, for sizes from
// no directory bits to the most, with repeated prefixes and the edges of
// the key space and of buckets.
func TestPrefixIndexDirectory(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 8, 100, 5000, 1 << 20} {
		f := &tableFile{entry: 16, keySize: 8, n: n, prefixes: make([]uint64, n)}
		for i := range f.prefixes {
			switch i % 50 {
			case 0:
				f.prefixes[i] = 0
			case 1:
				f.prefixes[i] = ^uint64(0)
			case 2:
				f.prefixes[i] = uint64(rng.IntN(1<<16)) << 48 // a bucket's first
			default:
				f.prefixes[i] = rng.Uint64()
			}
		}
		slices.Sort(f.prefixes)
		f.buildDir()
		if want := min(tableDirMaxBits, max(bits.Len(uint(n))-3, 0)); int(f.dirBits) != want {
			t.Fatalf("n %d: %d directory bits, want %d", n, f.dirBits, want)
		}
		probe := func(p uint64) {
			var key [8]byte
			binary.BigEndian.PutUint64(key[:], p)
			want, found := slices.BinarySearch(f.prefixes, p)
			if !found {
				want = -1
			}
			if got := f.indexAt(key[:]); got != want {
				t.Fatalf("n %d: indexAt(%#x) = %d, want %d", n, p, got, want)
			}
		}
		for _, p := range []uint64{0, 1, ^uint64(0), ^uint64(0) - 1, 1 << 63, 1<<63 - 1} {
			probe(p)
		}
		for i := 0; i < n; i += max(n/20000, 1) {
			probe(f.prefixes[i])
			probe(f.prefixes[i] + 1)
			probe(f.prefixes[i] - 1)
		}
		for range 1000 {
			probe(rng.Uint64())
		}
	}
}

// TestSortEntries checks sortEntries against a plain sort of the
// entries by their whole keys, for keys shorter than, as long as and
// longer than the 8 bytes it sorts by first, with keys sharing those 8
// bytes and repeated keys (whose order among themselves is free).
func TestSortEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, ks := range []int{4, 8, 16, 32} {
		for _, n := range []int{0, 1, 2, 100, 5000} {
			e := ks + 5
			b := make([]byte, n*e)
			for i := range n {
				ent := b[i*e : (i+1)*e]
				for j := range ent {
					ent[j] = byte(rng.IntN(4)) // few values: shared prefixes and repeats
				}
				if rng.IntN(2) == 0 {
					for j := range ks {
						ent[j] = byte(rng.Uint32())
					}
				}
			}
			want := make([][]byte, n)
			for i := range want {
				want[i] = slices.Clone(b[i*e : (i+1)*e])
			}
			slices.SortStableFunc(want, func(x, y []byte) int { return bytes.Compare(x[:ks], y[:ks]) })
			sortEntries(b, e, ks)
			var gotEntries, wantEntries []string
			for i := range n {
				got := b[i*e : (i+1)*e]
				if !bytes.Equal(got[:ks], want[i][:ks]) {
					t.Fatalf("key size %d, %d entries: entry %d has key %x, want %x", ks, n, i, got[:ks], want[i][:ks])
				}
				gotEntries, wantEntries = append(gotEntries, string(got)), append(wantEntries, string(want[i]))
			}
			slices.Sort(gotEntries)
			slices.Sort(wantEntries)
			if !slices.Equal(gotEntries, wantEntries) {
				t.Fatalf("key size %d, %d entries: the sorted entries are not the entries given", ks, n)
			}
		}
	}
}

// BenchmarkSortEntries sorts a key-directory run: 65 536 entries of
// 32-byte random keys and 13 bytes of value and flags.
func BenchmarkSortEntries(b *testing.B) {
	const n, ks, e = 1 << 16, 32, 45
	src := make([]byte, n*e)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	buf := make([]byte, len(src))
	for b.Loop() {
		copy(buf, src)
		sortEntries(buf, e, ks)
	}
}

// bloomHas is the filter check before bloomProbe (its divisions done
// for every filter): the oracle for TestBloomProbe.
func bloomHas(b []uint64, h uint64) bool {
	m := uint64(len(b)) * 64
	h1, h2 := h, h>>32|1
	for i := uint64(0); i < bloomProbes; i++ {
		bit := (h1 + i*h2) % m
		if b[bit/64]&(1<<(bit%64)) == 0 {
			return false
		}
	}
	return true
}

// TestBloomProbe checks bloomProbe.has against bloomHas for keys looked
// up in a row of filters of different and equal sizes (the probes kept
// for one size must not answer for another), present and absent keys.
func TestBloomProbe(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var filters [][]uint64
	var keys [][]byte
	for _, n := range []int{1, 5, 64, 65536, 65536, 1000, 65536, 3} {
		f := newBloom(n)
		for range n {
			k := binary.BigEndian.AppendUint64(nil, rng.Uint64())
			keys = append(keys, k)
			bloomAdd(f, bloomKeyHash(k))
		}
		filters = append(filters, f)
	}
	for range 20000 {
		keys = append(keys, binary.BigEndian.AppendUint64(nil, rng.Uint64()))
	}
	yes := 0
	for _, k := range keys {
		h := bloomKeyHash(k)
		p := bloomProbe{h: h}
		for i := len(filters) - 1; i >= 0; i-- {
			want := bloomHas(filters[i], h)
			if got := p.has(filters[i]); got != want {
				t.Fatalf("key %x, filter %d of %d words: %v, want %v", k, i, len(filters[i]), got, want)
			}
			if want {
				yes++
			}
		}
	}
	if yes < len(keys)-20000 {
		t.Fatalf("only %d filters hold their keys", yes)
	}
}

// BenchmarkRunFilters is a lookup's check of the Bloom filters of 11 and
// 35 runs of 65 536 keys (a heads table at a million accounts carries
// that many between rewrites), for a key none holds: bloomProbe against
// bloomHas.
func BenchmarkRunFilters(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{11, 35} {
		filters := make([][]uint64, k)
		for r := range filters {
			filters[r] = newBloom(tableRunChanges)
			for range tableRunChanges {
				bloomAdd(filters[r], bloomKeyHash(binary.BigEndian.AppendUint64(nil, rng.Uint64())))
			}
		}
		keys := make([][]byte, 4096)
		for i := range keys {
			keys[i] = binary.BigEndian.AppendUint64(nil, rng.Uint64())
		}
		b.Run(fmt.Sprintf("probe/%d", k), func(b *testing.B) {
			hits := 0
			for i := 0; i < b.N; i++ {
				p := bloomProbe{h: bloomKeyHash(keys[i%len(keys)])}
				for _, f := range filters {
					if p.has(f) {
						hits++
					}
				}
			}
			_ = hits
		})
		b.Run(fmt.Sprintf("divisions/%d", k), func(b *testing.B) {
			hits := 0
			for i := 0; i < b.N; i++ {
				h := bloomKeyHash(keys[i%len(keys)])
				for _, f := range filters {
					if bloomHas(f, h) {
						hits++
					}
				}
			}
			_ = hits
		})
	}
}
