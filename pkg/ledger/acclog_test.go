package ledger

import (
	"bytes"
	"errors"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
)

// abandon drops a log as a killed process would: no snapshot, files left
// as they are.
func (lg *accountLog) abandon() { lg.closeFiles() }

func testKey(i int) solana.PublicKey {
	var k solana.PublicKey
	k[0], k[1], k[2] = byte(i), byte(i>>8), 0xA5
	return k
}

func testAccount(lamports uint64, size int) *Account {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(lamports) + byte(i)
	}
	return &Account{Lamports: lamports, Owner: spl.TokenProgramID, Data: data, RentEpoch: 7}
}

// pairedKey is testKey for keys that share their first 8 bytes in pairs,
// as two addresses may: the key directory's prefix index then holds both
// of a pair under one prefix, or one key's entry where the other is
// looked up.
func pairedKey(i int) solana.PublicKey {
	var k solana.PublicKey
	k[0], k[1], k[2], k[8] = byte(i/2), byte(i/2>>8), 0x5A, byte(i%2)+1
	return k
}

// commitLog appends writes and makes them visible, as a slot's commit
// does, and returns the log's new end.
func commitLog(t *testing.T, lg *accountLog, writes []AccountWrite) logPos {
	t.Helper()
	pos, err := lg.append(writes)
	if err != nil {
		t.Fatal(err)
	}
	if err := applyLog(lg); err != nil {
		t.Fatal(err)
	}
	return pos
}

// applyLog is what a store's commit does after the log's append: the
// mints the records name are saved with it (boltStore.commit) and the
// records made visible.
func applyLog(lg *accountLog) error {
	lg.savedMints(len(lg.mints))
	return lg.apply()
}

// openLogAfter opens the log in dir as a store does after prev's last
// commit: cut back to end, with the mint dictionary the database holds
// (the entries of prev's commits; prev nil: none).
func openLogAfter(dir string, end logPos, seg int64, prev *accountLog) (*accountLog, error) {
	lg, err := openAccountLog(dir, end, true, seg)
	if err == nil && prev != nil {
		lg.setMints(slices.Clone(prev.mints[:prev.mintsSaved]))
	}
	return lg, err
}

// checkLog asserts that the log holds exactly model.
func checkLog(t *testing.T, lg *accountLog, model map[solana.PublicKey]*Account, keys int) {
	t.Helper()
	checkLogKeys(t, lg, model, keys, testKey)
}

// checkLogKeys is checkLog for the keys key(0) … key(keys-1).
func checkLogKeys(t *testing.T, lg *accountLog, model map[solana.PublicKey]*Account, keys int, key func(int) solana.PublicKey) {
	t.Helper()
	for i := 0; i < keys; i++ {
		k := key(i)
		got, err := lg.get(k)
		if err != nil {
			t.Fatalf("get %d: %v", i, err)
		}
		want := model[k]
		switch {
		case want == nil && got != nil:
			t.Fatalf("account %d: deleted, read %+v", i, got)
		case want != nil && (got == nil || got.Lamports != want.Lamports || string(got.Data) != string(want.Data) || got.Owner != want.Owner || got.RentEpoch != want.RentEpoch):
			t.Fatalf("account %d: read %+v, want %+v", i, got, want)
		}
	}
	n := 0
	if err := lg.each(func(k solana.PublicKey, a *Account) bool {
		if w := model[k]; w == nil || w.Lamports != a.Lamports {
			t.Fatalf("each: %s = %d lamports, model %v", k, a.Lamports, w)
		}
		n++
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if n != len(model) {
		t.Fatalf("each visited %d accounts, model has %d", n, len(model))
	}
	// The live bytes per segment, which decide what cleaning copies and
	// when a segment may go, are those of the records the key directory
	// points to.
	live := map[uint32]int64{}
	var alive int64
	lg.keydir.each(func(_ solana.PublicKey, loc accLoc) bool {
		live[loc.seg] += int64(loc.n)
		alive += int64(loc.n)
		return true
	})
	if alive != lg.alive {
		t.Fatalf("live bytes %d, counted %d", lg.alive, alive)
	}
	for seg := range live {
		if _, ok := lg.live[seg]; !ok {
			lg.live[seg] = 0
		}
	}
	for seg, n := range lg.live {
		if live[seg] != n {
			t.Fatalf("segment %d: live bytes %d, counted %d", seg, n, live[seg])
		}
	}
}

// TestAccountLog writes random slots of account changes to a log with
// tiny segments (so segments rotate, are cleaned and deleted all the
// time), and after every few slots reopens it: cleanly (snapshot),
// after a kill (replay), or after a kill in the middle of a commit (the
// appended records, cleaning copies included, are cut back because the
// commit never recorded them). Every reopen must read exactly the state
// of the last committed slot. With paired keys, lookups go through
// every case of the key directory's prefix index.
func TestAccountLog(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  func(int) solana.PublicKey
	}{{"distinct", testKey}, {"paired", pairedKey}} {
		t.Run(tc.name, func(t *testing.T) { testAccountLog(t, tc.key) })
	}
}

func testAccountLog(t *testing.T, testKey func(int) solana.PublicKey) {
	const keys = 300
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	const seg = 4 << 10
	lg, err := openAccountLog(dir, logPos{}, true, seg)
	if err != nil {
		t.Fatal(err)
	}
	// The key directory writes its changes as runs every few records, so
	// kills land between runs, base snapshots and cleanings.
	lg.keydir.runAt = 5
	maxRuns := 0
	model := map[solana.PublicKey]*Account{}
	var end logPos
	maxSegments, cleanings := 0, 0
	for slot := 1; slot <= 400; slot++ {
		// A few hot accounts change every slot, cold ones now and then.
		var writes []AccountWrite
		seen := map[solana.PublicKey]bool{}
		for j := 0; j < 12; j++ {
			i := rng.IntN(8)
			if j >= 4 {
				i = rng.IntN(keys)
			}
			k := testKey(i)
			if seen[k] {
				continue
			}
			seen[k] = true
			var a *Account
			if rng.IntN(10) > 0 {
				a = testAccount(uint64(slot*100+j), rng.IntN(200))
			}
			writes = append(writes, AccountWrite{Key: k, Account: a})
		}
		cleaned := len(lg.cleaned)
		pos, err := lg.append(writes)
		if err != nil {
			t.Fatal(err)
		}
		if len(lg.cleaned) > cleaned {
			cleanings++
		}
		switch rng.IntN(10) {
		case 0:
			// Killed before the slot's commit: the next open is told the
			// previous end.
			lg.abandon()
			if lg, err = openLogAfter(dir, end, seg, lg); err != nil {
				t.Fatalf("slot %d: reopen after a kill mid-commit: %v", slot, err)
			}
			lg.keydir.runAt = 5
			checkLogKeys(t, lg, model, keys, testKey)
			continue
		}
		if err := applyLog(lg); err != nil {
			t.Fatal(err)
		}
		end = pos
		for _, w := range writes {
			model[w.Key] = w.Account
			if w.Account == nil {
				delete(model, w.Key)
			}
		}
		switch rng.IntN(10) {
		case 0:
			if err := lg.close(); err != nil {
				t.Fatal(err)
			}
			fallthrough
		case 1:
			lg.abandon()
			if lg, err = openLogAfter(dir, end, seg, lg); err != nil {
				t.Fatalf("slot %d: reopen: %v", slot, err)
			}
			lg.keydir.runAt = 5
		}
		maxRuns = max(maxRuns, len(lg.keydir.runs))
		checkLogKeys(t, lg, model, keys, testKey)
		segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
		maxSegments = max(maxSegments, len(segs))
	}
	if cleanings < 10 {
		t.Fatalf("only %d commits cleaned a segment", cleanings)
	}
	// Live data is about keys × 150 bytes; with garbage bounded the log
	// stays within a small multiple of it.
	live := 0
	for _, a := range model {
		live += accountRecordHeader + 32 + len(encodeAccount(a))
	}
	if limit := (accountGarbageRatio+2)*live/seg + 8 + accountSnapshotRatio*(keys*44)/seg; maxSegments > limit {
		t.Fatalf("up to %d segments for %d live bytes (limit %d): garbage is not cleaned", maxSegments, live, limit)
	}
	if err := lg.close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cleanings, at most %d segments of %d bytes, %d live bytes", cleanings, maxSegments, seg, live)
	if maxRuns < 2 {
		t.Fatalf("the key directory had at most %d runs", maxRuns)
	}
}

func TestAccountLogRejectsDamage(t *testing.T) {
	dir := t.TempDir()
	lg, err := openAccountLog(dir, logPos{}, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := lg.append([]AccountWrite{{Key: testKey(1), Account: testAccount(5, 40)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := applyLog(lg); err != nil {
		t.Fatal(err)
	}
	lg.abandon()
	path := filepath.Join(dir, segName(1))
	b, _ := os.ReadFile(path)
	b[len(b)-3] ^= 1
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// The damaged record is after the (absent) snapshot: replay finds it.
	if _, err := openLogAfter(dir, pos, 0, lg); !errors.Is(err, errCorrupt) {
		t.Fatalf("open with a damaged record: %v", err)
	}
	// A log shorter than the committed end is refused too.
	if _, err := openLogAfter(dir, logPos{seg: 1, off: pos.off + 10}, 0, lg); !errors.Is(err, errCorrupt) {
		t.Fatalf("open of a truncated log: %v", err)
	}
}

func TestAccountCache(t *testing.T) {
	var c accountCache
	c.init(4)
	for i := 0; i < 10; i++ {
		c.put(testKey(i), testAccount(uint64(i), 1))
	}
	// At most size entries are kept, the newest ones.
	if _, ok := c.get(testKey(0)); ok {
		t.Fatal("oldest entry kept")
	}
	if a, ok := c.get(testKey(9)); !ok || a.Lamports != 9 {
		t.Fatal("newest entry lost")
	}
	if n := len(c.cur) + len(c.old); n > 4 {
		t.Fatalf("%d entries held, size 4", n)
	}
	// A lookup keeps an entry alive across a generation change.
	c.put(testKey(20), nil)
	if a, ok := c.get(testKey(20)); !ok || a != nil {
		t.Fatal("a known-missing account is not remembered")
	}
	for i := 21; i < 23; i++ {
		c.get(testKey(9))
		c.put(testKey(i), testAccount(1, 1))
	}
	if _, ok := c.get(testKey(9)); !ok {
		t.Fatal("a used entry was dropped")
	}
}

// TestAccountLogKeepsReplayedSegments: a segment after the snapshot's
// position may hold nothing live (here: only a deletion and values
// written again later) and still be needed, because a replay after a
// kill reads every record after that position; deleting it would bring
// the deleted account back.
func TestAccountLogKeepsReplayedSegments(t *testing.T) {
	dir := t.TempDir()
	const seg = 256
	lg, err := openAccountLog(dir, logPos{}, true, seg)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(writes ...AccountWrite) logPos {
		t.Helper()
		return commitLog(t, lg, writes)
	}
	gone, other := testKey(1), testKey(2)
	commit(AccountWrite{Key: gone, Account: testAccount(1, 40)})
	if err := lg.close(); err != nil { // snapshot: gone exists
		t.Fatal(err)
	}
	if lg, err = openLogAfter(dir, lg.head, seg, lg); err != nil {
		t.Fatal(err)
	}
	pos := commit(AccountWrite{Key: gone}, AccountWrite{Key: other, Account: testAccount(2, 100)})
	for i := 0; i < 6; i++ { // rotate past the deletion's segment, overwriting other
		pos = commit(AccountWrite{Key: other, Account: testAccount(uint64(3+i), 100)})
	}
	for round := 0; round < 3; round++ {
		lg.abandon()
		if lg, err = openLogAfter(dir, pos, seg, lg); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if a, err := lg.get(gone); err != nil || a != nil {
			t.Fatalf("round %d: deleted account read back as %+v (%v)", round, a, err)
		}
	}
	lg.abandon()
}

// TestKeydirSnapshotBeside: a key-directory snapshot is written beside
// the commits. While it is held back, commits go on: every read, the walk
// of every account and the live bytes per segment stay the model's, and
// no run is written (it would name the old base). A kill once it is
// written but before a commit adopted it reopens to the model (the new
// base covers the log up to where the snapshot started; the replay brings
// the rest). Adopted, the base covers that position, what the log grew
// since counts toward the next snapshot, the segments before it that hold
// nothing live are gone, and a clean reopen reads the model.
func TestKeydirSnapshotBeside(t *testing.T) {
	const keys = 200
	const seg = 4 << 10
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	model := map[solana.PublicKey]*Account{}
	var end logPos
	var last *accountLog
	open := func() *accountLog {
		t.Helper()
		lg, err := openLogAfter(dir, end, seg, last)
		if err != nil {
			t.Fatal(err)
		}
		last = lg
		lg.keydir.runAt = 5
		return lg
	}
	slot := 0
	commit := func(lg *accountLog) {
		t.Helper()
		slot++
		var writes []AccountWrite
		seen := map[solana.PublicKey]bool{}
		for range 6 {
			k := testKey(rng.IntN(keys))
			if seen[k] {
				continue
			}
			seen[k] = true
			var a *Account
			if rng.IntN(8) > 0 {
				a = testAccount(uint64(slot*100+len(writes)), rng.IntN(150))
			}
			writes = append(writes, AccountWrite{Key: k, Account: a})
		}
		end = commitLog(t, lg, writes)
		for _, w := range writes {
			if model[w.Key] = w.Account; w.Account == nil {
				delete(model, w.Key)
			}
		}
	}
	startHeld := func(lg *accountLog) {
		t.Helper()
		lg.snapGate = make(chan struct{})
		for start := slot; lg.snap == nil; {
			if commit(lg); slot-start > 5000 {
				t.Fatal("no snapshot started")
			}
		}
	}

	lg := open()
	startHeld(lg)
	runs, files := len(lg.keydir.runs), tableFiles(t, dir)
	for range 40 {
		commit(lg)
		checkLog(t, lg, model, keys)
		if lg.snap == nil {
			t.Fatal("a held snapshot was adopted")
		}
		if len(lg.keydir.runs) != runs || tableFiles(t, dir) != files {
			t.Fatal("a key-directory run was written while a snapshot was being written")
		}
	}
	snapAt := lg.snapAt
	close(lg.snapGate)
	<-lg.snap.done
	lg.abandon()
	lg = open()
	checkLog(t, lg, model, keys)
	if lg.basePos != snapAt {
		t.Fatalf("after a kill the base covers %v; the snapshot started at %v", lg.basePos, snapAt)
	}

	startHeld(lg)
	snapAt = lg.snapAt
	close(lg.snapGate)
	<-lg.snap.done
	commit(lg) // adopts it, and may write the changes since as a run
	if lg.snap != nil || lg.basePos != snapAt {
		t.Fatalf("not adopted: the base covers %v, the snapshot started at %v", lg.basePos, snapAt)
	}
	if runs := len(lg.keydir.runs); !(runs == 0 && lg.snapPos == snapAt || runs == 1 && lg.snapPos == lg.head) {
		t.Fatalf("the files cover %v with %d runs; base at %v, log end %v", lg.snapPos, runs, snapAt, lg.head)
	}
	if want := lg.distance(lg.basePos, lg.head); lg.grown != want {
		t.Fatalf("the log grew %d bytes since the base, counted %d", want, lg.grown)
	}
	for s := range lg.files {
		if s < lg.basePos.seg && s < lg.head.seg && lg.live[s] <= 0 {
			t.Fatalf("segment %d before the base holds nothing live and was kept", s)
		}
	}
	checkLog(t, lg, model, keys)
	if err := lg.close(); err != nil {
		t.Fatal(err)
	}
	lg = open()
	checkLog(t, lg, model, keys)
	if err := lg.close(); err != nil {
		t.Fatal(err)
	}
}

// tableFiles lists the key directory's files in dir (base, runs,
// temporary files), one name per line.
func tableFiles(t *testing.T, dir string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "keydir*"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(names, "\n")
}

// TestKeydirSnapshotWhenManyCreated checks the key directory's second
// reason to rewrite its base: the accounts created since it (counted
// again from the runs after a reopen) reach accountSnapshotFreshMin while
// the base is small, an eighth of it (accountSnapshotFresh) once it is
// larger; the log's growth alone would not have rewritten it.
func TestKeydirSnapshotWhenManyCreated(t *testing.T) {
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
	next := 0
	create := func(n int) {
		t.Helper()
		if n > 0 {
			end = writeTestAccounts(t, lg, nil, next, next+n, 0)
			next += n
		}
	}
	expect := func(when string, base, fresh int) {
		t.Helper()
		if lg.keydir.n != base || lg.keydir.fresh != fresh {
			t.Fatalf("%s: base of %d keys, %d created since; want %d, %d", when, lg.keydir.n, lg.keydir.fresh, base, fresh)
		}
	}
	create(accountSnapshotFreshMin - 1)
	expect("short of the least count", 0, accountSnapshotFreshMin-1)
	if err := lg.close(); err != nil {
		t.Fatal(err)
	}
	lg = open()
	expect("reopened", 0, accountSnapshotFreshMin-1)
	create(1)
	expect("at the least count", accountSnapshotFreshMin, 0)
	for lg.keydir.n < accountSnapshotFresh*accountSnapshotFreshMin {
		create(accountSnapshotFreshMin)
	}
	// The snapshots the log's growth called for meanwhile may have been
	// values files (tablevals.go), which leave the keys created since the
	// base out of it: they count.
	n0, f0 := lg.keydir.n, lg.keydir.fresh
	at := (n0 + accountSnapshotFresh - 1) / accountSnapshotFresh // an eighth
	create(at - 10 - f0)
	if err := lg.close(); err != nil {
		t.Fatal(err)
	}
	lg = open()
	expect("reopened short of an eighth", n0, at-10)
	create(9)
	expect("one short of an eighth", n0, at-1)
	create(1)
	expect("at an eighth", n0+at, 0)
	for i := range next {
		if a, err := lg.get(testKey(i)); err != nil || a == nil || a.Lamports != uint64(i) {
			t.Fatalf("account %d: %+v, %v", i, a, err)
		}
	}
	lg.close()
}

// TestKeydirChangesInPlace checks that changes to accounts the key
// directory's base holds are kept in its index, dirty, and nowhere else:
// no run is written for them however many there are (the account log is
// their redo log: a kill replays them from the base's position), a
// clean close writes them as one run, and a rewrite with more of them
// made while it is written takes them over in the new base's index.
func TestKeydirChangesInPlace(t *testing.T) {
	const keys = 500
	dir := t.TempDir()
	var end logPos
	var last *accountLog
	open := func() *accountLog {
		t.Helper()
		lg, err := openLogAfter(dir, end, 1<<20, last)
		if err != nil {
			t.Fatal(err)
		}
		last = lg
		lg.keydir.runAt = 5
		return lg
	}
	model := map[solana.PublicKey]*Account{}
	slot := 0
	commit := func(lg *accountLog, from, to int) {
		t.Helper()
		slot++
		var writes []AccountWrite
		for i := from; i < to; i++ {
			a := testAccount(uint64(slot*1000+i), 40+i%30)
			writes = append(writes, AccountWrite{Key: testKey(i), Account: a})
			model[testKey(i)] = a
		}
		end = commitLog(t, lg, writes)
	}
	lg := open()
	commit(lg, 0, keys)
	if err := lg.snapshot(); err != nil {
		t.Fatal(err)
	}
	base := lg.basePos
	for s := 0; s < 20; s++ {
		commit(lg, s*17%keys, s*17%keys+40)
		if n := len(lg.keydir.runs); n != 0 || len(lg.keydir.recent) != 0 {
			t.Fatalf("slot %d: %d runs, %d changes in memory for accounts of the base", slot, n, len(lg.keydir.recent))
		}
	}
	if lg.keydir.base.nDirty == 0 || lg.snapPos != base {
		t.Fatalf("%d dirty entries, the files cover %v (base %v)", lg.keydir.base.nDirty, lg.snapPos, base)
	}
	checkLog(t, lg, model, keys)

	// A kill: the replay from the base's position restores them.
	lg.abandon()
	lg = open()
	checkLog(t, lg, model, keys)
	if lg.keydir.base.nDirty == 0 {
		t.Fatal("the replay left no dirty entry")
	}

	// A clean close writes them as one run; the next open replays nothing.
	commit(lg, 100, 130)
	if err := lg.saveRun(true); err != nil {
		t.Fatal(err)
	}
	if n := len(lg.keydir.runs); n != 1 || lg.keydir.base.nDirty != 0 || lg.snapPos != end {
		t.Fatalf("after a run: %d runs, %d dirty entries, files cover %v (log end %v)", n, lg.keydir.base.nDirty, lg.snapPos, end)
	}
	checkLog(t, lg, model, keys)
	if err := lg.close(); err != nil {
		t.Fatal(err)
	}
	lg = open()
	if n := len(lg.keydir.runs); n != 1 || lg.snapPos != end || lg.keydir.base.nDirty != 0 {
		t.Fatalf("after a clean close: %d runs, files cover %v (log end %v), %d dirty", n, lg.snapPos, end, lg.keydir.base.nDirty)
	}
	checkLog(t, lg, model, keys)

	// A rewrite with changes made while it is written: the new base's
	// index takes them, nothing stays in memory.
	commit(lg, 200, 260)
	lg.snapGate = make(chan struct{})
	lg.startSnapshot()
	commit(lg, 230, 300)
	if len(lg.keydir.recent) != 70 {
		t.Fatalf("%d changes in memory during the rewrite, want 70", len(lg.keydir.recent))
	}
	close(lg.snapGate)
	if err := lg.finishSnapshot(true); err != nil {
		t.Fatal(err)
	}
	if n := len(lg.keydir.recent); n != 0 || lg.keydir.base.nDirty != 70 {
		t.Fatalf("after the rewrite: %d changes in memory, %d dirty entries; want 0, 70", n, lg.keydir.base.nDirty)
	}
	checkLog(t, lg, model, keys)
	lg.abandon()
	lg = open()
	checkLog(t, lg, model, keys)
	if err := lg.close(); err != nil {
		t.Fatal(err)
	}
}

// TestLocCache checks the location cache's sets: a key's newest entry
// answers, a set keeps its locWays newest keys, and putting a key again
// makes it the newest instead of taking a second way.
func TestLocCache(t *testing.T) {
	var lc locCache
	key := func(i byte) solana.PublicKey {
		var k solana.PublicKey
		k[0], k[31] = 7, i // one set: the first 8 bytes choose it
		return k
	}
	if _, ok := lc.get(key(1)); ok {
		t.Fatal("found a key in an empty cache")
	}
	for i := byte(1); i <= locWays; i++ {
		lc.put(key(i), cachedLoc{accLoc{1, uint32(i), 10}, true})
	}
	lc.put(key(1), cachedLoc{accLoc{2, 1, 10}, true}) // key 1 newest again
	lc.put(key(9), cachedLoc{ok: false})              // evicts the oldest: key 2
	want := map[byte]cachedLoc{1: {accLoc{2, 1, 10}, true}, 3: {accLoc{1, 3, 10}, true}, 4: {accLoc{1, 4, 10}, true}, 9: {}}
	for i := byte(1); i <= 9; i++ {
		c, ok := lc.get(key(i))
		w, in := want[i]
		if ok != in || c != w {
			t.Errorf("key %d: got %+v, %v; want %+v, %v", i, c, ok, w, in)
		}
	}
	var other solana.PublicKey
	other[0] = 8
	if _, ok := lc.get(other); ok {
		t.Fatal("found a key never put")
	}
	if len(lc.sets) != locCacheMinSets {
		t.Fatalf("%d sets after one eviction", len(lc.sets))
	}
}

// TestLocCacheGrowth: a working set that fits keeps the smallest table
// however many times it is put; one that does not grows the table, by
// doublings that keep every set's entries and their order, up to
// accountLocCache sets.
func TestLocCacheGrowth(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	randomKey := func() (k solana.PublicKey) {
		for i := range k {
			k[i] = byte(r.Uint32())
		}
		return k
	}
	var small locCache
	few := make([]solana.PublicKey, locCacheMinSets)
	for i := range few {
		few[i] = randomKey()
	}
	for i := range 100 * len(few) {
		small.put(few[i%len(few)], cachedLoc{ok: true})
	}
	if len(small.sets) != locCacheMinSets {
		t.Fatalf("%d keys put again and again grew the cache to %d sets", len(few), len(small.sets))
	}

	var lc locCache
	var recent []solana.PublicKey
	grew := 0
	// Random keys evict about as many entries as are put once the sets
	// are full: 8 times the largest table's sets is enough for every
	// doubling.
	for n := 0; n < 8*accountLocCache; n++ {
		k := randomKey()
		before := len(lc.sets)
		var present []solana.PublicKey
		if before > 0 && lc.evicted >= before-1 {
			// This put may grow the sets: what they hold now.
			for _, rk := range recent {
				if _, ok := lc.get(rk); ok {
					present = append(present, rk)
				}
			}
		}
		lc.put(k, cachedLoc{accLoc{seg: uint32(n)}, true})
		if before != 0 && len(lc.sets) != before {
			grew++
			if lc.evicted != 0 {
				t.Fatalf("grown to %d sets with %d evictions counted", len(lc.sets), lc.evicted)
			}
			// Every set of the new table newest first, entries in their
			// own set, and the newest key of each old set still found.
			for i, s := range lc.sets {
				for j, e := range s {
					if !e.in {
						continue
					}
					if locSet(lc.sets, e.key) != &lc.sets[i] {
						t.Fatalf("grown to %d sets: an entry of set %d belongs elsewhere", len(lc.sets), i)
					}
					if j > 0 && (!s[j-1].in || s[j-1].c.loc.seg < e.c.loc.seg) {
						t.Fatalf("grown to %d sets: set %d not newest first", len(lc.sets), i)
					}
				}
			}
			// Kept, but the one the put itself may have evicted.
			lost := 0
			for _, rk := range present {
				if _, ok := lc.get(rk); !ok && (locSet(lc.sets, rk) != locSet(lc.sets, k) || lost > 0) {
					t.Fatalf("grown to %d sets: a key the cache held is gone", len(lc.sets))
				} else if !ok {
					lost++
				}
			}
			if len(present) == 0 {
				t.Fatal("growth without a look at what the cache held")
			}
		}
		if len(lc.sets) > accountLocCache {
			t.Fatalf("%d sets, more than %d", len(lc.sets), accountLocCache)
		}
		recent = append(recent, k)
		if len(recent) > 64 {
			recent = recent[1:]
		}
	}
	if want := bits.TrailingZeros(accountLocCache / locCacheMinSets); grew != want {
		t.Fatalf("grew %d times, want %d", grew, want)
	}
}

// TestAccountLogMintDictionary: token accounts' records name their mint
// in the log's dictionary (31 bytes less at least) until it holds
// accountLogMints entries, after which they hold it whole; only token
// accounts of the two token programs are named (a Token-2022 mint, an
// account of another owner and one whose mint is zero are not). A kill
// before a commit takes the dictionary entries it added with its records:
// the next commit gives the same index to another mint, and every
// account reads back, as after a clean reopen.
func TestAccountLogMintDictionary(t *testing.T) {
	dir := t.TempDir()
	lg, err := openAccountLog(dir, logPos{}, true, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	mintOf := func(i int) solana.PublicKey { // no zero byte: all of it costs in a record
		k := solana.PublicKeyFromBytes(bytes.Repeat([]byte{0xAA}, 32))
		for j := range 4 {
			k[j] = byte(i>>(7*j))&0x7F | 0x80
		}
		return k
	}
	token := func(program solana.PublicKey, mint solana.PublicKey, amount uint64) *Account {
		return &Account{Lamports: 2_039_280, Owner: program, RentEpoch: ^uint64(0),
			Data: spl.TokenAccount{Mint: mint, Owner: solana.PublicKey{7}, Amount: amount, State: spl.StateInitialized}.Encode()}
	}
	withType := func(a *Account, typ byte) *Account {
		a.Data = append(append(a.Data, typ), 0, 0, 0)
		return a
	}
	model := map[solana.PublicKey]*Account{}
	check := func(when string) {
		t.Helper()
		for k, want := range model {
			got, err := lg.get(k)
			if err != nil || got == nil || !bytes.Equal(got.Data, want.Data) || got.Owner != want.Owner {
				t.Fatalf("%s: account %s: %+v, %v", when, k, got, err)
			}
		}
	}
	var end logPos
	write := func(ws ...AccountWrite) {
		t.Helper()
		end = commitLog(t, lg, ws)
		for _, w := range ws {
			model[w.Key] = w.Account
		}
	}
	recordLen := func(k solana.PublicKey) int {
		t.Helper()
		loc, ok := lg.keydir.get(k)
		if !ok {
			t.Fatalf("no entry for %s", k)
		}
		return int(loc.n)
	}
	const base = 60_000 // testKey's 16 bits: beyond the dictionary's accounts
	write(AccountWrite{Key: testKey(0), Account: token(spl.TokenProgramID, mintOf(0), 1)},
		AccountWrite{Key: testKey(1), Account: token(spl.TokenProgramID, mintOf(1), 2)})
	// Killed before the commit of a slot with a new mint.
	if _, err := lg.append([]AccountWrite{{Key: testKey(base), Account: token(spl.TokenProgramID, mintOf(base), 3)}}); err != nil {
		t.Fatal(err)
	}
	if from, m := lg.unsavedMints(); from != 2 || len(m) != 1 || m[0] != mintOf(base) {
		t.Fatalf("unsaved mints from %d: %v", from, m)
	}
	lg.abandon()
	if lg, err = openLogAfter(dir, end, 1<<20, lg); err != nil {
		t.Fatal(err)
	}
	if a, err := lg.get(testKey(base)); err != nil || a != nil {
		t.Fatalf("the account of the slot that never committed: %+v, %v", a, err)
	}
	write(AccountWrite{Key: testKey(2), Account: token(spl.TokenProgramID, mintOf(2), 4)})
	if lg.mintIDs[mintOf(2)] != 2 {
		t.Fatalf("index %d for the next mint, want the lost one's", lg.mintIDs[mintOf(2)])
	}
	check("after a kill")
	// The dictionary fills up, one new mint per account.
	for next := 3; next < accountLogMints+10; {
		var ws []AccountWrite
		for range min(1000, accountLogMints+10-next) {
			ws = append(ws, AccountWrite{Key: testKey(next), Account: token(spl.TokenProgramID, mintOf(next), uint64(next))})
			next++
		}
		write(ws...)
	}
	if len(lg.mints) != accountLogMints || lg.mintsSaved != accountLogMints {
		t.Fatalf("%d mints in the dictionary, %d saved; want %d", len(lg.mints), lg.mintsSaved, accountLogMints)
	}
	named, whole := recordLen(testKey(3)), recordLen(testKey(accountLogMints+1))
	if whole-named < 31 {
		t.Fatalf("record of a named mint %d bytes, of one beyond the dictionary %d", named, whole)
	}
	// Only token accounts are named.
	for i, o := range []struct {
		a     *Account
		named bool
	}{
		{withType(token(spl.Token2022ProgramID, mintOf(1), 5), spl.AccountTypeAccount), true},
		{withType(token(spl.Token2022ProgramID, mintOf(1), 5), 1), false}, // a Token-2022 mint's layout
		{token(solana.SystemProgramID, mintOf(1), 5), false},
		{token(spl.TokenProgramID, solana.PublicKey{}, 5), false},
	} {
		k := testKey(base + 1 + i)
		write(AccountWrite{Key: k, Account: o.a})
		plain := accountRecordHeader + 32 + len(appendAccountRecord(nil, o.a))
		if got := recordLen(k); (got < plain) != o.named {
			t.Fatalf("account %d: record %d bytes, %d whole; want named %v", i, got, plain, o.named)
		}
	}
	check("written")
	if err := lg.close(); err != nil {
		t.Fatal(err)
	}
	if lg, err = openLogAfter(dir, end, 1<<20, lg); err != nil {
		t.Fatal(err)
	}
	check("reopened")
	lg.close()
}

// TestAccountLogCleaningRecodes: cleaning copies a live record encoded
// again when that makes it shorter: token accounts written before the
// mint dictionary (here: with it off), left live in segments whose other
// records were written again, come out naming their mint (at least half
// of them copied before the test stops), and read back, before and after
// a reopen.
func TestAccountLogCleaningRecodes(t *testing.T) {
	dir := t.TempDir()
	const seg = 4 << 10
	lg, err := openAccountLog(dir, logPos{}, true, seg)
	if err != nil {
		t.Fatal(err)
	}
	mint := solana.PublicKeyFromBytes(bytes.Repeat([]byte{0xAB}, 32))
	token := func(i, amount int) *Account {
		return &Account{Lamports: 2_039_280, Owner: spl.TokenProgramID, RentEpoch: ^uint64(0),
			Data: spl.TokenAccount{Mint: mint, Owner: solana.PublicKeyFromBytes(bytes.Repeat([]byte{byte(i + 1)}, 32)), Amount: uint64(amount), State: spl.StateInitialized}.Encode()}
	}
	const cold = 60
	lg.mintsMax = 0 // records as before the dictionary
	var end logPos
	for i := 0; i < cold; i += 10 {
		var ws []AccountWrite
		for j := i; j < i+10; j++ {
			ws = append(ws, AccountWrite{Key: testKey(j), Account: token(j, j)})
		}
		end = commitLog(t, lg, ws)
	}
	// Every account but each tenth written again, with the dictionary:
	// the old segments hold a tenth of their records live.
	lg.mintsMax = accountLogMints
	var ws []AccountWrite
	kept := map[solana.PublicKey]accLoc{}
	for i := range cold {
		if i%10 != 0 {
			ws = append(ws, AccountWrite{Key: testKey(i), Account: token(i, i+1)})
		} else {
			kept[testKey(i)], _ = lg.keydir.get(testKey(i))
		}
	}
	end = commitLog(t, lg, ws)
	want := func(i int) *Account {
		if i%10 != 0 {
			return token(i, i+1)
		}
		return token(i, i)
	}
	// copied counts the kept records cleaning copied, each of which must
	// have come out naming its mint.
	copied := func(when string) int {
		t.Helper()
		n := 0
		for k, was := range kept {
			if loc, _ := lg.keydir.get(k); loc != was {
				if loc.n+31 > was.n {
					t.Fatalf("%s: a record of %d bytes copied as %d", when, was.n, loc.n)
				}
				n++
			}
		}
		return n
	}
	// New accounts, each written four times over four slots: segments a
	// quarter live, the log four times its live bytes, so cleaning runs
	// and takes the emptiest segments, the old ones, first; until the
	// kept records were copied.
	for slot := 0; slot < 3000 && copied("cleaning") < len(kept)/2; slot++ {
		var ws []AccountWrite
		for back := range 4 {
			if n := slot - back; n >= 0 {
				ws = append(ws, AccountWrite{Key: testKey(1000 + n), Account: testAccount(uint64(slot), 100)})
			}
		}
		end = commitLog(t, lg, ws)
	}
	check := func(when string) {
		t.Helper()
		for i := range cold {
			a, err := lg.get(testKey(i))
			if err != nil || a == nil || !bytes.Equal(a.Data, want(i).Data) || a.Lamports != 2_039_280 {
				t.Fatalf("%s: account %d: %+v, %v", when, i, a, err)
			}
		}
		if n := copied(when); n < len(kept)/2 {
			t.Fatalf("%s: %d of %d records kept from before the dictionary copied", when, n, len(kept))
		}
	}
	check("cleaned")
	if err := lg.close(); err != nil {
		t.Fatal(err)
	}
	if lg, err = openLogAfter(dir, end, seg, lg); err != nil {
		t.Fatal(err)
	}
	check("reopened")
	lg.close()
}
