package ledger

import (
	"errors"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gagliardetto/solana-go"
)

// TestSortedTableValuesFile checks the snapshot of a table whose changes
// all kept its keys: a values file written beside changes made in place
// (startRewrite, finish), replacing the runs; a second one over the
// first; a reopen after each, with a run on top; a run left from before
// the values file (a kill between its rename and the runs' removal),
// which must not be applied; lookups that read the files' values once
// an entry is stale (a key sharing a base key's prefix, a deletion);
// the full rewrite a created key calls for, which leaves no values file;
// and a damaged values file, which fails the open.
func TestSortedTableValuesFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p")
	tbl, err := openTable(path, prefixTableCodec)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.RWMutex
	model := map[[2]uint64]uint64{}
	rng := rand.New(rand.NewPCG(21, 22))
	// Base keys {p, 1}, one per prefix p.
	const keys = 600
	for p := range uint64(keys) {
		k := [2]uint64{p, 1}
		model[k] = rng.Uint64()
		tbl.set(k, model[k])
	}
	nt, err := tbl.write([]byte("base"), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.replace(nt); err != nil {
		t.Fatal(err)
	}
	baseModel := maps.Clone(model)
	// change moves n random base keys in place, as the key directory does.
	change := func(n int) {
		for range n {
			k := [2]uint64{rng.Uint64N(keys), 1}
			prev, had := tbl.get(k)
			v := rng.Uint64()
			mu.Lock()
			tbl.change(k, prev, had, v, false)
			mu.Unlock()
			model[k] = v
		}
	}
	check := func(what string) {
		t.Helper()
		for p := range uint64(keys + 5) {
			for s := range uint64(3) {
				k := [2]uint64{p, s}
				want, has := model[k]
				if v, ok := tbl.get(k); ok != has || v != want {
					t.Fatalf("%s: get %v = %d, %v; want %d, %v", what, k, v, ok, want, has)
				}
			}
		}
	}
	reopen := func(what string) {
		t.Helper()
		if tbl.unsaved() > 0 {
			// As the owner closes: what only memory holds goes to a run.
			f, err := tbl.writeRun([]byte("close"), false)
			if err != nil {
				t.Fatal(err)
			}
			tbl.addRun(f)
		}
		if err := tbl.close(); err != nil {
			t.Fatal(err)
		}
		if tbl, err = openTable(path, prefixTableCodec); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		check(what)
	}
	run := func(meta string) {
		t.Helper()
		f, err := tbl.writeRun([]byte(meta), false)
		if err != nil {
			t.Fatal(err)
		}
		tbl.addRun(f)
	}
	// snapshot writes the values file with changes made while it writes,
	// and reports the changes made meanwhile.
	// plant (nil: none) is a run file put first in the chain before the
	// files alone are opened, as a kill after the values file's rename
	// leaves one of the runs it replaced: it must be dropped.
	snapshot := func(meta string, wantRuns int, plant []byte) (since map[[2]uint64]uint64) {
		t.Helper()
		if !tbl.valuesOnly() {
			t.Fatalf("%s: every change kept the keys, yet no values file is due", meta)
		}
		gate := make(chan struct{})
		rw := startRewrite(&mu, tbl, []byte(meta), false, nil, true, gate)
		before := maps.Clone(model)
		change(80)
		since = map[[2]uint64]uint64{}
		for k, v := range model {
			if before[k] != v {
				since[k] = v
			}
		}
		close(gate)
		if done, err := rw.finish(&mu, tbl, true); !done || err != nil {
			t.Fatalf("%s: finish = %v, %v", meta, done, err)
		}
		if rw.vf == nil || rw.nt != nil {
			t.Fatalf("%s: a whole base was written instead of a values file", meta)
		}
		if wantRuns < 0 {
			wantRuns = tbl.runCount() // the test does not know
		}
		if tbl.runCount() != wantRuns || string(tbl.meta) != meta || string(tbl.baseMeta()) != meta {
			t.Fatalf("%s: %d runs (want %d), meta %q, base meta %q after the values file",
				meta, tbl.runCount(), wantRuns, tbl.meta, tbl.baseMeta())
		}
		// What changed in place meanwhile is in place, not in memory.
		inPlace := 0
		for k := range since {
			var kb [16]byte
			prefixTableCodec.putKey(kb[:], k)
			i := tbl.base.indexAt(kb[:])
			_, inMemory := tbl.recent[k]
			if placed := i >= 0 && !tbl.base.isStale(i); placed == inMemory {
				t.Fatalf("%s: %v changed during the write: in memory %v, a current index entry %v", meta, k, inMemory, placed)
			}
			if !inMemory {
				inPlace++
			}
		}
		if runs, _ := filepath.Glob(path + ".run*"); len(runs) != wantRuns {
			t.Fatalf("%s: run files %v, want %d", meta, runs, wantRuns)
		}
		// The files alone are the table as of the freeze.
		if plant != nil {
			if err := os.WriteFile(path+".run000001", plant, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		onDisk, err := openTable(path, prefixTableCodec)
		if err != nil {
			t.Fatal(err)
		}
		got := map[[2]uint64]uint64{}
		onDisk.each(func(k [2]uint64, v uint64) bool { got[k] = v; return true })
		if plant != nil && onDisk.runCount() != 0 {
			t.Fatalf("%s: %d runs applied on a values file they were not written on", meta, onDisk.runCount())
		}
		onDisk.close()
		if plant != nil {
			if _, err := os.Stat(path + ".run000001"); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s: the stale run is left: %v", meta, err)
			}
		}
		if !maps.Equal(got, before) {
			t.Fatalf("%s: the files hold %d keys, not the table as of the freeze (%d keys)", meta, len(got), len(before))
		}
		// The entries changed during the write are the dirty ones: the
		// next run writes them.
		if tbl.base.nDirty != inPlace {
			t.Fatalf("%s: %d dirty entries, %d keys changed in place during the write", meta, tbl.base.nDirty, inPlace)
		}
		return since
	}

	tbl.runAt = 50
	change(100)
	run("r1")
	change(100)
	run("r2")
	change(30)
	check("runs on the base")
	if since := snapshot("v1", 0, nil); len(since) == 0 {
		t.Fatal("no change during the write: the test needs some")
	}
	check("values file adopted")
	if st, err := os.Stat(valsPath(path)); err != nil || st.Size() != tableHeader+4+2+keys*8+4 {
		t.Fatalf("values file: %v, %v", st, err)
	}
	reopen("values file reopened")
	change(60)
	run("r3")
	change(20)
	reopen("values file and a run")
	// A run from before the next values file survives its rename.
	change(40)
	run("r4")
	stale, err := os.ReadFile(path + ".run000002")
	if err != nil {
		t.Fatal(err)
	}
	since2 := snapshot("v2", 0, stale)
	check("second values file adopted")
	reopen("second values file reopened")
	// A key sharing a changed base key's prefix: the base key's entry is
	// stale, its value (in the values file only) read from the files.
	var shared [2]uint64
	for k, v := range model {
		// Changed before the values file, not since: its value is in the
		// values file alone, not in the base, a run or memory.
		if _, moved := since2[k]; k[1] == 1 && v != baseModel[k] && !moved {
			shared = k
			break
		}
	}
	if shared == ([2]uint64{}) {
		t.Fatal("no base key changed")
	}
	created := [2]uint64{shared[0], 2}
	mu.Lock()
	tbl.change(created, 0, false, 7, false)
	mu.Unlock()
	model[created] = 7
	deleted := [2]uint64{(shared[0] + 1) % keys, 1}
	prev, had := tbl.get(deleted)
	tbl.change(deleted, prev, had, 0, true)
	delete(model, deleted)
	check("a stale entry over a values file")
	run("r5")
	reopen("a stale entry over a values file, reopened")
	// The next values file leaves those keys to a run beside it, and a
	// key created since the last run, in memory at its freeze.
	change(30)
	created2 := [2]uint64{(shared[0] + 2) % keys, 2}
	mu.Lock()
	tbl.change(created2, 0, false, 8, false)
	mu.Unlock()
	model[created2] = 8
	before, err := os.ReadFile(valsPath(path))
	if err != nil {
		t.Fatal(err)
	}
	snapshot("v3", 1, nil)
	for _, k := range [][2]uint64{created, deleted, created2} {
		// Not in the values file: the created key is not a base key, the
		// deleted one is (its entry stale, its value there the old one).
		var kb [16]byte
		prefixTableCodec.putKey(kb[:], k)
		if !tbl.runs[0].find(kb[:], tbl.bufs, func(int, []byte) {}) {
			t.Fatalf("the run beside the values file does not hold %v", k)
		}
	}
	check("values file with a run beside")
	reopen("values file with a run beside, reopened")
	// A kill after the run's rename, before the values file's: the run
	// names a values file that is not there and is dropped.
	tbl.close()
	if err := os.WriteFile(valsPath(path), before, 0o600); err != nil {
		t.Fatal(err)
	}
	if tbl, err = openTable(path, prefixTableCodec); err != nil {
		t.Fatal(err)
	}
	if tbl.runCount() != 0 || string(tbl.meta) == "v3" {
		t.Fatalf("%d runs, meta %q: the run of a values file not renamed was applied", tbl.runCount(), tbl.meta)
	}
	if runs, _ := filepath.Glob(path + ".run*"); len(runs) != 0 {
		t.Fatalf("the runs of a values file not renamed are left: %v", runs)
	}
	// The table is as of that older values file, from which the owner
	// replays; put it back as it was for the rest of the test.
	tbl.close()
	os.Remove(valsPath(path))
	if tbl, err = openTable(path, prefixTableCodec); err != nil {
		t.Fatal(err)
	}
	for k, v := range model {
		prev, had := tbl.get(k)
		tbl.change(k, prev, had, v, false)
	}
	if _, live := model[deleted]; !live {
		// (Unless a later change wrote it again.)
		prev, had := tbl.get(deleted)
		tbl.change(deleted, prev, had, 0, true)
	}
	check("rebuilt")
	// The full rewrite: a new base and no values file.
	tbl.freeze()
	if nt, err = tbl.writeFrozen([]byte("base2"), false, nil); err != nil {
		t.Fatal(err)
	}
	if err := tbl.adopt(nt); err != nil {
		t.Fatal(err)
	}
	check("rewritten")
	if _, err := os.Stat(valsPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("values file of the old base left: %v", err)
	}
	reopen("rewritten, reopened")
	if string(tbl.baseMeta()) != "base2" {
		t.Fatalf("base meta %q", tbl.baseMeta())
	}
	// A damaged values file fails the open.
	change(10)
	snapshot("v4", -1, nil)
	tbl.close()
	b, err := os.ReadFile(valsPath(path))
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-20] ^= 1
	if err := os.WriteFile(valsPath(path), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := openTable(path, prefixTableCodec); !errors.Is(err, errCorrupt) {
		t.Fatalf("open with a damaged values file: %v", err)
	}
}

// TestKeydirCloseWritesValues checks what a clean close writes for the
// account log's key directory once most of its base's entries moved in
// place (accounts written again, none created): a values file, not a run
// of the moved entries, which would be larger; with few moved, a run.
// Every account reads back after each reopen, and a values file a kill
// interrupted is removed.
func TestKeydirCloseWritesValues(t *testing.T) {
	dir := t.TempDir()
	var end logPos
	var last *accountLog
	open := func() *accountLog {
		t.Helper()
		lg, err := openLogAfter(dir, end, accountSegmentBytes, last)
		if err != nil {
			t.Fatal(err)
		}
		last = lg
		return lg
	}
	lg := open()
	model := map[solana.PublicKey]*Account{}
	const keys = accountSnapshotFreshMin
	write := func(from, to, lamports int) {
		t.Helper()
		end = writeTestAccounts(t, lg, model, from, to, lamports)
	}
	files := func() (vals os.FileInfo, runs int) {
		vals, _ = os.Stat(valsPath(filepath.Join(dir, "keydir")))
		m, _ := filepath.Glob(filepath.Join(dir, "keydir.run*"))
		return vals, len(m)
	}
	write(0, keys, 0) // created: the base holds them (freshDue)
	if lg.keydir.n != keys || lg.keydir.fresh != 0 {
		t.Fatalf("base of %d keys, %d created since; want %d, 0", lg.keydir.n, lg.keydir.fresh, keys)
	}
	write(0, keys*3/4, 1000) // three quarters moved
	if err := lg.close(); err != nil {
		t.Fatal(err)
	}
	vals, runs := files()
	if vals == nil || runs != 0 {
		t.Fatalf("close with most entries moved: values file %v, %d runs; want a values file and no run", vals != nil, runs)
	}
	// A values file a kill interrupted is removed at open.
	tmp := filepath.Join(dir, "keydir.vals.tmp123")
	if err := os.WriteFile(tmp, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	lg = open()
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("interrupted values file left: %v", err)
	}
	checkLog(t, lg, model, keys)
	if lg.keydir.base.valFile == nil || len(lg.keydir.recent) != 0 || lg.keydir.base.nDirty != 0 {
		t.Fatalf("reopened: values file %v, %d changes replayed", lg.keydir.base.valFile != nil, len(lg.keydir.recent)+lg.keydir.base.nDirty)
	}
	write(0, keys/10, 2000) // a tenth moved: a run is smaller
	if err := lg.close(); err != nil {
		t.Fatal(err)
	}
	if v, runs := files(); !sameFile(v, vals) || runs != 1 {
		t.Fatalf("close with a tenth moved: values file rewritten %v, %d runs; want the same one and a run", !sameFile(v, vals), runs)
	}
	lg = open()
	checkLog(t, lg, model, keys)
	lg.close()
}

// TestKeydirRunDueWritesValues checks that once the key directory's
// changes outside its base call for a run while most of the base's
// entries were changed in place, a values file with a run beside it is
// written instead of a run of all those entries; every account reads
// back after a reopen.
func TestKeydirRunDueWritesValues(t *testing.T) {
	dir := t.TempDir()
	var end logPos
	lg, err := openLogAfter(dir, end, accountSegmentBytes, nil)
	if err != nil {
		t.Fatal(err)
	}
	model := map[solana.PublicKey]*Account{}
	write := func(from, to, lamports int) {
		t.Helper()
		end = writeTestAccounts(t, lg, model, from, to, lamports)
	}
	const keys = accountSnapshotFreshMin
	write(0, keys, 0) // the base
	lg.keydir.runAt = 200
	write(keys, keys+150, 0) // outside the base, short of a run
	write(0, keys*3/4, 1000) // most of the base moved in place
	if lg.keydir.base.valFile != nil || lg.keydir.runCount() != 0 {
		t.Fatalf("a values file or run before one was due: %v, %d runs", lg.keydir.base.valFile != nil, lg.keydir.runCount())
	}
	write(keys+150, keys+260, 0) // the run is due
	runN := -1
	if lg.keydir.runCount() > 0 {
		runN = lg.keydir.runs[0].n
	}
	if lg.keydir.base.valFile == nil || lg.keydir.runCount() != 1 || runN != 260 || lg.keydir.base.nDirty != 0 {
		t.Fatalf("run due: values file %v, %d runs (the first of %d entries, want 260), %d entries dirty",
			lg.keydir.base.valFile != nil, lg.keydir.runCount(), runN, lg.keydir.base.nDirty)
	}
	if err := lg.close(); err != nil {
		t.Fatal(err)
	}
	if lg, err = openLogAfter(dir, end, accountSegmentBytes, lg); err != nil {
		t.Fatal(err)
	}
	checkLog(t, lg, model, keys+260)
	lg.close()
}

// writeTestAccounts commits testKey(from) … testKey(to-1) to lg, 500 a
// slot, account i with lamports+i lamports, records them in model (nil:
// none), waits for any snapshot the commits started, and returns the
// log's end.
func writeTestAccounts(t *testing.T, lg *accountLog, model map[solana.PublicKey]*Account, from, to, lamports int) logPos {
	t.Helper()
	var end logPos
	for lo := from; lo < to; lo += 500 {
		var writes []AccountWrite
		for i := lo; i < min(lo+500, to); i++ {
			a := testAccount(uint64(lamports+i), 10)
			writes = append(writes, AccountWrite{Key: testKey(i), Account: a})
			if model != nil {
				model[testKey(i)] = a
			}
		}
		end = commitLog(t, lg, writes)
		if err := lg.finishSnapshot(true); err != nil {
			t.Fatal(err)
		}
	}
	return end
}

// FuzzOpenValuesFile opens arbitrary bytes as the values file of a valid
// base with a prefix index: the open refuses them as damaged, drops them
// as another base's, or takes them, and then lookups, iteration, a run
// and a rewrite never panic.
func FuzzOpenValuesFile(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed")
	tbl, err := openTable(path, prefixTableCodec)
	if err != nil {
		f.Fatal(err)
	}
	for p := range uint64(200) {
		tbl.set([2]uint64{p, 1}, p)
	}
	nt, err := tbl.write([]byte("base"), false, nil)
	if err != nil {
		f.Fatal(err)
	}
	tbl.replace(nt)
	for p := range uint64(50) {
		k := [2]uint64{p * 3, 1}
		prev, had := tbl.get(k)
		tbl.change(k, prev, had, p+1000, false)
	}
	var mu sync.RWMutex
	if done, err := startRewrite(&mu, tbl, []byte("vals"), false, nil, true, nil).finish(&mu, tbl, true); !done || err != nil {
		f.Fatal(done, err)
	}
	base, _ := os.ReadFile(path)
	vals, _ := os.ReadFile(valsPath(path))
	tbl.close()
	if len(vals) == 0 {
		f.Fatal("no values file written")
	}
	f.Add(vals)
	f.Add(vals[:len(vals)-1])
	f.Add(vals[:tableHeader+3])
	f.Add([]byte(tableValsMagic))
	f.Fuzz(func(t *testing.T, valsBytes []byte) {
		path := filepath.Join(t.TempDir(), "t")
		os.WriteFile(path, base, 0o600)
		os.WriteFile(valsPath(path), valsBytes, 0o600)
		tbl, err := openTable(path, prefixTableCodec)
		if err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("open: %v (not errCorrupt)", err)
			}
			return
		}
		defer tbl.close()
		for p := range uint64(210) {
			tbl.get([2]uint64{p, 1})
			tbl.lookup([2]uint64{p, 2})
		}
		tbl.each(func([2]uint64, uint64) bool { return true })
		k := [2]uint64{7, 1}
		prev, had := tbl.get(k)
		tbl.change(k, prev, had, 1, false)
		tbl.change([2]uint64{7, 2}, 0, false, 2, false)
		if run, err := tbl.writeRun([]byte("r"), false); err == nil {
			tbl.addRun(run)
		}
		tbl.freeze()
		if nt, err := tbl.writeFrozen([]byte("b2"), false, nil); err == nil {
			tbl.adopt(nt)
		}
	})
}
