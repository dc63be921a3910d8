package ledger

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"

	rt "github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Limits of the per-slot statistics (Agave's values).
const (
	// MaxPrioritizationFeeSlots is how many recent slots with transactions
	// the prioritization-fee statistics keep (Agave's
	// MAX_NUM_RECENT_BLOCKS).
	MaxPrioritizationFeeSlots = 150
	// MaxPerformanceSamples is the most samples getRecentPerformanceSamples
	// returns (Agave's PERFORMANCE_SAMPLES_LIMIT: 12 hours of 60 s
	// samples).
	MaxPerformanceSamples = 720
)

// stats are what the RPC reports about recent slots besides the blocks
// themselves: prioritization fees and performance samples.
type stats struct {
	// mu guards fees; the slot loop appends, RPC readers read.
	mu   sync.Mutex
	fees []slotFees // ascending by slot

	// The current performance window; slot loop only.
	started    bool
	sampleAt   time.Time
	sampleSlot uint64
	sampleTx   uint64
}

// slotFees is one slot's prioritization fees, as Agave's
// PrioritizationFee cache keeps them: the lowest compute-unit price any
// transaction in the block paid, and for each write-locked account the
// lowest price among the transactions that locked it, kept only when it
// is above the block's (the others cannot change an answer).
type slotFees struct {
	slot     uint64
	min      uint64
	accounts map[solana.PublicKey]uint64
}

// PrioritizationFee is a slot's answer to getRecentPrioritizationFees, in
// micro-lamports per compute unit.
type PrioritizationFee struct {
	Slot uint64
	Fee  uint64
}

// PerfSample is one performance sample: what happened between the
// previous sample and Slot.
type PerfSample struct {
	Slot             uint64
	NumTransactions  uint64
	NumNonVote       uint64
	NumSlots         uint64
	SamplePeriodSecs uint16
}

// slotFrozen records a slot's statistics when it is frozen, on the slot
// loop before the next slot opens: its capital (for getSupply at older
// commitments), its prioritization fees and, once a sample period has
// passed, a performance sample to persist with it.
func (l *Ledger) slotFrozen(w *slotState, h *blockHeader) *PerfSample {
	w.capAfter = l.capital
	l.recordFees(w)
	return l.takeSample(h, uint64(len(w.txs)))
}

// noUnitPrice marks a transaction that requested no compute units: Agave
// leaves those out of the statistics, their price says nothing. No landed
// transaction can have this price with units: its fee would overflow.
const noUnitPrice = ^uint64(0)

// statsUnitPrice is what the statistics record of a transaction's budget.
// It is kept per slot in a slice beside the records (slotState.prices)
// rather than in each record, so the per-transaction allocations do not
// grow.
func statsUnitPrice(b rt.Budget) uint64 {
	if b.UnitLimit == 0 {
		return noUnitPrice
	}
	return b.UnitPrice
}

// recordFees adds a frozen slot to the prioritization-fee statistics.
// Blocks whose transactions all pay the same price (the common case: no
// priority fee at all) cost one pass over their prices.
func (l *Ledger) recordFees(w *slotState) {
	f := slotFees{slot: w.slot}
	counted := false
	var highest uint64
	for _, p := range w.prices {
		if p == noUnitPrice {
			continue
		}
		if !counted || p < f.min {
			f.min = p
		}
		highest = max(highest, p)
		counted = true
	}
	if !counted {
		return // Agave has no entry for a slot without transactions
	}
	if highest > f.min {
		f.accounts = map[solana.PublicKey]uint64{}
		atMin := map[solana.PublicKey]bool{}
		for i, r := range w.txs {
			price := w.prices[i]
			tx, err := r.Transaction()
			if price == noUnitPrice || err != nil {
				continue // err is unreachable: landed transactions decoded once already
			}
			eachWritable(&tx.Message, func(k solana.PublicKey) {
				if price == f.min {
					atMin[k] = true
				} else if v, ok := f.accounts[k]; !ok || price < v {
					f.accounts[k] = price
				}
			})
		}
		// An account that a block-minimum transaction also locked has the
		// block's minimum: it tells nothing the block minimum does not.
		for k := range atMin {
			delete(f.accounts, k)
		}
	}
	st := &l.stats
	st.mu.Lock()
	st.fees = append(st.fees, f)
	if over := len(st.fees) - MaxPrioritizationFeeSlots; over > 0 {
		clear(st.fees[:over])
		st.fees = st.fees[over:]
	}
	st.mu.Unlock()
}

// eachWritable calls fn for each account the message write-locks.
func eachWritable(m *txwire.Message, fn func(solana.PublicKey)) {
	invoked := make([]bool, len(m.AccountKeys))
	upgradeable := false
	for _, ix := range m.Instructions {
		if int(ix.ProgramIDIndex) < len(invoked) {
			invoked[ix.ProgramIDIndex] = true
		}
	}
	for _, k := range m.AccountKeys {
		upgradeable = upgradeable || k == rt.BPFLoaderUpgradeableID
	}
	for i, k := range m.AccountKeys {
		if writableAt(m, i, invoked[i], upgradeable) {
			fn(k)
		}
	}
}

// RecentPrioritizationFees is getRecentPrioritizationFees: for each of the
// last MaxPrioritizationFeeSlots confirmed slots with transactions, oldest
// first, the lowest compute-unit price (micro-lamports) that landed in the
// block, raised to the highest of the given accounts' own lowest prices
// where those are higher (Agave's rule: the price a transaction locking
// all of them would have needed).
func (l *Ledger) RecentPrioritizationFees(accounts []solana.PublicKey) []PrioritizationFee {
	confirmed := l.Slot(Confirmed)
	st := &l.stats
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]PrioritizationFee, 0, len(st.fees))
	for _, f := range st.fees {
		if f.slot > confirmed {
			break
		}
		fee := f.min
		for _, k := range accounts {
			if v, ok := f.accounts[k]; ok {
				fee = max(fee, v)
			}
		}
		out = append(out, PrioritizationFee{Slot: f.slot, Fee: fee})
	}
	return out
}

// takeSample closes the performance window when PerformanceSamplePeriod
// has passed since it opened. The first window opens at the first frozen
// slot after Open, as Agave's sampler starts with the node.
func (l *Ledger) takeSample(h *blockHeader, blockTxs uint64) *PerfSample {
	st := &l.stats
	now := l.cfg.Now()
	if !st.started {
		st.started, st.sampleAt, st.sampleSlot, st.sampleTx = true, now, h.parent, h.txCount-blockTxs
	}
	elapsed := now.Sub(st.sampleAt)
	if elapsed < l.cfg.PerformanceSamplePeriod {
		return nil
	}
	p := &PerfSample{
		Slot: h.slot, NumSlots: h.slot - st.sampleSlot, NumTransactions: h.txCount - st.sampleTx,
		SamplePeriodSecs: uint16(min(elapsed/time.Second, 1<<16-1)),
	}
	// ferry has no vote transactions.
	p.NumNonVote = p.NumTransactions
	st.sampleAt, st.sampleSlot, st.sampleTx = now, h.slot, h.txCount
	return p
}

// RecentPerformanceSamples returns the newest durable performance
// samples, newest first, at most limit (up to MaxPerformanceSamples).
func (l *Ledger) RecentPerformanceSamples(limit int) ([]PerfSample, error) {
	return l.store.perfSamples(min(max(limit, 0), MaxPerformanceSamples))
}

// encodePerfSample is the stored form: the counts, each 8 bytes LE, then
// the period (2 bytes LE); the slot is the key.
func encodePerfSample(p *PerfSample) []byte {
	b := binary.LittleEndian.AppendUint64(nil, p.NumTransactions)
	b = binary.LittleEndian.AppendUint64(b, p.NumNonVote)
	b = binary.LittleEndian.AppendUint64(b, p.NumSlots)
	return binary.LittleEndian.AppendUint16(b, p.SamplePeriodSecs)
}

func decodePerfSample(k, v []byte) (PerfSample, error) {
	if len(k) != 8 || len(v) != 26 {
		return PerfSample{}, fmt.Errorf("%w: performance sample %x", errCorrupt, k)
	}
	return PerfSample{
		Slot: binary.BigEndian.Uint64(k), NumTransactions: binary.LittleEndian.Uint64(v),
		NumNonVote: binary.LittleEndian.Uint64(v[8:]), NumSlots: binary.LittleEndian.Uint64(v[16:]),
		SamplePeriodSecs: binary.LittleEndian.Uint16(v[24:]),
	}, nil
}
