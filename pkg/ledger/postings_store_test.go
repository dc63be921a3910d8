package ledger

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	bolt "go.etcd.io/bbolt"

	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// updateDB runs fn in a write transaction on the closed ledger database
// in dir.
func updateDB(t *testing.T, dir string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, dbFileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// bucketKeys counts the keys of a bucket of l's store below slot end
// (all: end 0).
func bucketKeys(t *testing.T, l *Ledger, name []byte, end uint64) int {
	t.Helper()
	n := 0
	err := l.store.(*boltStore).db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(name).ForEach(func(k, _ []byte) error {
			if end == 0 || binary.BigEndian.Uint64(k) < end {
				n++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// postingWidth is the key width of the addrslot value of slot (0: none).
func postingWidth(t *testing.T, l *Ledger, slot uint64) int {
	t.Helper()
	w := 0
	err := l.store.(*boltStore).db.View(func(tx *bolt.Tx) error {
		if v := slotValue(tx.Bucket(bucketAddrSlot), u64be(slot), nil); len(v) > 0 {
			w = int(v[0])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// removeHeadsFiles removes the heads table's base and runs from a closed
// ledger's directory, so the next open rebuilds it from history.
func removeHeadsFiles(t *testing.T, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "heads*"))
	if len(files) == 0 {
		t.Fatal("no heads files after close")
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
}

// sendTo lands a transfer from payer to each of to in one transaction.
func sendTo(t *testing.T, l *Ledger, payer ed25519.PrivateKey, memo string, to ...solana.PublicKey) *TxRecord {
	t.Helper()
	var ixs []txwire.Instruction
	for _, k := range to {
		ixs = append(ixs, spl.SystemTransfer(pubkeyOf(payer), k, 1_000_000))
	}
	return mustProcess(t, l, buildTx(t, l, payer, append(ixs, spl.Memo(memo))))
}

func randomAddr(t *testing.T) solana.PublicKey {
	t.Helper()
	var k solana.PublicKey
	if _, err := rand.Read(k[:]); err != nil {
		t.Fatal(err)
	}
	return k
}

// checkAddressHistory checks getSignaturesForAddress of addr against
// want (oldest first): the whole list, pages of every size through
// before, until every one of them, and before/until pairs.
func checkAddressHistory(t *testing.T, l *Ledger, addr solana.PublicKey, want []*TxRecord) {
	t.Helper()
	newest := slices.Clone(want)
	slices.Reverse(newest)
	sigsOf := func(rs []*TxRecord) []solana.Signature {
		out := make([]solana.Signature, len(rs))
		for i, r := range rs {
			out[i] = r.Signature
		}
		return out
	}
	wantSigs := sigsOf(newest)
	list := func(q AddressQuery) []solana.Signature {
		t.Helper()
		rs, err := l.SignaturesForAddress(addr, q, Confirmed)
		if err != nil {
			t.Fatal(err)
		}
		return sigsOf(rs)
	}
	if got := list(AddressQuery{}); !slices.Equal(got, wantSigs) {
		t.Fatalf("%s: %d signatures, want %d:\n%v\n%v", addr, len(got), len(wantSigs), got, wantSigs)
	}
	for limit := 1; limit <= 4; limit++ {
		var paged []solana.Signature
		var before *solana.Signature
		for {
			page := list(AddressQuery{Before: before, Limit: limit})
			if len(page) == 0 {
				break
			}
			if len(page) > limit {
				t.Fatalf("page of %d with limit %d", len(page), limit)
			}
			paged = append(paged, page...)
			before = &paged[len(paged)-1]
		}
		if !slices.Equal(paged, wantSigs) {
			t.Fatalf("%s: paged by %d: %d signatures, want %d", addr, limit, len(paged), len(wantSigs))
		}
	}
	for i := range wantSigs {
		if got := list(AddressQuery{Until: &wantSigs[i]}); !slices.Equal(got, wantSigs[:i]) {
			t.Fatalf("%s: until #%d: %d signatures, want %d", addr, i, len(got), i)
		}
		for j := i + 1; j < len(wantSigs); j++ {
			if got := list(AddressQuery{Before: &wantSigs[i], Until: &wantSigs[j]}); !slices.Equal(got, wantSigs[i+1:j]) {
				t.Fatalf("%s: before #%d until #%d: %d signatures, want %d", addr, i, j, len(got), j-i-1)
			}
		}
	}
}

// TestLegacyPostingsUpgrade writes history with the ferry-ledger-3
// postings (addrpost), upgrades the directory by opening it, and checks
// getSignaturesForAddress across the two layouts: after more slots, after
// the heads table is rebuilt from both, after pruning the old slots, and
// after a reopen.
func TestLegacyPostingsUpgrade(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Name: "upgrade", DataDir: dir, NoSync: true, FinalityDepth: 1, ManualSlots: true, tableRewriteMin: 8}
	open := func(t *testing.T, cfg Config) *Ledger {
		t.Helper()
		l, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	closeL := func(t *testing.T, l *Ledger) {
		t.Helper()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	watched, other := randomAddr(t), randomAddr(t)
	var watchedTxs, otherTxs []*TxRecord
	// fill lands transactions over slots: to watched (one or two per
	// slot), to other in some, both in some.
	fill := func(t *testing.T, l *Ledger, payer ed25519.PrivateKey, slots int, tag string) {
		t.Helper()
		for i := 0; i < slots; i++ {
			r := sendTo(t, l, payer, tag+"a", watched)
			watchedTxs = append(watchedTxs, r)
			switch i % 3 {
			case 0:
				watchedTxs = append(watchedTxs, sendTo(t, l, payer, tag+"b", watched))
			case 1:
				otherTxs = append(otherTxs, sendTo(t, l, payer, tag+"c", other))
			case 2:
				r := sendTo(t, l, payer, tag+"d", other, watched)
				watchedTxs, otherTxs = append(watchedTxs, r), append(otherTxs, r)
			}
			if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
				t.Fatal(err)
			}
		}
	}

	legacy := cfg
	legacy.legacyPostings = true
	l := open(t, legacy)
	payer := fundedWallet(t, l, 1_000_000_000_000)
	fill(t, l, payer, 6, "old")
	// An address with legacy postings only: its head is replayed from
	// addrpost when the heads table is rebuilt.
	oldOnly := randomAddr(t)
	oldOnlyTxs := []*TxRecord{sendTo(t, l, payer, "only", oldOnly)}
	oldOnlyTxs = append(oldOnlyTxs, sendTo(t, l, payer, "only2", oldOnly, other))
	otherTxs = append(otherTxs, oldOnlyTxs[1])
	if _, err := l.AdvanceSlots(ctxT(t), 3); err != nil {
		t.Fatal(err)
	}
	lastLegacy := watchedTxs[len(watchedTxs)-1].Slot
	if n := bucketKeys(t, l, bucketAddrPost, 0); n < 12 {
		t.Fatalf("%d legacy postings", n)
	}
	if n := bucketKeys(t, l, bucketAddrSlot, 0); n != 0 {
		t.Fatalf("%d addrslot values written in the legacy layout", n)
	}
	closeL(t, l)
	// What the previous release left: its format, no addrslot bucket.
	updateDB(t, dir, func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketAddrSlot); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put([]byte(metaFormat), []byte("ferry-ledger-3"))
	})

	l = open(t, cfg)
	if f, err := l.store.(*boltStore).getMeta(metaFormat); err != nil || string(f) != storeFormat {
		t.Fatalf("format after the upgrade: %q, %v", f, err)
	}
	checkAddressHistory(t, l, watched, watchedTxs)
	fill(t, l, payer, 6, "new")
	if _, err := l.AdvanceSlots(ctxT(t), 3); err != nil {
		t.Fatal(err)
	}
	if n := bucketKeys(t, l, bucketAddrSlot, 0); n < 6 {
		t.Fatalf("%d addrslot values", n)
	}
	if watchedTxs[0].Slot > lastLegacy || watchedTxs[len(watchedTxs)-1].Slot <= lastLegacy {
		t.Fatal("the history does not span both layouts")
	}
	checkAddressHistory(t, l, watched, watchedTxs)
	checkAddressHistory(t, l, other, otherTxs)
	checkAddressHistory(t, l, oldOnly, oldOnlyTxs)
	closeL(t, l)

	// The heads rebuilt from all history: legacy keys and transactions.
	if err := os.Remove(filepath.Join(dir, "heads")); err != nil {
		t.Fatal(err)
	}
	l = open(t, cfg)
	checkAddressHistory(t, l, watched, watchedTxs)
	checkAddressHistory(t, l, other, otherTxs)
	checkAddressHistory(t, l, oldOnly, oldOnlyTxs)
	// A slot committed after the rebuild links to the replayed heads.
	fill(t, l, payer, 2, "replayed")
	checkAddressHistory(t, l, watched, watchedTxs)
	closeL(t, l)

	// Pruning past the legacy slots deletes their postings from both
	// buckets.
	pruning := cfg
	pruning.LimitLedgerSize = 4
	l = open(t, pruning)
	if _, err := l.AdvanceSlots(ctxT(t), recentBlocks+8); err != nil {
		t.Fatal(err)
	}
	fill(t, l, payer, 4, "late")
	if _, err := l.AdvanceSlots(ctxT(t), recentBlocks+8); err != nil {
		t.Fatal(err)
	}
	fill(t, l, payer, 1, "last")
	// AdvanceSlot returns once its slot is durable, which is after the
	// pruning step of the slot before: the last step that could delete
	// is done.
	if _, err := l.AdvanceSlots(ctxT(t), 2); err != nil {
		t.Fatal(err)
	}
	first := l.FirstAvailableBlock()
	if first <= lastLegacy {
		t.Fatalf("first kept slot %d, legacy postings up to %d", first, lastLegacy)
	}
	if n := bucketKeys(t, l, bucketAddrPost, 0); n != 0 {
		t.Fatalf("%d legacy postings left after pruning", n)
	}
	if n := bucketKeys(t, l, bucketAddrSlot, first); n != 0 {
		t.Fatalf("%d addrslot values below the first kept slot %d", n, first)
	}
	kept := func(rs []*TxRecord) []*TxRecord {
		return slices.DeleteFunc(slices.Clone(rs), func(r *TxRecord) bool { return r.Slot < first })
	}
	if len(kept(watchedTxs)) == 0 || len(kept(watchedTxs)) == len(watchedTxs) {
		t.Fatalf("%d of %d transactions kept", len(kept(watchedTxs)), len(watchedTxs))
	}
	checkAddressHistory(t, l, watched, kept(watchedTxs))
	checkAddressHistory(t, l, other, kept(otherTxs))
	checkAddressHistory(t, l, oldOnly, nil)
	closeL(t, l)
	l = open(t, pruning)
	defer closeL(t, l)
	checkAddressHistory(t, l, watched, kept(watchedTxs))
	checkAddressHistory(t, l, other, kept(otherTxs))
}

// TestPostingsSharedPrefix checks getSignaturesForAddress is exact for
// addresses sharing their first 8 bytes (the postings' usual key width):
// in one slot (stored with whole keys), and across slots, where a query's
// before= names a transaction of another address with the same prefix.
func TestPostingsSharedPrefix(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Name: "prefix", DataDir: dir, NoSync: true, FinalityDepth: 1, ManualSlots: true}
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	payer := fundedWallet(t, l, 1_000_000_000_000)
	a := randomAddr(t)
	b, c, d := withPrefixOf(a, 1), withPrefixOf(a, 2), withPrefixOf(a, 3)
	advance := func() {
		t.Helper()
		if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	a1 := sendTo(t, l, payer, "a1", a)
	b1 := sendTo(t, l, payer, "b1", b)
	advance()
	c1 := sendTo(t, l, payer, "c1", c)
	advance()
	a2 := sendTo(t, l, payer, "a2", a)
	ab := sendTo(t, l, payer, "ab", b, a)
	advance()
	if _, err := l.AdvanceSlots(ctxT(t), 3); err != nil {
		t.Fatal(err)
	}
	if a1.Slot != b1.Slot || c1.Slot == a1.Slot || a2.Slot == c1.Slot || ab.Slot != a2.Slot {
		t.Fatalf("slots %d %d %d %d %d", a1.Slot, b1.Slot, c1.Slot, a2.Slot, ab.Slot)
	}
	check := func(t *testing.T, l *Ledger) {
		t.Helper()
		for _, tc := range []struct {
			slot  uint64
			width int
		}{{a1.Slot, postingFull}, {c1.Slot, postingPrefix}, {a2.Slot, postingFull}} {
			if w := postingWidth(t, l, tc.slot); w != tc.width {
				t.Fatalf("slot %d: key width %d, want %d", tc.slot, w, tc.width)
			}
		}
		checkAddressHistory(t, l, a, []*TxRecord{a1, a2, ab})
		checkAddressHistory(t, l, b, []*TxRecord{b1, ab})
		checkAddressHistory(t, l, c, []*TxRecord{c1})
		checkAddressHistory(t, l, d, nil)
		for _, tc := range []struct {
			name   string
			addr   solana.PublicKey
			before solana.Signature
			want   []solana.Signature
		}{
			// c1's slot has 8-byte prefixes and c's matches a's and d's.
			{"a before c's transaction", a, c1.Signature, []solana.Signature{a1.Signature}},
			{"d before c's transaction", d, c1.Signature, nil},
			{"b before c's transaction", b, c1.Signature, []solana.Signature{b1.Signature}},
			// Whole keys: b has a posting in a1's slot, after a1.
			{"b before a1", b, a1.Signature, nil},
			{"a before b1", a, b1.Signature, []solana.Signature{a1.Signature}},
			{"d before ab", d, ab.Signature, nil},
			{"b before a2", b, a2.Signature, []solana.Signature{b1.Signature}},
		} {
			rs, err := l.SignaturesForAddress(tc.addr, AddressQuery{Before: &tc.before}, Confirmed)
			if err != nil {
				t.Fatal(err)
			}
			var got []solana.Signature
			for _, r := range rs {
				got = append(got, r.Signature)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	}
	check(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Replayed from the transactions: the heads' base and runs go.
	removeHeadsFiles(t, dir)
	if l, err = Open(cfg); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	check(t, l)
}

// TestStoreFormatUpgrade checks which data formats open accepts: the
// current one, ferry-ledger-3, -4, -5, -6 and -7 (upgraded in place, so an
// older ferry then refuses them), and no other.
func TestStoreFormatUpgrade(t *testing.T) {
	for _, tc := range []struct {
		format string
		err    string // "" if accepted
	}{
		{storeFormat, ""},
		{"ferry-ledger-3", ""},
		{"ferry-ledger-4", ""},
		{"ferry-ledger-5", ""},
		{"ferry-ledger-6", ""},
		{"ferry-ledger-7", ""},
		{"ferry-ledger-2", "written by an older ferry"},
		{"ferry-ledger-9", "unknown data format"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			dir := t.TempDir()
			s, err := openBoltStore(dir, true, 0, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.close(); err != nil {
				t.Fatal(err)
			}
			updateDB(t, dir, func(tx *bolt.Tx) error {
				if tc.format != storeFormat {
					// Older directories lack these (ferry-ledger-3 addrslot,
					// all of them the mint dictionary).
					for _, b := range [][]byte{bucketAddrSlot, bucketMints} {
						if err := tx.DeleteBucket(b); err != nil {
							return err
						}
					}
				}
				return tx.Bucket(bucketMeta).Put([]byte(metaFormat), []byte(tc.format))
			})
			s, err = openBoltStore(dir, true, 0, 0, 0)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			f, err := s.getMeta(metaFormat)
			if err != nil || string(f) != storeFormat {
				t.Fatalf("format %q, %v", f, err)
			}
			if err := s.db.View(func(tx *bolt.Tx) error {
				if tx.Bucket(bucketAddrSlot) == nil || tx.Bucket(bucketMints) == nil {
					t.Error("no addrslot or mint dictionary bucket")
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestPostingBytes measures what address postings cost on disk in both
// layouts, for slots whose transfers go to a few repeating addresses and
// for slots where nearly every destination is new (a ledger of many
// accounts), and checks the addrslot layout's posting stays small where
// addrpost's was largest. Run with -v for the numbers:
//
//	go test -count=1 -run TestPostingBytes -v ./pkg/ledger/
func TestPostingBytes(t *testing.T) {
	const (
		slots       = 4
		txsPerSlot  = 1000
		payers      = 16
		repeatAddrs = 64
	)
	type result struct{ perTx, perPosting float64 }
	measure := func(t *testing.T, legacy, distinct bool) result {
		dir := t.TempDir()
		cfg := Config{Name: "bytes", DataDir: dir, NoSync: true, FinalityDepth: 1, ManualSlots: true, legacyPostings: legacy}
		l, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ks := make([]ed25519.PrivateKey, payers)
		for i := range ks {
			ks[i] = fundedWallet(t, l, 1_000_000_000_000)
		}
		pool := make([]solana.PublicKey, repeatAddrs)
		for i := range pool {
			pool[i] = randomAddr(t)
		}
		if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		start := l.Slot(Confirmed)
		for s := 0; s < slots; s++ {
			bh, _ := l.LatestBlockhash(Processed)
			raws := make([][]byte, txsPerSlot)
			for i := range raws {
				p, n := ks[i%payers], s*txsPerSlot+i
				to := pool[n%repeatAddrs]
				if distinct {
					to = randomAddr(t)
				}
				raws[i] = buildTxWith(t, bh.Blockhash, p, []txwire.Instruction{spl.SystemTransfer(pubkeyOf(p), to, 1_000_000+uint64(n))})
			}
			errs := make(chan error, payers)
			for p := 0; p < payers; p++ {
				go func(p int) {
					for i := p; i < txsPerSlot; i += payers {
						if _, err := l.Process(ctxT(t), raws[i]); err != nil {
							errs <- err
							return
						}
					}
					errs <- nil
				}(p)
			}
			for p := 0; p < payers; p++ {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
				t.Fatal(err)
			}
		}
		var txs, postings, bytes int
		err = l.store.(*boltStore).db.View(func(tx *bolt.Tx) error {
			blocks := tx.Bucket(bucketBlocks)
			bc := blocks.Cursor()
			for k, v := bc.Seek(u64be(start + 1)); k != nil; k, v = bc.Next() {
				r, err := decodeBlock(slotValue(blocks, k, v))
				if err != nil {
					return err
				}
				txs += len(r.Signatures)
			}
			name := bucketAddrSlot
			if legacy {
				name = bucketAddrPost
			}
			b := tx.Bucket(name)
			c := b.Cursor()
			for k, v := c.Seek(u64be(start + 1)); k != nil; k, v = c.Next() {
				if legacy {
					postings++
					bytes += 16 + len(k) + len(v) // bbolt's leaf element header
					continue
				}
				v = slotValue(b, k, v)
				sp, err := parseSlotPostings(binary.BigEndian.Uint64(k), v)
				if err != nil {
					return err
				}
				postings += sp.n
				bytes += 16 + len(k) + len(v)
			}
			st := b.Stats()
			t.Logf("%s (whole bucket, funding included): %d keys, leaf pages %d + %d overflow, %d of %d leaf bytes in use, %d branch pages",
				name, st.KeyN, st.LeafPageN, st.LeafOverflowN, st.LeafInuse, st.LeafAlloc, st.BranchPageN)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if txs != slots*txsPerSlot {
			t.Fatalf("%d transactions in the measured slots, want %d", txs, slots*txsPerSlot)
		}
		r := result{float64(bytes) / float64(txs), float64(bytes) / float64(postings)}
		t.Logf("%.1f postings per transaction; %.1f bytes per transaction, %.1f per posting (elements with bbolt's 16-byte header)",
			float64(postings)/float64(txs), r.perTx, r.perPosting)
		return r
	}
	for _, tc := range []struct {
		name     string
		distinct bool
	}{
		{"repeating destinations", false},
		{"distinct destinations", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var old, cur result
			t.Run("addrpost", func(t *testing.T) { old = measure(t, true, tc.distinct) })
			t.Run("addrslot", func(t *testing.T) { cur = measure(t, false, tc.distinct) })
			// A posting with one index (a new destination) is ~18 bytes;
			// repeating addresses have one posting with many indexes,
			// one byte each.
			if cur.perTx > old.perTx/2 || (tc.distinct && cur.perPosting > 22) {
				t.Fatalf("addrslot: %.1f bytes per transaction, %.1f per posting (addrpost: %.1f, %.1f)",
					cur.perTx, cur.perPosting, old.perTx, old.perPosting)
			}
		})
	}
}

// TestHeadsRewrittenByTransactions checks the heads table is rewritten
// once as many transactions as its rewrite threshold were committed after
// its file, even when they change few addresses: a restart after a crash
// replays the heads from those transactions' records.
func TestHeadsRewrittenByTransactions(t *testing.T) {
	cfg := Config{Name: "heads", DataDir: t.TempDir(), NoSync: true, FinalityDepth: 1, tableRewriteMin: 8}
	l := openTest(t, cfg)
	s := l.store.(*boltStore)
	headsSlot := func() uint64 {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return tableSlot(s.heads.meta)
	}
	payer := fundedWallet(t, l, 1_000_000_000_000)
	to := randomAddr(t)
	var last uint64
	for i := 0; i < 4; i++ {
		for j := 0; j < 3; j++ {
			sendTo(t, l, payer, string(rune('a'+3*i+j)), to)
		}
		slot, err := l.AdvanceSlot(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		last = slot
	}
	// The rewrite runs beside the commits and a later commit adopts it:
	// commit empty slots until one has (bounded; each waits for its sync).
	for i := 0; i < 1000 && headsSlot() == 0; i++ {
		if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	s.mu.RLock()
	changes := s.heads.changes()
	s.mu.RUnlock()
	if got := headsSlot(); got == 0 || got > last {
		t.Fatalf("heads file at slot %d after 13 transactions over slots up to %d (%d changes pending)", got, last, changes)
	}
}

// TestHeadsReplayCountsTransactions checks that the heads' replay from the
// slots' postings values (after a kill) sets what the commits set and
// counts the transactions the commits counted: that count is what
// bounds the next replay (saveTables writes the heads' changes as a run
// once it is due).
func TestHeadsReplayCountsTransactions(t *testing.T) {
	cfg := Config{Name: "heads", DataDir: t.TempDir(), NoSync: true, FinalityDepth: 1, tableRewriteMin: 1 << 20}
	l := openTest(t, cfg)
	s := l.store.(*boltStore)
	payer := fundedWallet(t, l, 1_000_000_000_000)
	var addrs []solana.PublicKey
	for i := 0; i < 5; i++ {
		for j := 0; j <= i; j++ {
			to := randomAddr(t)
			addrs = append(addrs, to)
			sendTo(t, l, payer, string(rune('a'+i*8+j)), to, addrs[i])
		}
		if _, err := l.AdvanceSlot(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.heads.recent) == 0 || len(s.heads.runs) != 0 {
		t.Fatalf("heads: %d changes in memory, %d runs", len(s.heads.recent), len(s.heads.runs))
	}
	want := map[uint64]uint64{}
	for _, a := range addrs {
		want[headKey(a)], _ = s.heads.get(headKey(a))
	}
	counted := s.headsTxs
	// Forget what the commits did, as a kill would, and replay.
	reopened, err := openTable(s.heads.path, headCodec)
	if err != nil {
		t.Fatal(err)
	}
	s.heads.unmapAll()
	s.heads, s.headsTxs = reopened, 0
	if err := s.db.View(func(tx *bolt.Tx) error {
		_, err := s.replayHeads(tx, tableSlot(s.heads.meta)+1, tableSlot(s.heads.meta))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if s.headsTxs != counted || counted < 15 {
		t.Fatalf("replay counted %d transactions, the commits %d", s.headsTxs, counted)
	}
	for k, v := range want {
		if got, _ := s.heads.get(k); got != v || v == 0 {
			t.Fatalf("head of %x: replayed %d, committed %d", k, got, v)
		}
	}
}

// TestMintDictionaryUpgrade: a directory of ferry-ledger-6, whose token
// accounts' records hold their mint whole, opens renamed to the current
// format with every balance as it was; the transfers after that write
// records naming the mint in the dictionary, which the database then
// holds, and a reopen reads them back.
func TestMintDictionaryUpgrade(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Name: "mints", DataDir: dir, NoSync: true, FinalityDepth: 1, ManualSlots: true}
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l.store.(*boltStore).acc.mintsMax = 0 // records as ferry-ledger-6 wrote them
	tk := setupToken(t, l, 1_000_000)
	send := func(amount uint64) {
		t.Helper()
		mustProcess(t, l, buildTx(t, l, tk.alice, []txwire.Instruction{
			spl.TokenTransferChecked(spl.TokenProgramID, tk.aliceAta, tk.mint, tk.bobA, pubkeyOf(tk.alice), amount, 6),
		}))
	}
	send(100)
	check := func(when string, alice, bob uint64) {
		t.Helper()
		if a, b := tokenAmount(t, l, tk.aliceAta, Processed), tokenAmount(t, l, tk.bobA, Processed); a != alice || b != bob {
			t.Fatalf("%s: balances %d and %d, want %d and %d", when, a, b, alice, bob)
		}
	}
	dictionary := func() []solana.PublicKey {
		t.Helper()
		var mints []solana.PublicKey
		if err := l.store.(*boltStore).db.View(func(tx *bolt.Tx) error {
			mints, err = loadMints(tx.Bucket(bucketMints))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return mints
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	updateDB(t, dir, func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketMints); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put([]byte(metaFormat), []byte("ferry-ledger-6"))
	})
	var logs bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if l, err = Open(cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "from=ferry-ledger-6 to="+storeFormat) {
		t.Fatalf("no upgrade logged:\n%s", logs.String())
	}
	if f, err := l.store.(*boltStore).getMeta(metaFormat); err != nil || string(f) != storeFormat {
		t.Fatalf("format %q, %v", f, err)
	}
	check("upgraded", 999_900, 100)
	if d := dictionary(); len(d) != 0 {
		t.Fatalf("dictionary %v before any record names a mint", d)
	}
	send(50)
	check("after a transfer", 999_850, 150)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err = Open(cfg); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	check("reopened", 999_850, 150)
	if d := dictionary(); len(d) != 1 || d[0] != tk.mint {
		t.Fatalf("dictionary %v, want the mint %s", d, tk.mint)
	}
}
