package payments

import (
	"sync"

	"github.com/gagliardetto/solana-go"
)

// onCurve memoises ed25519 on-curve checks of wallet keys. A check is a
// point decompression (about 10 µs), and a public transfer makes three of
// them for the same two wallets; remembering the answers takes the check
// out of the steady-state build. The cache is bounded: two generations of
// at most curveCacheLimit entries each.
var onCurve = &curveCache{limit: curveCacheLimit}

const curveCacheLimit = 8192

type curveCache struct {
	mu       sync.Mutex
	cur, old map[solana.PublicKey]bool
	limit    int
}

// isOnCurve reports whether k is a valid ed25519 point (a wallet that can
// sign, as opposed to a PDA), memoised.
func isOnCurve(k solana.PublicKey) bool {
	return onCurve.check(k)
}

func (c *curveCache) check(k solana.PublicKey) bool {
	c.mu.Lock()
	v, ok := c.cur[k]
	if !ok {
		if v, ok = c.old[k]; ok {
			c.putLocked(k, v)
		}
	}
	c.mu.Unlock()
	if ok {
		return v
	}
	v = k.IsOnCurve()
	c.mu.Lock()
	c.putLocked(k, v)
	c.mu.Unlock()
	return v
}

func (c *curveCache) putLocked(k solana.PublicKey, v bool) {
	if c.cur == nil || len(c.cur) >= c.limit {
		c.old, c.cur = c.cur, make(map[solana.PublicKey]bool, c.limit/4)
	}
	c.cur[k] = v
}
