package ledger

import (
	"github.com/gagliardetto/solana-go"
)

// statusWarmup is the state of the status cache's fill after an open.
//
// After a busy minute the recent blocks hold hundreds of thousands of
// signatures, and building the cache from them was half of a restart at
// a million accounts (~110 ms of ~230 here). The ledger does not need the
// cache to be correct meanwhile, only the answers it gives: a signature
// of the slots the full cache would hold is also in history, which the
// signature index answers. So an open starts serving at once; the table
// is built beside, and until it is in place a cache miss is looked up in
// history (recentStatus), limited to the slots the full cache would
// cover.
type statusWarmup struct {
	// horizon is the oldest slot whose signatures the full cache would
	// hold: the oldest recent block at the open, moved on as blocks leave
	// the window.
	horizon uint64
	// evicted are the signatures that left the window while the table was
	// being built (they are in it): deleted from it before it is used.
	evicted []evictedStatus
}

type evictedStatus struct {
	key  statusKey
	slot uint64
}

// startStatusWarmup fills the status cache from blocks (the recent blocks
// at an open, oldest first) on a goroutine of its own. A ledger with no
// signature in them fills it at once.
func (l *Ledger) startStatusWarmup(blocks []*blockRecord) {
	n := 0
	for _, r := range blocks {
		n += len(r.Keys)
	}
	if n == 0 {
		l.status.fill(blocks)
		return
	}
	l.statusWarm = &statusWarmup{horizon: blocks[0].Slot}
	l.warmDone = make(chan struct{})
	go func() {
		defer close(l.warmDone)
		if g := l.cfg.statusWarmGate; g != nil {
			select {
			case <-g:
			case <-l.quit:
				return
			}
		}
		var c statusCache
		c.fill(blocks)
		l.mu.Lock()
		defer l.mu.Unlock()
		// What was processed since the open is newer than any block.
		l.status.each(c.putCell)
		for _, ev := range l.statusWarm.evicted {
			c.deleteAt(ev.key, ev.slot)
		}
		l.status, l.statusWarm = c, nil
	}()
}

// recentStatus is the status cache's answer for sig: the slot that
// processed it and its error, if it is one of the recent blocks'. While
// the cache warms up after an open, a miss is looked up in history, for
// the slots the full cache would cover. Callers hold mu.
func (l *Ledger) recentStatus(sig solana.Signature) (statusEntry, bool) {
	e, ok := l.status.get(statusKeyOf(sig))
	if ok || l.statusWarm == nil {
		return e, ok
	}
	r, err := l.store.tx(sig)
	if err != nil {
		// Reading history failed: treat the signature as processed rather
		// than risk running a transaction twice.
		l.log.Warn("status lookup in history failed; refusing the signature as already processed", "signature", sig, "err", err)
		return statusEntry{slot: l.statusWarm.horizon}, true
	}
	if r == nil || r.Slot < l.statusWarm.horizon {
		return statusEntry{}, false
	}
	return statusEntry{slot: r.Slot, err: r.Err}, true
}

// each calls fn for every entry of the cache, by the part of its key
// the cache keeps.
func (c *statusCache) each(fn func(statusCellKey, statusEntry)) {
	for i := range c.entries {
		if x := &c.entries[i]; x.slot != 0 {
			fn(x.key, c.cellEntry(x))
		}
	}
	for k, v := range c.over {
		fn(k, c.entry(k, v&^statusFailed, v&statusFailed != 0))
	}
}
