package chainclient

import (
	"container/list"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"
)

// CacheOptions configures a Cached client. The zero value gives the
// defaults.
type CacheOptions struct {
	// BlockhashTTL is how long a latest blockhash is reused (default
	// 400 ms, one base-layer slot). Negative disables the cache.
	BlockhashTTL time.Duration
	// FetchTimeout bounds a fetch shared by several callers (default 30 s).
	// A shared fetch does not stop when the caller that started it gives
	// up; each caller still returns as soon as its own context ends.
	FetchTimeout time.Duration
	// MaxMints bounds the mint → token program cache (default 4096); when
	// full it is cleared.
	MaxMints int
	// MintCommitment is the commitment used to read mints (default
	// confirmed).
	MintCommitment Commitment
	// Now is the clock (default time.Now); tests inject one.
	Now func() time.Time
}

// Default cache settings.
const (
	DefaultBlockhashTTL = 400 * time.Millisecond
	DefaultFetchTimeout = 30 * time.Second
	DefaultMaxMints     = 4096
)

// Cached is a Client with the caches a transaction builder needs so that,
// in steady state, a build makes no RPC round trip:
//
//   - GetLatestBlockhash reuses a blockhash for BlockhashTTL, per
//     commitment, and concurrent callers share one request;
//   - MintProgram remembers which token program owns a mint (positive
//     answers only: a missing mint is asked again next time);
//   - GetIdentity remembers the node's identity after the first success;
//     failures are not cached, so the next call retries (payments-api.md
//     §2.2).
//
// All other methods are the embedded Client's, uncached. It is safe for
// concurrent use.
type Cached struct {
	*Client
	ttl, fetchTimeout time.Duration
	maxMints          int
	mintCommitment    Commitment
	now               func() time.Time

	mu         sync.Mutex
	blockhash  map[Commitment]cachedBlockhash
	mints      map[solana.PublicKey]solana.PublicKey
	identity   *Identity
	bhFlight   group[Commitment, Blockhash]
	mintFlight group[solana.PublicKey, solana.PublicKey]
	idFlight   group[struct{}, Identity]
}

type cachedBlockhash struct {
	bh Blockhash
	at time.Time
}

// NewCached wraps c with caches.
func NewCached(c *Client, opts CacheOptions) *Cached {
	cc := &Cached{
		Client: c, ttl: opts.BlockhashTTL, fetchTimeout: opts.FetchTimeout,
		maxMints: opts.MaxMints, mintCommitment: opts.MintCommitment, now: opts.Now,
		blockhash: map[Commitment]cachedBlockhash{},
		mints:     map[solana.PublicKey]solana.PublicKey{},
	}
	if cc.ttl == 0 {
		cc.ttl = DefaultBlockhashTTL
	}
	if cc.fetchTimeout <= 0 {
		cc.fetchTimeout = DefaultFetchTimeout
	}
	if cc.maxMints <= 0 {
		cc.maxMints = DefaultMaxMints
	}
	if cc.mintCommitment == "" {
		cc.mintCommitment = Confirmed
	}
	if cc.now == nil {
		cc.now = time.Now
	}
	return cc
}

// GetLatestBlockhash returns a blockhash at most BlockhashTTL old, fetching
// one when needed; concurrent callers share a single request.
func (c *Cached) GetLatestBlockhash(ctx context.Context, commitment Commitment) (Blockhash, error) {
	if c.ttl < 0 {
		return c.Client.GetLatestBlockhash(ctx, commitment)
	}
	c.mu.Lock()
	e, ok := c.blockhash[commitment]
	c.mu.Unlock()
	if ok && c.now().Sub(e.at) < c.ttl {
		return e.bh, nil
	}
	return c.bhFlight.do(ctx, c.fetchTimeout, commitment, func(fctx context.Context) (Blockhash, error) {
		start := c.now()
		bh, err := c.Client.GetLatestBlockhash(fctx, commitment)
		if err == nil {
			c.mu.Lock()
			c.blockhash[commitment] = cachedBlockhash{bh: bh, at: start}
			c.mu.Unlock()
		}
		return bh, err
	})
}

// InvalidateBlockhash drops cached blockhashes, e.g. after a send failed
// with BlockhashNotFound.
func (c *Cached) InvalidateBlockhash() {
	c.mu.Lock()
	clear(c.blockhash)
	c.mu.Unlock()
}

// MintProgram returns the program that owns mint: the SPL Token or
// Token-2022 program for a real mint. Those answers are cached for the
// client's lifetime (a mint's owner never changes); any other owner is
// returned uncached, and a missing account is an error wrapping
// ErrAccountNotFound, also uncached. Validating that the account is a
// usable mint is the caller's job.
func (c *Cached) MintProgram(ctx context.Context, mint solana.PublicKey) (solana.PublicKey, error) {
	c.mu.Lock()
	p, ok := c.mints[mint]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	return c.mintFlight.do(ctx, c.fetchTimeout, mint, func(fctx context.Context) (solana.PublicKey, error) {
		acct, err := c.Client.GetAccountInfo(fctx, mint, c.mintCommitment)
		if err != nil {
			return solana.PublicKey{}, fmt.Errorf("look up token program of mint %s: %w", mint, err)
		}
		if acct == nil {
			return solana.PublicKey{}, fmt.Errorf("look up token program of mint %s on %s: %w", mint, c.redacted, ErrAccountNotFound)
		}
		if acct.Owner == solana.TokenProgramID || acct.Owner == solana.Token2022ProgramID {
			c.mu.Lock()
			if len(c.mints) >= c.maxMints {
				clear(c.mints)
			}
			c.mints[mint] = acct.Owner
			c.mu.Unlock()
		}
		return acct.Owner, nil
	})
}

// GetIdentity returns the node's identity, asking the node only until the
// first success.
func (c *Cached) GetIdentity(ctx context.Context) (Identity, error) {
	c.mu.Lock()
	id := c.identity
	c.mu.Unlock()
	if id != nil {
		return *id, nil
	}
	return c.idFlight.do(ctx, c.fetchTimeout, struct{}{}, func(fctx context.Context) (Identity, error) {
		id, err := c.Client.GetIdentity(fctx)
		if err == nil {
			c.mu.Lock()
			c.identity = &id
			c.mu.Unlock()
		}
		return id, err
	})
}

// group de-duplicates concurrent fetches of the same key (a minimal
// single-flight).
type group[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]*flight[V]
}

type flight[V any] struct {
	done    chan struct{}
	val     V
	err     error
	waiters int // callers attached, for tests
}

// do runs fn once for all concurrent callers with the same key. fn gets a
// context detached from any one caller's cancellation but bounded by
// timeout; each caller waits for the result or its own ctx, whichever
// comes first.
func (g *group[K, V]) do(ctx context.Context, timeout time.Duration, key K, fn func(context.Context) (V, error)) (V, error) {
	g.mu.Lock()
	if g.m == nil {
		g.m = map[K]*flight[V]{}
	}
	f, ok := g.m[key]
	if !ok {
		f = &flight[V]{done: make(chan struct{})}
		g.m[key] = f
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		go func() {
			defer cancel()
			v, err := fn(fctx)
			g.mu.Lock()
			f.val, f.err = v, err
			delete(g.m, key)
			g.mu.Unlock()
			close(f.done)
		}()
	}
	f.waiters++
	g.mu.Unlock()
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		var zero V
		return zero, context.Cause(ctx)
	}
}

// waiting reports how many callers are attached to the in-flight fetch of
// key (0 if none).
func (g *group[K, V]) waiting(key K) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.m[key]; ok {
		return f.waiters
	}
	return 0
}

// Pool hands out one Cached client per endpoint URL, so caches (notably the
// validator identity) are shared by every request that names the same
// endpoint. It keeps at most Max clients, dropping the least recently used.
// The zero value is not usable; create it with NewPool.
type Pool struct {
	max        int
	cacheOpts  CacheOptions
	clientOpts []Option

	mu  sync.Mutex
	lru *list.List // of *poolEntry, front = most recent
	m   map[string]*list.Element
}

type poolEntry struct {
	key string
	c   *Cached
}

// DefaultPoolSize is the capacity of a Pool created with max <= 0.
const DefaultPoolSize = 64

// NewPool returns a pool of at most max clients (DefaultPoolSize when max <= 0),
// each created with clientOpts and cacheOpts.
func NewPool(max int, cacheOpts CacheOptions, clientOpts ...Option) *Pool {
	if max <= 0 {
		max = DefaultPoolSize
	}
	return &Pool{max: max, cacheOpts: cacheOpts, clientOpts: clientOpts, lru: list.New(), m: map[string]*list.Element{}}
}

// Get returns the cached client for rawURL, creating it on first use. Do
// not put per-user tokens in rawURL: use Get(url).WithToken(token) for
// requests that need one.
func (p *Pool) Get(rawURL string) (*Cached, error) {
	key := strings.TrimSpace(rawURL)
	p.mu.Lock()
	defer p.mu.Unlock()
	if el, ok := p.m[key]; ok {
		p.lru.MoveToFront(el)
		return el.Value.(*poolEntry).c, nil
	}
	c, err := New(key, p.clientOpts...)
	if err != nil {
		return nil, err
	}
	cc := NewCached(c, p.cacheOpts)
	p.m[key] = p.lru.PushFront(&poolEntry{key: key, c: cc})
	for p.lru.Len() > p.max {
		last := p.lru.Back()
		p.lru.Remove(last)
		delete(p.m, last.Value.(*poolEntry).key)
	}
	return cc, nil
}
