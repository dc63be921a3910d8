package ledger

import (
	"context"
	"fmt"

	"github.com/gagliardetto/solana-go"

	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// latestAt is the newest frozen block a commitment level sees. Callers
// hold mu.
func (l *Ledger) latestAt(c Commitment) *blockHeader {
	switch c {
	case Confirmed:
		return l.confirmed
	case Finalized:
		return l.finalized
	}
	return l.recent[len(l.recent)-1]
}

// headerAtOrBefore finds the newest recent header at or before slot.
// Callers hold mu.
func (l *Ledger) headerAtOrBefore(slot uint64) *blockHeader {
	for i := len(l.recent) - 1; i >= 0; i-- {
		if l.recent[i].slot <= slot {
			return l.recent[i]
		}
	}
	return l.recent[0]
}

// LatestBlockhash returns the blockhash of the newest block at a
// commitment level, with the last block height a transaction using it can
// land at, and the context slot of the read.
func (l *Ledger) LatestBlockhash(c Commitment) (BlockhashInfo, uint64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	h := l.latestAt(c)
	return BlockhashInfo{Blockhash: h.hash, LastValidBlockHeight: h.height + MaxProcessingAge}, l.cutoff(c)
}

// IsBlockhashValid reports whether a transaction using blockhash could
// still land, judged from a commitment level, and the context slot.
func (l *Ledger) IsBlockhashValid(blockhash solana.Hash, c Commitment) (bool, uint64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	next := l.working.height
	if c != Processed {
		next = l.latestAt(c).height + 1
	}
	h, ok := l.hashes[blockhash]
	return ok && h < next && next-1-h <= MaxProcessingAge, l.cutoff(c)
}

// Slot is the slot a commitment level has reached. At processed it is the
// working slot, whose transactions are executed but not yet durable.
func (l *Ledger) Slot(c Commitment) uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cutoff(c)
}

// BlockHeight is the block height a commitment level has reached.
func (l *Ledger) BlockHeight(c Commitment) uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if c == Processed {
		return l.working.height
	}
	return l.latestAt(c).height
}

// TransactionCount counts the transactions landed up to a commitment
// level.
func (l *Ledger) TransactionCount(c Commitment) uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	switch c {
	case Confirmed:
		return l.confirmed.txCount
	case Finalized:
		return l.finalized.txCount
	}
	return l.txCount
}

// EpochInfo is getEpochInfo's result.
type EpochInfo struct {
	AbsoluteSlot     uint64
	BlockHeight      uint64
	Epoch            uint64
	SlotIndex        uint64
	SlotsInEpoch     uint64
	TransactionCount uint64
}

// EpochInfo reports the epoch position at a commitment level.
func (l *Ledger) EpochInfo(c Commitment) EpochInfo {
	slot := l.Slot(c)
	n := l.cfg.SlotsPerEpoch
	return EpochInfo{
		AbsoluteSlot: slot, BlockHeight: l.BlockHeight(c), Epoch: slot / n, SlotIndex: slot % n,
		SlotsInEpoch: n, TransactionCount: l.TransactionCount(c),
	}
}

// FirstAvailableBlock is the oldest block in history: the genesis block
// unless history was pruned (Config.LimitLedgerSize).
func (l *Ledger) FirstAvailableBlock() uint64 { return l.store.firstSlot() }

// statusOf turns a landing slot into a status. Callers hold mu.
func (l *Ledger) statusOf(slot uint64, e statusEntry) *SignatureStatus {
	s := &SignatureStatus{Slot: slot, Err: e.err, Status: Processed}
	switch {
	case slot <= l.finalized.slot:
		s.Status = Finalized
	case slot <= l.confirmed.slot:
		s.Status = Confirmed
	}
	if l.working.slot > slot {
		s.Confirmations = l.working.slot - 1 - slot
	}
	return s
}

// SignatureStatuses reports where each signature stands, nil for unknown
// ones. The recent status cache answers first; older signatures are looked
// up in history (so Agave's searchTransactionHistory flag is always on).
func (l *Ledger) SignatureStatuses(sigs []solana.Signature) ([]*SignatureStatus, error) {
	out := make([]*SignatureStatus, len(sigs))
	var miss []int
	l.mu.RLock()
	for i, s := range sigs {
		if e, ok := l.status.get(statusKeyOf(s)); ok {
			out[i] = l.statusOf(e.slot, e)
		} else {
			miss = append(miss, i)
		}
	}
	l.mu.RUnlock()
	for _, i := range miss {
		r, err := l.store.tx(sigs[i])
		if err != nil {
			return nil, fmt.Errorf("signature statuses: %w", err)
		}
		if r != nil {
			l.mu.RLock()
			out[i] = l.statusOf(r.Slot, statusEntry{slot: r.Slot, err: r.Err})
			l.mu.RUnlock()
		}
	}
	return out, nil
}

// WaitForStatus waits until a signature has landed and reached commitment
// c, or has failed (its status then carries Err). It returns the context's
// error if neither happens in time.
func (l *Ledger) WaitForStatus(ctx context.Context, sig solana.Signature, c Commitment) (*SignatureStatus, error) {
	for {
		ch := l.changed()
		st, err := l.SignatureStatuses([]solana.Signature{sig})
		if err != nil {
			return nil, err
		}
		if s := st[0]; s != nil && (s.Err != nil || s.Status >= c) {
			return s, nil
		}
		if err := l.Health(); err != nil {
			return nil, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Transaction returns a landed transaction at confirmed or finalized
// commitment (processed is treated as confirmed), or nil if unknown.
func (l *Ledger) Transaction(sig solana.Signature, c Commitment) (*TxRecord, error) {
	cut := l.Slot(max(c, Confirmed))
	r, err := l.store.tx(sig)
	if err != nil || r == nil || r.Slot > cut {
		return nil, err
	}
	return r, nil
}

// Block returns a block's header and transactions at confirmed or
// finalized commitment, or nil if the slot has no block (yet) or its
// history was pruned (slot < FirstAvailableBlock).
func (l *Ledger) Block(slot uint64, c Commitment) (*BlockInfo, []*TxRecord, error) {
	if slot > l.Slot(max(c, Confirmed)) {
		return nil, nil, nil
	}
	b, err := l.store.block(slot)
	if err != nil || b == nil {
		return nil, nil, err
	}
	var txs []*TxRecord
	if len(b.Signatures) > 0 {
		if txs, err = l.store.blockTxs(slot); err != nil {
			return nil, nil, err
		}
	}
	info := b.BlockInfo
	return &info, txs, nil
}

// Blocks lists the slots in [start, end] that have blocks at a commitment
// level (confirmed or finalized), at most limit of them.
func (l *Ledger) Blocks(start, end uint64, limit int, c Commitment) ([]uint64, error) {
	end = min(end, l.Slot(max(c, Confirmed)))
	if start > end || limit <= 0 {
		return []uint64{}, nil
	}
	out, err := l.store.blockSlots(start, end, limit)
	if out == nil {
		out = []uint64{}
	}
	return out, err
}

// AddressQuery selects getSignaturesForAddress results.
type AddressQuery struct {
	// Before excludes this signature and everything newer.
	Before *solana.Signature
	// Until stops at this signature (excluded).
	Until *solana.Signature
	// Limit caps the results (default and maximum 1000).
	Limit int
}

// SignaturesForAddress lists the transactions that reference addr, newest
// first, at confirmed or finalized commitment. An unknown Before gives an
// empty list, as in Agave; an unknown Until is ignored.
func (l *Ledger) SignaturesForAddress(addr solana.PublicKey, q AddressQuery, c Commitment) ([]*TxRecord, error) {
	cut := l.Slot(max(c, Confirmed))
	if q.Limit <= 0 || q.Limit > 1000 {
		q.Limit = 1000
	}
	var before, until *txLoc
	var err error
	if q.Before != nil {
		if before, err = l.store.location(*q.Before); err != nil || before == nil {
			return nil, err
		}
	}
	if q.Until != nil {
		if until, err = l.store.location(*q.Until); err != nil {
			return nil, err
		}
	}
	return l.store.addressTxs(addr, before, until, cut, q.Limit)
}

// FeeForMessage is getFeeForMessage: the fee a message would pay (base fee
// per signature plus priority fee), or nil when its blockhash is not valid
// at the commitment level (and it is not a valid durable-nonce message) or
// its compute budget instructions are invalid.
func (l *Ledger) FeeForMessage(msg *txwire.Message, c Commitment) (*uint64, uint64) {
	valid, slot := l.IsBlockhashValid(msg.RecentBlockhash, c)
	free := false
	if !valid {
		rate, ok := l.nonceFeeRateAt(msg, c)
		if !ok {
			return nil, slot
		}
		free = rate == 0
	}
	b, err := rt.ParseBudget(msg, l.exec.IsBuiltin)
	if err != nil {
		return nil, slot
	}
	fee := satAdd(satMul(uint64(l.cfg.LamportsPerSignature), uint64(msg.Header.NumRequiredSignatures)), b.PriorityFee())
	if free {
		fee = 0
	}
	return &fee, slot
}
