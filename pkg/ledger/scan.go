package ledger

import (
	"fmt"
	"slices"

	"github.com/gagliardetto/solana-go"
)

// TooManyAccountsError is returned by ProgramAccounts when more accounts
// match than the query allows.
type TooManyAccountsError struct{ Limit int }

func (e *TooManyAccountsError) Error() string {
	return fmt.Sprintf("more than %d accounts match", e.Limit)
}

// ProgramQuery selects ProgramAccounts results.
type ProgramQuery struct {
	// Keep accepts an account (read at the query's commitment, owned by
	// the program); nil keeps all. It runs under the ledger's read lock:
	// keep it cheap and do not call the ledger from it.
	Keep func(key solana.PublicKey, a *Account) bool
	// TokenOwner and TokenMint, when the program is a token program and
	// Keep only accepts initialized token accounts of that owner (or
	// mint), take the candidates from the token indexes instead of the
	// program index: the accounts of one wallet instead of every token
	// account. Keep still decides.
	TokenOwner, TokenMint *solana.PublicKey
	// Limit caps the results (<= 0: no cap): past it the query stops with
	// a *TooManyAccountsError.
	Limit int
	// Unsorted skips sorting the results by address.
	Unsorted bool
}

// ProgramAccounts lists the accounts owned by program at a commitment
// level that q.Keep accepts, sorted by address unless q.Unsorted, with
// the slot the read reflects. Candidates come from the owner index, so
// the cost is proportional to the program's accounts (or the wallet's or
// mint's, see ProgramQuery), not to the whole bank. The System program,
// which the index leaves out (see ownerIndexed), is a scan of the bank.
func (l *Ledger) ProgramAccounts(program solana.PublicKey, c Commitment, q ProgramQuery) ([]KeyedAccount, uint64, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	cut := l.cutoff(c)
	kind, by, scan := byProgram, program, !ownerIndexed(program)
	switch {
	case q.TokenOwner != nil:
		kind, by, scan = byTokenOwner, *q.TokenOwner, false
	case q.TokenMint != nil:
		kind, by, scan = byMint, *q.TokenMint, false
	}
	var out []KeyedAccount
	var err error
	visit := func(key solana.PublicKey, a *Account) {
		if err != nil || a == nil || a.Owner != program || (q.Keep != nil && !q.Keep(key, a)) {
			return
		}
		if q.Limit > 0 && len(out) == q.Limit {
			err = &TooManyAccountsError{Limit: q.Limit}
			return
		}
		out = append(out, KeyedAccount{Key: key, Account: a})
	}
	if scan {
		l.scanAt(cut, visit)
	} else {
		read := l.readerAt(cut, l.indexSize(kind, by))
		l.eachIndexed(kind, by, func(key solana.PublicKey) { visit(key, read(key)) })
	}
	if err != nil {
		return nil, cut, err
	}
	if !q.Unsorted {
		slices.SortFunc(out, func(a, b KeyedAccount) int { return compareKeys(a.Key, b.Key) })
	}
	return out, cut, nil
}

// readerAt returns a reader of the state as of the end of slot cut, for
// about n lookups. Each lookup through accountAt checks every unfinalized
// slot after cut; for many lookups the undo maps of those slots are merged
// once instead. Callers hold mu for as long as they use the reader.
func (l *Ledger) readerAt(cut uint64, n int) func(solana.PublicKey) *Account {
	later, pre := l.slotsAfter(cut)
	if len(later) == 0 {
		return l.bank.get
	}
	if n*len(later) < 4*pre {
		return func(k solana.PublicKey) *Account { return l.accountAt(k, cut) }
	}
	older := undoAfter(later, pre)
	return func(k solana.PublicKey) *Account {
		if e, ok := older[k]; ok {
			return l.undoRead(e.value())
		}
		return l.bank.get(k)
	}
}

// slotsAfter lists the unfinalized slots after cut, ascending, and how
// many undo entries they hold. Callers hold mu.
func (l *Ledger) slotsAfter(cut uint64) ([]*slotState, int) {
	var later []*slotState
	pre := 0
	for _, d := range l.diffs {
		if d.slot > cut {
			later = append(later, d)
			pre += d.pre.len()
		}
	}
	return later, pre
}

// undoAfter merges the undo maps of slots (ascending): for each account
// written in them, its value before the first of them that wrote it.
func undoAfter(slots []*slotState, size int) undoView {
	older := make(undoView, size)
	for _, d := range slots {
		for k, r := range d.pre.at {
			if _, ok := older[k]; !ok {
				older[k] = undoEntry{&d.pre, r}
			}
		}
	}
	return older
}

// Supply is the total lamports held by all accounts at a commitment
// level, with the slot the read reflects. It is maintained on every write
// and costs a walk over the unfinalized slots, not over the accounts.
func (l *Ledger) Supply(c Commitment) (uint64, uint64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	cut := l.cutoff(c)
	if cut >= l.working.slot {
		return l.capital, cut
	}
	for i := len(l.diffs) - 2; i >= 0; i-- { // the last one is the working slot
		if d := l.diffs[i]; d.slot <= cut {
			return d.capAfter, cut
		}
	}
	return l.capBase, cut
}

// AccountBalance is an account and its lamports.
type AccountBalance struct {
	Key      solana.PublicKey
	Lamports uint64
}

// LargestAccounts returns the n accounts with the most lamports at a
// commitment level, largest first (ties: higher address first, as
// Agave's heap orders them), leaving out those in exclude, with the slot
// the read reflects. It scans every account: callers cache the result
// (getLargestAccounts does, as Agave does).
func (l *Ledger) LargestAccounts(n int, c Commitment, exclude map[solana.PublicKey]bool) ([]AccountBalance, uint64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	cut := l.cutoff(c)
	t := topBalances{n: n, exclude: exclude}
	l.scanAt(cut, t.consider)
	return t.top, cut
}

// scanAt calls fn for every account as of the end of slot cut (and for
// accounts that existed then but not now, with their old value), in no
// order. Callers hold mu.
func (l *Ledger) scanAt(cut uint64, fn func(solana.PublicKey, *Account)) {
	later, pre := l.slotsAfter(cut)
	if len(later) == 0 {
		l.bank.each(fn)
		return
	}
	older := undoAfter(later, pre)
	l.bank.each(func(k solana.PublicKey, a *Account) {
		if e, ok := older[k]; ok {
			a = l.undoRead(e.value())
		}
		fn(k, a)
	})
	for k, e := range older {
		if e.exists() && !l.bank.has(k) {
			fn(k, l.undoRead(e.value())) // deleted since cut
		}
	}
}

// topBalances keeps the n largest balances seen, largest first.
type topBalances struct {
	n       int
	exclude map[solana.PublicKey]bool
	top     []AccountBalance
}

func (t *topBalances) consider(k solana.PublicKey, a *Account) {
	if a == nil || t.n <= 0 {
		return
	}
	// Most accounts are below the smallest kept balance: one comparison.
	if len(t.top) == t.n && a.Lamports < t.top[t.n-1].Lamports {
		return
	}
	b := AccountBalance{Key: k, Lamports: a.Lamports}
	if (len(t.top) == t.n && !balanceGreater(b, t.top[t.n-1])) || t.exclude[k] {
		return
	}
	i, _ := slices.BinarySearchFunc(t.top, b, func(x, y AccountBalance) int {
		if balanceGreater(x, y) {
			return -1
		}
		return 1
	})
	t.top = slices.Insert(t.top, i, b)
	if len(t.top) > t.n {
		t.top = t.top[:t.n]
	}
}

func balanceGreater(a, b AccountBalance) bool {
	if a.Lamports != b.Lamports {
		return a.Lamports > b.Lamports
	}
	return compareKeys(a.Key, b.Key) > 0
}
