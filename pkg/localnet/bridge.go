package localnet

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// bridge is the local validator. One goroutine (run) owns all of its
// state; everything it must remember across restarts lives in the two
// ledgers (see the package documentation).
type bridge struct {
	p       *Pair
	log     *slog.Logger
	key     ed25519.PrivateKey
	me      solana.PublicKey
	syncReq chan chan error
	// ctlReq carries rollup controls (controls.go) to the bridge's
	// goroutine, which owns all of its state.
	ctlReq chan controlRequest
	// trace, while a control runs, collects the transactions sent.
	trace *[]devchain.RollupTx

	// scanned is how far base history has been scanned without finding
	// work; it only saves rescanning and is rebuilt from the persisted
	// cursor after a restart.
	scanned magic.Position
	// live holds the confirmed base blocks the subscription delivered and
	// baseToEphemeral has not walked yet, reduced to their successful eSPL
	// transactions, the only ones the validator acts on. From liveFrom
	// (the first slot delivered; 0 before any) up to liveTip every slot
	// was delivered, so a slot missing from live has no such transaction;
	// older slots (the catch-up after a restart) are read from history.
	// Walking the delivered records spares re-reading and decoding every
	// base transaction from disk.
	live     map[uint64][]baseRecord
	liveFrom uint64
	liveTip  uint64
	// syncing is set while sync runs (Sync and the rollup controls): its
	// passes also walk confirmed slots that the subscription has not
	// delivered yet.
	syncing bool
	// failing counts the failed attempts of intents, to throttle logs.
	failing map[uint64]int
	// lastErr and errCount throttle the logging of a pass error that
	// repeats on every block.
	lastErr  string
	errCount int
}

// reportPassError logs a failed pass: a new error at once, a repeating one
// every hundredth time.
func (b *bridge) reportPassError(err error) {
	if s := err.Error(); s != b.lastErr {
		b.lastErr, b.errCount = s, 0
	}
	if b.errCount%100 == 0 {
		b.log.Warn("validator pass failed", "err", err, "repeats", b.errCount)
	}
	b.errCount++
}

func newBridge(p *Pair) *bridge {
	return &bridge{p: p, log: p.cfg.Logger.With("component", "validator"), key: p.identity, me: p.Identity(),
		syncReq: make(chan chan error), ctlReq: make(chan controlRequest), failing: map[uint64]int{},
		live: map[uint64][]baseRecord{}}
}

// errRetry marks a step that could not complete now (a transaction did
// not land, e.g. its blockhash clashed); the next pass retries it.
var errRetry = errors.New("retry on the next pass")

// run is the bridge's loop: a pass on every committed block of either
// ledger and on every crank tick, and Sync requests.
func (b *bridge) run(ctx context.Context) {
	var baseBlocks, erBlocks <-chan *ledger.Block
	var tick <-chan time.Time
	if !b.p.cfg.ManualSlots {
		baseBlocks = b.p.Base.Subscribe(ctx)
		erBlocks = b.p.Ephemeral.Subscribe(ctx)
		t := time.NewTicker(b.p.cfg.CrankInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			b.saveScanned()
			return
		case blk, ok := <-baseBlocks:
			if !ok {
				baseBlocks = nil
				continue
			}
			b.deliver(blk)
		case _, ok := <-erBlocks:
			if !ok {
				erBlocks = nil
				continue
			}
		case <-tick:
		case reply := <-b.syncReq:
			reply <- b.sync(ctx)
			continue
		case req := <-b.ctlReq:
			req.reply <- b.runControl(ctx, req.fn)
			continue
		}
		b.drainBase(baseBlocks)
		drain(erBlocks)
		if _, err := b.pass(ctx); err != nil && ctx.Err() == nil {
			b.reportPassError(err)
		} else {
			b.lastErr, b.errCount = "", 0
		}
	}
}

// shutdownFlush bounds how long saving the scan position may delay a
// shutdown.
const shutdownFlush = 5 * time.Second

// saveScanned records, at shutdown, how far base history was scanned
// without work, so the next start does not read those blocks again (the
// ephemeral ledger is still open: the pair closes it after the bridge).
func (b *bridge) saveScanned() {
	st, err := b.bridgeState()
	if err != nil || !st.Cursor.Less(b.scanned) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownFlush)
	defer cancel()
	if err := b.flushCursor(ctx, b.scanned); err != nil {
		b.log.Warn("could not save the validator's base cursor at shutdown", "err", err)
	}
}

// drainBase takes every base block already delivered without blocking:
// one pass serves them all.
func (b *bridge) drainBase(ch <-chan *ledger.Block) {
	for ch != nil {
		select {
		case blk, ok := <-ch:
			if !ok {
				return
			}
			b.deliver(blk)
		default:
			return
		}
	}
}

// deliver records a confirmed base block from the subscription.
func (b *bridge) deliver(blk *ledger.Block) {
	if b.liveFrom == 0 {
		b.liveFrom = blk.Slot
	}
	b.liveTip = max(b.liveTip, blk.Slot)
	if blk.Slot <= b.scanned.Slot {
		return // walked already (read from history by Sync)
	}
	if txs := esplRecords(blk.Transactions); len(txs) > 0 {
		b.live[blk.Slot] = txs
	}
}

// drain empties a block channel without blocking: one pass serves them
// all.
func drain(ch <-chan *ledger.Block) {
	for ch != nil {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// maxSyncPasses bounds Sync against a bridge that never settles (a bug).
const maxSyncPasses = 10_000

// sync runs passes until one finds nothing to do, making the work of each
// pass durable first (advancing slots in manual mode, waiting for the
// slot clocks otherwise).
func (b *bridge) sync(ctx context.Context) error {
	b.syncing = true
	defer func() { b.syncing = false }()
	for i := 0; i < maxSyncPasses; i++ {
		if err := b.settle(ctx); err != nil {
			return err
		}
		work, err := b.pass(ctx)
		if err != nil && !errors.Is(err, errRetry) {
			return err
		}
		if !work && err == nil {
			return nil
		}
	}
	return fmt.Errorf("sync: the validator did not settle after %d passes", maxSyncPasses)
}

// settle makes everything processed so far confirmed on both ledgers.
func (b *bridge) settle(ctx context.Context) error {
	for _, l := range []*ledger.Ledger{b.p.Base, b.p.Ephemeral} {
		target := l.Slot(ledger.Processed)
		// A node whose clock is paused, or that produces blocks only per
		// transaction or on demand (the dev clock controls), would not end
		// the slot by itself: the validator ends it, as in manual mode.
		if st := l.ClockState(); b.p.cfg.ManualSlots || st.Paused || st.Mode != ledger.BlockModeClock {
			if _, err := l.AdvanceSlot(ctx); err != nil {
				return err
			}
			continue
		}
		// The working slot freezes at the next tick; wait for it to be
		// durable.
		if err := l.WaitForSlot(ctx, target, ledger.Confirmed); err != nil {
			return err
		}
	}
	return nil
}

// pass does all the work currently visible: base → ephemeral (clones and
// post-delegation actions), ephemeral → base (intents), the crank, and
// accepting executed intents. It reports whether it did anything.
func (b *bridge) pass(ctx context.Context) (bool, error) {
	var work bool
	var errs []error
	for _, step := range []func(context.Context) (bool, error){b.baseToEphemeral, b.ephemeralToBase, b.crank, b.accept} {
		w, err := step(ctx)
		work = work || w
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
	}
	return work, errors.Join(errs...)
}

// computeLimit asks for the maximum compute budget: the validator's
// transactions bundle several instructions with CPIs.
func computeLimit() txwire.Instruction {
	return txwire.Instruction{ProgramID: spl.ComputeBudgetProgramID, Data: binary.LittleEndian.AppendUint32([]byte{2}, runtime.MaxComputeUnitLimit)}
}

// send signs ixs with the validator identity (fee payer) and processes
// the transaction on l. A transaction that did not land returns an error
// (errRetry for a duplicate of one already landed in this blockhash's
// lifetime); a landed one returns its record, failed or not.
func (b *bridge) send(ctx context.Context, l *ledger.Ledger, ixs ...txwire.Instruction) (*ledger.TxRecord, error) {
	return b.sendAs(ctx, stepValidator, l, ixs...)
}

// sendAs is send, labelling the transaction step (what it does) for the
// trace of a rollup control.
func (b *bridge) sendAs(ctx context.Context, step string, l *ledger.Ledger, ixs ...txwire.Instruction) (*ledger.TxRecord, error) {
	bh, _ := l.LatestBlockhash(ledger.Processed)
	msg, err := txwire.Compile(b.me, append([]txwire.Instruction{computeLimit()}, ixs...), bh.Blockhash)
	if err != nil {
		return nil, fmt.Errorf("compile %s transaction: %w", l.Name(), err)
	}
	tx := txwire.NewUnsigned(msg)
	if err := tx.Sign(b.key); err != nil {
		return nil, fmt.Errorf("sign %s transaction: %w", l.Name(), err)
	}
	rec, err := l.Process(ctx, tx.Bytes())
	if errors.Is(err, runtime.ErrAlreadyProcessed) {
		return nil, errRetry
	}
	if err != nil {
		return nil, fmt.Errorf("%s transaction: %w", l.Name(), err)
	}
	b.record(step, l, rec)
	return rec, nil
}

// failedAt reports whether a landed transaction failed at instruction i
// (counting the validator's instructions, after the compute budget one)
// with want.
func failedAt(rec *ledger.TxRecord, i int, want *runtime.InstructionError) bool {
	return rec.Err != nil && rec.Err.Is(runtime.InstructionFailed(i+1, want))
}

func logsOf(rec *ledger.TxRecord) []string {
	if rec == nil || rec.Meta == nil {
		return nil
	}
	return rec.Meta.Logs
}
