package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gagliardetto/solana-go"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Bucket layout (accounts live in the account log, acclog.go):
//
//	meta      name -> value (format, tip slot, genesis data, keys, the
//	          account log's end, the supply)
//	index     kind (1) | by | account -> nothing: the secondary indexes
//	          (bank.go); written when an account gains an entry, which a
//	          transfer between existing accounts never does
//	blocks    slot (8 BE) -> encodeBlock (header, signatures, errors)
//	txs       slot (8 BE) | index (4 BE) -> a compressed chunk of records
//	          from that index on (txchunks.go)
//	addrslot  slot (8 BE) -> the slot's address postings (postings.go)
//	addrpost  slot (8 BE) | pubkey -> previous slot (8 BE) | indexes
//	          (uvarint): the postings of slots committed before
//	          ferry-ledger-4, read where a slot has no addrslot value
//	perf      slot (8 BE) -> encodePerfSample (getRecentPerformanceSamples)
//
// A value of blocks, txs or addrslot at least nestedValueMin long is
// stored as the one element (key 0x00) of a bucket nested under its key,
// so that later commits do not write it again (putSlotValue).
//
// A posting says which transactions of a slot reference an address, and
// the previous slot with a posting for an address with the same first 8
// bytes (0: none), so an address's history is on a chain from its
// prefix's newest posting (the heads table, below) down; nearly always
// no other address of history has the prefix, and where one has, the
// walk skips its postings (headsupgrade.go has the chains of directories
// written before ferry-ledger-6, one per whole address). An addrslot
// value holds all postings of its slot, written once by the slot's
// commit:
//
//	key width (1 byte: 8, or 32 when two addresses of the slot share
//	their first 8 bytes) | count (uvarint) |
//	count × (key prefix (width) | offset (4 BE)), sorted by prefix |
//	per posting, at its offset into what follows the entries:
//	  uvarint(slot - previous slot) | uvarint(n) | n indexes, ascending,
//	  as uvarint deltas (the first from 0)
//
// A posting of one transaction costs 12 fixed bytes and ~6 variable
// ones; one bbolt element per address and slot (the addrpost layout)
// cost ~65. A lookup
// binary-searches the prefix. A slot's prefixes are unique in it (the
// commit checked, else the slot stores whole keys), so a match by prefix
// is the posting of the one address of the slot with it; whether that is
// the address looked up, a transaction the posting lists tells
// (postingReader.onChain). The addresses themselves are in the slot's
// transactions, which is where a restart replays the heads from.
//
// Every key that grows with history starts with the slot, so a slot's
// commit appends at the right edge of those trees and dirties few pages
// however long the history is. Randomly keyed trees would make each
// commit rewrite pages all over an ever larger tree; the two lookups that
// need a random key are served by sortedTables (table.go), files beside
// the database rewritten whole once enough changed since the last one
// (so their cost per change does not grow with their size), which a
// restart rebuilds by replaying the committed slots after the slot they
// cover:
//
//   - heads: an address's first 8 bytes -> newest slot with a posting
//     for an address starting with them; a getSignaturesForAddress walk
//     starts there and follows each posting's previous slot (replayed
//     from the postings' transactions, or addrpost keys);
//   - sigs: first 8 bytes of a signature -> slot << 32 | index (replayed
//     from the block records, which list every signature).
var (
	bucketMeta     = []byte("meta")
	bucketIndex    = []byte("index")
	bucketBlocks   = []byte("blocks")
	bucketTxs      = []byte("txs")
	bucketAddrPost = []byte("addrpost")
	// bucketAddrSlot was added by ferry-ledger-4; open creates it when it
	// upgrades a ferry-ledger-3 directory, whose postings stay in
	// addrpost.
	bucketAddrSlot = []byte("addrslot")
	// bucketPerf was added after storeFormat ferry-ledger-2 was fixed;
	// open creates it in older data directories, which read as having no
	// samples yet.
	bucketPerf = []byte("perf")
	// bucketMints (since ferry-ledger-7): the account log's mint
	// dictionary, index (4 BE) -> mint (32), written with the commit of
	// the first slot whose records name the entry (accountLog.mints).
	bucketMints = []byte("recmints")
	allBuckets  = [][]byte{bucketMeta, bucketIndex, bucketBlocks, bucketTxs, bucketAddrPost, bucketAddrSlot, bucketPerf, bucketMints}
)

// upgradeFormats are the previous layouts, which open upgrades in place
// (upgradeHeads): the heads table is converted to address prefixes and
// the format renamed; ferry-ledger-3's postings stay in addrpost and are
// read from there, and the values of all are read inline or nested
// (putSlotValue). The new name makes an older ferry refuse the directory
// instead of missing the postings of addrslot (before ferry-ledger-4),
// the nested values (before ferry-ledger-5) or postings chained by
// prefix (before ferry-ledger-6).
var upgradeFormats = []string{"ferry-ledger-3", "ferry-ledger-4", "ferry-ledger-5"}

// renameFormats are the previous layouts the current one only adds to,
// which open renames: ferry-ledger-6 had no mint dictionary, so none of
// its records name one (bucketMints); ferry-ledger-7 wrote no values file
// for the key directory (tablevals.go). The new name makes an older ferry
// refuse the directory instead of failing on the records that name a
// mint, or replaying the account log from a base position whose segments
// are gone.
var renameFormats = []string{"ferry-ledger-6", "ferry-ledger-7"}

const (
	dbFileName = "ledger.db"
	metaTip    = "tip"
	metaFormat = "format"
	// metaAccountLog is the account log's end after the tip slot.
	metaAccountLog = "acclog"
	// metaCapital is the supply after the tip slot (8 LE).
	metaCapital = "capital"
	// metaFirst is the oldest slot whose history is kept, then the
	// number of transactions in the slots pruned before it (8 BE each;
	// absent: nothing pruned).
	metaFirst = "first"
	// accountLogDir is the account log's directory in the data directory.
	accountLogDir = "accounts"
	// storeFormat identifies this layout; a data directory written with
	// another one is refused rather than misread, except the
	// upgradeFormats and renameFormats.
	storeFormat = "ferry-ledger-8"
	// recentBlocks is how many blocks load returns: enough to rebuild the
	// blockhash queue and the status cache.
	recentBlocks = MaxProcessingAge + 2
	// tableRewriteMin: a sortedTable of the store is rewritten once it has
	// this many changes, or as many as its entries if more. Each change
	// then costs its run entry and about one entry of a rewrite (two with
	// half the entries, as before: at a million accounts heads and sigs
	// wrote 70 and 67 B per transfer then, 44 and 44 since). Lookups check
	// up to twice as many runs' Bloom filters (in memory) before a
	// table's file.
	tableRewriteMin = 1 << 16
	// mappedPagesDropCommits: every this many commits the store drops
	// the mapped file pages it touched from the process's resident set
	// (dropMappedPages). Every commit: the kernel maps the 64 KiB around
	// each faulting page of a file mapping (fault-around), so one slot of
	// random index inserts at a million accounts (a fill) left ~300 MiB of
	// ledger.db resident, and waiting 16 slots kept that. A drop costs a
	// page-table walk of the mapped pages (milliseconds) and the hot
	// pages come back as minor faults from the page cache.
	mappedPagesDropCommits = 1
)

// sigCodec lays out the signature index: the signature's first 8 bytes
// (BE, so they sort as bytes) -> slot << 32 | index.
var sigCodec = &tableCodec[uint64, uint64]{
	magic: "ferry-sigs-1\n\x00\x00\x00", keySize: 8, valSize: 8,
	putKey: func(b []byte, k uint64) { binary.BigEndian.PutUint64(b, k) },
	getKey: func(b []byte) uint64 { return binary.BigEndian.Uint64(b) },
	putVal: func(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) },
	getVal: func(b []byte) uint64 { return binary.LittleEndian.Uint64(b) },
}

// headCodec lays out the address heads: the address's first 8 bytes
// (headKey) -> the newest slot with a posting for an address starting
// with them. Whole addresses (headCodecV1, before ferry-ledger-6) took
// 40 bytes an entry instead of 16: at a million accounts nearly every
// transfer's recipient is an address its slot is the first to touch in a
// while, so the entry's width was most of what the table wrote per
// transfer.
var headCodec = &tableCodec[uint64, uint64]{
	magic: "ferry-heads-2\n\x00\x00", keySize: 8, valSize: 8,
	putKey: func(b []byte, k uint64) { binary.BigEndian.PutUint64(b, k) },
	getKey: func(b []byte) uint64 { return binary.BigEndian.Uint64(b) },
	putVal: func(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) },
	getVal: func(b []byte) uint64 { return binary.LittleEndian.Uint64(b) },
}

// headKey is the heads table's key of an address: its first 8 bytes.
func headKey(a solana.PublicKey) uint64 { return binary.BigEndian.Uint64(a[:8]) }

type boltStore struct {
	db     *bolt.DB
	acc    *accountLog
	noSync bool
	// rewriteMin is tableRewriteMin (tests make it smaller).
	rewriteMin int
	// nestedMin is nestedValueMin (tests make it smaller).
	nestedMin int
	// mu guards the tables. sigs maps the first 8 bytes of each landed
	// signature to its location. A lookup checks the full signature in
	// the record, so a prefix collision can only hide a transaction, never
	// return the wrong one (at a probability of about n²/2⁶⁵).
	mu    sync.RWMutex
	sigs  *sortedTable[uint64, uint64]
	heads *sortedTable[uint64, uint64]
	// hc answers heads lookups of the key directory's base's addresses
	// from memory (headcache.go); guarded by mu like heads.
	hc headCache
	// sigsRewrite and headsRewrite are the tables' rewrites in progress
	// (saveTables; the persister's).
	sigsRewrite, headsRewrite *tableRewrite[uint64, uint64]
	// prefixChainsFrom and legacyHeads serve addresses whose first 8
	// bytes another address of history shared before ferry-ledger-6
	// (headsupgrade.go); both are zero in any other directory.
	prefixChainsFrom uint64
	legacyHeads      map[solana.PublicKey]uint64
	legacyPrefixes   map[uint64]bool
	// tip is the newest committed slot.
	tip uint64
	// first is the oldest slot whose history is kept and prunedTxs the
	// number of transactions in the slots before it (prune.go). The
	// persister writes them; readers load first under mu.
	first, prunedTxs uint64
	// codec compresses transaction records.
	codec *txCodec
	// committed counts the slots committed since open (the persister
	// adds, StorageWrites reads).
	committed atomic.Int64
	// headsTxs counts the transactions committed after the slot of the
	// heads table's newest file (or the tip a heads cache file recorded
	// the table clean at): a restart after a crash replays the postings
	// after it, so the table's changes go to a run once they are half its
	// entries (saveTables).
	headsTxs int
	// dir is the store's directory (the heads cache's files).
	dir string
	// hcSlot is the slot the newest heads cache file covers (a restart
	// after a crash replays the postings after it into the cache), and
	// hcTxs counts the transactions committed after it: the file is
	// written again once they reach the cache's entries (headcache.go).
	hcSlot uint64
	hcTxs  int
	// hcTable is what the cache's file recorded of the heads table
	// (headCacheMagic), read at open; headsReplayFrom is the first slot
	// whose postings the open replayed into the heads.
	hcTable         headsTableState
	headsReplayFrom uint64
	// hcFile says the open found the cache's file for the key directory's
	// base.
	hcFile bool
	// upgradedFrom is the format open upgraded (empty: none), in
	// upgradeTook.
	upgradedFrom string
	upgradeTook  time.Duration
	// legacyPostings makes commits write the addrpost layout of
	// ferry-ledger-3 (tests of reading and upgrading it).
	legacyPostings bool
}

func openBoltStore(dir string, noSync bool, segBytes int64, rewriteMin, runAt int) (*boltStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, dbFileName)
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout: 2 * time.Second,
		// The free list is written with every commit. It stays short,
		// since every tree grows at its right edge (the accounts are in the
		// log); without it every open would walk every page of the file,
		// taking time and memory that grow with history.
		NoFreelistSync:  false,
		FreelistType:    bolt.FreelistMapType,
		NoSync:          noSync,
		InitialMmapSize: 256 << 20,
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("open %s: the database is locked by another process", path)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	var upgradeFrom, renamedFrom string
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		switch f := meta.Get([]byte(metaFormat)); {
		case f == nil && meta.Get([]byte(metaTip)) != nil:
			return fmt.Errorf("the data was written by an older ferry; move it away to start afresh")
		case f != nil && string(f) == "ferry-ledger-2":
			return fmt.Errorf("the data was written by an older ferry (format %q, accounts in the database); move it away to start afresh", f)
		case f != nil && slices.Contains(upgradeFormats, string(f)):
			// Renamed by upgradeHeads, once the heads table is converted.
			upgradeFrom = string(f)
		case f != nil && slices.Contains(renameFormats, string(f)):
			if err := meta.Put([]byte(metaFormat), []byte(storeFormat)); err != nil {
				return err
			}
			renamedFrom = string(f)
		case f != nil && string(f) != storeFormat:
			return fmt.Errorf("unknown data format %q; move it away to start afresh", f)
		case f == nil:
			if err := meta.Put([]byte(metaFormat), []byte(storeFormat)); err != nil {
				return err
			}
		}
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("initialize %s: %w", path, err)
	}
	var end logPos
	var mints []solana.PublicKey
	err = db.View(func(tx *bolt.Tx) error {
		if mints, err = loadMints(tx.Bucket(bucketMints)); err != nil {
			return err
		}
		if b := tx.Bucket(bucketMeta).Get([]byte(metaAccountLog)); b != nil {
			var err error
			end, err = decodeLogPos(b)
			return err
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("initialize %s: %w", path, err)
	}
	acc, err := openAccountLog(filepath.Join(dir, accountLogDir), end, noSync, segBytes)
	if err != nil {
		db.Close()
		return nil, err
	}
	acc.setMints(mints)
	if rewriteMin <= 0 {
		rewriteMin = tableRewriteMin
	}
	s := &boltStore{db: db, acc: acc, noSync: noSync, rewriteMin: rewriteMin, nestedMin: nestedValueMin}
	if s.codec, err = newTxCodec(); err != nil {
		acc.close()
		db.Close()
		return nil, err
	}
	if renamedFrom != "" {
		s.upgradedFrom = renamedFrom
	}
	if upgradeFrom != "" {
		start := time.Now()
		if err = s.upgradeHeads(dir, upgradeFrom); err == nil {
			s.upgradedFrom, s.upgradeTook = upgradeFrom, time.Since(start)
		}
	}
	if err == nil {
		err = s.loadLegacyHeads()
	}
	if err == nil {
		if s.sigs, err = openDerivedTable(dir, "sigs", sigCodec); err == nil {
			s.heads, err = openDerivedTable(dir, "heads", headCodec)
		}
	}
	if err != nil {
		s.close()
		return nil, err
	}
	s.sigs.runAt, s.heads.runAt, acc.keydir.runAt = runAt, runAt, runAt
	s.dir = dir
	acc.keydir.onFreeze = s.headCacheHook
	return s, nil
}

// loadMints reads the account log's mint dictionary (bucketMints): its
// entries are numbered from 0 without a gap, or the directory is damaged.
func loadMints(b *bolt.Bucket) ([]solana.PublicKey, error) {
	if b == nil {
		return nil, nil
	}
	var mints []solana.PublicKey
	err := b.ForEach(func(k, v []byte) error {
		if len(k) != 4 || len(v) != 32 || binary.BigEndian.Uint32(k) != uint32(len(mints)) {
			return fmt.Errorf("%w: mint dictionary entry %x", errCorrupt, k)
		}
		mints = append(mints, solana.PublicKeyFromBytes(v))
		return nil
	})
	if err == nil && len(mints) > accountLogMints {
		err = fmt.Errorf("%w: mint dictionary of %d entries", errCorrupt, len(mints))
	}
	return mints, err
}

// openDerivedTable opens one of the tables load rebuilds from the
// database (sigs, heads). The temporary files of a rewrite a kill
// interrupted are removed. A damaged file (cut short by a machine crash
// with NoSync) is removed too: the table is then rebuilt from all of
// history, which the database holds.
func openDerivedTable[K comparable, V any](dir, name string, c *tableCodec[K, V]) (*sortedTable[K, V], error) {
	tmps, err := filepath.Glob(filepath.Join(dir, name+".tmp*"))
	if err != nil {
		return nil, err
	}
	for _, tmp := range tmps {
		if err := os.Remove(tmp); err != nil {
			return nil, fmt.Errorf("remove %s: %w", tmp, err)
		}
	}
	path := filepath.Join(dir, name)
	t, err := openTable(path, c)
	if errors.Is(err, errCorrupt) {
		if err := removeTableFiles(path); err != nil {
			return nil, fmt.Errorf("remove damaged %s: %w", path, err)
		}
		return openTable(path, c)
	}
	return t, err
}

// tableSlot is the slot a table's file covers (its meta).
func tableSlot(meta []byte) uint64 {
	if len(meta) != 8 {
		return 0
	}
	return binary.LittleEndian.Uint64(meta)
}

// saveTables rewrites the tables whose changes are due, or writes their
// changes in memory as a run when enough accumulated, as of the tip
// slot. A rewrite runs beside the commits (tableRewrite): a base of tens
// of MB takes about a second to merge and sync, which in the commit path
// held up every confirmation behind it; the next commits adopt it once it
// is done. With flush (a clean close) it waits for one in progress, and
// every change in memory is written, as a run unless the base is due or
// already carries tableMaxRuns, so a restart replays nothing. The files
// are written while readers go on.
func (s *boltStore) saveTables(flush bool) error {
	meta := binary.LittleEndian.AppendUint64(nil, s.tip)
	due := func(c, n, runs int) bool {
		return c >= max(n, s.rewriteMin) || (flush && c > 0 && runs >= tableMaxRuns)
	}
	first := s.first
	// Signatures of pruned slots are left out.
	if _, err := saveTable(&s.mu, s.sigs, &s.sigsRewrite, meta, !s.noSync, flush, false,
		func() bool { return due(s.sigs.changes(), s.sigs.entries(), s.sigs.runCount()) },
		func(_, loc uint64) bool { return loc>>32 >= first }); err != nil {
		return err
	}
	// An address whose newest posting was pruned has no history left.
	// A replay after a crash starts at the newest file: once as many
	// transactions as half the base's entries came after it, the changes
	// go to a run however few they are (most changes are the heads
	// cache's, which has its own file).
	runDue := s.headsTxs >= max(s.heads.entries()/2, s.rewriteMin)
	newFile, err := saveTable(&s.mu, s.heads, &s.headsRewrite, meta, !s.noSync, flush, runDue,
		func() bool {
			return due(s.heads.changes(), s.heads.entries(), s.heads.runCount())
		},
		func(_, slot uint64) bool { return slot >= first })
	if newFile {
		// A replay after a crash starts at the new file's slot (a run's,
		// or the rewritten base's once it is adopted).
		s.headsTxs = 0
	}
	return err
}

// saveTable is saveTables for one table: it adopts the rewrite in
// progress (*rw) once written (with flush, waiting for it); then, unless
// one is still going, starts a rewrite when rewriteDue says so (with
// flush, finishing it at once), or else writes the changes in memory as a
// run when enough accumulated (saveRun), or with run when there are any.
// It reports whether it started a rewrite or wrote a run.
func saveTable[K comparable, V any](mu *sync.RWMutex, t *sortedTable[K, V], rw **tableRewrite[K, V], meta []byte, sync, flush, run bool, rewriteDue func() bool, keep func(K, V) bool) (bool, error) {
	if *rw != nil {
		done, err := (*rw).finish(mu, t, flush)
		if err != nil || !done {
			return false, err
		}
		*rw = nil
	}
	if !rewriteDue() {
		return saveRun(mu, t, func() []byte { return meta }, sync, flush || run)
	}
	if *rw = startRewrite(mu, t, meta, sync, keep, false, nil); flush {
		if _, err := (*rw).finish(mu, t, true); err != nil {
			return true, err
		}
		*rw = nil
	}
	return true, nil
}

// tableRewrite is a rewrite of one of the store's tables in progress: the
// changes in memory were frozen, and a goroutine merges them with the
// base and the runs into a new base. Until the owner adopts it, lookups
// see the frozen changes and no run is written (a run would name the old
// base). A kill before the new base is renamed into place leaves the old
// one with its runs, or a prefix of them; the replay from history
// completes either.
//
// When every change since the base kept its keys (sortedTable.valuesOnly),
// the rewrite writes a values file instead (vf; tablevals.go).
type tableRewrite[K comparable, V any] struct {
	done chan struct{}
	nt   *sortedTable[K, V]
	vf   *valuesFile
	run  *tableFile // the run beside vf (nil: none)
	err  error
}

// startRewrite freezes t's changes in memory and starts writing the new
// base with meta, or with values a values file when that will do
// (sortedTable.valuesOnly). A non-nil gate (tests) holds the writing back
// until it is closed.
func startRewrite[K comparable, V any](mu *sync.RWMutex, t *sortedTable[K, V], meta []byte, sync bool, keep func(K, V) bool, values bool, gate <-chan struct{}) *tableRewrite[K, V] {
	mu.Lock()
	valuesOnly := values && keep == nil && t.valuesOnly()
	if valuesOnly {
		t.freezeValues()
	} else {
		t.freeze()
	}
	var hook *baseHook
	if t.onFreeze != nil && !valuesOnly {
		// A values file keeps the base's keys where they are.
		hook = t.onFreeze(meta)
	}
	mu.Unlock()
	rw := &tableRewrite[K, V]{done: make(chan struct{})}
	go func() {
		defer close(rw.done)
		if gate != nil {
			<-gate
		}
		if valuesOnly {
			rw.vf, rw.run, rw.err = t.writeValuesFrozen(meta, sync)
			return
		}
		rw.nt, rw.err = t.writeFrozenHook(meta, sync, keep, hook)
	}()
	return rw
}

// finish adopts the new base if it is written, waiting for it with wait,
// and reports whether the rewrite is over.
func (rw *tableRewrite[K, V]) finish(mu *sync.RWMutex, t *sortedTable[K, V], wait bool) (bool, error) {
	if wait {
		<-rw.done
	} else {
		select {
		case <-rw.done:
		default:
			return false, nil
		}
	}
	if rw.err != nil {
		return true, rw.err
	}
	mu.Lock()
	var err error
	if rw.vf != nil {
		err = t.adoptValues(rw.vf, rw.run)
	} else {
		err = t.adopt(rw.nt)
	}
	mu.Unlock()
	return true, err
}

// saveRun writes t's changes in memory as a run when enough of them
// accumulated (sortedTable.runDue), or with flush when there are any,
// with the meta meta returns (asked only then). The run is written while
// readers go on; mu (the table's lock) is held for writing only to adopt
// it. Only the table's one writer calls it.
func saveRun[K comparable, V any](mu *sync.RWMutex, t *sortedTable[K, V], meta func() []byte, sync, flush bool) (bool, error) {
	mu.RLock()
	if !t.runDue() && !(flush && t.unsaved() > 0) {
		mu.RUnlock()
		return false, nil
	}
	run, err := t.writeRun(meta(), sync)
	mu.RUnlock()
	if err != nil {
		return false, err
	}
	mu.Lock()
	t.addRun(run)
	mu.Unlock()
	return true, nil
}

// StorageWrites are the bytes a durable ledger's store wrote since it was
// opened, by what they were for: where the disk writes per transaction
// go (BenchmarkTransferChecked reports them). A memory ledger reports
// zeros.
type StorageWrites struct {
	// AccountRecords are the account log records of the accounts slots
	// wrote; AccountCleaning the live records cleaning copied.
	AccountRecords, AccountCleaning int64
	// KeyDirectory, Signatures and Heads are the tables' files: bases
	// rewritten and runs (Heads with the heads cache's files).
	KeyDirectory, Signatures, Heads int64
	// Database is what bbolt wrote: the pages of the commits' changed
	// nodes and a meta page per commit.
	Database int64
}

// StorageWrites reports what the ledger's store wrote since it was opened.
func (l *Ledger) StorageWrites() StorageWrites {
	s, ok := l.store.(*boltStore)
	if !ok {
		return StorageWrites{}
	}
	st := s.db.Stats()
	return StorageWrites{
		AccountRecords:  s.acc.appended.Load(),
		AccountCleaning: s.acc.copied.Load(),
		KeyDirectory:    s.acc.keydir.written.Load(),
		Signatures:      s.sigs.written.Load(),
		Heads:           s.heads.written.Load(),
		Database:        st.TxStats.GetPageAlloc() + s.committed.Load()*int64(s.db.Info().PageSize),
	}
}

func (s *boltStore) account(k solana.PublicKey) (*Account, error) { return s.acc.get(k) }

func (s *boltStore) eachAccount(fn func(solana.PublicKey, *Account) bool) error {
	return s.acc.each(fn)
}

func (s *boltStore) accountCount() int { return s.acc.size() }

func indexKey(kind indexKind, by, key solana.PublicKey) []byte {
	k := make([]byte, 0, 65)
	return append(append(append(k, byte(kind)), by[:]...), key[:]...)
}

func (s *boltStore) indexEach(kind indexKind, by solana.PublicKey, fn func(solana.PublicKey)) error {
	return s.db.View(func(tx *bolt.Tx) error {
		prefix := append([]byte{byte(kind)}, by[:]...)
		c := tx.Bucket(bucketIndex).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if len(k) != 65 {
				return fmt.Errorf("%w: index key", errCorrupt)
			}
			fn(solana.PublicKeyFromBytes(k[33:]))
		}
		return nil
	})
}

func u64be(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// A slot's block record, address postings and transaction chunks grow
// with its transactions (64 bytes of signature, ~18 bytes of postings and
// ~300 compressed bytes of record each), and a bbolt leaf
// holds at least two elements and is not split below five, so in a bucket
// only ever appended to, the leaf at the right edge holds the last three
// to five slots' values, and each commit rewrote them all: a slot's record
// was written about four times (half of ledger.db's bytes written under
// load). A value at least nestedValueMin long is instead the only element
// of a bucket of its own under the slot's key, whose pages no later commit
// touches; the right-edge leaf then holds 16-byte bucket headers. Smaller
// values stay inline, where rewriting them costs little and a page of
// their own would waste most of it. Readers take either (slotValue).
const nestedValueMin = 8 << 10

// nestedValueKey is the key of a nested value in its bucket.
var nestedValueKey = []byte{0}

// putSlotValue stores v under k in b, an append-only bucket of per-slot
// values, nested when it is long (nestedValueMin).
func putSlotValue(b *bolt.Bucket, k, v []byte, nestedMin int) error {
	// A value replaces whatever k held, in either form (Put cannot
	// replace a bucket, nor CreateBucket a value).
	if err := deleteSlotValue(b, k); err != nil {
		return err
	}
	if len(v) < nestedMin {
		return b.Put(k, v)
	}
	nb, err := b.CreateBucket(k)
	if err != nil {
		return err
	}
	nb.FillPercent = 1
	return nb.Put(nestedValueKey, v)
}

// slotValue is the value under k in b (see putSlotValue), or nil. v is
// what a cursor returned with k (nil also for a nested value), or nil
// to look it up.
func slotValue(b *bolt.Bucket, k, v []byte) []byte {
	if v != nil {
		return v
	}
	if v := b.Get(k); v != nil {
		return v
	}
	if nb := b.Bucket(k); nb != nil {
		return nb.Get(nestedValueKey)
	}
	return nil
}

// deleteSlotValue deletes k from b, nested or not.
func deleteSlotValue(b *bolt.Bucket, k []byte) error {
	err := b.Delete(k)
	if errors.Is(err, bolterrors.ErrIncompatibleValue) {
		return b.DeleteBucket(k)
	}
	return err
}

func locKey(slot uint64, index uint32) []byte {
	k := make([]byte, 12)
	binary.BigEndian.PutUint64(k, slot)
	binary.BigEndian.PutUint32(k[8:], index)
	return k
}

func sigPrefix(s solana.Signature) uint64 { return binary.BigEndian.Uint64(s[:8]) }

func packLoc(slot uint64, index uint32) uint64 { return slot<<32 | uint64(index) }

func postKey(slot uint64, addr solana.PublicKey) []byte {
	k := make([]byte, 0, 40)
	return append(binary.BigEndian.AppendUint64(k, slot), addr[:]...)
}

func (s *boltStore) load() (*loadedState, error) {
	var st *loadedState
	err := s.db.View(func(tx *bolt.Tx) error {
		tipb := tx.Bucket(bucketMeta).Get([]byte(metaTip))
		if tipb == nil {
			return nil
		}
		if len(tipb) != 8 {
			return fmt.Errorf("%w: tip", errCorrupt)
		}
		capb := tx.Bucket(bucketMeta).Get([]byte(metaCapital))
		if len(capb) != 8 {
			return fmt.Errorf("%w: supply", errCorrupt)
		}
		st = &loadedState{capital: binary.LittleEndian.Uint64(capb)}
		if fb := tx.Bucket(bucketMeta).Get([]byte(metaFirst)); fb != nil {
			if len(fb) != 16 {
				return fmt.Errorf("%w: first kept slot", errCorrupt)
			}
			s.first, s.prunedTxs = binary.BigEndian.Uint64(fb), binary.BigEndian.Uint64(fb[8:])
		}
		s.tip = binary.BigEndian.Uint64(tipb)
		// The recent blocks, newest first, then reversed.
		blocks := tx.Bucket(bucketBlocks)
		c := blocks.Cursor()
		var all []*blockRecord
		for k, v := c.Last(); k != nil && len(all) < recentBlocks; k, v = c.Prev() {
			r, err := decodeBlockKeys(slotValue(blocks, k, v))
			if err != nil {
				return fmt.Errorf("block %x: %w", k, err)
			}
			all = append(all, r)
		}
		slices.Reverse(all)
		st.recent = all
		// The tables as of the slots committed after their files.
		for k, v := c.Seek(u64be(tableSlot(s.sigs.meta) + 1)); k != nil; k, v = c.Next() {
			r, err := decodeBlock(slotValue(blocks, k, v))
			if err != nil {
				return fmt.Errorf("block %x: %w", k, err)
			}
			for i, sig := range r.Signatures {
				s.sigs.set(sigPrefix(sig), packLoc(r.Slot, uint32(i)))
			}
		}
		start := time.Now()
		s.mu.Lock()
		n, err := s.loadHeads(tx)
		s.mu.Unlock()
		st.headsReplayed, st.headsReplayTook = n, time.Since(start)
		if err != nil {
			return err
		}
		if len(st.recent) == 0 || st.recent[len(st.recent)-1].Slot != binary.BigEndian.Uint64(tipb) {
			return fmt.Errorf("%w: tip block missing", errCorrupt)
		}
		st.tip = st.recent[len(st.recent)-1]
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load ledger: %w", err)
	}
	return st, nil
}

func (s *boltStore) commit(f *frozenSlot) error {
	b := f.block
	// Encode before taking bbolt's write lock.
	txKeys, txVals := s.codec.encodeChunks(b.Transactions)
	byAddr := map[solana.PublicKey][]uint32{}
	var addrOrder []solana.PublicKey
	for _, r := range b.Transactions {
		tx, err := r.Transaction()
		if err != nil {
			return fmt.Errorf("commit slot %d: transaction %s: %w", b.Slot, r.Signature, err)
		}
		for _, k := range tx.Message.AccountKeys {
			list, ok := byAddr[k]
			if !ok {
				addrOrder = append(addrOrder, k)
			}
			if n := len(list); n == 0 || list[n-1] != r.Index {
				byAddr[k] = append(list, r.Index)
			}
		}
	}
	// Sorted: the layout of an addrslot value, and legacy inserts touch
	// each B+tree page once.
	slices.SortFunc(addrOrder, compareKeys)
	posts := make([]addrPosting, len(addrOrder))
	// The heads cache's index of each address, found for its lookup,
	// serves its set below unless the key directory's base, whose
	// prefixes the cache shares, is replaced in between (at a million
	// accounts each search is a few cache misses).
	hcIndex := make([]int, len(addrOrder))
	s.mu.RLock()
	hcBase := s.hc.base
	for i, a := range addrOrder {
		p := headKey(a)
		hcIndex[i] = s.hc.index(p)
		posts[i] = addrPosting{addr: a, prev: s.headAt(p, hcIndex[i]), idxs: byAddr[a]}
	}
	s.mu.RUnlock()
	var slotPosts []byte
	for _, p := range posts {
		if p.prev >= b.Slot {
			return fmt.Errorf("commit slot %d: address %s has a posting at slot %d", b.Slot, p.addr, p.prev)
		}
	}
	if len(posts) > 0 && !s.legacyPostings {
		slotPosts = encodeSlotPostings(b.Slot, posts)
	}
	blockVal := encodeBlock(f.record)
	idxAdds := make([][]byte, len(f.indexAdds))
	for i, e := range f.indexAdds {
		idxAdds[i] = indexKey(e.kind, e.by, e.key)
	}
	slices.SortFunc(idxAdds, bytes.Compare)
	// The accounts first: the commit below records the log's end, so a
	// slot whose commit did not happen leaves no account behind.
	end, err := s.acc.append(f.heldWrites())
	if err != nil {
		return fmt.Errorf("commit slot %d: %w", b.Slot, err)
	}
	// The mints the records name that the database does not hold yet
	// (this slot's, or an earlier commit's that failed).
	mintsFrom, newMints := s.acc.unsavedMints()

	err = s.db.Update(func(tx *bolt.Tx) error {
		idx := tx.Bucket(bucketIndex)
		for _, k := range idxAdds {
			if err := idx.Put(k, nil); err != nil {
				return fmt.Errorf("index: %w", err)
			}
		}
		for _, e := range f.indexDels {
			if err := idx.Delete(indexKey(e.kind, e.by, e.key)); err != nil {
				return fmt.Errorf("index: %w", err)
			}
		}
		if len(newMints) > 0 {
			mb := tx.Bucket(bucketMints)
			for i, k := range newMints {
				if err := mb.Put(binary.BigEndian.AppendUint32(nil, uint32(mintsFrom+i)), k[:]); err != nil {
					return fmt.Errorf("mint dictionary: %w", err)
				}
			}
		}
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put([]byte(metaAccountLog), end.bytes()); err != nil {
			return fmt.Errorf("account log end: %w", err)
		}
		if err := meta.Put([]byte(metaCapital), binary.LittleEndian.AppendUint64(nil, f.capital)); err != nil {
			return fmt.Errorf("supply: %w", err)
		}
		blocks := tx.Bucket(bucketBlocks)
		blocks.FillPercent = 1
		for _, h := range f.held {
			if err := putSlotValue(blocks, u64be(h.block.Slot), encodeBlock(h.record), s.nestedMin); err != nil {
				return fmt.Errorf("block %d: %w", h.block.Slot, err)
			}
			if h.perf != nil {
				if err := tx.Bucket(bucketPerf).Put(u64be(h.perf.Slot), encodePerfSample(h.perf)); err != nil {
					return fmt.Errorf("performance sample: %w", err)
				}
			}
		}
		if err := putSlotValue(blocks, u64be(b.Slot), blockVal, s.nestedMin); err != nil {
			return fmt.Errorf("block: %w", err)
		}
		txs := tx.Bucket(bucketTxs)
		txs.FillPercent = 1
		for i := range txKeys {
			if err := putSlotValue(txs, txKeys[i], txVals[i], s.nestedMin); err != nil {
				return fmt.Errorf("transaction: %w", err)
			}
		}
		if slotPosts != nil {
			ps := tx.Bucket(bucketAddrSlot)
			ps.FillPercent = 1
			if err := putSlotValue(ps, u64be(b.Slot), slotPosts, s.nestedMin); err != nil {
				return fmt.Errorf("address postings: %w", err)
			}
		} else if s.legacyPostings {
			legacy := tx.Bucket(bucketAddrPost)
			legacy.FillPercent = 1
			for _, p := range posts {
				// Slot 0 holds no transactions: 0 means no previous posting.
				v := binary.BigEndian.AppendUint64(make([]byte, 0, 8+2*len(p.idxs)), p.prev)
				for _, x := range p.idxs {
					v = binary.AppendUvarint(v, uint64(x))
				}
				if err := legacy.Put(postKey(b.Slot, p.addr), v); err != nil {
					return fmt.Errorf("address index: %w", err)
				}
			}
		}
		if f.perf != nil {
			if err := tx.Bucket(bucketPerf).Put(u64be(f.perf.Slot), encodePerfSample(f.perf)); err != nil {
				return fmt.Errorf("performance sample: %w", err)
			}
		}
		return tx.Bucket(bucketMeta).Put([]byte(metaTip), u64be(b.Slot))
	})
	if err != nil {
		return fmt.Errorf("commit slot %d: %w", b.Slot, err)
	}
	s.acc.savedMints(mintsFrom + len(newMints))
	if err := s.acc.apply(); err != nil {
		return fmt.Errorf("commit slot %d: %w", b.Slot, err)
	}
	s.mu.Lock()
	for _, r := range b.Transactions {
		s.sigs.set(sigPrefix(r.Signature), packLoc(r.Slot, r.Index))
	}
	s.syncHeadCache()
	if s.hc.base != hcBase {
		for i, a := range addrOrder {
			hcIndex[i] = s.hc.index(headKey(a))
		}
	}
	for i, a := range addrOrder {
		s.setHeadAt(headKey(a), hcIndex[i], b.Slot)
	}
	s.tip = b.Slot
	s.mu.Unlock()
	s.headsTxs += len(b.Transactions)
	s.hcTxs += len(b.Transactions)
	if err := s.saveTables(false); err != nil {
		return fmt.Errorf("commit slot %d: %w", b.Slot, err)
	}
	if s.hcTxs >= max(len(s.hc.slots), s.rewriteMin) {
		if err := s.saveHeadCache(); err != nil {
			return fmt.Errorf("commit slot %d: %w", b.Slot, err)
		}
	}
	if s.committed.Add(1)%mappedPagesDropCommits == 0 {
		s.dropMappedPages()
	}
	return nil
}

// dropMappedPages releases the pages of the database file and the mapped
// tables that lookups and commits touched since the last call
// (dropMapped): without it they stay in the process's resident set, and
// random lookups in a large ledger (an index insert per new account, a
// key-directory search per account read from disk) would leave most of
// the files resident, hundreds of megabytes at a million accounts, though
// a slot needs few of their pages. bbolt's mapping is not remapped while
// a read transaction is open, so its address and the size in use are
// stable inside View.
func (s *boltStore) dropMappedPages() {
	_ = s.db.View(func(tx *bolt.Tx) error {
		dropMappedAt(s.db.Info().Data, int(tx.Size()))
		return nil
	})
	s.mu.RLock()
	s.sigs.dropPages()
	s.heads.dropPages()
	s.mu.RUnlock()
	s.acc.mu.RLock()
	s.acc.keydir.dropPages()
	s.acc.mu.RUnlock()
}

func (s *boltStore) location(sig solana.Signature) (*txLoc, error) {
	r, err := s.tx(sig)
	if err != nil || r == nil {
		return nil, err
	}
	return &txLoc{r.Slot, r.Index}, nil
}

func (s *boltStore) tx(sig solana.Signature) (*TxRecord, error) {
	s.mu.RLock()
	loc, ok := s.sigs.get(sigPrefix(sig))
	first := s.first
	s.mu.RUnlock()
	if !ok || loc>>32 < first {
		return nil, nil // unknown, or pruned
	}
	var r *TxRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		cr := chunkReader{codec: s.codec, b: tx.Bucket(bucketTxs)}
		var err error
		if r, err = cr.read(loc>>32, uint32(loc)); err == nil && r == nil && !s.pruned(loc>>32) {
			err = fmt.Errorf("%w: transaction %s indexed but missing", errCorrupt, sig)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read transaction %s: %w", sig, err)
	}
	if r == nil || r.Signature != sig {
		return nil, nil // a prefix collision
	}
	return r, nil
}

// block reads a slot's block record, nil for a slot without one. Like
// every history reader it stops at the first kept slot (s.first), which
// pruning moves before it deletes what lies below.
func (s *boltStore) block(slot uint64) (*blockRecord, error) {
	if s.pruned(slot) {
		return nil, nil
	}
	var r *blockRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		v := slotValue(tx.Bucket(bucketBlocks), u64be(slot), nil)
		if v == nil {
			return nil
		}
		var err error
		r, err = decodeBlock(v)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read block %d: %w", slot, err)
	}
	return r, nil
}

func (s *boltStore) blockTxs(slot uint64) ([]*TxRecord, error) {
	if s.pruned(slot) {
		return nil, nil
	}
	var out []*TxRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		cr := chunkReader{codec: s.codec, b: tx.Bucket(bucketTxs)}
		var err error
		out, err = cr.block(slot)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read block %d transactions: %w", slot, err)
	}
	return out, nil
}

func (s *boltStore) blockSlots(start, end uint64, limit int) ([]uint64, error) {
	start = max(start, s.firstSlot())
	var out []uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketBlocks).Cursor()
		for k, _ := c.Seek(u64be(start)); k != nil && len(out) < limit; k, _ = c.Next() {
			slot := binary.BigEndian.Uint64(k)
			if slot > end {
				break
			}
			out = append(out, slot)
		}
		return nil
	})
	return out, err
}

func (s *boltStore) countBlocks(start, end uint64) (uint64, error) {
	start = max(start, s.firstSlot())
	var n uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketBlocks).Cursor()
		for k, _ := c.Seek(u64be(start)); k != nil && binary.BigEndian.Uint64(k) <= end; k, _ = c.Next() {
			n++
		}
		return nil
	})
	return n, err
}

func (s *boltStore) perfSamples(limit int) ([]PerfSample, error) {
	var out []PerfSample
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketPerf).Cursor()
		for k, v := c.Last(); k != nil && len(out) < limit; k, v = c.Prev() {
			p, err := decodePerfSample(k, v)
			if err != nil {
				return err
			}
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read performance samples: %w", err)
	}
	return out, nil
}

func (s *boltStore) addressTxs(addr solana.PublicKey, before, until *txLoc, maxSlot uint64, limit int) ([]*TxRecord, error) {
	var out []*TxRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		txs := chunkReader{codec: s.codec, b: tx.Bucket(bucketTxs)}
		posts := postingReader{slots: tx.Bucket(bucketAddrSlot), legacy: tx.Bucket(bucketAddrPost)}
		// read reads a transaction a posting lists: nil (and no error)
		// when its slot was pruned while this read started.
		read := func(slot uint64, idx uint32) (*TxRecord, error) {
			r, err := txs.read(slot, idx)
			if err == nil && r == nil && !s.pruned(slot) {
				err = fmt.Errorf("%w: transaction at %d/%d missing", errCorrupt, slot, idx)
			}
			return r, err
		}
		// mine reports whether a posting found by addr's prefix alone is
		// addr's: the one address of its slot with that prefix is the
		// one its transactions reference.
		references := func(r *TxRecord) (bool, error) {
			t, err := r.Transaction()
			if err != nil {
				return false, fmt.Errorf("%w: transaction at %d/%d: %v", errCorrupt, r.Slot, r.Index, err)
			}
			return slices.Contains(t.Message.AccountKeys, addr), nil
		}
		mine := func(slot uint64, p *addrPosting) (bool, error) {
			r, err := read(slot, p.idxs[0])
			if err != nil || r == nil {
				return false, err
			}
			return references(r)
		}
		var slot uint64
		s.mu.RLock()
		first := s.first
		s.mu.RUnlock()
		if before != nil && before.Slot < first {
			return nil
		}
		// The walk follows addr's prefix chain (postingReader.onChain):
		// from ferry-ledger-6 on, the postings of every address with
		// addr's first 8 bytes, linked newest to oldest. Before it, each
		// address had a chain of its own; legacy says the walk is on
		// addr's, where it must continue from legacyHeads when an older
		// address shared addr's prefix.
		legacy := false
		// Start at before's slot when addr has a posting there (always the
		// case when paging through addr's own results); otherwise at the
		// newest posting of its prefix, walking down.
		if before != nil {
			p, v, err := posts.onChain(before.Slot, addr)
			if err != nil {
				return err
			}
			if p != nil && v == postingByPrefix {
				if ok, err := mine(before.Slot, p); err != nil {
					return err
				} else if ok {
					v = postingMine
				}
			}
			if p != nil && v == postingMine {
				slot, legacy = before.Slot, before.Slot < s.prefixChainsFrom
			}
		}
		if slot == 0 {
			s.mu.RLock()
			slot = s.head(headKey(addr))
			s.mu.RUnlock()
		}
		shared := s.legacyPrefixes[headKey(addr)]
		// Slot 0 holds no transactions; the chain ends there or where
		// history was pruned.
		for slot != 0 && slot >= first && len(out) < limit {
			if !legacy && slot < s.prefixChainsFrom {
				legacy = true
				if shared {
					// The prefix chain led to whichever of the addresses
					// sharing the prefix had the newest posting then.
					if slot = s.legacyHeads[addr]; slot == 0 || slot < first {
						return nil
					}
				}
			}
			p, v, err := posts.onChain(slot, addr)
			if err != nil {
				return err
			}
			if p == nil {
				if s.pruned(slot) {
					return nil // pruned while this read started
				}
				return fmt.Errorf("%w: address index posting %d/%s missing", errCorrupt, slot, addr)
			}
			if p.prev >= slot {
				return fmt.Errorf("%w: address index chain at %d/%s", errCorrupt, slot, addr)
			}
			if until != nil && slot < until.Slot {
				return nil
			}
			if v != postingOther && slot <= maxSlot && (before == nil || slot <= before.Slot) {
				for i := len(p.idxs) - 1; i >= 0 && len(out) < limit; i-- {
					loc := txLoc{Slot: slot, Index: p.idxs[i]}
					if before != nil && !loc.less(*before) {
						continue
					}
					if until != nil && !until.less(loc) {
						return nil
					}
					r, err := read(loc.Slot, loc.Index)
					if err != nil || r == nil {
						return err
					}
					if v == postingByPrefix {
						// Every transaction of the posting references its
						// address: the first one read tells whose it is.
						if ok, err := references(r); err != nil {
							return err
						} else if !ok {
							break
						}
						v = postingMine
					}
					out = append(out, r)
				}
			}
			slot = p.prev
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read signatures for %s: %w", addr, err)
	}
	return out, nil
}

func (s *boltStore) getMeta(key string) ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get([]byte(key)); v != nil {
			out = append([]byte(nil), v...)
		}
		return nil
	})
	return out, err
}

func (s *boltStore) putMeta(key string, val []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put([]byte(key), val)
	})
}

func (s *boltStore) close() error {
	var errs []error
	if s.sigs != nil && s.heads != nil {
		errs = append(errs, s.saveTables(true), s.saveHeadCache())
		// A rewrite saveTables did not adopt (it stopped at an error)
		// still reads the files: wait for it before they are unmapped.
		for _, rw := range []*tableRewrite[uint64, uint64]{s.sigsRewrite, s.headsRewrite} {
			if rw != nil {
				<-rw.done
			}
		}
		errs = append(errs, s.sigs.close(), s.heads.close())
	}
	if s.codec != nil {
		s.codec.close()
	}
	return errors.Join(append(errs, s.acc.close(), s.db.Close())...)
}
