package espl

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/gagliardetto/solana-go"
)

// DefaultCacheCapacity is the capacity NewCache uses when given a
// non-positive one: a few thousand entries are enough for the mints,
// owners and validators a node works with (about 150 bytes per entry).
const DefaultCacheCapacity = 4096

const (
	cacheShards   = 16
	sealKeyLimit  = 64
	minShardLimit = 4
)

// Cache memoises PDA derivations and sealed-box recipient keys. It is safe
// for concurrent use and bounded: each of its 16 shards keeps two
// generations of at most capacity/32 entries; when the current generation
// fills, it becomes the old one and the previous old one is dropped, and an
// old entry that is hit again moves back into the current generation. This
// approximates an LRU with O(1) work and no per-entry bookkeeping. The
// effective capacity is rounded to a multiple of 32, with a minimum of 128.
//
// The methods mirror the package's Find* functions and return identical
// results. A nil *Cache is valid: its methods derive without memoising.
//
// Builders taking a Cache (the Cache field of the argument structs) use it
// for the stable derivations (eATAs, vaults, queues, rent PDA, delegation
// PDAs of long-lived accounts) but not for the per-transfer ones (shuttle
// accounts keyed by a random shuttle id, group receipts keyed by a random
// group id), so one-off addresses do not evict useful ones.
type Cache struct {
	limit  int // entries per shard generation
	shards [cacheShards]cacheShard

	sealMu   sync.Mutex
	sealKeys map[solana.PublicKey]*SealKey
}

type cacheEntry struct {
	addr solana.PublicKey
	bump uint8
}

type cacheShard struct {
	mu           sync.Mutex
	cur, old     map[pdaKey]cacheEntry
	hits, misses uint64
	_            [24]byte // pad to 64 bytes: one shard per cache line
}

// CacheStats reports a Cache's effectiveness.
type CacheStats struct {
	Hits, Misses uint64
	Entries      int // current number of memoised derivations
	Capacity     int
}

// NewCache returns a cache holding up to about capacity derivations
// (DefaultCacheCapacity when capacity <= 0).
func NewCache(capacity int) *Cache {
	if capacity <= 0 {
		capacity = DefaultCacheCapacity
	}
	limit := max(capacity/(2*cacheShards), minShardLimit)
	c := &Cache{limit: limit}
	for i := range c.shards {
		c.shards[i].cur = make(map[pdaKey]cacheEntry, limit)
	}
	return c
}

// Stats returns hit/miss counters and the current size.
func (c *Cache) Stats() CacheStats {
	if c == nil {
		return CacheStats{}
	}
	var s CacheStats
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		s.Hits += sh.hits
		s.Misses += sh.misses
		s.Entries += len(sh.cur) + len(sh.old)
		sh.mu.Unlock()
	}
	s.Capacity = 2 * cacheShards * c.limit
	return s
}

// shardOf spreads keys over the shards. Keys are mostly public keys or
// hashes, so their first bytes are already uniform.
func shardOf(k *pdaKey) int {
	h := binary.LittleEndian.Uint64(k.a[:8]) ^ binary.LittleEndian.Uint64(k.b[:8])*0x9E3779B97F4A7C15 ^
		uint64(k.n)*0xBF58476D1CE4E5B9 ^ uint64(k.kind)*0x94D049BB133111EB
	h ^= h >> 29
	return int(h % cacheShards)
}

func (c *Cache) derive(k *pdaKey) (solana.PublicKey, uint8) {
	if c == nil {
		return derive(k)
	}
	sh := &c.shards[shardOf(k)]
	sh.mu.Lock()
	if e, ok := sh.cur[*k]; ok {
		sh.hits++
		sh.mu.Unlock()
		return e.addr, e.bump
	}
	if e, ok := sh.old[*k]; ok {
		sh.hits++
		sh.put(k, e, c.limit)
		sh.mu.Unlock()
		return e.addr, e.bump
	}
	sh.misses++
	sh.mu.Unlock()

	addr, bump := derive(k) // outside the lock: this is the slow part

	sh.mu.Lock()
	sh.put(k, cacheEntry{addr, bump}, c.limit)
	sh.mu.Unlock()
	return addr, bump
}

// put inserts into the current generation, rotating when it is full.
func (sh *cacheShard) put(k *pdaKey, e cacheEntry, limit int) {
	if len(sh.cur) >= limit {
		sh.old = sh.cur
		sh.cur = make(map[pdaKey]cacheEntry, limit)
	}
	sh.cur[*k] = e
}

// FindEphemeralATA is the memoised FindEphemeralATA.
func (c *Cache) FindEphemeralATA(owner, mint solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyEATA(owner, mint)
	return c.derive(&k)
}

// FindGlobalVault is the memoised FindGlobalVault.
func (c *Cache) FindGlobalVault(mint solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyVault(mint)
	return c.derive(&k)
}

// FindVaultEphemeralATA is the memoised FindVaultEphemeralATA.
func (c *Cache) FindVaultEphemeralATA(mint solana.PublicKey) (solana.PublicKey, uint8) {
	vault, _ := c.FindGlobalVault(mint)
	return c.FindEphemeralATA(vault, mint)
}

// FindVaultATA is the memoised FindVaultATA.
func (c *Cache) FindVaultATA(mint, tokenProgram solana.PublicKey) (solana.PublicKey, uint8) {
	vault, _ := c.FindGlobalVault(mint)
	return c.FindAssociatedTokenAddress(vault, mint, tokenProgram)
}

// FindAssociatedTokenAddress is the memoised spl.AssociatedTokenAddressBump
// (off-curve owners allowed).
func (c *Cache) FindAssociatedTokenAddress(owner, mint, tokenProgram solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyATA(owner, mint, tokenProgram)
	return c.derive(&k)
}

// FindRentPDA is the memoised FindRentPDA.
func (c *Cache) FindRentPDA() (solana.PublicKey, uint8) {
	k := keyRent()
	return c.derive(&k)
}

// FindShuttleMetadata is the memoised FindShuttleMetadata.
func (c *Cache) FindShuttleMetadata(owner, mint solana.PublicKey, shuttleID uint32) (solana.PublicKey, uint8) {
	k := keyShuttleMetadata(owner, mint, shuttleID)
	return c.derive(&k)
}

// FindShuttleEphemeralATA is the memoised FindShuttleEphemeralATA.
func (c *Cache) FindShuttleEphemeralATA(shuttleMetadata, mint solana.PublicKey) (solana.PublicKey, uint8) {
	return c.FindEphemeralATA(shuttleMetadata, mint)
}

// FindShuttleWalletATA is the memoised FindShuttleWalletATA.
func (c *Cache) FindShuttleWalletATA(shuttleMetadata, mint, tokenProgram solana.PublicKey) (solana.PublicKey, uint8) {
	return c.FindAssociatedTokenAddress(shuttleMetadata, mint, tokenProgram)
}

// FindTransferQueue is the memoised FindTransferQueue.
func (c *Cache) FindTransferQueue(mint, validator solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyQueue(mint, validator)
	return c.derive(&k)
}

// FindQueueEphemeralATA is the memoised FindQueueEphemeralATA.
func (c *Cache) FindQueueEphemeralATA(queue, mint solana.PublicKey) (solana.PublicKey, uint8) {
	return c.FindEphemeralATA(queue, mint)
}

// FindQueueVaultATA is the memoised FindQueueVaultATA.
func (c *Cache) FindQueueVaultATA(queue, mint, tokenProgram solana.PublicKey) (solana.PublicKey, uint8) {
	return c.FindAssociatedTokenAddress(queue, mint, tokenProgram)
}

// FindGroupReceipt is the memoised FindGroupReceipt.
func (c *Cache) FindGroupReceipt(queue, sourceAuthority solana.PublicKey, groupID uint32) (solana.PublicKey, uint8) {
	k := keyGroupReceipt(queue, sourceAuthority, groupID)
	return c.derive(&k)
}

// FindQueueRefillState is the memoised FindQueueRefillState.
func (c *Cache) FindQueueRefillState(queue solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyQueueRefill(queue)
	return c.derive(&k)
}

// FindLamportsPDA is the memoised FindLamportsPDA.
func (c *Cache) FindLamportsPDA(payer, destination solana.PublicKey, salt [32]byte) (solana.PublicKey, uint8) {
	k := keyLamports(payer, destination, salt)
	return c.derive(&k)
}

// FindQueueRefillLamportsPDA is the memoised FindQueueRefillLamportsPDA.
func (c *Cache) FindQueueRefillLamportsPDA(queue solana.PublicKey) (solana.PublicKey, uint8) {
	rent, _ := c.FindRentPDA()
	return c.FindLamportsPDA(rent, queue, queue)
}

// FindStash is the memoised FindStash.
func (c *Cache) FindStash(user, mint solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyStash(user, mint)
	return c.derive(&k)
}

// FindHydraCrank is the memoised FindHydraCrank.
func (c *Cache) FindHydraCrank(stash solana.PublicKey, shuttleID uint32) (solana.PublicKey, uint8) {
	k := keyCrank(stash, shuttleID)
	return c.derive(&k)
}

// FindStealthPool is the memoised FindStealthPool.
func (c *Cache) FindStealthPool(handle []byte) (solana.PublicKey, uint8, error) {
	k, err := keyStealthPool(handle)
	if err != nil {
		return solana.PublicKey{}, 0, fmt.Errorf("derive stealth pool: %w", err)
	}
	addr, bump := c.derive(&k)
	return addr, bump, nil
}

// FindDelegationRecord is the memoised FindDelegationRecord.
func (c *Cache) FindDelegationRecord(account solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyOf(kindDelegation, account)
	return c.derive(&k)
}

// FindDelegationMetadata is the memoised FindDelegationMetadata.
func (c *Cache) FindDelegationMetadata(account solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyOf(kindDelegationMetadata, account)
	return c.derive(&k)
}

// FindDelegateBuffer is the memoised FindDelegateBuffer.
func (c *Cache) FindDelegateBuffer(account, ownerProgram solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyBuffer(account, ownerProgram)
	return c.derive(&k)
}

// FindMagicFeeVault is the memoised FindMagicFeeVault.
func (c *Cache) FindMagicFeeVault(validator solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyOf(kindMagicFeeVault, validator)
	return c.derive(&k)
}

// FindPermission is the memoised FindPermission.
func (c *Cache) FindPermission(account solana.PublicKey) (solana.PublicKey, uint8) {
	k := keyOf(kindPermission, account)
	return c.derive(&k)
}

// SealKey returns the memoised recipient key of validator (see NewSealKey).
// A validator's first use gets a key without the multiples table, its
// second the full key: the table costs about two one-shot seals to build,
// so a caller naming a new validator on every request (the API's
// `validator` field is client input) gets no slower than one-shot sealing,
// while the validators that are actually used pay for their table once.
// At most 64 validators are remembered; beyond that the set is reset.
func (c *Cache) SealKey(validator solana.PublicKey) (*SealKey, error) {
	if c == nil {
		return prepareSealKey(validator, false)
	}
	c.sealMu.Lock()
	k := c.sealKeys[validator]
	c.sealMu.Unlock()
	if k != nil && k.table != nil {
		return k, nil
	}
	k, err := prepareSealKey(validator, k != nil)
	if err != nil {
		return nil, err
	}
	c.sealMu.Lock()
	if c.sealKeys == nil || len(c.sealKeys) >= sealKeyLimit {
		c.sealKeys = make(map[solana.PublicKey]*SealKey)
	}
	if old := c.sealKeys[validator]; old == nil || old.table == nil {
		c.sealKeys[validator] = k
	}
	c.sealMu.Unlock()
	return k, nil
}

// delegationPDAs returns the buffer (under ownerProgram), delegation
// record and delegation metadata of account.
func (c *Cache) delegationPDAs(account, ownerProgram solana.PublicKey) (buffer, record, metadata solana.PublicKey) {
	buffer, _ = c.FindDelegateBuffer(account, ownerProgram)
	record, _ = c.FindDelegationRecord(account)
	metadata, _ = c.FindDelegationMetadata(account)
	return buffer, record, metadata
}
