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
//	txs       slot (8 BE) | index (4 BE) -> encodeTx
//	addrpost  slot (8 BE) | pubkey -> previous slot (8 BE) | indexes (uvarint)
//	addrhead  pubkey -> newest slot (8 BE) with a posting for pubkey
//	perf      slot (8 BE) -> encodePerfSample (getRecentPerformanceSamples)
//
// Every key that grows with history starts with the slot, so a slot's
// commit appends at the right edge of those trees and dirties few pages
// however long the history is. Randomly keyed trees would make each
// commit rewrite pages all over an ever larger tree; the two lookups that
// need a random key are served differently:
//
//   - getSignaturesForAddress walks a per-address chain of postings: the
//     head table (bounded by the number of addresses, not by history)
//     names the newest slot, each posting the previous one;
//   - signature lookups use sigIndex, an in-memory map rebuilt at open
//     from the block records, which list every signature.
var (
	bucketMeta     = []byte("meta")
	bucketIndex    = []byte("index")
	bucketBlocks   = []byte("blocks")
	bucketTxs      = []byte("txs")
	bucketAddrPost = []byte("addrpost")
	bucketAddrHead = []byte("addrhead")
	// bucketPerf was added after storeFormat ferry-ledger-2 was fixed;
	// open creates it in older data directories, which read as having no
	// samples yet.
	bucketPerf = []byte("perf")
	allBuckets = [][]byte{bucketMeta, bucketIndex, bucketBlocks, bucketTxs, bucketAddrPost, bucketAddrHead, bucketPerf}
)

const (
	dbFileName = "ledger.db"
	metaTip    = "tip"
	metaFormat = "format"
	// metaAccountLog is the account log's end after the tip slot.
	metaAccountLog = "acclog"
	// metaCapital is the supply after the tip slot (8 LE).
	metaCapital = "capital"
	// accountLogDir is the account log's directory in the data directory.
	accountLogDir = "accounts"
	// storeFormat identifies this layout; a data directory written with
	// another one is refused rather than misread.
	storeFormat = "ferry-ledger-3"
	// recentBlocks is how many blocks load returns: enough to rebuild the
	// blockhash queue and the status cache.
	recentBlocks = MaxProcessingAge + 2
)

type boltStore struct {
	db  *bolt.DB
	acc *accountLog
	// sigs maps the first 8 bytes of each landed signature to its
	// location (slot << 32 | index). A lookup checks the full signature in
	// the record, so a prefix collision can only hide a transaction, never
	// return the wrong one (at a probability of about n²/2⁶⁵).
	mu   sync.RWMutex
	sigs map[uint64]uint64
}

func openBoltStore(dir string, noSync bool, segBytes int64) (*boltStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, dbFileName)
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout: 2 * time.Second,
		// The free list is rebuilt by scanning at open instead of being
		// written on every commit: commits are the hot path, opens are rare.
		NoFreelistSync:  true,
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
	err = db.View(func(tx *bolt.Tx) error {
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
	return &boltStore{db: db, acc: acc, sigs: map[uint64]uint64{}}, nil
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

func locKey(slot uint64, index uint32) []byte {
	k := make([]byte, 12)
	binary.BigEndian.PutUint64(k, slot)
	binary.BigEndian.PutUint32(k[8:], index)
	return k
}

func sigPrefix(s solana.Signature) uint64 { return binary.LittleEndian.Uint64(s[:8]) }

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
		// One pass over the block records rebuilds the signature index and
		// collects the recent blocks.
		st = &loadedState{capital: binary.LittleEndian.Uint64(capb)}
		var all []*blockRecord
		err := tx.Bucket(bucketBlocks).ForEach(func(k, v []byte) error {
			r, err := decodeBlock(v)
			if err != nil {
				return fmt.Errorf("block %x: %w", k, err)
			}
			for i, sig := range r.Signatures {
				s.sigs[sigPrefix(sig)] = packLoc(r.Slot, uint32(i))
			}
			all = append(all, r)
			if len(all) > 2*recentBlocks {
				all = slices.Delete(all, 0, len(all)-recentBlocks)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(all) > recentBlocks {
			all = all[len(all)-recentBlocks:]
		}
		st.recent = all
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
	txKeys := make([][]byte, len(b.Transactions))
	txVals := make([][]byte, len(b.Transactions))
	byAddr := map[solana.PublicKey][]byte{}
	var addrOrder []solana.PublicKey
	for i, r := range b.Transactions {
		txKeys[i] = locKey(r.Slot, r.Index)
		txVals[i] = encodeTx(r)
		tx, err := r.Transaction()
		if err != nil {
			return fmt.Errorf("commit slot %d: transaction %s: %w", b.Slot, r.Signature, err)
		}
		for _, k := range tx.Message.AccountKeys {
			list, ok := byAddr[k]
			if !ok {
				addrOrder = append(addrOrder, k)
			}
			byAddr[k] = binary.AppendUvarint(list, uint64(r.Index))
		}
	}
	// Sorted inserts touch each B+tree page once.
	slices.SortFunc(addrOrder, compareKeys)
	blockVal := encodeBlock(f.record)
	idxAdds := make([][]byte, len(f.indexAdds))
	for i, e := range f.indexAdds {
		idxAdds[i] = indexKey(e.kind, e.by, e.key)
	}
	slices.SortFunc(idxAdds, bytes.Compare)
	// The accounts first: the commit below records the log's end, so a
	// slot whose commit did not happen leaves no account behind.
	end, err := s.acc.append(b.Writes)
	if err != nil {
		return fmt.Errorf("commit slot %d: %w", b.Slot, err)
	}

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
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put([]byte(metaAccountLog), end.bytes()); err != nil {
			return fmt.Errorf("account log end: %w", err)
		}
		if err := meta.Put([]byte(metaCapital), binary.LittleEndian.AppendUint64(nil, f.capital)); err != nil {
			return fmt.Errorf("supply: %w", err)
		}
		blocks := tx.Bucket(bucketBlocks)
		blocks.FillPercent = 1
		if err := blocks.Put(u64be(b.Slot), blockVal); err != nil {
			return fmt.Errorf("block: %w", err)
		}
		txs := tx.Bucket(bucketTxs)
		txs.FillPercent = 1
		for i := range txKeys {
			if err := txs.Put(txKeys[i], txVals[i]); err != nil {
				return fmt.Errorf("transaction: %w", err)
			}
		}
		heads := tx.Bucket(bucketAddrHead)
		posts := tx.Bucket(bucketAddrPost)
		posts.FillPercent = 1
		for _, a := range addrOrder {
			prev := heads.Get(a[:])
			if prev == nil {
				prev = make([]byte, 8) // slot 0 holds no transactions: none
			}
			v := append(append(make([]byte, 0, 8+len(byAddr[a])), prev...), byAddr[a]...)
			if err := posts.Put(postKey(b.Slot, a), v); err != nil {
				return fmt.Errorf("address index: %w", err)
			}
			if err := heads.Put(a[:], u64be(b.Slot)); err != nil {
				return fmt.Errorf("address index: %w", err)
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
	if err := s.acc.apply(); err != nil {
		return fmt.Errorf("commit slot %d: %w", b.Slot, err)
	}
	s.mu.Lock()
	for _, r := range b.Transactions {
		s.sigs[sigPrefix(r.Signature)] = packLoc(r.Slot, r.Index)
	}
	s.mu.Unlock()
	return nil
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
	loc, ok := s.sigs[sigPrefix(sig)]
	s.mu.RUnlock()
	if !ok {
		return nil, nil
	}
	var r *TxRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketTxs).Get(locKey(loc>>32, uint32(loc)))
		if v == nil {
			return fmt.Errorf("%w: transaction %s indexed but missing", errCorrupt, sig)
		}
		var err error
		r, err = decodeTx(v)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read transaction %s: %w", sig, err)
	}
	if r.Signature != sig {
		return nil, nil // a prefix collision
	}
	return r, nil
}

func (s *boltStore) block(slot uint64) (*blockRecord, error) {
	var r *blockRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketBlocks).Get(u64be(slot))
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
	var out []*TxRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		prefix := u64be(slot)
		c := tx.Bucket(bucketTxs).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			r, err := decodeTx(v)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read block %d transactions: %w", slot, err)
	}
	return out, nil
}

func (s *boltStore) blockSlots(start, end uint64, limit int) ([]uint64, error) {
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
		txs := tx.Bucket(bucketTxs)
		posts := tx.Bucket(bucketAddrPost)
		// Start at before's slot when addr has a posting there (always the
		// case when paging through addr's own results); otherwise at the
		// newest posting, walking down.
		var slot uint64
		if before != nil && posts.Get(postKey(before.Slot, addr)) != nil {
			slot = before.Slot
		} else if h := tx.Bucket(bucketAddrHead).Get(addr[:]); len(h) == 8 {
			slot = binary.BigEndian.Uint64(h)
		}
		for slot != 0 && len(out) < limit {
			v := posts.Get(postKey(slot, addr))
			if len(v) < 8 {
				return fmt.Errorf("%w: address index posting %d/%s", errCorrupt, slot, addr)
			}
			prev := binary.BigEndian.Uint64(v[:8])
			if prev >= slot {
				return fmt.Errorf("%w: address index chain at %d/%s", errCorrupt, slot, addr)
			}
			if until != nil && slot < until.Slot {
				return nil
			}
			if slot <= maxSlot && (before == nil || slot <= before.Slot) {
				var idxs []uint32
				for rest := v[8:]; len(rest) > 0; {
					x, n := binary.Uvarint(rest)
					if n <= 0 || x > 1<<32-1 {
						return fmt.Errorf("%w: address index value", errCorrupt)
					}
					idxs = append(idxs, uint32(x))
					rest = rest[n:]
				}
				for i := len(idxs) - 1; i >= 0 && len(out) < limit; i-- {
					loc := txLoc{Slot: slot, Index: idxs[i]}
					if before != nil && !loc.less(*before) {
						continue
					}
					if until != nil && !until.less(loc) {
						return nil
					}
					tv := txs.Get(locKey(loc.Slot, loc.Index))
					if tv == nil {
						return fmt.Errorf("%w: transaction at %d/%d missing", errCorrupt, loc.Slot, loc.Index)
					}
					r, err := decodeTx(tv)
					if err != nil {
						return err
					}
					out = append(out, r)
				}
			}
			slot = prev
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
	return errors.Join(s.acc.close(), s.db.Close())
}
