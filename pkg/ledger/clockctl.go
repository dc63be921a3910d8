package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/ferry-sh/ferry/pkg/spl"
)

// This file is the development chain's control of the slot clock: time
// travel, pausing, block production modes and mining. It reaches the slot
// loop only through clockControl (consulted by loop and openSlot) and the
// loop's privileged operations (do), so the rest of the ledger is
// unaware of it.

// BlockMode is when the slot loop produces blocks.
type BlockMode uint8

// Block production modes.
const (
	// BlockModeClock ends a slot on every tick of the slot clock
	// (Config.SlotDuration), as a validator does. The default.
	BlockModeClock BlockMode = iota
	// BlockModeTransaction ends a slot after every transaction that
	// lands, so each transaction has a block of its own; nothing is
	// produced while no transactions arrive.
	BlockModeTransaction
	// BlockModeManual produces blocks only when MineBlocks (or a time
	// travel) asks for them.
	BlockModeManual
)

// MaxMineBlocks is the most blocks one MineBlocks call produces: each is a
// durable commit, and 1 024 covers the 150-block life of a blockhash
// several times over.
const MaxMineBlocks = 1024

// String is the mode's name as the dev methods spell it.
func (m BlockMode) String() string {
	switch m {
	case BlockModeClock:
		return "clock"
	case BlockModeTransaction:
		return "transaction"
	case BlockModeManual:
		return "manual"
	}
	return fmt.Sprintf("blockmode(%d)", uint8(m))
}

// ParseBlockMode reads a mode name ("clock", "transaction" or "manual").
func ParseBlockMode(s string) (BlockMode, error) {
	for _, m := range []BlockMode{BlockModeClock, BlockModeTransaction, BlockModeManual} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown block production mode %q (want clock, transaction or manual)", s)
}

// ErrTimeTravelPast refuses a time travel to a slot or time that is not
// after the working slot's: slots only increase and the Clock sysvar does
// not go back.
var ErrTimeTravelPast = errors.New("cannot travel to the past")

// ErrTimeTravelTooFar refuses a jump whose time span does not fit a
// time.Duration (about 146 years of slots).
var ErrTimeTravelTooFar = errors.New("cannot travel that far")

// clockControl is the development clock state. The chain's time is the
// wall clock (Config.Now) plus offset; while paused it stands still at
// pausedAt plus offset. nextSlot, when set, is the number the next slot
// opens at (a time travel skips the slots in between).
type clockControl struct {
	mu       sync.Mutex
	offset   time.Duration
	paused   bool
	pausedAt time.Time
	mode     BlockMode
	nextSlot uint64
}

// chainNow is the chain's current time.
func (l *Ledger) chainNow() time.Time {
	c := &l.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused {
		return c.pausedAt.Add(c.offset)
	}
	return l.cfg.Now().Add(c.offset)
}

// nextSlotAfter is the slot to open on top of parent, and its Unix time:
// never earlier than the parent's, so the Clock sysvar does not go back
// (for example after a restart that forgot a time travel).
func (l *Ledger) nextSlotAfter(parent *blockHeader) (uint64, int64) {
	now := l.chainNow().Unix()
	c := &l.clock
	c.mu.Lock()
	slot := parent.slot + 1
	if c.nextSlot > slot {
		slot = c.nextSlot
	}
	c.nextSlot = 0
	c.mu.Unlock()
	return slot, max(now, parent.time)
}

// tickEndsSlot reports whether a tick of the slot clock ends the working
// slot: only in BlockModeClock, and not while the clock is paused.
func (l *Ledger) tickEndsSlot() bool {
	c := &l.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mode == BlockModeClock && !c.paused
}

func (l *Ledger) blockMode() BlockMode {
	l.clock.mu.Lock()
	defer l.clock.mu.Unlock()
	return l.clock.mode
}

// run executes the queued transactions as the block mode wants: in
// BlockModeTransaction each landed transaction ends its slot.
func (l *Ledger) run() {
	if l.blockMode() != BlockModeTransaction {
		l.drain()
		return
	}
	l.qmu.Lock()
	batch := l.queue
	l.queue = nil
	l.qmu.Unlock()
	for _, p := range batch {
		// Transactions that landed before the switch to this mode get
		// their own block first.
		if len(l.working.txs) > 0 {
			l.freeze()
		}
		l.mu.Lock()
		l.refreshIdleClock()
		out := l.executeAndCommit(p)
		slot := l.working.slot
		l.mu.Unlock()
		if l.obs.active.Load() {
			l.publishProcessed(slot, []outcome{out})
		}
		if out.rec != nil {
			l.freeze()
		}
		p.done <- out
		<-l.sem
	}
	if len(batch) > 0 {
		l.broadcast()
	}
}

// refreshIdleClock moves an empty working slot's time to now. Without a
// ticking clock the working slot may have opened long ago; its
// transactions should see the time they run at. Callers hold mu.
func (l *Ledger) refreshIdleClock() {
	w := l.working
	if len(w.txs) > 0 || len(w.applied) > 0 {
		return
	}
	now := max(l.chainNow().Unix(), w.time)
	if now == w.time {
		return
	}
	w.time = now
	l.put(spl.SysvarClockID, sysvarAccount(l.cfg.Rent, ClockSysvarData(w.slot, l.genesisTime, w.slot/l.cfg.SlotsPerEpoch, now)))
}

// ClockState is where the chain's clock stands: the working slot, its
// Clock time and how blocks are being produced.
type ClockState struct {
	EpochInfo
	// UnixTimestamp is the Clock sysvar's time of the working slot.
	UnixTimestamp int64
	// Offset is how far the chain's time is ahead of the wall clock.
	Offset time.Duration
	// Paused is true while the clock stands still (PauseClock).
	Paused bool
	// Mode is the block production mode.
	Mode BlockMode
}

// ClockState reports the clock at processed commitment.
func (l *Ledger) ClockState() ClockState {
	info := l.EpochInfo(Processed)
	l.mu.RLock()
	unix := l.working.time
	l.mu.RUnlock()
	// mu before clock.mu, as openSlot takes them.
	c := &l.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	return ClockState{EpochInfo: info, UnixTimestamp: unix, Offset: c.offset, Paused: c.paused, Mode: c.mode}
}

// TimeTravelToSlot ends the working slot and opens slot next, skipping
// the slots in between (they are reported as skipped, as a warp does).
// The chain's time moves forward by the skipped slots' duration
// (Config.SlotDuration each). Like Agave's blockhash queue, blockhash age
// counts blocks, not slots: the jump is one block. It waits until the
// block it ended is durable. A slot not after the working slot is
// ErrTimeTravelPast.
func (l *Ledger) TimeTravelToSlot(ctx context.Context, next uint64) (ClockState, error) {
	return l.travel(ctx, func(cur uint64, _ time.Time) (uint64, time.Duration, error) {
		if next <= cur {
			return 0, 0, fmt.Errorf("%w: slot %d is not after the working slot %d", ErrTimeTravelPast, next, cur)
		}
		if next-cur > uint64(math.MaxInt64/2/int64(l.cfg.SlotDuration)) {
			return 0, 0, fmt.Errorf("%w: slot %d is %d slots ahead", ErrTimeTravelTooFar, next, next-cur)
		}
		return next, time.Duration(next-cur) * l.cfg.SlotDuration, nil
	})
}

// TimeTravelToTime ends the working slot and opens the next one at time
// t, skipping as many slots as the time span holds (at least one). A time
// not after the chain's now is ErrTimeTravelPast.
func (l *Ledger) TimeTravelToTime(ctx context.Context, t time.Time) (ClockState, error) {
	return l.travel(ctx, func(cur uint64, now time.Time) (uint64, time.Duration, error) {
		if !t.After(now) {
			return 0, 0, fmt.Errorf("%w: %s is not after the chain's time %s", ErrTimeTravelPast, t.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
		}
		d := t.Sub(now)
		return cur + max(1, uint64(d/l.cfg.SlotDuration)), d, nil
	})
}

// AdvanceClock moves the chain's time forward by d (a relative
// TimeTravelToTime).
func (l *Ledger) AdvanceClock(ctx context.Context, d time.Duration) (ClockState, error) {
	if d <= 0 {
		return ClockState{}, fmt.Errorf("%w: advance by %s", ErrTimeTravelPast, d)
	}
	return l.travel(ctx, func(cur uint64, _ time.Time) (uint64, time.Duration, error) {
		return cur + max(1, uint64(d/l.cfg.SlotDuration)), d, nil
	})
}

// travel runs a time travel on the slot loop: plan picks the next slot
// and how far the clock moves from the working slot and the chain's now.
// It reports the clock as the travel left it, the target slot open: by
// the time the block it ended is durable, a running clock may have moved
// on (a caller travelling to an epoch's first slot would read the next).
func (l *Ledger) travel(ctx context.Context, plan func(cur uint64, now time.Time) (uint64, time.Duration, error)) (ClockState, error) {
	var frozen uint64
	var landed ClockState
	var ferr error
	err := l.do(ctx, func() {
		l.mu.RLock()
		cur, failure := l.working.slot, l.failure
		l.mu.RUnlock()
		if failure != nil {
			ferr = failure
			return
		}
		next, d, err := plan(cur, l.chainNow())
		if err != nil {
			ferr = err
			return
		}
		l.clock.mu.Lock()
		l.clock.offset += d
		l.clock.nextSlot = next
		l.clock.mu.Unlock()
		frozen = cur
		l.freeze()
		landed = l.ClockState()
	})
	if err == nil {
		err = ferr
	}
	if err != nil {
		return ClockState{}, fmt.Errorf("time travel: %w", err)
	}
	if l.travelled != nil {
		l.travelled()
	}
	if err := l.waitConfirmed(ctx, frozen); err != nil {
		return ClockState{}, fmt.Errorf("time travel: %w", err)
	}
	return landed, nil
}

// PauseClock stops the chain's time and the slot clock: no block is
// produced by the clock and the time stands still until ResumeClock.
// Transactions still execute in the working slot (processed) and land in
// a block when one is produced (ResumeClock, MineBlocks, a time travel,
// or each transaction in BlockModeTransaction). Pausing a paused clock
// changes nothing.
func (l *Ledger) PauseClock(ctx context.Context) (ClockState, error) {
	err := l.do(ctx, func() {
		c := &l.clock
		c.mu.Lock()
		if !c.paused {
			c.paused, c.pausedAt = true, l.cfg.Now()
		}
		c.mu.Unlock()
	})
	if err != nil {
		return ClockState{}, fmt.Errorf("pause clock: %w", err)
	}
	return l.ClockState(), nil
}

// ResumeClock restarts a paused clock where it stopped: the time spent
// paused does not count.
func (l *Ledger) ResumeClock(ctx context.Context) (ClockState, error) {
	err := l.do(ctx, func() {
		c := &l.clock
		c.mu.Lock()
		if c.paused {
			c.offset -= l.cfg.Now().Sub(c.pausedAt)
			c.paused = false
		}
		c.mu.Unlock()
	})
	if err != nil {
		return ClockState{}, fmt.Errorf("resume clock: %w", err)
	}
	return l.ClockState(), nil
}

// SetBlockMode switches the block production mode. Transactions already
// in the working slot stay there until the new mode produces a block (in
// BlockModeTransaction: before the next transaction executes).
func (l *Ledger) SetBlockMode(ctx context.Context, m BlockMode) (ClockState, error) {
	if m > BlockModeManual {
		return ClockState{}, fmt.Errorf("set block mode: %w", fmt.Errorf("unknown block production mode %d", m))
	}
	err := l.do(ctx, func() {
		l.clock.mu.Lock()
		l.clock.mode = m
		l.clock.mu.Unlock()
	})
	if err != nil {
		return ClockState{}, fmt.Errorf("set block mode: %w", err)
	}
	return l.ClockState(), nil
}

// MineBlocks ends the working slot n times in a row (1 ≤ n ≤
// MaxMineBlocks), whatever the mode, and waits until the last block is
// durable.
func (l *Ledger) MineBlocks(ctx context.Context, n int) (ClockState, error) {
	if n < 1 || n > MaxMineBlocks {
		return ClockState{}, fmt.Errorf("mine blocks: %d blocks is out of range 1..%d", n, MaxMineBlocks)
	}
	var last uint64
	var ferr error
	err := l.do(ctx, func() {
		for i := 0; i < n; i++ {
			l.mu.Lock()
			last, ferr = l.working.slot, l.failure
			l.refreshIdleClock()
			l.mu.Unlock()
			if ferr != nil {
				return
			}
			l.freeze()
		}
	})
	if err == nil {
		err = ferr
	}
	if err != nil {
		return ClockState{}, fmt.Errorf("mine blocks: %w", err)
	}
	if err := l.waitConfirmed(ctx, last); err != nil {
		return ClockState{}, fmt.Errorf("mine blocks: %w", err)
	}
	return l.ClockState(), nil
}
