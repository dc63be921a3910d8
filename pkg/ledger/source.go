package ledger

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// AccountSource supplies the accounts a ledger does not have: a lazy fork
// of a remote cluster. The ledger consults it the first time an account it
// lacks is read (Account, Accounts) or referenced by a transaction, copies
// what it returns into its own state (copy-on-read, then local: later
// writes and deletions are the ledger's), and remembers misses so they are
// not asked for again.
type AccountSource interface {
	// FetchAccounts returns the accounts at keys, nil for each that does
	// not exist on the source.
	FetchAccounts(ctx context.Context, keys []solana.PublicKey) ([]*Account, error)
	// Name names the source in errors (the forked cluster's URL).
	Name() string
}

// Fork limits.
const (
	// ForkFetchTimeout bounds one fetch of missing accounts from the
	// AccountSource made by a read with no context of its own.
	ForkFetchTimeout = 30 * time.Second
	// MaxForkSeen bounds the keys a forked ledger remembers having asked
	// its source for; past it the memory is cleared, so a key missing on
	// the source may be asked for again.
	MaxForkSeen = 1 << 20
)

// UnsupportedProgramError refuses a transaction of a forked ledger that
// calls a program it cannot run: an SBF program copied from the source.
type UnsupportedProgramError struct {
	Program solana.PublicKey
	Source  string
}

func (e *UnsupportedProgramError) Error() string {
	return fmt.Sprintf("transaction calls program %s, an SBF program of the forked cluster %s: ferry serve does not run SBF programs, only its builtin ones (System, SPL Token, Token-2022, Associated Token, Memo, Compute Budget, eSPL, delegation)", e.Program, e.Source)
}

// forkState is the ledger's view of its AccountSource. src is read on
// every account read, hence atomic; mu guards seen.
type forkState struct {
	src  atomic.Pointer[AccountSource]
	mu   sync.Mutex
	seen map[solana.PublicKey]struct{}
}

// SetAccountSource makes the ledger a lazy fork of src (see
// AccountSource). Set it once, before the ledger is used by others.
// Account and Accounts then may fetch, which runs on the slot loop: call
// them from outside Apply (its functions read through the AccountWriter,
// and Prefetch first what they need).
func (l *Ledger) SetAccountSource(src AccountSource) {
	l.fork.mu.Lock()
	l.fork.seen = map[solana.PublicKey]struct{}{}
	l.fork.mu.Unlock()
	l.fork.src.Store(&src)
}

// source is the AccountSource, or nil.
func (l *Ledger) source() AccountSource {
	if p := l.fork.src.Load(); p != nil {
		return *p
	}
	return nil
}

// forkFetch copies from the source the keys the ledger lacks and has not
// asked for before. It is a no-op without a source. It must not run on
// the slot loop.
func (l *Ledger) forkFetch(ctx context.Context, keys []solana.PublicKey) error {
	f := &l.fork
	src := l.source()
	if src == nil || len(keys) == 0 {
		return nil
	}
	l.mu.RLock()
	var missing []solana.PublicKey
	for _, k := range keys {
		if l.bank.get(k) == nil {
			missing = append(missing, k)
		}
	}
	l.mu.RUnlock()
	f.mu.Lock()
	ask := missing[:0]
	for _, k := range missing {
		if _, ok := f.seen[k]; !ok {
			f.seen[k] = struct{}{}
			ask = append(ask, k)
		}
	}
	if len(f.seen) > MaxForkSeen {
		f.seen = map[solana.PublicKey]struct{}{}
	}
	f.mu.Unlock()
	if len(ask) == 0 {
		return nil
	}
	forget := func() {
		f.mu.Lock()
		for _, k := range ask {
			delete(f.seen, k)
		}
		f.mu.Unlock()
	}
	got, err := src.FetchAccounts(ctx, ask)
	if err == nil && len(got) != len(ask) {
		err = fmt.Errorf("%d accounts for %d keys", len(got), len(ask))
	}
	if err != nil {
		forget()
		return fmt.Errorf("fetch accounts from the forked cluster %s: %w", src.Name(), err)
	}
	var found []AccountWrite
	for i, a := range got {
		if a != nil && a.Lamports > 0 {
			found = append(found, AccountWrite{Key: ask[i], Account: a})
		}
	}
	if len(found) == 0 {
		return nil
	}
	var n int
	err = l.do(ctx, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.failure != nil {
			return
		}
		for _, w := range found {
			if l.bank.get(w.Key) != nil {
				continue // created locally meanwhile: local wins
			}
			if l.working.pre.has(w.Key) {
				continue // written (and deleted) in this slot: local wins
			}
			l.put(w.Key, w.Account)
			// The copy existed before any local slot: reads at every
			// commitment see it. It is still new to the store's indexes
			// (slotIndexAdds).
			l.working.pre.set(w.Key, l.bank.get(w.Key))
			if l.working.forked == nil {
				l.working.forked = map[solana.PublicKey]struct{}{}
			}
			l.working.forked[w.Key] = struct{}{}
			n++
		}
	})
	if err != nil {
		forget()
		return fmt.Errorf("copy forked accounts: %w", err)
	}
	if n > 0 {
		l.log.Info("forked accounts copied", "source", src.Name(), "accounts", n)
	}
	return nil
}

// Prefetch copies keys from the AccountSource if the ledger lacks them
// (see AccountSource); without a source it does nothing. Writers that
// read accounts inside Apply call it first, since Apply runs on the slot
// loop, which never fetches.
func (l *Ledger) Prefetch(ctx context.Context, keys ...solana.PublicKey) error {
	return l.forkFetch(ctx, keys)
}

// forkRead is forkFetch for the reads that have no context; a failure
// leaves the accounts missing (and logged) rather than failing the read.
func (l *Ledger) forkRead(keys ...solana.PublicKey) {
	if l.source() == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ForkFetchTimeout)
	defer cancel()
	if err := l.forkFetch(ctx, keys); err != nil {
		l.log.Warn("forked read failed", "err", err)
	}
}

// forkPrefetch copies a transaction's missing accounts before it runs,
// and refuses one that calls a program the ledger cannot run but the
// source has (an SBF program), naming it.
func (l *Ledger) forkPrefetch(ctx context.Context, tx *txwire.Transaction) error {
	src := l.source()
	if src == nil {
		return nil
	}
	keys := tx.Message.AccountKeys
	if err := l.forkFetch(ctx, keys); err != nil {
		return err
	}
	for _, ix := range tx.Message.Instructions {
		if int(ix.ProgramIDIndex) >= len(keys) {
			continue // sanitizing refuses it
		}
		prog := keys[ix.ProgramIDIndex]
		if _, ok := l.exec.Lookup(prog); ok {
			continue
		}
		l.mu.RLock()
		a := l.bank.get(prog)
		l.mu.RUnlock()
		if a != nil && a.Executable {
			return &UnsupportedProgramError{Program: prog, Source: src.Name()}
		}
	}
	return nil
}
