package ledger

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/gagliardetto/solana-go"
	bolt "go.etcd.io/bbolt"
)

// History pruning (Config.LimitLedgerSize). The persister prunes after a
// slot's commit: whole slots from the oldest, while every transaction
// they hold is older than the newest LimitLedgerSize ones and the slot is
// finalized and older than the recent window a restart reads back (the
// blockhash queue and the status cache). Accounts are state, not
// history: pruning never touches them.
//
// What a pruned slot leaves behind: getBlock and getBlockTime answer
// Agave's -32001 "cleaned up" error, getTransaction null, the statuses
// of its signatures null, and getSignaturesForAddress ends before it
// (getFirstAvailableBlock and minimumLedgerSlot give the first kept
// slot). bbolt reuses the freed pages, so the file stops growing once
// the history it keeps is in steady state.

const (
	// pruneBatchTxs bounds the transactions one pruning step deletes (at
	// least one slot's), so a step stays a short bbolt transaction; the
	// steps run after every commit until history is within the limit.
	pruneBatchTxs = 1 << 16
	// pruneBatchSlots bounds the slots one pruning step deletes.
	pruneBatchSlots = 4096
	// pruneIdleCommits: with fewer than pruneSlack transactions to prune,
	// a step runs only every this many commits (for the empty slots
	// before the cut).
	pruneIdleCommits = 1024
)

// pruneSlack is how far history may exceed the limit before a step
// runs, so steps delete in batches rather than a slot at a time.
func pruneSlack(limit uint64) uint64 { return max(limit/16, 1) }

// prunePlan is what a pruning step removes: the slots below first,
// holding transactions up to number prunedTxs.
type prunePlan struct {
	first, prunedTxs uint64
}

// planPrune walks block records from the oldest kept slot and returns
// how far a step may prune: slots below before whose transactions are
// all numbered at most cut (TxCount is cumulative).
func planPrune(next func() (*blockRecord, error), from prunePlan, cut, before uint64) (prunePlan, error) {
	plan := from
	var txs uint64
	for n := 0; n < pruneBatchSlots; n++ {
		r, err := next()
		if err != nil || r == nil {
			return plan, err
		}
		if r.Slot >= before || r.TxCount > cut || (n > 0 && txs+uint64(len(r.Signatures)) > pruneBatchTxs) {
			break
		}
		txs += uint64(len(r.Signatures))
		plan = prunePlan{first: r.Slot + 1, prunedTxs: r.TxCount}
	}
	return plan, nil
}

// firstSlot is the oldest slot whose history is kept.
func (s *boltStore) firstSlot() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.first
}

// pruned reports whether slot's history has been pruned.
func (s *boltStore) pruned(slot uint64) bool { return slot < s.firstSlot() }

// prune runs one pruning step (see above): limit is Config.LimitLedgerSize,
// tipTxs the transactions landed up to the tip, and only slots below
// before may go.
func (s *boltStore) prune(limit, tipTxs, before uint64, commits uint64) error {
	s.mu.RLock()
	cur := prunePlan{first: s.first, prunedTxs: s.prunedTxs}
	s.mu.RUnlock()
	if tipTxs <= limit || before <= cur.first {
		return nil
	}
	cut := tipTxs - limit
	if cut < cur.prunedTxs+pruneSlack(limit) && commits%pruneIdleCommits != 0 {
		return nil
	}
	var plan prunePlan
	err := s.db.View(func(tx *bolt.Tx) error {
		blocks := tx.Bucket(bucketBlocks)
		c := blocks.Cursor()
		k, v := c.Seek(u64be(cur.first))
		var err error
		plan, err = planPrune(func() (*blockRecord, error) {
			if k == nil {
				return nil, nil
			}
			r, err := decodeBlock(slotValue(blocks, k, v))
			if err != nil {
				return nil, fmt.Errorf("block %x: %w", k, err)
			}
			k, v = c.Next()
			return r, nil
		}, cur, cut, before)
		return err
	})
	if err != nil {
		return fmt.Errorf("prune history: %w", err)
	}
	if plan.first <= cur.first {
		return nil
	}
	// Readers stop at the new first slot before its history goes, so none
	// walks into a deleted record.
	s.mu.Lock()
	s.first, s.prunedTxs = plan.first, plan.prunedTxs
	s.mu.Unlock()
	end := u64be(plan.first)
	err = s.db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketBlocks, bucketTxs, bucketAddrSlot, bucketAddrPost} {
			b := tx.Bucket(name)
			var keys [][]byte
			c := b.Cursor()
			for k, _ := c.First(); k != nil && bytes.Compare(k, end) < 0; k, _ = c.Next() {
				keys = append(keys, k)
			}
			for _, k := range keys {
				if err := deleteSlotValue(b, k); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
		}
		v := binary.BigEndian.AppendUint64(u64be(plan.first), plan.prunedTxs)
		return tx.Bucket(bucketMeta).Put([]byte(metaFirst), v)
	})
	if err != nil {
		// Nothing was deleted: what readers were kept from is still there.
		s.mu.Lock()
		s.first, s.prunedTxs = cur.first, cur.prunedTxs
		s.mu.Unlock()
		return fmt.Errorf("prune history below slot %d: %w", plan.first, err)
	}
	return nil
}

// firstSlot is the oldest slot whose history is kept.
func (m *memStore) firstSlot() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.first
}

func (m *memStore) prune(limit, tipTxs, before uint64, commits uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := prunePlan{first: m.first, prunedTxs: m.prunedTxs}
	if tipTxs <= limit || before <= cur.first {
		return nil
	}
	cut := tipTxs - limit
	if cut < cur.prunedTxs+pruneSlack(limit) && commits%pruneIdleCommits != 0 {
		return nil
	}
	i := 0
	plan, _ := planPrune(func() (*blockRecord, error) {
		if i == len(m.slots) {
			return nil, nil
		}
		i++
		return m.blocks[m.slots[i-1]], nil
	}, cur, cut, before)
	if plan.first <= cur.first {
		return nil
	}
	n, _ := slices.BinarySearch(m.slots, plan.first)
	touched := map[solana.PublicKey]struct{}{}
	for _, slot := range m.slots[:n] {
		for _, sig := range m.blocks[slot].Signatures {
			if r := m.txs[sig]; r != nil && r.Slot == slot {
				if tx, err := r.Transaction(); err == nil {
					for _, k := range tx.Message.AccountKeys {
						touched[k] = struct{}{}
					}
				}
				delete(m.txs, sig)
			}
		}
		delete(m.blocks, slot)
	}
	m.slots = slices.Delete(m.slots, 0, n)
	for k := range touched {
		list := m.byAddr[k]
		j, _ := slices.BinarySearchFunc(list, plan.first, func(r *TxRecord, s uint64) int {
			switch {
			case r.Slot < s:
				return -1
			case r.Slot > s:
				return 1
			}
			return 0
		})
		if j == len(list) {
			delete(m.byAddr, k)
		} else {
			m.byAddr[k] = slices.Clone(list[j:])
		}
	}
	m.first, m.prunedTxs = plan.first, plan.prunedTxs
	return nil
}
