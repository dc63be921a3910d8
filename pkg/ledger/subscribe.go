package ledger

import (
	"context"
	"sync"
)

// Subscribe delivers every block that becomes durable after the call, in
// slot order, with its transactions (and the accounts each one wrote) and
// the Apply writes of the slot. Delivery never drops a block: a slow
// reader only grows its own queue. The channel is closed when ctx ends or
// the ledger closes (after the remaining blocks are delivered).
//
// This is the commit hook a bridge between two ledgers builds on: it sees
// each base-layer transaction once it is confirmed.
func (l *Ledger) Subscribe(ctx context.Context) <-chan *Block {
	s := &subscriber{signal: make(chan struct{}, 1), out: make(chan *Block)}
	if !l.subs.add(s) {
		close(s.out)
		return s.out
	}
	go func() {
		defer close(s.out)
		defer l.subs.remove(s)
		s.run(ctx)
	}()
	return s.out
}

// SubscribeFrom is Subscribe preceded by a replay of the durable blocks
// from slot from on, so a consumer that keeps a cursor resumes after a
// restart without a gap or a duplicate. Replayed blocks come from history
// and have Replayed set; history keeps transactions with their metadata
// but not account writes, so their Writes, Applied and TxRecord.Writes
// are nil. A storage error during the replay is logged and closes the
// channel.
func (l *Ledger) SubscribeFrom(ctx context.Context, from uint64) <-chan *Block {
	s := &subscriber{signal: make(chan struct{}, 1), out: make(chan *Block)}
	if !l.subs.add(s) {
		close(s.out)
		return s.out
	}
	go func() {
		defer close(s.out)
		defer l.subs.remove(s)
		// Registered first, then the tip read: every block above the tip
		// is in the live queue, every block up to it is in history.
		tip := l.Slot(Confirmed)
		for slot := from; slot <= tip; slot++ {
			info, txs, err := l.Block(slot, Confirmed)
			if err != nil {
				l.log.Error("subscription replay failed", "slot", slot, "err", err)
				return
			}
			if info == nil {
				continue
			}
			b := &Block{
				Slot: info.Slot, ParentSlot: info.ParentSlot, Height: info.Height, Blockhash: info.Blockhash,
				PreviousBlockhash: info.PreviousBlockhash, Time: info.Time, Transactions: txs, Replayed: true,
			}
			select {
			case s.out <- b:
			case <-ctx.Done():
				return
			}
		}
		s.floor = max(tip+1, from)
		s.run(ctx)
	}()
	return s.out
}

type subscribers struct {
	mu     sync.Mutex
	set    map[*subscriber]struct{}
	closed bool
}

func (ss *subscribers) add(s *subscriber) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		return false
	}
	if ss.set == nil {
		ss.set = map[*subscriber]struct{}{}
	}
	ss.set[s] = struct{}{}
	return true
}

func (ss *subscribers) remove(s *subscriber) {
	ss.mu.Lock()
	delete(ss.set, s)
	ss.mu.Unlock()
}

func (ss *subscribers) publish(b *Block) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for s := range ss.set {
		s.push(b)
	}
}

func (ss *subscribers) closeAll() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.closed = true
	for s := range ss.set {
		s.finish()
	}
}

type subscriber struct {
	mu     sync.Mutex
	queue  []*Block
	done   bool
	signal chan struct{}
	out    chan *Block
	floor  uint64 // blocks below it were delivered already (replay)
}

func (s *subscriber) push(b *Block) {
	s.mu.Lock()
	s.queue = append(s.queue, b)
	s.mu.Unlock()
	s.wake()
}

func (s *subscriber) finish() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
	s.wake()
}

func (s *subscriber) wake() {
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

func (s *subscriber) run(ctx context.Context) {
	for {
		s.mu.Lock()
		q, done := s.queue, s.done
		s.queue = nil
		s.mu.Unlock()
		for _, b := range q {
			if b.Slot < s.floor {
				continue
			}
			select {
			case s.out <- b:
			case <-ctx.Done():
				return
			}
		}
		if len(q) > 0 {
			continue
		}
		if done {
			return
		}
		select {
		case <-s.signal:
		case <-ctx.Done():
			return
		}
	}
}
