package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
)

// The account store of a durable ledger is a log: every committed slot
// appends the final value of each account it wrote to the newest segment
// file, so the bytes written per slot are proportional to the accounts
// written, however many accounts exist. (A B+tree keyed by address, which
// the store used before, rewrites a 4 KiB page for nearly every account
// once the tree is larger than a slot's writes.) A key directory maps each
// address to its newest record; the ledger reads an account from disk only
// when it is not in memory (bank.go keeps the written and recently read
// ones).
//
// Files in <DataDir>/accounts:
//
//	NNNNNNNN.seg  records: length u32 | crc32c u32 | address |
//	              appendAccountRecord (length 0: the account was deleted;
//	              logs written before ferry-ledger-5 hold encodeAccount's
//	              encoding, and before ferry-ledger-6 the record's second
//	              format, both of which read the same)
//	keydir        snapshot of the key directory: every live address and
//	              where its record is, sorted by address, with the log
//	              position it covers
//
// Durability: a slot's records are appended and synced before the bbolt
// transaction that commits the slot, which stores the log's end; at open
// the log is cut back to that end, so records of a slot that never
// committed disappear. The key directory is rebuilt from the snapshot plus
// the records after the position the snapshot covers. The snapshot is
// rewritten once the log has grown by snapshotRatio times its size since
// the last one (so its cost per written account does not grow with the
// number of accounts), or once the accounts created since are an eighth
// of it (accountSnapshotFresh: its in-memory index answers only for the
// accounts it holds). In between, a record of an account the snapshot
// holds changes that account's entry in the snapshot's in-memory index in
// place (sortedTable.change), and nothing else: the log itself is the
// redo log of those changes, so a kill replays them from the snapshot's
// position (up to accountSnapshotRatio times its size of log: a start
// after a kill took 0.53 s at a million accounts, 0.43 s when runs
// held every change). The other changes (accounts created or deleted
// since) are kept in memory and written as runs (table.go) when enough
// accumulated, each run with the changed index entries, and at Close as
// one more run, or the snapshot when it is due (so a clean restart
// replays nothing). A run of every change cost ~45 B per transfer at a
// million accounts, where nearly every recipient is a change of its own.
//
// Garbage: a record stops being live when a newer one for the same
// address is written. Once the segments hold more than garbageRatio times
// the live bytes, the oldest sealed segment is cleaned by copying its live
// records to the head of the log (as part of a slot's commit) and deleted
// after the next snapshot, which no longer points into it. A segment is
// deleted only when it lies wholly before the snapshot's position and
// holds no live record, so a later replay never needs it.
const (
	// accountSegmentBytes is the size at which a segment is sealed and a
	// new one started: small enough that cleaning one is a short pause.
	accountSegmentBytes = 8 << 20
	// accountGarbageRatio: the segments may hold this many times the live
	// bytes before the oldest one is cleaned. Cleaning then copies about
	// one live byte per two bytes freed.
	accountGarbageRatio = 3
	// accountSnapshotRatio: the key directory is snapshotted once the log
	// has grown by this many times the snapshot's size.
	accountSnapshotRatio = 4
	// accountSnapshotMin is the least log growth between snapshots (or 16
	// segments, if less).
	accountSnapshotMin = 1 << 20
	// accountSnapshotFresh: the key directory is also snapshotted once the
	// accounts created since its base are this fraction of it (1/8), and
	// at least accountSnapshotFreshMin. The base's in-memory index answers
	// for the accounts it holds, however often they change; one created
	// since is looked up in the runs, a read of a run file. A fill of a
	// million accounts had left 187 000 of them in the runs, a fifth of
	// all reads of cold accounts. Growing by an eighth at a time, a
	// ledger filled from empty rewrites about nine times its final base
	// (each created account pays for about eight base entries, ~360 B).
	accountSnapshotFresh    = 8
	accountSnapshotFreshMin = 4096
	// accountRecordHeader is the length and checksum before each record.
	accountRecordHeader = 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// accLoc is where an account's newest record is: segment, offset of the
// record header and record length (header included).
type accLoc struct {
	seg, off, n uint32
}

// logPos is a position in the log: a segment and an offset in it.
type logPos struct {
	seg, off uint32
}

func (p logPos) less(q logPos) bool { return p.seg < q.seg || (p.seg == q.seg && p.off < q.off) }

func (p logPos) bytes() []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, p.seg), p.off)
}

func decodeLogPos(b []byte) (logPos, error) {
	if len(b) != 8 {
		return logPos{}, fmt.Errorf("%w: account log position", errCorrupt)
	}
	return logPos{binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])}, nil
}

// keydirCodec lays out the key directory: address -> segment, offset,
// length (LE).
var keydirCodec = &tableCodec[solana.PublicKey, accLoc]{
	magic: "ferry-keydir-2\n\x00", keySize: 32, valSize: 12, prefixIndex: true,
	putKey: func(b []byte, k solana.PublicKey) { copy(b, k[:]) },
	getKey: func(b []byte) solana.PublicKey { return solana.PublicKeyFromBytes(b) },
	putVal: func(b []byte, l accLoc) {
		binary.LittleEndian.PutUint32(b, l.seg)
		binary.LittleEndian.PutUint32(b[4:], l.off)
		binary.LittleEndian.PutUint32(b[8:], l.n)
	},
	getVal: func(b []byte) accLoc {
		return accLoc{binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])}
	},
}

// accountLog is the account store of a durable ledger (see above). The
// persister is its only writer; reads may come from any goroutine.
type accountLog struct {
	dir    string
	noSync bool
	// segBytes is accountSegmentBytes (tests make it smaller).
	segBytes int64

	// mu guards everything below; readers hold it across the read of a
	// record, so a segment is never closed under them.
	mu     sync.RWMutex
	files  map[uint32]*os.File // every segment, open
	sizes  map[uint32]int64    // bytes per segment
	live   map[uint32]int64    // live record bytes per segment
	head   logPos              // end of the log (the next record goes here)
	keydir *sortedTable[solana.PublicKey, accLoc]
	total  int64 // bytes in all segments
	alive  int64 // live bytes in all segments

	// snapPos is the position the key directory's files cover (its
	// newest run's, else its base's or values file's): a replay starts
	// there. basePos is the base's, or its values file's: only segments
	// before it may be deleted, since a kill during a snapshot can leave
	// the base without its runs, and the replay then starts at basePos.
	snapPos, basePos logPos
	grown            int64 // log bytes appended since the base was written
	// snap is the snapshot being written beside the commits (nil: none),
	// of the key directory as of snapAt, when the log had grown snapGrown
	// since the base. Only the persister touches these.
	snap      *tableRewrite[solana.PublicKey, accLoc]
	snapAt    logPos
	snapGrown int64
	// snapGate, if set (tests), holds a snapshot's writing back until it
	// is closed.
	snapGate chan struct{}
	// cleaned are segments whose live records were copied to the head;
	// they are deleted once a snapshot no longer points into them, and
	// until then do not count as garbage.
	cleaned map[uint32]bool

	// pending are the records of the commit in progress: appended (and
	// synced) but not yet in the key directory.
	pending []pendingRecord

	// locs are key-directory entries of recent lookups (get) and
	// records (record), for lookupPrev (accountLocCache). They stay
	// equal to the key directory's: a lookup and its remembering happen
	// under mu, and record, which holds it for writing, sets the entry of
	// the key it changes.
	locs locCache

	// appendBuf is append's buffer of a commit's records, kept for the
	// next (the records of a slot, a MB and more at 25 000 transfers a
	// second, grew a new buffer by doubling for every commit).
	appendBuf []byte

	// appended and copied count the bytes of records written for the
	// slots and copied by cleaning (StorageWrites).
	appended, copied atomic.Int64

	// mints is the dictionary of the 32 bytes token accounts' data start
	// with (their mint), which their records name by index (recMintRef,
	// mintRef). Entries are only ever appended, by the persister under
	// mu; readers decode under mu. mintIDs is the persister's index of
	// it. mintsSaved counts the entries the database holds: the store
	// writes the others in the commit that records the log's end after
	// the records naming them (unsavedMints), so a slot whose commit did
	// not happen leaves neither behind.
	mints      []solana.PublicKey
	mintIDs    map[solana.PublicKey]int
	mintsSaved int
	// mintsMax is accountLogMints (tests set 0: records as ferry-ledger-6
	// wrote them).
	mintsMax int
}

// accountLogMints bounds the account log's mint dictionary: a record of
// a token account of a mint beyond the first this many holds the mint
// whole. A token account's mint is 32 of the ~118 bytes of its record,
// and a payments ledger pays in a handful of mints, so the dictionary
// takes a quarter off most of the records a transfer writes (and off
// the live bytes cleaning copies and the key directory's snapshots
// follow); 4 096 entries are 128 KB of memory and a kilobyte-sized
// database value per new mint at most.
const accountLogMints = 1 << 12

// mintRef returns the mint dictionary's index of a's mint if a is a token
// account (of the token program or Token-2022, not a mint), adding the
// mint while the dictionary has room; -1 if its record holds its data
// whole. Only the persister calls it.
func (lg *accountLog) mintRef(a *Account) int {
	// A Token-2022 account with extensions is longer, and says what it is
	// in the byte after the 165 of the SPL layout.
	if a == nil || len(a.Data) < spl.TokenAccountSize || (a.Owner != spl.TokenProgramID && a.Owner != spl.Token2022ProgramID) ||
		(len(a.Data) > spl.TokenAccountSize && a.Data[spl.TokenAccountSize] != spl.AccountTypeAccount) {
		return -1
	}
	k := solana.PublicKeyFromBytes(a.Data[:32])
	if id, ok := lg.mintIDs[k]; ok {
		return id
	}
	if k.IsZero() || len(lg.mints) >= lg.mintsMax {
		return -1
	}
	lg.mu.Lock()
	lg.mints = append(lg.mints, k)
	lg.mu.Unlock()
	lg.mintIDs[k] = len(lg.mints) - 1
	return len(lg.mints) - 1
}

// setMints gives a reopened log the mint dictionary the database holds
// (the records name their mints by its indexes). Call it before any
// read.
func (lg *accountLog) setMints(mints []solana.PublicKey) {
	lg.mu.Lock()
	lg.mints = mints
	lg.mu.Unlock()
	lg.mintIDs = make(map[solana.PublicKey]int, len(mints))
	for i, k := range mints {
		lg.mintIDs[k] = i
	}
	lg.mintsSaved = len(mints)
}

// unsavedMints returns the dictionary's entries the database does not
// hold yet, the first of them being entry from; savedMints reports them
// held once the commit that wrote them is durable.
func (lg *accountLog) unsavedMints() (from int, mints []solana.PublicKey) {
	return lg.mintsSaved, lg.mints[lg.mintsSaved:]
}

func (lg *accountLog) savedMints(n int) { lg.mintsSaved = max(lg.mintsSaved, n) }

// recode returns the record rec (key's, live, its encoded account enc)
// as cleaning copies it: encoded again when that makes it shorter (a
// record from before the mint dictionary, or of an older format), else
// as it is. A record the log can no longer decode is copied as it is,
// for the read to report. Only the persister calls it.
func (lg *accountLog) recode(key solana.PublicKey, rec, enc []byte) []byte {
	a, err := lg.decode(enc)
	if err != nil || a == nil {
		return rec
	}
	if again := appendRecordRef(nil, key, a, lg.mintRef(a)); len(again) < len(rec) {
		return again
	}
	return rec
}

// decode decodes a record's account. Callers hold mu.
func (lg *accountLog) decode(rec []byte) (*Account, error) { return decodeAccountWith(rec, lg.mints) }

type pendingRecord struct {
	key     solana.PublicKey
	loc     accLoc
	deleted bool
	// prev is the key directory's entry the record replaces (had: there
	// is one), looked up before apply takes mu for writing (lookupPrev).
	prev accLoc
	had  bool
}

// accountLocCache bounds the key-directory entries the account log
// remembers from lookups and records for the commit that writes the
// account next (lookupPrev), which needs the entry its record replaces
// to count the old record as garbage. At a million accounts nearly every
// transfer's recipient was just read from disk before it executed; the
// accounts written every slot (payers, busy token accounts) were
// recorded by an earlier commit. Without the cache each is a read of a
// 2 KiB table block once the table's changes in memory went to a run,
// or of the key in the base. locCache holds up to this many sets of
// locWays entries (7 MB, pointer-free; locCacheMinSets): an entry is dropped once four newer keys
// fell into its set, and a commit uses the entries of about one slot of
// lookups and records before it, ~25 000 at a million accounts. Twice
// the sets saved 0.05 reads per transfer there (BenchmarkTransferAtScale:
// 1.52 against 1.57; 1.67 with the maps this replaced, before headCache).
const accountLocCache = 1 << 15

// locWays is the entries of one set of locCache.
const locWays = 4

// locCacheMinSets is the sets a locCache starts with (200 KB). It
// doubles, up to accountLocCache, each time it has evicted as many
// entries as it has sets: a log whose lookups fit keeps the small
// table (the ephemeral rollup's beside a busy base ledger), one whose
// reads do not grows to the full 7 MB within a few thousand evictions.
const locCacheMinSets = 1 << 10

// locCache is a set-associative cache of key-directory entries
// (accountLocCache): an address's first 8 bytes (uniformly random)
// choose its set, and each set is kept newest first, the oldest entry
// giving way to a new one. It replaced two generations of Go maps of up
// to 65 536 entries each, whose inserts (with the maps' growth and the
// cache misses of a 6 MB map) cost ~0.4 µs each at a million accounts,
// where a transfer makes about two (its recipient read cold, then
// recorded). mu guards the sets, since the log's readers share its lock.
type locCache struct {
	mu   sync.Mutex
	sets [][locWays]locEntry // a power of two of them
	// evicted counts the entries evicted since the sets last grew.
	evicted int
}

type locEntry struct {
	key solana.PublicKey
	c   cachedLoc
	in  bool // the entry holds a key
}

func locSet(sets [][locWays]locEntry, key solana.PublicKey) *[locWays]locEntry {
	return &sets[binary.LittleEndian.Uint64(key[:8])&uint64(len(sets)-1)]
}

// put makes key's entry c, the newest of its set.
func (lc *locCache) put(key solana.PublicKey, c cachedLoc) {
	lc.mu.Lock()
	if lc.sets == nil {
		lc.sets = make([][locWays]locEntry, locCacheMinSets)
	}
	s := locSet(lc.sets, key)
	i := locWay(s, key)
	if i == locWays-1 && s[i].in && s[i].key != key {
		if lc.evicted++; lc.evicted >= len(lc.sets) && len(lc.sets) < accountLocCache {
			lc.grow()
			s = locSet(lc.sets, key)
			i = locWay(s, key)
		}
	}
	copy(s[1:i+1], s[:i])
	s[0] = locEntry{key: key, c: c, in: true}
	lc.mu.Unlock()
}

// locWay is the way of s a put of key takes: key's own, else the first
// free one, else the oldest (which gives way).
func locWay(s *[locWays]locEntry, key solana.PublicKey) int {
	for j := range s {
		if !s[j].in || s[j].key == key {
			return j
		}
	}
	return locWays - 1
}

// grow doubles the sets. Set i's entries go to sets i and i+n of the
// new table by one more bit of their addresses, in the same order, so
// every set keeps its newest-first order.
func (lc *locCache) grow() {
	sets := make([][locWays]locEntry, 2*len(lc.sets))
	for _, s := range lc.sets {
		for _, e := range s {
			if !e.in {
				break
			}
			// A new set receives the entries of one old set only, so
			// there is always a free way: the first, in order.
			ns := locSet(sets, e.key)
			ns[locWay(ns, e.key)] = e
		}
	}
	lc.sets, lc.evicted = sets, 0
}

// get returns key's entry (found: the cache has one).
func (lc *locCache) get(key solana.PublicKey) (cachedLoc, bool) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.sets == nil {
		return cachedLoc{}, false
	}
	s := locSet(lc.sets, key)
	for j := range s {
		if !s[j].in {
			break
		}
		if s[j].key == key {
			return s[j].c, true
		}
	}
	return cachedLoc{}, false
}

// cachedLoc is a remembered key-directory lookup (ok: the key has an
// entry).
type cachedLoc struct {
	loc accLoc
	ok  bool
}

func segName(id uint32) string { return fmt.Sprintf("%08d.seg", id) }

// openAccountLog opens the log in dir and cuts it back to end, the
// position the last committed slot recorded (the zero position for a
// store that has none yet).
func openAccountLog(dir string, end logPos, noSync bool, segBytes int64) (*accountLog, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create account log: %w", err)
	}
	if segBytes <= 0 {
		segBytes = accountSegmentBytes
	}
	lg := &accountLog{
		dir: dir, noSync: noSync, segBytes: segBytes, files: map[uint32]*os.File{}, sizes: map[uint32]int64{}, live: map[uint32]int64{},
		cleaned: map[uint32]bool{}, mintIDs: map[solana.PublicKey]int{}, mintsMax: accountLogMints,
	}
	if err := lg.open(end); err != nil {
		lg.closeFiles()
		return nil, err
	}
	return lg, nil
}

func (lg *accountLog) open(end logPos) error {
	if end.seg == 0 {
		end = logPos{seg: 1}
	}
	entries, err := os.ReadDir(lg.dir)
	if err != nil {
		return fmt.Errorf("read account log: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "keydir.tmp") || strings.HasPrefix(name, "keydir.vals.tmp") {
			// A snapshot's file a kill interrupted (a run's temporary
			// file is the table's to remove).
			os.Remove(filepath.Join(lg.dir, name))
			continue
		}
		id, ok := strings.CutSuffix(name, ".seg")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(id, 10, 32)
		if err != nil || n == 0 {
			continue
		}
		seg := uint32(n)
		path := filepath.Join(lg.dir, name)
		if seg > end.seg {
			// Written by a slot that never committed.
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("account log: remove uncommitted %s: %w", name, err)
			}
			continue
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0o600)
		if err != nil {
			return fmt.Errorf("account log: %w", err)
		}
		lg.files[seg] = f
		fi, err := f.Stat()
		if err != nil {
			return fmt.Errorf("account log: %w", err)
		}
		size := fi.Size()
		if seg == end.seg && size != int64(end.off) {
			if size < int64(end.off) {
				return fmt.Errorf("%w: account log %s has %d bytes, the ledger committed %d", errCorrupt, name, size, end.off)
			}
			if err := f.Truncate(int64(end.off)); err != nil {
				return fmt.Errorf("account log: cut back %s: %w", name, err)
			}
			size = int64(end.off)
		}
		lg.sizes[seg] = size
		lg.total += size
	}
	if _, ok := lg.files[end.seg]; !ok {
		if end.off != 0 {
			return fmt.Errorf("%w: account log segment %s missing", errCorrupt, segName(end.seg))
		}
		f, err := os.OpenFile(filepath.Join(lg.dir, segName(end.seg)), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("account log: %w", err)
		}
		lg.files[end.seg] = f
		lg.sizes[end.seg] = 0
	}
	lg.head = end
	if lg.keydir, err = openTable(filepath.Join(lg.dir, "keydir"), keydirCodec); err != nil {
		return err
	}
	if err := lg.readMeta(lg.keydir.meta); err != nil {
		return err
	}
	lg.basePos = logPos{seg: 1}
	if b := lg.keydir.baseMeta(); len(b) >= 8 {
		lg.basePos, _ = decodeLogPos(b[:8])
	}
	// The replay looks every record's address up: compare keys in the
	// key directory's mapping rather than reading each.
	lg.keydir.keysMapped = true
	err = lg.replay(lg.snapPos, end)
	lg.keydir.keysMapped = false
	lg.keydir.dropPages()
	if err != nil {
		return err
	}
	lg.grown = lg.distance(lg.basePos, end)
	lg.dropDead()
	return nil
}

// keydirMeta is what the key directory's file records besides the
// entries: the log position it covers and the live bytes per segment.
func (lg *accountLog) keydirMeta(pos logPos) []byte {
	b := append(pos.bytes(), binary.LittleEndian.AppendUint32(nil, uint32(len(lg.live)))...)
	segs := make([]uint32, 0, len(lg.live))
	for s := range lg.live {
		segs = append(segs, s)
	}
	slices.Sort(segs)
	for _, s := range segs {
		b = binary.LittleEndian.AppendUint32(b, s)
		b = binary.LittleEndian.AppendUint64(b, uint64(lg.live[s]))
	}
	return b
}

func (lg *accountLog) readMeta(b []byte) error {
	if b == nil {
		lg.snapPos = logPos{seg: 1}
		return nil
	}
	if len(b) < 12 {
		return fmt.Errorf("%w: key directory meta", errCorrupt)
	}
	lg.snapPos, _ = decodeLogPos(b[:8])
	n := int(binary.LittleEndian.Uint32(b[8:]))
	if len(b) != 12+12*n {
		return fmt.Errorf("%w: key directory meta", errCorrupt)
	}
	for p := b[12:]; len(p) > 0; p = p[12:] {
		live := int64(binary.LittleEndian.Uint64(p[4:]))
		lg.live[binary.LittleEndian.Uint32(p)] = live
		lg.alive += live
	}
	return nil
}

// distance is the number of log bytes from p to q.
func (lg *accountLog) distance(p, q logPos) int64 {
	if !p.less(q) {
		return 0
	}
	if p.seg == q.seg {
		return int64(q.off - p.off)
	}
	d := lg.sizes[p.seg] - int64(p.off)
	for s := p.seg + 1; s < q.seg; s++ {
		d += lg.sizes[s]
	}
	return d + int64(q.off)
}

// replay applies the records between from and to to the key directory.
func (lg *accountLog) replay(from, to logPos) error {
	for seg := from.seg; seg <= to.seg; seg++ {
		f := lg.files[seg]
		if f == nil {
			return fmt.Errorf("%w: account log segment %s missing", errCorrupt, segName(seg))
		}
		start, end := int64(0), lg.sizes[seg]
		if seg == from.seg {
			start = int64(from.off)
		}
		if seg == to.seg {
			end = int64(to.off)
		}
		if start >= end {
			continue
		}
		buf := make([]byte, end-start)
		if _, err := f.ReadAt(buf, start); err != nil {
			return fmt.Errorf("replay account log %s: %w", segName(seg), err)
		}
		for off := 0; off < len(buf); {
			key, rec, n, err := parseRecord(buf[off:])
			if err != nil {
				return fmt.Errorf("replay account log %s at %d: %w", segName(seg), start+int64(off), err)
			}
			r := pendingRecord{key: key, deleted: len(rec) == 0, loc: accLoc{seg, uint32(start) + uint32(off), uint32(n)}}
			// Not remembered: the cache is for the next commits, and the
			// replay may be a million records (it starts empty, which it
			// may).
			r.prev, r.had = lg.keydir.swap(key, r.loc, r.deleted)
			lg.countLive(r)
			off += n
		}
	}
	return nil
}

// record makes r the newest record of its account, in place of r.prev.
// Callers hold mu for writing.
func (lg *accountLog) record(r pendingRecord) {
	lg.remember(r.key, r.loc, !r.deleted)
	lg.keydir.change(r.key, r.prev, r.had, r.loc, r.deleted)
	lg.countLive(r)
}

// countLive moves r's bytes into the live bytes of its segment, and
// those of the record it replaces out. Callers hold mu for writing.
func (lg *accountLog) countLive(r pendingRecord) {
	if r.had {
		lg.live[r.prev.seg] -= int64(r.prev.n)
		lg.alive -= int64(r.prev.n)
	}
	if r.deleted {
		return
	}
	lg.live[r.loc.seg] += int64(r.loc.n)
	lg.alive += int64(r.loc.n)
}

// parseRecord reads the record at the start of b: its address, its
// encoded account (empty: deleted) and its length.
func parseRecord(b []byte) (solana.PublicKey, []byte, int, error) {
	if len(b) < accountRecordHeader+32 {
		return solana.PublicKey{}, nil, 0, fmt.Errorf("%w: account record header", errCorrupt)
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n < 0 || len(b)-accountRecordHeader-32 < n {
		return solana.PublicKey{}, nil, 0, fmt.Errorf("%w: account record length", errCorrupt)
	}
	body := b[accountRecordHeader : accountRecordHeader+32+n]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return solana.PublicKey{}, nil, 0, fmt.Errorf("%w: account record checksum", errCorrupt)
	}
	return solana.PublicKeyFromBytes(body[:32]), body[32:], accountRecordHeader + 32 + n, nil
}

// appendRecordRef appends key's record of a (nil: deleted), naming the
// account's mint by its index in the log's mint dictionary unless mint
// is negative (appendAccountRecordRef).
func appendRecordRef(buf []byte, key solana.PublicKey, a *Account, mint int) []byte {
	start := len(buf)
	buf = append(buf, make([]byte, accountRecordHeader)...)
	buf = append(buf, key[:]...)
	if a != nil {
		buf = appendAccountRecordRef(buf, a, mint)
	}
	binary.LittleEndian.PutUint32(buf[start:], uint32(len(buf)-start-accountRecordHeader-32))
	binary.LittleEndian.PutUint32(buf[start+4:], crc32.Checksum(buf[start+accountRecordHeader:], castagnoli))
	return buf
}

// get reads an account, or nil if it does not exist.
func (lg *accountLog) get(key solana.PublicKey) (*Account, error) {
	lg.mu.RLock()
	defer lg.mu.RUnlock()
	loc, ok, exact := lg.keydir.lookup(key)
	if ok && !exact {
		// An entry of the base whose address starts like key's: key's,
		// unless another address starts the same way, which the record
		// tells (anything unreadable there, too: the exact lookup
		// decides, and reports what is wrong with key's own record).
		if k, rec, err := lg.readRecord(loc); err == nil && k == key {
			lg.remember(key, loc, true)
			return lg.decode(rec)
		}
		loc, ok = lg.keydir.get(key)
	}
	lg.remember(key, loc, ok)
	if !ok {
		return nil, nil
	}
	return lg.read(key, loc)
}

// remember caches key's key-directory entry (ok: it has one). Callers
// hold mu: for reading when they looked the entry up, for writing when
// they changed it.
func (lg *accountLog) remember(key solana.PublicKey, loc accLoc, ok bool) {
	lg.locs.put(key, cachedLoc{loc, ok})
}

// cached returns key's cached key-directory entry (found: there is one
// in the cache; ok: the key has an entry in the directory).
func (lg *accountLog) cached(key solana.PublicKey) (c cachedLoc, found bool) {
	return lg.locs.get(key)
}

// lookupPrev finds the key-directory entry each pending record replaces:
// the cached one (the last lookup or record of the key), else the key
// directory's, or an earlier record of the same commit's. It runs under
// mu held for reading, so that apply holds it for writing only to update
// memory: at a million accounts most of a slot's records replace records
// of accounts that are not in memory, and each table lookup is a read.
func (lg *accountLog) lookupPrev() {
	seen := make(map[solana.PublicKey]int, len(lg.pending))
	lg.mu.RLock()
	defer lg.mu.RUnlock()
	for i := range lg.pending {
		p := &lg.pending[i]
		if j, ok := seen[p.key]; ok {
			p.prev, p.had = lg.pending[j].loc, !lg.pending[j].deleted
		} else if c, ok := lg.cached(p.key); ok {
			p.prev, p.had = c.loc, c.ok
		} else {
			p.prev, p.had = lg.keydir.get(p.key)
		}
		seen[p.key] = i
	}
}

// read decodes the record at loc. Callers hold mu.
func (lg *accountLog) read(key solana.PublicKey, loc accLoc) (*Account, error) {
	k, rec, err := lg.readRecord(loc)
	if err == nil && k != key {
		err = fmt.Errorf("%w: record of %s found for %s", errCorrupt, k, key)
	}
	if err != nil {
		return nil, fmt.Errorf("read account %s: %w", key, err)
	}
	return lg.decode(rec)
}

// readRecord reads the record at loc: its address and encoded account.
// Callers hold mu.
func (lg *accountLog) readRecord(loc accLoc) (solana.PublicKey, []byte, error) {
	f := lg.files[loc.seg]
	if f == nil {
		return solana.PublicKey{}, nil, fmt.Errorf("%w: no segment %s", errCorrupt, segName(loc.seg))
	}
	buf := make([]byte, loc.n)
	if _, err := f.ReadAt(buf, int64(loc.off)); err != nil {
		return solana.PublicKey{}, nil, err
	}
	k, rec, _, err := parseRecord(buf)
	return k, rec, err
}

// each calls fn for every account in the store (in no order) until fn
// returns false.
func (lg *accountLog) each(fn func(solana.PublicKey, *Account) bool) error {
	lg.mu.RLock()
	defer lg.mu.RUnlock()
	var err error
	lg.keydir.each(func(k solana.PublicKey, loc accLoc) bool {
		var a *Account
		if a, err = lg.read(k, loc); err != nil {
			return false
		}
		return fn(k, a)
	})
	return err
}

// size estimates the number of live accounts.
func (lg *accountLog) size() int {
	lg.mu.RLock()
	defer lg.mu.RUnlock()
	return lg.keydir.entries() + lg.keydir.changes()
}

// append writes a slot's account values (nil: deleted) and, when there
// is too much garbage, the live records of the oldest sealed segments,
// and syncs them. It returns the log's new end, which the slot's commit
// records; apply then makes the records visible.
func (lg *accountLog) append(writes []AccountWrite) (logPos, error) {
	lg.pending = lg.pending[:0]
	buf := lg.appendBuf[:0]
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		f := lg.files[lg.head.seg]
		if _, err := f.WriteAt(buf, int64(lg.head.off)); err != nil {
			return fmt.Errorf("append to account log: %w", err)
		}
		lg.head.off += uint32(len(buf))
		lg.sizes[lg.head.seg] = int64(lg.head.off)
		lg.total += int64(len(buf))
		lg.grown += int64(len(buf))
		buf = buf[:0]
		return nil
	}
	var rotated []*os.File
	add := func(key solana.PublicKey, rec []byte, deleted bool) error {
		if int64(lg.head.off)+int64(len(buf)+len(rec)) > lg.segBytes && lg.head.off+uint32(len(buf)) > 0 {
			if err := flush(); err != nil {
				return err
			}
			rotated = append(rotated, lg.files[lg.head.seg])
			next := lg.head.seg + 1
			f, err := os.OpenFile(filepath.Join(lg.dir, segName(next)), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				return fmt.Errorf("account log: %w", err)
			}
			lg.mu.Lock()
			lg.files[next] = f
			lg.sizes[next] = 0
			lg.mu.Unlock()
			lg.head = logPos{seg: next}
		}
		lg.pending = append(lg.pending, pendingRecord{key: key, deleted: deleted,
			loc: accLoc{lg.head.seg, lg.head.off + uint32(len(buf)), uint32(len(rec))}})
		buf = append(buf, rec...)
		return nil
	}
	var one []byte
	appended := int64(0)
	for _, w := range writes {
		one = appendRecordRef(one[:0], w.Key, w.Account, lg.mintRef(w.Account))
		appended += int64(len(one))
		if err := add(w.Key, one, w.Account == nil); err != nil {
			return logPos{}, err
		}
	}
	lg.appended.Add(appended)
	// Clean about as much as was written (and at least a segment), so the
	// garbage cannot outgrow the cleaning.
	for budget := 4*appended + lg.segBytes; budget > 0; {
		n, err := lg.clean(add)
		if err != nil {
			return logPos{}, err
		}
		if n == 0 {
			break
		}
		budget -= n
	}
	if err := flush(); err != nil {
		return logPos{}, err
	}
	if int64(cap(buf)) <= lg.segBytes {
		lg.appendBuf = buf[:0]
	}
	lg.lookupPrev()
	if !lg.noSync {
		for _, f := range append(rotated, lg.files[lg.head.seg]) {
			if err := f.Sync(); err != nil {
				return logPos{}, fmt.Errorf("sync account log: %w", err)
			}
		}
		if len(rotated) > 0 {
			if err := syncDir(lg.dir); err != nil {
				return logPos{}, err
			}
		}
	}
	return lg.head, nil
}

// clean copies the live records of the sealed segment holding the
// fewest live bytes (the oldest of equals) to the head of the log when
// the segments hold too much garbage, and returns the segment's size (0:
// nothing to clean). It reads the segment from start to end and keeps the
// records the key directory still points to; a record the same commit
// wrote again is not copied.
//
// The emptiest segment, not the oldest: once a ledger holds many
// accounts written once and rarely again (a million token accounts
// filled, then a few thousand paid to), the oldest segments are mostly
// those live cold records, and copying them costs about as many bytes as
// it frees, so the bytes written per transaction grew with the number of
// accounts. The segments written since hold mostly superseded values of
// the accounts that are written again and again (fee payers, busy token
// accounts), which cost little to clean.
func (lg *accountLog) clean(add func(solana.PublicKey, []byte, bool) error) (int64, error) {
	total := lg.total
	for s := range lg.cleaned {
		total -= lg.sizes[s]
	}
	if total <= accountGarbageRatio*lg.alive+lg.segBytes {
		return 0, nil
	}
	var oldest uint32 // the segment to clean (0: none)
	for s := range lg.sizes {
		if s >= lg.head.seg || lg.cleaned[s] {
			continue
		}
		if oldest == 0 || lg.live[s] < lg.live[oldest] || (lg.live[s] == lg.live[oldest] && s < oldest) {
			oldest = s
		}
	}
	if oldest == 0 {
		return 0, nil
	}
	lg.cleaned[oldest] = true
	size := lg.sizes[oldest]
	if lg.live[oldest] <= 0 {
		return max(size, 1), nil
	}
	buf := make([]byte, size)
	if _, err := lg.files[oldest].ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("clean account log %s: %w", segName(oldest), err)
	}
	written := make(map[solana.PublicKey]bool, len(lg.pending))
	for _, p := range lg.pending {
		written[p.key] = true
	}
	for off := 0; off < len(buf); {
		key, enc, n, err := parseRecord(buf[off:])
		if err != nil {
			return 0, fmt.Errorf("clean account log %s at %d: %w", segName(oldest), off, err)
		}
		lg.mu.RLock()
		loc, ok, exact := lg.keydir.lookup(key)
		if ok && !exact && (loc.seg != oldest || loc.off != uint32(off)) {
			// The base's address with key's prefix does not point here
			// (if it does, it is key: a location holds one record).
			loc, ok = lg.keydir.get(key)
		}
		lg.mu.RUnlock()
		if ok && loc.seg == oldest && loc.off == uint32(off) && !written[key] {
			rec := lg.recode(key, buf[off:off+n], enc)
			if err := add(key, rec, false); err != nil {
				return 0, err
			}
			lg.copied.Add(int64(len(rec)))
		}
		off += n
	}
	return max(size, 1), nil
}

// apply makes the records of the last append visible, once the slot's
// commit is durable, and saves the key directory: it adopts a finished
// snapshot, starts one when it is due, or writes the changes in memory as
// a run when enough accumulated. A snapshot is written beside the
// commits: at a million accounts it is 44 MB, which in the commit path
// held up every confirmation behind it for the better part of a second.
// Until it is adopted no run is written (a run names the base it was
// written on), so the chain of files on disk stays the old base's.
func (lg *accountLog) apply() error {
	lg.mu.Lock()
	for _, p := range lg.pending {
		lg.record(p)
	}
	lg.pending = lg.pending[:0]
	lg.mu.Unlock()
	if err := lg.finishSnapshot(false); err != nil || lg.snap != nil {
		return err
	}
	// A run is due once the changes the index cannot hold in place
	// (accounts outside the base) reach tableRunChanges, and it writes the
	// entries changed in place as well: at a million accounts, after a
	// fill that left 93 000 accounts outside the base, the run that came
	// due in the twelfth phase was 32 MB (711 000 entries), where a
	// values file and the run beside it are 16.
	if lg.snapshotDue() || lg.keydir.runDue() && lg.keydir.valuesCheaper() {
		lg.startSnapshot()
		return nil
	}
	return lg.saveRun(false)
}

// snapshotDue reports whether the log has grown enough, or enough
// accounts were created, since the key directory's base was written to
// write it again.
func (lg *accountLog) snapshotDue() bool {
	return lg.grown >= max(accountSnapshotRatio*lg.keydir.size, min(accountSnapshotMin, 16*lg.segBytes)) || lg.freshDue()
}

// freshDue reports whether enough accounts were created since the key
// directory's base to write it again with them: a snapshot then is a
// whole base, never a values file (which leaves them in a run).
func (lg *accountLog) freshDue() bool {
	fresh := lg.keydir.fresh
	return fresh >= accountSnapshotFreshMin && fresh*accountSnapshotFresh >= lg.keydir.entries()
}

// saveRun writes the key directory's changes in memory as a run when
// enough of them accumulated, so they never take more memory than that
// (sortedTable), or with flush when there are any. Segments stay until a
// snapshot of the base passes them.
func (lg *accountLog) saveRun(flush bool) error {
	pos := lg.head
	wrote, err := saveRun(&lg.mu, lg.keydir, func() []byte { return lg.keydirMeta(pos) }, !lg.noSync, flush)
	if err != nil {
		return fmt.Errorf("write key directory run: %w", err)
	}
	if wrote {
		lg.snapPos = pos
	}
	return nil
}

// startSnapshot sets the key directory's changes in memory aside and
// starts writing it, as of the log's end, as the new base. Readers and
// commits go on meanwhile: lookups read the changes made since over the
// frozen ones (sortedTable.freeze).
func (lg *accountLog) startSnapshot() {
	lg.mu.RLock()
	pos := lg.head
	meta := lg.keydirMeta(pos) // the live bytes as of pos, like the frozen changes
	lg.mu.RUnlock()
	lg.snap = startRewrite(&lg.mu, lg.keydir, meta, !lg.noSync, nil, !lg.freshDue(), lg.snapGate)
	lg.snapAt, lg.snapGrown = pos, lg.grown
}

// finishSnapshot adopts the snapshot in progress once it is written
// (with wait, waiting for it), and then deletes the segments nothing
// points into anymore.
func (lg *accountLog) finishSnapshot(wait bool) error {
	if lg.snap == nil {
		return nil
	}
	done, err := lg.snap.finish(&lg.mu, lg.keydir, wait)
	if err != nil {
		return fmt.Errorf("snapshot key directory: %w", err)
	}
	if !done {
		return nil
	}
	lg.snap = nil
	lg.snapPos, lg.basePos = lg.snapAt, lg.snapAt
	lg.grown -= lg.snapGrown
	lg.dropDead()
	return nil
}

// snapshot writes the key directory as of the log's end and adopts it.
func (lg *accountLog) snapshot() error {
	lg.startSnapshot()
	return lg.finishSnapshot(true)
}

// dropDead deletes the sealed segments before the snapshot position that
// hold no live record.
func (lg *accountLog) dropDead() {
	var dead []uint32
	lg.mu.Lock()
	for s, f := range lg.files {
		if s < lg.basePos.seg && s < lg.head.seg && lg.live[s] <= 0 {
			f.Close()
			delete(lg.files, s)
			lg.total -= lg.sizes[s]
			delete(lg.sizes, s)
			delete(lg.live, s)
			delete(lg.cleaned, s)
			dead = append(dead, s)
		}
	}
	lg.mu.Unlock()
	for _, s := range dead {
		os.Remove(filepath.Join(lg.dir, segName(s)))
	}
}

// close writes the key directory's changes in memory as a run, or a
// snapshot when one is due, the base carries tableMaxRuns, or a values
// file is smaller than the run (a clean restart then replays nothing),
// and closes the files.
func (lg *accountLog) close() error {
	err := lg.finishSnapshot(true)
	switch {
	case err != nil:
	case lg.files[lg.head.seg] == nil || lg.snapPos == lg.head:
	case lg.snapshotDue() || lg.keydir.runCount() >= tableMaxRuns || lg.keydir.valuesCheaper():
		err = lg.snapshot()
	default:
		err = lg.saveRun(true)
	}
	return errors.Join(err, lg.closeFiles())
}

func (lg *accountLog) closeFiles() error {
	if lg.snap != nil {
		// A snapshot that was not adopted (it failed, or close stopped at
		// an error) may still read the files.
		<-lg.snap.done
	}
	for _, f := range lg.files {
		f.Close()
	}
	lg.files = map[uint32]*os.File{}
	if lg.keydir != nil {
		return lg.keydir.close()
	}
	return nil
}

// writeFileAtomic replaces path with what write writes: a temporary
// file, synced, renamed over it, and the directory synced.
func writeFileAtomic(path string, sync bool, write func(io.Writer) error) error {
	return writeFileAtomicBefore(path, sync, write, nil)
}

// writeFileAtomicBefore is writeFileAtomic with before (nil: none) run
// once the temporary file is complete (and synced), before the rename;
// an error from it stops the write.
func writeFileAtomicBefore(path string, sync bool, write func(io.Writer) error, before func() error) error {
	tmp, err := writeFileSynced(path, sync, write)
	if err != nil {
		return err
	}
	if before != nil {
		err = before()
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if sync {
		return syncDir(filepath.Dir(path))
	}
	return nil
}

// writeFileSynced writes what write writes to a temporary file beside
// path (path.tmp…), synced with sync, and returns its name; nothing is
// left behind if it fails.
func writeFileSynced(path string, sync bool, write func(io.Writer) error) (string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return "", err
	}
	err = write(tmp)
	if err == nil && sync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
