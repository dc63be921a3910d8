package ledger

import (
	"slices"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"
)

// store persists produced slots and answers history queries. commit
// writes each slot's changes once; load hands back what a restart needs
// (the recent blocks and the supply). A durable store also serves the
// accounts (accountSource) and the secondary indexes, which an in-memory
// ledger keeps in memory instead.
//
// commit is called from a single goroutine, in slot order; the read
// methods may run concurrently with it and see only committed slots.
type store interface {
	// load returns the persisted state, or nil for a new store.
	load() (*loadedState, error)
	commit(f *frozenSlot) error
	// indexEach calls fn for every account the durable index of kind
	// lists under by (an in-memory store lists none).
	indexEach(kind indexKind, by solana.PublicKey, fn func(solana.PublicKey)) error
	tx(sig solana.Signature) (*TxRecord, error)
	block(slot uint64) (*blockRecord, error)
	blockTxs(slot uint64) ([]*TxRecord, error)
	// blockSlots lists the slots in [start, end] that have blocks,
	// ascending, at most limit of them.
	blockSlots(start, end uint64, limit int) ([]uint64, error)
	// countBlocks counts the slots in [start, end] that have blocks.
	countBlocks(start, end uint64) (uint64, error)
	// perfSamples returns the newest performance samples, newest first,
	// at most limit of them.
	perfSamples(limit int) ([]PerfSample, error)
	// addressTxs lists the transactions that reference addr, newest
	// first, strictly older than before (if set) and stopping before
	// until (if set), at most limit of them, all in slots <= maxSlot.
	addressTxs(addr solana.PublicKey, before, until *txLoc, maxSlot uint64, limit int) ([]*TxRecord, error)
	location(sig solana.Signature) (*txLoc, error)
	// prune runs one history pruning step (prune.go): limit is
	// Config.LimitLedgerSize, tipTxs the transactions landed up to the
	// tip, only slots below before may go, and commits counts the
	// commits so far. Called by the persister after a commit.
	prune(limit, tipTxs, before, commits uint64) error
	// firstSlot is the oldest slot whose history is kept.
	firstSlot() uint64
	getMeta(key string) ([]byte, error)
	putMeta(key string, val []byte) error
	close() error
}

// txLoc is where a transaction sits: its slot and index in the block.
type txLoc struct {
	Slot  uint64
	Index uint32
}

func (a txLoc) less(b txLoc) bool {
	return a.Slot < b.Slot || (a.Slot == b.Slot && a.Index < b.Index)
}

// loadedState is what a store hands back at startup.
type loadedState struct {
	tip *blockRecord
	// recent are the last blocks, oldest first, ending with tip.
	recent []*blockRecord
	// capital is the lamports held by all accounts at tip.
	capital uint64
	// headsReplayed counts the postings the open replayed into the
	// address heads (after a kill: the slots since the older of the heads
	// cache's and the heads table's files), in headsReplayTook.
	headsReplayed   int
	headsReplayTook time.Duration
}

// frozenSlot is a finished slot on its way to the store.
type frozenSlot struct {
	block   *Block
	record  *blockRecord
	genesis bool
	perf    *PerfSample // a performance sample taken at this slot, if any
	// capital is the lamports held by all accounts after the slot.
	capital uint64
	// indexAdds and indexDels are the secondary-index entries the slot
	// added, and stale ones to delete (durable stores).
	indexAdds, indexDels []indexEntry
	// frozen is when the slot loop handed the slot over.
	frozen time.Time
	// held are the empty slots before this one that the persister held
	// back (Config.EmptySlotBatch): commit makes them durable in the
	// same transaction, first.
	held []*frozenSlot
}

// empty reports whether the slot changed nothing but the clock: no
// transactions and no index entries.
func (f *frozenSlot) empty() bool {
	return !f.genesis && len(f.block.Transactions) == 0 && len(f.block.Applied) == 0 && len(f.indexAdds) == 0 && len(f.indexDels) == 0
}

// heldWrites are the account writes of f's held slots and then f's, the
// newest value of each account only.
func (f *frozenSlot) heldWrites() []AccountWrite {
	if len(f.held) == 0 {
		return f.block.Writes
	}
	seen := map[solana.PublicKey]bool{}
	var out []AccountWrite
	for i := len(f.held); i >= 0; i-- {
		g := f
		if i < len(f.held) {
			g = f.held[i]
		}
		for j := len(g.block.Writes) - 1; j >= 0; j-- {
			if w := g.block.Writes[j]; !seen[w.Key] {
				seen[w.Key] = true
				out = append(out, w)
			}
		}
	}
	slices.Reverse(out)
	return out
}

// memStore keeps everything in memory; it is the store of a ledger
// without a DataDir.
type memStore struct {
	mu     sync.RWMutex
	blocks map[uint64]*blockRecord
	slots  []uint64 // ascending
	txs    map[solana.Signature]*TxRecord
	byAddr map[solana.PublicKey][]*TxRecord // ascending by location
	meta   map[string][]byte
	perf   []PerfSample // ascending, at most MaxPerformanceSamples
	// first is the oldest slot kept and prunedTxs the transactions in
	// the slots pruned before it.
	first, prunedTxs uint64
}

func newMemStore() *memStore {
	return &memStore{
		blocks: map[uint64]*blockRecord{},
		txs:    map[solana.Signature]*TxRecord{},
		byAddr: map[solana.PublicKey][]*TxRecord{},
		meta:   map[string][]byte{},
	}
}

func (m *memStore) load() (*loadedState, error) { return nil, nil }

func (m *memStore) indexEach(indexKind, solana.PublicKey, func(solana.PublicKey)) error { return nil }

func (m *memStore) commit(f *frozenSlot) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range f.held {
		m.commitLocked(h)
	}
	m.commitLocked(f)
	return nil
}

func (m *memStore) commitLocked(f *frozenSlot) {
	m.blocks[f.record.Slot] = f.record
	m.slots = append(m.slots, f.record.Slot)
	if f.perf != nil {
		m.perf = append(m.perf, *f.perf)
		if over := len(m.perf) - MaxPerformanceSamples; over > 0 {
			m.perf = slices.Delete(m.perf, 0, over)
		}
	}
	for _, r := range f.block.Transactions {
		stored := *r
		stored.Writes = nil
		m.txs[r.Signature] = &stored
		tx, err := r.Transaction()
		if err != nil {
			continue // unreachable: landed transactions decoded once already
		}
		for _, k := range tx.Message.AccountKeys {
			m.byAddr[k] = append(m.byAddr[k], &stored)
		}
	}
}

func (m *memStore) tx(sig solana.Signature) (*TxRecord, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.txs[sig], nil
}

func (m *memStore) location(sig solana.Signature) (*txLoc, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if r := m.txs[sig]; r != nil {
		return &txLoc{r.Slot, r.Index}, nil
	}
	return nil, nil
}

func (m *memStore) block(slot uint64) (*blockRecord, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.blocks[slot], nil
}

func (m *memStore) blockTxs(slot uint64) ([]*TxRecord, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	b := m.blocks[slot]
	if b == nil {
		return nil, nil
	}
	out := make([]*TxRecord, len(b.Signatures))
	for i, s := range b.Signatures {
		out[i] = m.txs[s]
	}
	return out, nil
}

func (m *memStore) blockSlots(start, end uint64, limit int) ([]uint64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	i, _ := slices.BinarySearch(m.slots, start)
	var out []uint64
	for ; i < len(m.slots) && m.slots[i] <= end && len(out) < limit; i++ {
		out = append(out, m.slots[i])
	}
	return out, nil
}

func (m *memStore) countBlocks(start, end uint64) (uint64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	lo, _ := slices.BinarySearch(m.slots, start)
	hi, found := slices.BinarySearch(m.slots, end)
	if found {
		hi++
	}
	return uint64(max(hi-lo, 0)), nil
}

func (m *memStore) perfSamples(limit int) ([]PerfSample, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]PerfSample, 0, min(limit, len(m.perf)))
	for i := len(m.perf) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, m.perf[i])
	}
	return out, nil
}

func (m *memStore) addressTxs(addr solana.PublicKey, before, until *txLoc, maxSlot uint64, limit int) ([]*TxRecord, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	list := m.byAddr[addr]
	var out []*TxRecord
	for i := len(list) - 1; i >= 0 && len(out) < limit; i-- {
		r := list[i]
		loc := txLoc{r.Slot, r.Index}
		if r.Slot > maxSlot || (before != nil && !loc.less(*before)) {
			continue
		}
		if until != nil && !until.less(loc) {
			break
		}
		out = append(out, r)
	}
	return out, nil
}

func (m *memStore) getMeta(key string) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.meta[key], nil
}

func (m *memStore) putMeta(key string, val []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.meta[key] = val
	return nil
}

func (m *memStore) close() error { return nil }
