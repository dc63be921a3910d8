package ledger

import (
	"sync"
	"sync/atomic"

	"github.com/gagliardetto/solana-go"
)

// DefaultAccountCacheSize is how many accounts read from disk a durable
// ledger keeps decoded in memory (Config.AccountCacheSize). Small on
// purpose: every cached account is two objects the collector marks in
// every cycle, and a miss costs two reads from the page cache (a few µs).
// At a million accounts under random transfers 131 072 entries hit 13 %
// of recipients and cost more in marking than the reads they saved
// (docs/performance.md, ninth round); the hot accounts (payers, mints,
// programs) fit many times over.
const DefaultAccountCacheSize = 16_384

// accountSource reads accounts that are not in memory: the durable
// store's account log.
type accountSource interface {
	account(solana.PublicKey) (*Account, error)
	eachAccount(func(solana.PublicKey, *Account) bool) error
	accountCount() int
}

// accountSet is the processed state of every account.
//
// An in-memory ledger keeps every account in mem. A durable one keeps
// in mem only the accounts written since the last commit that wrote them
// (a nil value: deleted), and reads the others from disk through a cache
// of recently used ones, so its memory follows what is being used, not
// how many accounts exist, and opening it decodes nothing.
//
// mem is changed by the slot loop and, when a commit has made writes
// durable, by the persister, both holding Ledger.mu for writing; readers
// hold it for reading. The cache has its own lock.
type accountSet struct {
	mem map[solana.PublicKey]*Account
	// memPeak is mem's largest size since it was last rebuilt: a burst of
	// writes ahead of the persister leaves a map of that size behind
	// (keyIndex).
	memPeak int
	disk    accountSource
	cache   accountCache
	// failure is the first disk read error; the ledger halts on it (a
	// missing account must never be mistaken for a new one).
	failure atomic.Pointer[error]
}

func newAccountSet(disk accountSource, cacheSize int) *accountSet {
	s := &accountSet{mem: map[solana.PublicKey]*Account{}, disk: disk}
	s.cache.init(cacheSize)
	return s
}

// get returns an account's processed value, or nil.
func (s *accountSet) get(k solana.PublicKey) *Account {
	if a, ok := s.mem[k]; ok || s.disk == nil {
		return a
	}
	if a, ok := s.cache.get(k); ok {
		return a
	}
	a, err := s.disk.account(k)
	if err != nil {
		s.failure.CompareAndSwap(nil, &err)
		return nil
	}
	s.cache.put(k, a)
	return a
}

// set records a write (a nil a: deleted).
func (s *accountSet) set(k solana.PublicKey, a *Account) {
	if a == nil && s.disk == nil {
		delete(s.mem, k)
		return
	}
	s.mem[k] = a
	s.memPeak = max(s.memPeak, len(s.mem))
}

// persisted drops from mem the writes a commit made durable, unless a
// later slot wrote the account again; they stay readable through the
// cache.
func (s *accountSet) persisted(writes []AccountWrite) {
	if s.disk == nil {
		return
	}
	for _, w := range writes {
		if cur, ok := s.mem[w.Key]; ok && cur == w.Account {
			delete(s.mem, w.Key)
			s.cache.put(w.Key, w.Account)
		}
	}
	if s.memPeak >= shrinkAt && len(s.mem) < s.memPeak/4 {
		s.mem = copyMap(s.mem)
		s.memPeak = len(s.mem)
	}
}

// count is the number of accounts (an estimate for a durable ledger).
func (s *accountSet) count() int {
	if s.disk == nil {
		return len(s.mem)
	}
	return s.disk.accountCount()
}

// each calls fn for every account, in no order. For a durable ledger it
// reads every account from disk.
func (s *accountSet) each(fn func(solana.PublicKey, *Account)) {
	for k, a := range s.mem {
		if a != nil {
			fn(k, a)
		}
	}
	if s.disk == nil {
		return
	}
	err := s.disk.eachAccount(func(k solana.PublicKey, a *Account) bool {
		if _, ok := s.mem[k]; !ok {
			fn(k, a)
		}
		return true
	})
	if err != nil {
		s.failure.CompareAndSwap(nil, &err)
	}
}

// has reports whether k is among the accounts each visits.
func (s *accountSet) has(k solana.PublicKey) bool { return s.get(k) != nil }

// accountCache keeps recently read accounts (nil: known not to exist) in
// two generations: lookups promote entries of the older one, and when the
// newer one is full the older one is dropped. This approximates LRU with
// a lookup and an insert per access.
type accountCache struct {
	mu       sync.Mutex
	cur, old map[solana.PublicKey]*Account
	half     int
}

func (c *accountCache) init(size int) {
	c.half = max(size/2, 1)
	c.cur = make(map[solana.PublicKey]*Account)
}

func (c *accountCache) get(k solana.PublicKey) (*Account, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.cur[k]; ok {
		return a, true
	}
	a, ok := c.old[k]
	if ok {
		c.insert(k, a)
	}
	return a, ok
}

func (c *accountCache) put(k solana.PublicKey, a *Account) {
	c.mu.Lock()
	c.insert(k, a)
	c.mu.Unlock()
}

func (c *accountCache) insert(k solana.PublicKey, a *Account) {
	c.cur[k] = a
	if len(c.cur) >= c.half {
		c.old, c.cur = c.cur, make(map[solana.PublicKey]*Account, c.half)
	}
}
