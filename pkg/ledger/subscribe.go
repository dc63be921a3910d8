package ledger

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
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
	// Registered first, then the tip read: every block above the tip is
	// in the live queue, every block up to it is in history. The tip is
	// read before SubscribeFrom returns, so blocks confirmed after the
	// call are always delivered live (with their writes).
	tip := l.Slot(Confirmed)
	go func() {
		defer close(s.out)
		defer l.subs.remove(s)
		// Blocks lists the slots that have blocks, so the slots a time
		// travel skipped cost nothing; pruned slots have nothing to replay.
		for next := max(from, l.FirstAvailableBlock()); next <= tip; {
			slots, err := l.Blocks(next, tip, replayPage, Confirmed)
			if err != nil {
				l.log.Error("subscription replay failed", "slot", next, "err", err)
				return
			}
			if len(slots) == 0 {
				break
			}
			next = slots[len(slots)-1] + 1
			if !l.replay(ctx, s, slots) {
				return
			}
		}
		s.floor = max(tip+1, from)
		s.run(ctx)
	}()
	return s.out
}

// replayPage is how many block slots SubscribeFrom lists at a time.
const replayPage = 256

// replay sends the history blocks of slots to s; false means stop.
func (l *Ledger) replay(ctx context.Context, s *subscriber, slots []uint64) bool {
	for _, slot := range slots {
		info, txs, err := l.Block(slot, Confirmed)
		if err != nil {
			l.log.Error("subscription replay failed", "slot", slot, "err", err)
			return false
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
			return false
		}
	}
	return true
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

// EventKind says what an Event reports.
type EventKind uint8

// Event kinds, in the order a slot goes through them.
const (
	// EventProcessed: transactions (Txs, each with its Writes) or the
	// writes of one Apply call (Applied) executed in the working slot
	// Slot. They are processed: readable at processed commitment, not yet
	// durable.
	EventProcessed EventKind = iota + 1
	// EventFrozen: the working slot Slot (child of Parent, holding Txs)
	// ended and slot Slot+1 opened; Root is the finalized slot then.
	EventFrozen
	// EventConfirmed: Block became durable (confirmed commitment). It
	// carries what Subscribe delivers.
	EventConfirmed
	// EventFinalized: the finalized mark advanced from Parent to Slot.
	EventFinalized
)

// Event is one step of the chain as an Observer sees it. Events are
// shared between observers: treat them as read-only.
type Event struct {
	Kind EventKind
	Slot uint64
	// Parent is the parent slot (EventFrozen) or the previous finalized
	// slot (EventFinalized).
	Parent uint64
	// Root is the finalized slot when Slot froze (EventFrozen).
	Root    uint64
	Txs     []*TxRecord
	Applied []AccountWrite
	Block   *Block
	// Time is when the ledger published the event (Config.Now).
	Time time.Time
}

// ErrObserverOverflow is what Observer.Next returns after the observer
// fell more events behind than its limit: the ledger dropped it rather
// than wait for it.
var ErrObserverOverflow = errors.New("ledger observer fell behind")

// Observe returns an Observer of every processed transaction and Apply,
// every slot end, every confirmed block and every finalized advance from
// now on, in order. It is the hook for live notification services
// (PubSub).
//
// The ledger never waits for an observer: events are appended to the
// observer's queue, and an observer whose queue holds more than limit
// events is dropped (its Next returns ErrObserverOverflow). A ledger
// nobody observes does not build events at all.
func (l *Ledger) Observe(limit int) *Observer {
	o := &Observer{l: l, limit: max(limit, 1), signal: make(chan struct{}, 1)}
	l.obs.add(o)
	return o
}

// Observer receives a ledger's events; see Ledger.Observe. Next is meant
// for one goroutine.
type Observer struct {
	l      *Ledger
	limit  int
	signal chan struct{}

	mu    sync.Mutex
	queue []Event
	err   error // ErrObserverOverflow or ErrClosed, reported once the queue is empty
}

// Next waits for events and returns every queued one, oldest first. It
// returns ErrObserverOverflow once the observer fell behind, ErrClosed
// once the ledger closed (after the last events) or the observer was
// closed, and the context's error.
func (o *Observer) Next(ctx context.Context) ([]Event, error) {
	for {
		o.mu.Lock()
		q, err := o.queue, o.err
		o.queue = nil
		o.mu.Unlock()
		if len(q) > 0 {
			return q, nil
		}
		if err != nil {
			return nil, err
		}
		select {
		case <-o.signal:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close stops the observer; Next then returns ErrClosed.
func (o *Observer) Close() {
	o.l.obs.remove(o)
	o.stop(ErrClosed)
}

// push queues ev, or drops the observer when it is full. It reports
// whether the observer is still attached. Callers hold observers.mu.
func (o *Observer) push(ev Event) bool {
	o.mu.Lock()
	ok := o.err == nil
	if ok && len(o.queue) >= o.limit {
		o.queue, o.err, ok = nil, ErrObserverOverflow, false
	} else if ok {
		o.queue = append(o.queue, ev)
	}
	o.mu.Unlock()
	select {
	case o.signal <- struct{}{}:
	default:
	}
	return ok
}

func (o *Observer) stop(err error) {
	o.mu.Lock()
	if o.err == nil {
		o.err = err
	}
	o.mu.Unlock()
	select {
	case o.signal <- struct{}{}:
	default:
	}
}

// observers is the set of a ledger's observers. active lets the hot path
// skip building events with one atomic load when there are none.
type observers struct {
	active atomic.Bool
	mu     sync.Mutex
	set    []*Observer
	closed bool
}

func (ob *observers) add(o *Observer) {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.closed {
		o.stop(ErrClosed)
		return
	}
	ob.set = append(ob.set, o)
	ob.active.Store(true)
}

func (ob *observers) remove(o *Observer) {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	ob.set = slices.DeleteFunc(ob.set, func(x *Observer) bool { return x == o })
	ob.active.Store(len(ob.set) > 0)
}

// publish hands ev to every observer, dropping those that fell behind.
// It never blocks on an observer.
func (ob *observers) publish(ev Event) {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	ob.set = slices.DeleteFunc(ob.set, func(o *Observer) bool { return !o.push(ev) })
	ob.active.Store(len(ob.set) > 0)
}

func (ob *observers) closeAll() {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	ob.closed = true
	for _, o := range ob.set {
		o.stop(ErrClosed)
	}
	ob.set = nil
	ob.active.Store(false)
}
