package ledger

import (
	"context"

	"github.com/gagliardetto/solana-go"
)

// AccountWriter is what an Apply function uses to read and write accounts
// directly, outside any transaction.
type AccountWriter interface {
	// Get returns a copy of an account's current (processed) value,
	// including earlier Sets of this Apply, or nil if it does not exist.
	Get(key solana.PublicKey) *Account
	// Set replaces an account. A nil account or one with zero lamports
	// deletes it. The writer keeps a copy.
	Set(key solana.PublicKey, a *Account)
	// Slot is the slot the writes land in.
	Slot() uint64
}

type applyWriter struct {
	l      *Ledger
	writes map[solana.PublicKey]*Account
	order  []solana.PublicKey
}

func (w *applyWriter) Get(key solana.PublicKey) *Account {
	a, ok := w.writes[key]
	if !ok {
		w.l.mu.RLock()
		a = w.l.bank.get(key)
		w.l.mu.RUnlock()
	}
	if a == nil {
		return nil
	}
	return a.Clone()
}

func (w *applyWriter) Set(key solana.PublicKey, a *Account) {
	if _, ok := w.writes[key]; !ok {
		w.order = append(w.order, key)
	}
	if a != nil {
		a = a.Clone()
	}
	w.writes[key] = a
}

func (w *applyWriter) Slot() uint64 { return w.l.working.slot }

// Apply makes privileged account writes: fn runs on the slot loop, between
// transactions, and its writes land atomically in the working slot (all
// of them, or none if fn returns an error). They are persisted with the
// slot like transaction writes, listed in Block.Applied for subscribers,
// and readable at processed commitment when Apply returns. It returns the
// slot; wait for WaitForSlot(ctx, slot, Confirmed) to know they are
// durable.
//
// This is how a validator simulation clones delegated accounts into an
// ephemeral ledger or writes committed state back to the base layer. fn
// may read the ledger (Account, TokenAccountsByOwner, ...) but must not
// submit transactions, call Apply or advance slots: those would wait for
// the slot loop that is running fn.
func (l *Ledger) Apply(ctx context.Context, fn func(AccountWriter) error) (uint64, error) {
	var slot uint64
	var ferr error
	err := l.do(ctx, func() {
		l.mu.RLock()
		failure := l.failure
		l.mu.RUnlock()
		if failure != nil {
			ferr = failure
			return
		}
		w := &applyWriter{l: l, writes: map[solana.PublicKey]*Account{}}
		if ferr = fn(w); ferr != nil {
			return
		}
		l.mu.Lock()
		slot = l.working.slot
		rec := make([]AccountWrite, len(w.order))
		for i, k := range w.order {
			l.put(k, w.writes[k])
			rec[i] = AccountWrite{Key: k, Account: l.bank.get(k)}
		}
		l.working.applied = append(l.working.applied, rec)
		l.mu.Unlock()
		l.broadcast()
		if l.obs.active.Load() && len(rec) > 0 {
			l.obs.publish(Event{Kind: EventProcessed, Slot: slot, Applied: rec, Time: l.cfg.Now()})
		}
	})
	if err != nil {
		return 0, err
	}
	return slot, ferr
}
