package devchain

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/ferry-sh/ferry/pkg/ledger"
)

// Clock control method names. surfnet_timeTravel, surfnet_pauseClock and
// surfnet_resumeClock are surfpool's (same parameters, an EpochInfo
// result); the rest are ferry's own (surfpool has no RPC method for block
// production modes, mining or a relative advance).
const (
	MethodTimeTravel   = "surfnet_timeTravel"
	MethodPauseClock   = "surfnet_pauseClock"
	MethodResumeClock  = "surfnet_resumeClock"
	FerryTimeTravel    = "ferry_timeTravel"
	FerryPauseClock    = "ferry_pauseClock"
	FerryResumeClock   = "ferry_resumeClock"
	MethodAdvanceClock = "ferry_advanceClock"
	MethodSetBlockMode = "ferry_setBlockProductionMode"
	MethodMineBlocks   = "ferry_mineBlocks"
	MethodGetClock     = "ferry_getClock"
)

// maxTimeTravelUnixMs is the latest Unix time (ms) a time.Time travel can
// reach without overflowing a time.Duration from now.
const maxTimeTravelUnixMs int64 = math.MaxInt64 / int64(time.Millisecond) / 2

// TimeTravelRequest is surfpool's TimeTravelConfig: exactly one target.
type TimeTravelRequest struct {
	// AbsoluteSlot is the slot to open next.
	AbsoluteSlot *uint64 `json:"absoluteSlot,omitempty" doc:"Slot to travel to (the next slot opens there)."`
	// AbsoluteEpoch travels to the first slot of the epoch.
	AbsoluteEpoch *uint64 `json:"absoluteEpoch,omitempty" doc:"Epoch to travel to (its first slot)."`
	// AbsoluteTimestamp is a Unix time in milliseconds, as surfpool's.
	AbsoluteTimestamp *uint64 `json:"absoluteTimestamp,omitempty" doc:"Unix time to travel to, in milliseconds."`
}

// AdvanceClockRequest moves a node's clock forward by a span: exactly one
// of Seconds and Slots.
type AdvanceClockRequest struct {
	Seconds *uint64 `json:"seconds,omitempty" doc:"Seconds to move the clock forward (the slots they hold are skipped)."`
	Slots   *uint64 `json:"slots,omitempty" doc:"Slots to skip (the clock moves by their duration)."`
}

// EpochInfo is getEpochInfo's result, what surfpool's clock methods
// answer.
type EpochInfo struct {
	AbsoluteSlot     uint64 `json:"absoluteSlot" doc:"The working slot."`
	BlockHeight      uint64 `json:"blockHeight" doc:"Its block height."`
	Epoch            uint64 `json:"epoch" doc:"Its epoch."`
	SlotIndex        uint64 `json:"slotIndex" doc:"Its index in the epoch."`
	SlotsInEpoch     uint64 `json:"slotsInEpoch" doc:"Slots per epoch."`
	TransactionCount uint64 `json:"transactionCount" doc:"Transactions processed, all time."`
}

// ClockView is where a node's clock stands (ferry's clock methods).
type ClockView struct {
	Node string `json:"node" doc:"The chain node: base or ephemeral."`
	EpochInfo
	// UnixTimestamp is the Clock sysvar's time, what programs (and the
	// transfer queue's due times) are judged against.
	UnixTimestamp int64 `json:"unixTimestamp" doc:"Clock sysvar time of the working slot, Unix seconds."`
	// OffsetSeconds is how far the chain's time is ahead of the wall
	// clock (time travel, minus time spent paused).
	OffsetSeconds int64 `json:"offsetSeconds" doc:"How far the chain's time is ahead of the wall clock, whole seconds."`
	Paused        bool  `json:"paused" doc:"The clock stands still (pauseClock)."`
	// BlockProductionMode is clock, transaction or manual.
	BlockProductionMode string `json:"blockProductionMode" doc:"When blocks are produced: clock, transaction or manual."`
}

func (n *Node) view(st ledger.ClockState) *ClockView {
	return &ClockView{
		Node: n.name,
		EpochInfo: EpochInfo{
			AbsoluteSlot: st.AbsoluteSlot, BlockHeight: st.BlockHeight, Epoch: st.Epoch, SlotIndex: st.SlotIndex,
			SlotsInEpoch: st.SlotsInEpoch, TransactionCount: st.TransactionCount,
		},
		UnixTimestamp: st.UnixTimestamp, OffsetSeconds: int64(st.Offset / time.Second), Paused: st.Paused, BlockProductionMode: st.Mode.String(),
	}
}

// clockDone turns a clock control's outcome into the cheatcode's: a
// target in the past is invalid params, anything else the ledger's
// failure. It logs what changed.
func (n *Node) clockDone(method string, st ledger.ClockState, err error, args ...any) (*ClockView, error) {
	if errors.Is(err, ledger.ErrTimeTravelPast) || errors.Is(err, ledger.ErrTimeTravelTooFar) {
		return nil, invalid("Invalid params: %v", err)
	}
	if err != nil {
		return nil, internal(method, err)
	}
	v := n.view(st)
	n.log.Info("cheatcode", append([]any{"method", method, "slot", v.AbsoluteSlot, "unixTimestamp", v.UnixTimestamp,
		"paused", v.Paused, "blockProductionMode", v.BlockProductionMode}, args...)...)
	return v, nil
}

// Clock reports the node's clock.
func (n *Node) Clock() *ClockView { return n.view(n.l.ClockState()) }

// TimeTravel moves the node to a later slot, epoch or Unix time: the
// working slot ends and the next opens at the target, with the Clock
// sysvar, epoch and block time moved together (see
// ledger.TimeTravelToSlot). A target not after the working slot's is
// refused.
func (n *Node) TimeTravel(ctx context.Context, req TimeTravelRequest) (*ClockView, error) {
	set := 0
	for _, p := range []*uint64{req.AbsoluteSlot, req.AbsoluteEpoch, req.AbsoluteTimestamp} {
		if p != nil {
			set++
		}
	}
	if set != 1 {
		return nil, invalid("Invalid params: time travel takes exactly one of `absoluteSlot`, `absoluteEpoch`, `absoluteTimestamp`")
	}
	var st ledger.ClockState
	var err error
	switch {
	case req.AbsoluteSlot != nil:
		st, err = n.l.TimeTravelToSlot(ctx, *req.AbsoluteSlot)
		return n.clockDone("timeTravel", st, err, "absoluteSlot", *req.AbsoluteSlot)
	case req.AbsoluteEpoch != nil:
		per := n.l.Config().SlotsPerEpoch
		if *req.AbsoluteEpoch > math.MaxUint64/per {
			return nil, invalid("Invalid params: epoch %d is beyond the last slot", *req.AbsoluteEpoch)
		}
		st, err = n.l.TimeTravelToSlot(ctx, *req.AbsoluteEpoch*per)
		return n.clockDone("timeTravel", st, err, "absoluteEpoch", *req.AbsoluteEpoch)
	default:
		ms := *req.AbsoluteTimestamp
		if ms > uint64(maxTimeTravelUnixMs) {
			return nil, invalid("Invalid params: timestamp %d ms is out of range", ms)
		}
		st, err = n.l.TimeTravelToTime(ctx, time.UnixMilli(int64(ms)))
		return n.clockDone("timeTravel", st, err, "absoluteTimestamp", ms)
	}
}

// MaxAdvanceSeconds bounds AdvanceClock's Seconds (about 290 years: the
// span must fit a time.Duration).
const MaxAdvanceSeconds = uint64(math.MaxInt64/int64(time.Second)) / 2

// AdvanceClock moves the node's clock forward by seconds or slots. On the
// ephemeral node it is how delayed private payouts become due: the
// transfer queue's ready times are judged against the rollup's Clock
// sysvar, and the local validator's crank pays what is due.
func (n *Node) AdvanceClock(ctx context.Context, req AdvanceClockRequest) (*ClockView, error) {
	switch {
	case (req.Seconds == nil) == (req.Slots == nil):
		return nil, invalid("Invalid params: advance takes exactly one of `seconds`, `slots`")
	case req.Seconds != nil:
		s := *req.Seconds
		if s == 0 || s > MaxAdvanceSeconds {
			return nil, invalid("Invalid params: seconds must be 1..%d (got %d)", MaxAdvanceSeconds, s)
		}
		st, err := n.l.AdvanceClock(ctx, time.Duration(s)*time.Second)
		return n.clockDone("advanceClock", st, err, "seconds", s)
	default:
		k := *req.Slots
		cur := n.l.ClockState().AbsoluteSlot
		if k == 0 || k > math.MaxUint64-cur {
			return nil, invalid("Invalid params: slots must be 1..%d (got %d)", math.MaxUint64-cur, k)
		}
		st, err := n.l.TimeTravelToSlot(ctx, cur+k)
		return n.clockDone("advanceClock", st, err, "slots", k)
	}
}

// PauseClock stops the node's clock (ledger.PauseClock).
func (n *Node) PauseClock(ctx context.Context) (*ClockView, error) {
	st, err := n.l.PauseClock(ctx)
	return n.clockDone("pauseClock", st, err)
}

// ResumeClock restarts the node's clock where it stopped.
func (n *Node) ResumeClock(ctx context.Context) (*ClockView, error) {
	st, err := n.l.ResumeClock(ctx)
	return n.clockDone("resumeClock", st, err)
}

// SetBlockMode switches block production: "clock" (a block per slot
// tick, the default), "transaction" (a block per transaction) or
// "manual" (blocks only when mined).
func (n *Node) SetBlockMode(ctx context.Context, mode string) (*ClockView, error) {
	m, err := ledger.ParseBlockMode(mode)
	if err != nil {
		return nil, invalid("Invalid params: %v", err)
	}
	st, err := n.l.SetBlockMode(ctx, m)
	return n.clockDone("setBlockProductionMode", st, err)
}

// MineBlocks produces count blocks now (1..ledger.MaxMineBlocks), in any
// mode.
func (n *Node) MineBlocks(ctx context.Context, count int) (*ClockView, error) {
	if count < 1 || count > ledger.MaxMineBlocks {
		return nil, invalid("Invalid params: count must be 1..%d (got %d)", ledger.MaxMineBlocks, count)
	}
	st, err := n.l.MineBlocks(ctx, count)
	return n.clockDone("mineBlocks", st, err, "count", count)
}

// clockMethods are the clock controls as JSON-RPC methods.
func (n *Node) clockMethods() []Method {
	epochInfo := func(v *ClockView, err error) (Result, error) {
		if err != nil {
			return Result{}, err
		}
		return Result{Value: v.EpochInfo}, nil
	}
	view := func(v *ClockView, err error) (Result, error) {
		if err != nil {
			return Result{}, err
		}
		return Result{Value: v}, nil
	}
	noParams := func(do func(context.Context) (*ClockView, error)) func(context.Context, Params) (Result, error) {
		return func(ctx context.Context, p Params) (Result, error) {
			if err := p.Count(0, 0); err != nil {
				return Result{}, err
			}
			return epochInfo(do(ctx))
		}
	}
	return []Method{
		{Names: []string{MethodTimeTravel, FerryTimeTravel}, Call: func(ctx context.Context, p Params) (Result, error) {
			var req TimeTravelRequest
			if err := countConfig(p, &req); err != nil {
				return Result{}, err
			}
			return epochInfo(n.TimeTravel(ctx, req))
		}},
		{Names: []string{MethodPauseClock, FerryPauseClock}, Call: noParams(n.PauseClock)},
		{Names: []string{MethodResumeClock, FerryResumeClock}, Call: noParams(n.ResumeClock)},
		{Names: []string{MethodAdvanceClock}, Call: func(ctx context.Context, p Params) (Result, error) {
			if err := p.Count(1, 1); err != nil {
				return Result{}, err
			}
			var req AdvanceClockRequest
			if err := decodeObject(p, 0, &req); err != nil {
				return Result{}, err
			}
			return view(n.AdvanceClock(ctx, req))
		}},
		{Names: []string{MethodSetBlockMode}, Call: func(ctx context.Context, p Params) (Result, error) {
			if err := p.Count(1, 1); err != nil {
				return Result{}, err
			}
			var mode string
			if err := p.Decode(0, &mode); err != nil {
				return Result{}, err
			}
			return view(n.SetBlockMode(ctx, mode))
		}},
		{Names: []string{MethodMineBlocks}, Call: func(ctx context.Context, p Params) (Result, error) {
			if err := p.Count(0, 1); err != nil {
				return Result{}, err
			}
			count := uint64(1)
			if p.Has(0) {
				if err := p.Decode(0, &count); err != nil {
					return Result{}, err
				}
			}
			if count > uint64(ledger.MaxMineBlocks) {
				return Result{}, invalid("Invalid params: count must be 1..%d (got %d)", ledger.MaxMineBlocks, count)
			}
			return view(n.MineBlocks(ctx, int(count)))
		}},
		{Names: []string{MethodGetClock}, Call: func(_ context.Context, p Params) (Result, error) {
			if err := p.Count(0, 0); err != nil {
				return Result{}, err
			}
			return Result{Value: n.Clock()}, nil
		}},
	}
}
