package ledger

import (
	"bytes"
	"slices"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/spl"
)

// put stores the new value of an account in the working slot, remembering
// the value it replaces for reads at older commitments. A nil or
// zero-lamport account is deleted, as Agave purges zero-lamport accounts.
// Callers hold mu and run on the slot loop; a must not be modified
// afterwards.
func (l *Ledger) put(key solana.PublicKey, a *Account) {
	old := l.bank.get(key)
	if !l.working.pre.has(key) {
		l.working.pre.set(key, old)
	}
	if a == nil || a.Lamports == 0 {
		a = nil
	} else {
		a.RentEpoch = l.rentEpochOf(a)
	}
	l.bank.set(key, a)
	// The running total is what getSupply reports; keeping it here spares
	// a scan of every account per request.
	if old != nil {
		l.capital -= old.Lamports
	}
	if a != nil {
		l.capital += a.Lamports
	}
	l.reindex(key, old, a)
}

// cutoff is the newest slot whose state a commitment level reads.
// Callers hold mu.
func (l *Ledger) cutoff(c Commitment) uint64 {
	switch c {
	case Confirmed:
		return l.confirmed.slot
	case Finalized:
		return l.finalized.slot
	}
	return l.working.slot
}

// accountAt returns an account as of the end of slot cutoff: the first
// unfinalized slot after cutoff that wrote the account knows what it was
// before. Callers hold mu.
func (l *Ledger) accountAt(key solana.PublicKey, cutoff uint64) *Account {
	for _, d := range l.diffs {
		if d.slot <= cutoff {
			continue
		}
		if a, ok, err := d.pre.get(key); ok {
			return l.undoRead(a, err)
		}
	}
	return l.bank.get(key)
}

// undoRead passes on a value read from the undo history. The values are
// encoded by the ledger itself, so an error is a defect, not bad input:
// like a failed disk read it halts the ledger rather than let a missing
// account be mistaken for a new one.
func (l *Ledger) undoRead(a *Account, err error) *Account {
	if err != nil {
		l.bank.failure.CompareAndSwap(nil, &err)
	}
	return a
}

// Account returns an account at a commitment level, or nil if it does not
// exist, with the slot the read reflects. The account is shared: do not
// modify it.
func (l *Ledger) Account(key solana.PublicKey, c Commitment) (*Account, uint64) {
	l.forkRead(key)
	l.mu.RLock()
	defer l.mu.RUnlock()
	cut := l.cutoff(c)
	return l.accountAt(key, cut), cut
}

// Accounts reads several accounts from one consistent snapshot.
func (l *Ledger) Accounts(keys []solana.PublicKey, c Commitment) ([]*Account, uint64) {
	l.forkRead(keys...)
	l.mu.RLock()
	defer l.mu.RUnlock()
	cut := l.cutoff(c)
	out := make([]*Account, len(keys))
	for i, k := range keys {
		out[i] = l.accountAt(k, cut)
	}
	return out, cut
}

// Balance is an account's lamports (0 if it does not exist).
func (l *Ledger) Balance(key solana.PublicKey, c Commitment) (uint64, uint64) {
	a, slot := l.Account(key, c)
	if a == nil {
		return 0, slot
	}
	return a.Lamports, slot
}

// KeyedAccount is an account with its address.
type KeyedAccount struct {
	Key     solana.PublicKey
	Account *Account
}

// TokenFilter selects token accounts: by mint, by token program, or
// neither (all token accounts of the owner).
type TokenFilter struct {
	Mint      *solana.PublicKey
	ProgramID *solana.PublicKey
}

// TokenAccountsByOwner lists the initialized token accounts (SPL Token and
// Token-2022) whose token owner is owner, sorted by address.
func (l *Ledger) TokenAccountsByOwner(owner solana.PublicKey, f TokenFilter, c Commitment) ([]KeyedAccount, uint64) {
	return l.tokenAccounts(byTokenOwner, owner, c, func(ta *tokenKeys, a *Account) bool {
		return ta.owner == owner && f.matches(ta, a)
	})
}

// TokenAccountsByDelegate lists the initialized token accounts whose
// approved delegate is delegate, sorted by address.
func (l *Ledger) TokenAccountsByDelegate(delegate solana.PublicKey, f TokenFilter, c Commitment) ([]KeyedAccount, uint64) {
	return l.tokenAccounts(byDelegate, delegate, c, func(ta *tokenKeys, a *Account) bool {
		return ta.hasDelegate && ta.delegate == delegate && f.matches(ta, a)
	})
}

func (f TokenFilter) matches(ta *tokenKeys, a *Account) bool {
	return (f.Mint == nil || ta.mint == *f.Mint) && (f.ProgramID == nil || a.Owner == *f.ProgramID)
}

// TokenAccountsByMint lists the initialized token accounts of a mint,
// sorted by address.
func (l *Ledger) TokenAccountsByMint(mint solana.PublicKey, c Commitment) ([]KeyedAccount, uint64) {
	return l.tokenAccounts(byMint, mint, c, func(ta *tokenKeys, _ *Account) bool { return ta.mint == mint })
}

func (l *Ledger) tokenAccounts(kind indexKind, k solana.PublicKey, c Commitment, keep func(*tokenKeys, *Account) bool) ([]KeyedAccount, uint64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	cut := l.cutoff(c)
	var out []KeyedAccount
	l.eachIndexed(kind, k, func(key solana.PublicKey) {
		a := l.accountAt(key, cut)
		if ta, ok := tokenKeysOf(a); ok && keep(&ta, a) {
			out = append(out, KeyedAccount{Key: key, Account: a})
		}
	})
	slices.SortFunc(out, func(a, b KeyedAccount) int { return compareKeys(a.Key, b.Key) })
	return out, cut
}

// tokenKeys is what the secondary indexes need from a token account.
type tokenKeys struct {
	mint, owner, delegate solana.PublicKey
	hasDelegate           bool
}

// Token account layout offsets the indexes read.
const (
	tokenDelegateTag   = 72  // COption<Pubkey> tag, u32 LE
	tokenDelegate      = 76  // delegate pubkey
	tokenDelegateEnd   = 108 // end of the delegate
	tokenStateOffset   = 108 // AccountState
	tokenMintOwnerSize = 64  // mint (0..32) and owner (32..64)
)

// tokenKeysOf recognizes an initialized token account without a full
// decode: it runs for every account write.
func tokenKeysOf(a *Account) (tokenKeys, bool) {
	if a == nil || !spl.IsTokenProgram(a.Owner) {
		return tokenKeys{}, false
	}
	d := a.Data
	n := len(d)
	if n < spl.TokenAccountSize || n == spl.MultisigSize || (n > spl.TokenAccountSize && d[spl.TokenAccountSize] != spl.AccountTypeAccount) {
		return tokenKeys{}, false
	}
	if d[tokenStateOffset] == byte(spl.StateUninitialized) {
		return tokenKeys{}, false
	}
	var t tokenKeys
	copy(t.mint[:], d[0:32])
	copy(t.owner[:], d[32:64])
	if d[tokenDelegateTag] == 1 {
		t.hasDelegate = true
		copy(t.delegate[:], d[tokenDelegate:tokenDelegateEnd])
	}
	return t, true
}

// keyIndex maps a key (a token owner, mint or delegate, or an account's
// owning program) to the accounts that have, or recently had, it. It may
// hold stale entries; readers check every candidate against the state
// they read.
//
// A durable ledger's indexes hold only the unfinalized slots' entries:
// they grow with a burst (a fill creating accounts faster than slots are
// finalized) and empty again. A Go map keeps the buckets of its largest
// size, so the maps are rebuilt once they hold a quarter of their peak.
type keyIndex struct {
	m    map[solana.PublicKey]*keySet
	peak int
}

func newKeyIndex() *keyIndex { return &keyIndex{m: map[solana.PublicKey]*keySet{}} }

// keySet is a small slice that turns into a map when it grows, since one
// mint or program can have millions of accounts while most owners have a
// few.
type keySet struct {
	list []solana.PublicKey
	set  map[solana.PublicKey]struct{}
	peak int
}

const keySetMapAt = 32

// shrinkAt is the smallest peak worth rebuilding a map for.
const shrinkAt = 1024

func (ix *keyIndex) add(k, v solana.PublicKey) {
	s := ix.m[k]
	if s == nil {
		s = &keySet{}
		ix.m[k] = s
		ix.peak = max(ix.peak, len(ix.m))
	}
	if s.set != nil {
		s.set[v] = struct{}{}
		s.peak = max(s.peak, len(s.set))
		return
	}
	if slices.Contains(s.list, v) {
		return
	}
	s.list = append(s.list, v)
	if len(s.list) > keySetMapAt {
		s.set = make(map[solana.PublicKey]struct{}, len(s.list)*2)
		for _, x := range s.list {
			s.set[x] = struct{}{}
		}
		s.list = nil
		s.peak = len(s.set)
	}
}

func (ix *keyIndex) remove(k, v solana.PublicKey) {
	s := ix.m[k]
	if s == nil {
		return
	}
	if s.set != nil {
		delete(s.set, v)
		if s.peak >= shrinkAt && len(s.set) < s.peak/4 {
			s.set = copyMap(s.set)
			s.peak = len(s.set)
		}
	} else if i := slices.Index(s.list, v); i >= 0 {
		s.list = slices.Delete(s.list, i, i+1)
	}
	if len(s.list) == 0 && len(s.set) == 0 {
		delete(ix.m, k)
		if ix.peak >= shrinkAt && len(ix.m) < ix.peak/4 {
			ix.m = copyMap(ix.m)
			ix.peak = len(ix.m)
		}
	}
}

// copyMap copies m into a map sized for what it holds now (maps.Clone
// keeps the buckets).
func copyMap[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func (ix *keyIndex) each(k solana.PublicKey, fn func(solana.PublicKey)) {
	s := ix.m[k]
	if s == nil {
		return
	}
	for _, v := range s.list {
		fn(v)
	}
	for v := range s.set {
		fn(v)
	}
}

// size is how many accounts k has in the index (stale entries included).
func (ix *keyIndex) size(k solana.PublicKey) int {
	s := ix.m[k]
	if s == nil {
		return 0
	}
	return len(s.list) + len(s.set)
}

// ownerIndexed is whether the owner index keeps a program's accounts.
// The System program owns nearly every wallet: indexing them would store
// most keys of the bank a second time (about 84 bytes per account), and a
// System-program query costs about a walk over the bank anyway, so it
// scans the bank instead (ProgramAccounts).
func ownerIndexed(program solana.PublicKey) bool { return program != spl.SystemProgramID }

// indexKind names one of the secondary indexes.
type indexKind uint8

const (
	byTokenOwner indexKind = iota
	byMint
	byDelegate
	byProgram
)

// indexRemoval is an index entry that became stale in a slot; it is
// dropped once that slot is finalized, when no commitment level can see
// the old value anymore.
type indexRemoval struct {
	kind    indexKind
	by, key solana.PublicKey
}

// indexAccount indexes a genesis account (in memory; a durable store
// indexes it with the genesis commit) and adds it to the supply; nothing
// older can be read, so genesis is also the base of commitment reads.
func (l *Ledger) indexAccount(key solana.PublicKey, a *Account) {
	l.capital += a.Lamports
	l.capBase = l.capital
	if l.diskIndex {
		return
	}
	if ownerIndexed(a.Owner) {
		l.programs.add(a.Owner, key)
	}
	if t, ok := tokenKeysOf(a); ok {
		l.owners.add(t.owner, key)
		l.mints.add(t.mint, key)
		if t.hasDelegate {
			l.delegates.add(t.delegate, key)
		}
	}
}

// indexEntry is one entry of a secondary index: account key has by
// (its owning program, token owner, mint or delegate).
type indexEntry struct {
	kind    indexKind
	by, key solana.PublicKey
}

// appendIndexEntries appends the index entries of an account's value.
func appendIndexEntries(out []indexEntry, key solana.PublicKey, a *Account) []indexEntry {
	if a == nil {
		return out
	}
	if ownerIndexed(a.Owner) {
		out = append(out, indexEntry{byProgram, a.Owner, key})
	}
	if t, ok := tokenKeysOf(a); ok {
		out = append(out, indexEntry{byTokenOwner, t.owner, key}, indexEntry{byMint, t.mint, key})
		if t.hasDelegate {
			out = append(out, indexEntry{byDelegate, t.delegate, key})
		}
	}
	return out
}

// slotIndexAdds lists the index entries a frozen slot added: those of
// each written account's final value that its value before the slot did
// not have. A durable store writes them with the slot. Called by the
// slot loop.
func (l *Ledger) slotIndexAdds(w *slotState, writes []AccountWrite) []indexEntry {
	var adds, before, after []indexEntry
	var scratch Account // decoded into, so a slot of cold accounts allocates nothing here
	for _, wr := range writes {
		var old *Account // a forked account is new to the store's indexes
		if _, forked := w.forked[wr.Key]; !forked {
			var err error
			if old, err = w.pre.getInto(wr.Key, &scratch); err != nil {
				l.undoRead(nil, err)
				continue
			}
		}
		if old != nil && wr.Account != nil && old.Owner == wr.Account.Owner && !tokenIndexChanged(old, wr.Account) {
			continue // the common case: a balance change
		}
		before = appendIndexEntries(before[:0], wr.Key, old)
		after = appendIndexEntries(after[:0], wr.Key, wr.Account)
		for _, e := range after {
			if !slices.Contains(before, e) {
				adds = append(adds, e)
			}
		}
	}
	return adds
}

// tokenIndexChanged reports whether two values of an account differ in
// what the token indexes read: whether each is a token account, its mint,
// owner and delegate.
func tokenIndexChanged(old, a *Account) bool {
	ot, wasToken := tokenKeysOf(old)
	nt, isToken := tokenKeysOf(a)
	return wasToken != isToken || ot != nt
}

// indexOf is the in-memory index of a kind.
func (l *Ledger) indexOf(kind indexKind) *keyIndex {
	switch kind {
	case byTokenOwner:
		return l.owners
	case byMint:
		return l.mints
	case byDelegate:
		return l.delegates
	}
	return l.programs
}

// eachIndexed calls fn for every account the index of kind lists under
// by (stale entries included; callers check the account). Callers hold
// mu.
func (l *Ledger) eachIndexed(kind indexKind, by solana.PublicKey, fn func(solana.PublicKey)) {
	idx := l.indexOf(kind)
	if !l.diskIndex {
		idx.each(by, fn)
		return
	}
	var seen map[solana.PublicKey]bool
	if n := idx.size(by); n > 0 {
		seen = make(map[solana.PublicKey]bool, n)
		idx.each(by, func(k solana.PublicKey) {
			seen[k] = true
			fn(k)
		})
	}
	err := l.store.indexEach(kind, by, func(k solana.PublicKey) {
		if !seen[k] {
			fn(k)
		}
	})
	if err != nil {
		l.bank.failure.CompareAndSwap(nil, &err)
	}
}

// indexSize estimates how many accounts eachIndexed visits.
func (l *Ledger) indexSize(kind indexKind, by solana.PublicKey) int {
	n := l.indexOf(kind).size(by)
	if l.diskIndex {
		n += 64
	}
	return n
}

// indexAdd adds an entry to an in-memory index. A durable ledger's
// in-memory indexes hold only what slots not yet finalized added, so the
// working slot remembers the entry and finalizeSlot drops it again (the
// store has it by then). Callers hold mu.
func (l *Ledger) indexAdd(kind indexKind, by, key solana.PublicKey) {
	l.indexOf(kind).add(by, key)
	if l.diskIndex {
		l.working.indexAdds = append(l.working.indexAdds, indexEntry{kind, by, key})
	}
}

// reindex updates the secondary indexes for a write. Callers hold mu.
func (l *Ledger) reindex(key solana.PublicKey, old, a *Account) {
	w := l.working
	if a != nil && (old == nil || old.Owner != a.Owner) && ownerIndexed(a.Owner) {
		l.indexAdd(byProgram, a.Owner, key)
	}
	if old != nil && (a == nil || a.Owner != old.Owner) && ownerIndexed(old.Owner) {
		w.removals = append(w.removals, indexRemoval{kind: byProgram, by: old.Owner, key: key})
	}
	if old != nil && a != nil && old.Owner == a.Owner && len(old.Data) >= tokenDelegateEnd && len(a.Data) >= tokenDelegateEnd &&
		bytes.Equal(old.Data[:tokenMintOwnerSize], a.Data[:tokenMintOwnerSize]) &&
		bytes.Equal(old.Data[tokenDelegateTag:tokenDelegateEnd], a.Data[tokenDelegateTag:tokenDelegateEnd]) {
		return // same mint, owner and delegate: the common case of a transfer
	}
	ot, wasToken := tokenKeysOf(old)
	nt, isToken := tokenKeysOf(a)
	if isToken {
		l.indexAdd(byTokenOwner, nt.owner, key)
		l.indexAdd(byMint, nt.mint, key)
		if nt.hasDelegate {
			l.indexAdd(byDelegate, nt.delegate, key)
		}
	}
	if !wasToken {
		return
	}
	if !isToken || nt.owner != ot.owner {
		w.removals = append(w.removals, indexRemoval{kind: byTokenOwner, by: ot.owner, key: key})
	}
	if !isToken || nt.mint != ot.mint {
		w.removals = append(w.removals, indexRemoval{kind: byMint, by: ot.mint, key: key})
	}
	if ot.hasDelegate && (!isToken || !nt.hasDelegate || nt.delegate != ot.delegate) {
		w.removals = append(w.removals, indexRemoval{kind: byDelegate, by: ot.delegate, key: key})
	}
}

// finalizeSlot is called for each slot whose undo history is dropped
// (it is finalized), oldest first, with the unfinalized slots after it.
// It moves the supply base forward and drops the slot's stale index
// entries. An entry whose account a later slot touched again waits for
// that slot instead: older commitments may still see it there. Callers
// hold mu.
func (l *Ledger) finalizeSlot(d *slotState, later []*slotState) {
	l.capBase = d.capAfter
	// The entries the slot added are in the store now; the in-memory
	// index keeps one only while a later slot (whose reads may not be
	// durable yet) wrote the account.
	for _, e := range d.indexAdds {
		var toucher *slotState
		for _, ld := range later {
			if ld.pre.has(e.key) {
				toucher = ld
			}
		}
		if toucher != nil {
			toucher.indexAdds = append(toucher.indexAdds, e)
			continue
		}
		l.indexOf(e.kind).remove(e.by, e.key)
	}
	d.indexAdds = nil
	for _, r := range d.removals {
		var toucher *slotState
		for _, ld := range later {
			if ld.pre.has(r.key) {
				toucher = ld
			}
		}
		if toucher != nil {
			toucher.removals = append(toucher.removals, r)
			continue
		}
		if l.stillIndexed(r) {
			continue
		}
		l.indexOf(r.kind).remove(r.by, r.key)
		if l.diskIndex {
			l.idxDeletes = append(l.idxDeletes, indexEntry(r))
		}
	}
	d.removals = nil
}

// stillIndexed reports whether the account's current value still has the
// key the removal would drop it from.
func (l *Ledger) stillIndexed(r indexRemoval) bool {
	a := l.bank.get(r.key)
	if r.kind == byProgram {
		return a != nil && a.Owner == r.by
	}
	t, ok := tokenKeysOf(a)
	if !ok {
		return false
	}
	switch r.kind {
	case byTokenOwner:
		return t.owner == r.by
	case byMint:
		return t.mint == r.by
	}
	return t.hasDelegate && t.delegate == r.by
}
