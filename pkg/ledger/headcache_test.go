package ledger

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TestHeadCache checks the heads against a model of each address's newest
// posting, for addresses created and paid again over many slots, through
// key-directory rewrites (tiny segments make them frequent), the heads
// table's runs, cache files written every few transactions, copies of the
// directory taken between slots (what a kill leaves, background rewrites
// included), wallets deleted once the base holds them, and a clean
// reopen: every head is the model's; the cache
// follows the key directory's newest base and, after an open, knows
// every address of the base; the postings of live accounts of the base
// change the cache alone (the heads table falls behind for them); and an
// open without the cache's file (lost) still finds every head.
func TestHeadCache(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Name: "headcache", DataDir: dir, NoSync: true, FinalityDepth: 1, ManualSlots: true,
		accountSegmentBytes: 4 << 10, tableRewriteMin: 40, tableRunChanges: 64}
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { l.Close() }()
	var addrs []solana.PublicKey
	model := map[uint64]uint64{}
	check := func(phase string, l *Ledger, afterOpen, covers bool) {
		t.Helper()
		s := l.store.(*boltStore)
		s.mu.RLock()
		defer s.mu.RUnlock()
		if s.hc.base != s.acc.keydir.base {
			t.Fatalf("%s: the cache is not on the key directory's base", phase)
		}
		covered, behind := 0, 0
		for _, a := range addrs {
			p := headKey(a)
			want := model[p]
			i := s.hc.index(p)
			kb := s.acc.keydir.base
			if inBase := len(kb.prefixes) > 0 && kb.indexAt(a[:]) >= 0; (i >= 0) != inBase {
				t.Fatalf("%s: %s in the cache: %v, in the key directory's base: %v", phase, a, i >= 0, inBase)
			}
			if i >= 0 {
				covered++
				switch v := atomic.LoadUint32(&s.hc.slots[i]); {
				case v == headUnknown && afterOpen:
					t.Fatalf("%s: %s unknown to the cache after an open", phase, a)
				case v != headUnknown && uint64(v) != want:
					t.Fatalf("%s: cache has %d for %s, want %d", phase, v, a, want)
				}
				if v, _ := s.heads.get(p); v != want && s.hcOwns(i) {
					behind++
				}
			}
			if got := s.head(p); got != want || want == 0 {
				t.Fatalf("%s: head of %s is %d, want %d", phase, a, got, want)
			}
		}
		if covers && (covered < 1000 || behind < 100) {
			t.Fatalf("%s: %d of %d addresses in the cache, %d of them ahead of the heads table", phase, covered, len(addrs), behind)
		}
	}
	payer := fundedWallet(t, l, 1_000_000_000_000)
	send := func(memo string, to []solana.PublicKey) {
		t.Helper()
		r := sendTo(t, l, payer, memo, to...)
		for _, a := range to {
			model[headKey(a)] = r.Slot
		}
	}
	// Wallets this test holds the keys of, so it can delete them (drain
	// them) once the key directory's base holds them.
	var own []ed25519.PrivateKey
	var base *tableFile
	bases, copies, filed, deleted := 0, 0, 0, 0
	for slot := 0; slot < 300; slot++ {
		var to []solana.PublicKey
		for range 10 {
			to = append(to, randomAddr(t))
		}
		w := newKey(t)
		own = append(own, w)
		to = append(to, pubkeyOf(w))
		addrs = append(addrs, to...)
		send(fmt.Sprint(slot), to)
		if slot%20 == 19 {
			w := own[slot/2]
			a, _ := l.Account(pubkeyOf(w), Processed)
			if a == nil {
				t.Fatalf("slot %d: wallet %d missing", slot, slot/2)
			}
			r := mustProcess(t, l, buildTx(t, l, payer, []txwire.Instruction{spl.SystemTransfer(pubkeyOf(w), pubkeyOf(payer), a.Lamports)}, w))
			model[headKey(pubkeyOf(w))], model[headKey(pubkeyOf(payer))] = r.Slot, r.Slot
			if a, _ := l.Account(pubkeyOf(w), Processed); a != nil {
				t.Fatalf("slot %d: a drained wallet still exists", slot)
			}
			deleted++
		}
		// Pay earlier addresses again, so their heads move on (and the
		// log grows, which makes the key directory due for rewrites).
		if slot > 0 {
			to = to[:0]
			for j := range 12 {
				to = append(to, addrs[(slot*7+j*13)%(len(addrs)-10)])
			}
			send(fmt.Sprint("again ", slot), to)
		}
		if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("slot %d", slot), l, false, slot == 299)
		if b := l.store.(*boltStore).acc.keydir.base; b != base {
			base, bases = b, bases+1
		}
		if slot%37 == 36 {
			// What a kill now leaves: the copy opens to the same heads.
			copies++
			crash := filepath.Join(t.TempDir(), "crash")
			copyStable(t, dir, crash)
			c := cfg
			c.DataDir = crash
			lc, err := Open(c)
			if err != nil {
				t.Fatalf("slot %d: open a copy: %v", slot, err)
			}
			check(fmt.Sprintf("slot %d, a copy", slot), lc, true, false)
			if ls := lc.store.(*boltStore); len(ls.hc.slots) > 0 {
				if !ls.hcFile {
					t.Fatalf("slot %d: no heads cache file for the key directory's base in a copy", slot)
				}
				filed++
			}
			lc.Close()
		}
	}
	if bases < 3 || filed < 6 || deleted < 10 {
		t.Fatalf("the key directory's base was written %d times, the directory copied with a cache %d times of %d, %d wallets deleted", bases, filed, copies, deleted)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	replayed := func(when string, some bool) {
		t.Helper()
		m := regexp.MustCompile(`heads_replayed=(\d+) `).FindStringSubmatch(logs.String())
		if m == nil || (m[1] != "0") != some {
			t.Fatalf("%s: postings replayed: %v (want some: %v)\n%s", when, m, some, logs.String())
		}
		logs.Reset()
	}
	if l, err = Open(cfg); err != nil {
		t.Fatal(err)
	}
	check("reopened", l, true, true)
	replayed("after a clean close", false)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// The cache's file lost: every posting is replayed.
	files, _ := filepath.Glob(filepath.Join(dir, headCachePrefix+"*"))
	if len(files) != 1 {
		t.Fatalf("heads cache files after a clean close: %v", files)
	}
	os.Remove(files[0])
	if l, err = Open(cfg); err != nil {
		t.Fatal(err)
	}
	check("reopened without the cache's file", l, true, true)
	replayed("without the cache's file", true)
	if files, _ = filepath.Glob(filepath.Join(dir, headCachePrefix+"*")); len(files) != 1 {
		t.Fatalf("heads cache files after an open without one: %v", files)
	}
}

// TestHeadCacheFileTableSlot: a heads cache file written while the heads
// table has no change only memory holds records the tip as the table's
// slot too, so an open after it replays from the tip however old the
// table's newest file (a ledger whose postings all went to the cache
// would otherwise replay every slot since that file at each open); with
// a change in memory it records the table's newest file.
func TestHeadCacheFileTableSlot(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Name: "hcslot", DataDir: dir, NoSync: true, FinalityDepth: 1, ManualSlots: true,
		accountSegmentBytes: 4 << 10, tableRewriteMin: 1 << 20, tableRunChanges: 1 << 20}
	l := openTest(t, cfg)
	payer := fundedWallet(t, l, 1_000_000_000_000)
	s := l.store.(*boltStore)
	// Enough accounts for key-directory bases (tiny segments), so there
	// is a cache.
	for slot := 0; slot < 1000 && len(s.hc.slots) < 200; slot++ {
		var to []solana.PublicKey
		for range 5 {
			to = append(to, randomAddr(t))
		}
		sendTo(t, l, payer, fmt.Sprint(slot), to...)
		if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	openCopy := func(want uint64, tear ...string) {
		t.Helper()
		crash := filepath.Join(t.TempDir(), "copy")
		copyStable(t, dir, crash)
		for _, name := range tear {
			if err := os.Remove(filepath.Join(crash, name)); err != nil {
				t.Fatal(err)
			}
		}
		c := cfg
		c.DataDir = crash
		lc, err := Open(c)
		if err != nil {
			t.Fatal(err)
		}
		defer lc.Close()
		if got := lc.store.(*boltStore).headsReplayFrom; got != want {
			t.Fatalf("the open replayed from slot %d, want %d", got, want)
		}
	}
	// Changes in memory: the file names the table's newest file.
	s.mu.Lock()
	unsaved := s.heads.unsaved()
	err := s.saveHeadCache()
	fileSlot := tableSlot(s.heads.meta)
	s.mu.Unlock()
	if err != nil || unsaved == 0 || len(s.hc.slots) == 0 {
		t.Fatalf("saved the cache (%d entries) with %d table changes in memory: %v", len(s.hc.slots), unsaved, err)
	}
	openCopy(fileSlot + 1)
	// The changes written as a run, then slots without postings: the
	// table is clean, its newest file older than the tip.
	before := fileSlot
	if _, err := saveRun(&s.mu, s.heads, func() []byte { return binary.LittleEndian.AppendUint64(nil, s.tip) }, false, true); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	err = s.saveHeadCache()
	tip, fileSlot := s.tip, tableSlot(s.heads.meta)
	s.mu.Unlock()
	if err != nil || fileSlot >= tip || before >= fileSlot {
		t.Fatalf("table files at slots %d and %d, tip %d: %v", before, fileSlot, tip, err)
	}
	openCopy(tip + 1)
	// The run lost (a damaged run ends the chain of the table's files):
	// the cache file's word for the table no longer holds.
	runs, _ := filepath.Glob(filepath.Join(dir, "heads.run*"))
	if len(runs) == 0 {
		t.Fatal("no heads run")
	}
	slices.Sort(runs)
	openCopy(before+1, filepath.Base(runs[len(runs)-1]))
}

// copyStable copies the data directory dir of a live ledger as copyDir
// does, again until its key directory's base stayed the same file
// throughout. The copy is not a snapshot: the directory is listed before
// its files are read, so a base that a rewrite beside the commits renames
// into place meanwhile can be copied without the heads cache file written
// for it just before the rename, which no kill leaves. (A clean-clone CI
// run failed so once, "no heads cache file for the key directory's base
// in a copy".)
func copyStable(t *testing.T, dir, to string) {
	t.Helper()
	keydir := filepath.Join(dir, accountLogDir, "keydir")
	for {
		before, _ := os.Stat(keydir)
		copyDir(t, dir, to)
		if after, _ := os.Stat(keydir); sameFile(before, after) {
			return
		}
		if err := os.RemoveAll(to); err != nil {
			t.Fatal(err)
		}
	}
}
