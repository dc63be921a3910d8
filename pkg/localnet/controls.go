package localnet

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger"
	esplprog "github.com/ferry-sh/ferry/pkg/ledger/programs/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// The Pair is the local validator's side of the rollup controls.
var _ devchain.RollupController = (*Pair)(nil)

// Steps of the transactions a control's trace lists (devchain.RollupTx).
const (
	stepValidator  = "validator"
	stepCrank      = "crank"
	stepPayout     = "payout"
	stepCommit     = "commit"
	stepUndelegate = "undelegate"
	stepAccept     = "acceptIntents"
)

// intentStep names the base transaction of an intent.
func intentStep(it magic.Intent) string {
	switch it.Kind {
	case magic.KindCommit:
		return stepCommit
	case magic.KindCommitAndUndelegate:
		return stepUndelegate
	}
	if it.Action != nil {
		if _, err := esplprog.DecodeExecuteReady(it.Action.Instruction()); err == nil {
			return stepPayout
		}
	}
	return stepValidator
}

// controlRequest is a control to run on the bridge's goroutine.
type controlRequest struct {
	fn    func(ctx context.Context) error
	reply chan error
}

// control runs fn on the bridge's goroutine and waits for it. The bridge
// keeps doing its own work around it; fn usually ends with sync, so what
// it started is confirmed on both ledgers when control returns.
func (p *Pair) control(ctx context.Context, fn func(ctx context.Context) error) error {
	req := controlRequest{fn: fn, reply: make(chan error, 1)}
	select {
	case p.bridge.ctlReq <- req:
	case <-p.done:
		return ledger.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-req.reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runControl runs a control on the bridge's goroutine, for at most
// Config.ControlTimeout. Its context is the bridge's, not the caller's: a
// control that has started writing finishes its sync even if the caller
// stops waiting.
func (b *bridge) runControl(ctx context.Context, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, b.p.cfg.ControlTimeout)
	defer cancel()
	err := fn(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the validator did not settle within %s (it keeps trying in the background): %w", b.p.cfg.ControlTimeout, err)
	}
	return err
}

// record adds a sent transaction to the trace of the running control.
func (b *bridge) record(step string, l *ledger.Ledger, rec *ledger.TxRecord) {
	if b.trace == nil {
		return
	}
	tx := devchain.RollupTx{Node: devchain.NodeBase, Signature: rec.Signature.String(), Step: step}
	if l == b.p.Ephemeral {
		tx.Node = devchain.NodeEphemeral
	}
	if rec.Err != nil {
		tx.Err = rec.Err
	}
	*b.trace = append(*b.trace, tx)
}

// traced runs fn with a fresh trace and returns what was sent.
func (b *bridge) traced(fn func() error) ([]devchain.RollupTx, error) {
	trace := []devchain.RollupTx{}
	b.trace = &trace
	defer func() { b.trace = nil }()
	err := fn()
	return trace, err
}

// CommitNow commits a delegated eATA's rollup balance to base now and keeps
// it delegated (see devchain.RollupController).
func (p *Pair) CommitNow(ctx context.Context, eata solana.PublicKey) (*devchain.RollupResult, error) {
	return p.scheduleNow(ctx, eata, false)
}

// UndelegateNow commits a delegated eATA and returns it to base now, as
// eSPL ix 5 does but without its owner's signature (see
// devchain.RollupController).
func (p *Pair) UndelegateNow(ctx context.Context, eata solana.PublicKey) (*devchain.RollupResult, error) {
	return p.scheduleNow(ctx, eata, true)
}

func (p *Pair) scheduleNow(ctx context.Context, eata solana.PublicKey, undelegate bool) (*devchain.RollupResult, error) {
	var out *devchain.RollupResult
	err := p.control(ctx, func(ctx context.Context) error {
		if !p.delegatedToMe(eata) {
			return devchain.Invalidf("Invalid params: %s is not delegated to this validator on base (deposit into the rollup first)", eata)
		}
		var res devchain.RollupResult
		if _, err := p.Ephemeral.Apply(ctx, func(w ledger.AccountWriter) error {
			r, err := scheduleIntent(w, eata, undelegate)
			res = r
			return err
		}); err != nil {
			return err
		}
		var err error
		res.Transactions, err = p.bridge.traced(func() error { return p.bridge.sync(ctx) })
		out = &res
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scheduleIntent appends a commit (or commit-and-undelegate) intent for a
// user's eATA to the Magic context, with its projection's balance as the
// committed amount; an undelegation drains and freezes the projection in
// the same write, as the Magic program does for eSPL ix 5.
func scheduleIntent(w ledger.AccountWriter, eata solana.PublicKey, undelegate bool) (devchain.RollupResult, error) {
	var res devchain.RollupResult
	a := w.Get(eata)
	if a == nil {
		return res, devchain.Invalidf("Invalid params: %s is not on the rollup", eata)
	}
	e, err := espl.DecodeEphemeralATA(a.Data)
	if a.Owner != esplprog.ProgramID || err != nil {
		return res, devchain.Invalidf("Invalid params: %s is not an eATA (owner %s)", eata, a.Owner)
	}
	if k, _ := espl.FindEphemeralATA(e.Owner, e.Mint); k != eata {
		return res, devchain.Invalidf("Invalid params: %s is not the eATA of %s for %s", eata, e.Owner, e.Mint)
	}
	if o := w.Get(e.Owner); o != nil && o.Owner == esplprog.ProgramID {
		// Shuttles, queues and vaults have eATAs too; their own flows
		// commit them.
		return res, devchain.Invalidf("Invalid params: %s belongs to the eSPL account %s (a shuttle, queue or vault), not a wallet", eata, e.Owner)
	}
	m := w.Get(e.Mint)
	if m == nil || !spl.IsTokenProgram(m.Owner) {
		return res, devchain.Invalidf("Invalid params: the mint %s of %s is not on the rollup", e.Mint, eata)
	}
	proj := spl.AssociatedTokenAddress(e.Owner, e.Mint, m.Owner)
	pa := w.Get(proj)
	var ta spl.TokenAccount
	if pa != nil {
		ta, err = spl.DecodeTokenAccount(pa.Data)
	}
	if pa == nil || err != nil || ta.State != spl.StateInitialized {
		return res, devchain.Invalidf("Invalid params: the rollup balance of %s (%s) is not an active token account", eata, proj)
	}
	ca := w.Get(magic.ContextID)
	if ca == nil {
		return res, errors.New("magic context missing from the ephemeral ledger")
	}
	mc, err := magic.DecodeContext(ca.Data)
	if err != nil {
		return res, err
	}
	for _, it := range mc.Intents {
		if it.Kind == magic.KindCommitAndUndelegate && it.Account == eata {
			return res, devchain.Invalidf("Invalid params: %s is already being undelegated (intent %d)", eata, it.ID)
		}
	}
	e.Amount = ta.Amount
	it := magic.Intent{ID: mc.NextID, Kind: magic.KindCommit, Slot: w.Slot(), Owner: esplprog.ProgramID, Account: eata, Data: e.Encode()}
	if undelegate {
		it.Kind = magic.KindCommitAndUndelegate
		it.Evict = []solana.PublicKey{proj}
		ta.Amount, ta.State = 0, spl.StateFrozen
		ta.EncodeInto(pa.Data)
		w.Set(proj, pa)
	}
	mc.Intents = append(mc.Intents, it)
	mc.NextID++
	if ca.Data, err = mc.Encode(); err != nil {
		return res, err
	}
	w.Set(magic.ContextID, ca)
	return devchain.RollupResult{Account: eata.String(), Owner: e.Owner.String(), Mint: e.Mint.String(),
		Amount: strconv.FormatUint(e.Amount, 10), Intent: it.ID}, nil
}

// CrankNow settles the queued payouts f selects now: it brings their ready
// time forward to the rollup clock in one privileged write of each queue,
// then runs the validator until they are paid on base (see
// devchain.RollupController).
func (p *Pair) CrankNow(ctx context.Context, f devchain.CrankFilter) (*devchain.CrankResult, error) {
	var out *devchain.CrankResult
	err := p.control(ctx, func(ctx context.Context) error {
		st, err := p.bridge.bridgeState()
		if err != nil {
			return err
		}
		var settled []devchain.QueueEntry
		if _, err := p.Ephemeral.Apply(ctx, func(w ledger.AccountWriter) error {
			settled = nil
			now := clockMs(w.Get(spl.SysvarClockID))
			for _, q := range st.Queues {
				s, err := bringForward(w, q, now, f)
				if err != nil {
					return err
				}
				settled = append(settled, s...)
			}
			return nil
		}); err != nil {
			return err
		}
		trace, err := p.bridge.traced(func() error { return p.bridge.sync(ctx) })
		if settled == nil {
			settled = []devchain.QueueEntry{}
		}
		out = &devchain.CrankResult{Settled: settled, Transactions: trace}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// bringForward sets the ready time of a queue's entries that f selects to
// nowMs (entries already ready keep theirs) and returns them. The heap is
// rebuilt so the earliest entry stays first.
func bringForward(w ledger.AccountWriter, queue solana.PublicKey, nowMs int64, f devchain.CrankFilter) ([]devchain.QueueEntry, error) {
	a := w.Get(queue)
	if a == nil {
		return nil, nil
	}
	tq, err := espl.OpenTransferQueue(a.Data)
	if err != nil {
		return nil, fmt.Errorf("queue %s: %w", queue, err)
	}
	h := tq.Header()
	entries := make([]espl.QueuedTransfer, tq.Len())
	for i := range entries {
		entries[i] = tq.At(i)
	}
	var out []devchain.QueueEntry
	changed := false
	for i := range entries {
		e := &entries[i]
		if !f.Matches(h.Mint, *e) {
			continue
		}
		if e.ReadyAt > nowMs {
			e.ReadyAt, changed = nowMs, true
		}
		out = append(out, queueEntry(queue, *e, devchain.StateReady))
	}
	if !changed {
		return out, nil
	}
	// Empty the heap and push every entry back: Push keeps the order.
	h.Length = 0
	if err := tq.SetHeader(h); err != nil {
		return nil, err
	}
	clear(a.Data[espl.TransferQueueHeaderSize:])
	for _, e := range entries {
		if err := tq.Push(e); err != nil {
			return nil, fmt.Errorf("queue %s: %w", queue, err)
		}
	}
	w.Set(queue, a)
	return out, nil
}

// clockMs reads the Clock sysvar's unix time in milliseconds (0 if it is
// unreadable).
func clockMs(a *ledger.Account) int64 {
	if a == nil || len(a.Data) < 40 {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(a.Data[32:40])) * 1000
}

func queueEntry(queue solana.PublicKey, e espl.QueuedTransfer, state string) devchain.QueueEntry {
	return devchain.QueueEntry{
		Queue: queue.String(), TaskID: e.TaskID, Group: e.GroupID, Source: e.Source.String(),
		Destination: e.DestinationOwner.String(), Amount: strconv.FormatUint(e.Amount, 10), ReadyAt: e.ReadyAt,
		ClientRefID: strconv.FormatUint(e.ClientRefID, 10), State: state,
	}
}

// Queues shows the transfer queues the validator cranks, at processed
// commitment: the queued entries (pending or ready by the rollup clock),
// and the cranked ones whose payout waits in the Magic context (paying).
func (p *Pair) Queues(_ context.Context, mint *solana.PublicKey) (*devchain.QueueView, error) {
	st, err := p.bridge.bridgeState()
	if err != nil {
		return nil, err
	}
	now, _ := p.Ephemeral.Account(spl.SysvarClockID, ledger.Processed)
	view := &devchain.QueueView{NowMs: clockMs(now), Queues: []devchain.QueueInfo{}}
	// Intents up to the base guard are paid already (the validator drops
	// them from the context once that is durable).
	var paying []magic.Intent
	done := p.bridge.guard(ledger.Processed)
	if ca, _ := p.Ephemeral.Account(magic.ContextID, ledger.Processed); ca != nil {
		if mc, err := magic.DecodeContext(ca.Data); err == nil {
			for _, it := range mc.Intents {
				if it.ID > done {
					paying = append(paying, it)
				}
			}
		}
	}
	for _, q := range st.Queues {
		a, _ := p.Ephemeral.Account(q, ledger.Processed)
		if a == nil {
			continue
		}
		tq, err := espl.OpenTransferQueue(a.Data)
		if err != nil {
			return nil, fmt.Errorf("queue %s: %w", q, err)
		}
		h := tq.Header()
		if mint != nil && h.Mint != *mint {
			continue
		}
		info := devchain.QueueInfo{Address: q.String(), Mint: h.Mint.String(), Capacity: tq.Cap(), Entries: []devchain.QueueEntry{}}
		var groups []espl.QueuedTransfer // every entry, for the split positions
		for i := 0; i < tq.Len(); i++ {
			e := tq.At(i)
			state := devchain.StatePending
			if e.ReadyAt <= view.NowMs {
				state = devchain.StateReady
			}
			info.Entries = append(info.Entries, queueEntry(q, e, state))
			groups = append(groups, e)
		}
		slices.SortStableFunc(info.Entries, func(x, y devchain.QueueEntry) int {
			if x.ReadyAt != y.ReadyAt {
				return cmpInt(x.ReadyAt, y.ReadyAt)
			}
			return cmpInt(int64(x.TaskID), int64(y.TaskID))
		})
		for _, it := range paying {
			if it.Action == nil {
				continue
			}
			rt, err := esplprog.DecodeExecuteReady(it.Action.Instruction())
			if err != nil || it.Action.Accounts[2].PublicKey != q {
				continue
			}
			e := queueEntry(q, rt.Entry, devchain.StatePaying)
			e.Destination, e.ReadyAt, e.Intent = rt.Destination.String(), 0, it.ID
			info.Entries = append(info.Entries, e)
			groups = append(groups, rt.Entry)
		}
		p.addSplits(q, info.Entries, groups)
		view.Queues = append(view.Queues, info)
	}
	return view, nil
}

// addSplits places each entry among its group's pieces. The pieces of one
// transfer have consecutive task ids; once some are paid (gone), the first
// task id, and so an entry's index, is known only when the lowest and the
// highest piece are both still there.
func (p *Pair) addSplits(queue solana.PublicKey, entries []devchain.QueueEntry, all []espl.QueuedTransfer) {
	type group struct {
		source solana.PublicKey
		id     uint32
	}
	lo, hi := map[group]uint32{}, map[group]uint32{}
	for _, e := range all {
		g := group{e.Source, e.GroupID}
		if v, ok := lo[g]; !ok || e.TaskID < v {
			lo[g] = e.TaskID
		}
		if e.TaskID > hi[g] {
			hi[g] = e.TaskID
		}
	}
	for i := range entries {
		e := &entries[i]
		src, err := solana.PublicKeyFromBase58(e.Source)
		if err != nil {
			continue
		}
		rk, _ := espl.FindGroupReceipt(queue, src, e.Group)
		ra, _ := p.Ephemeral.Account(rk, ledger.Processed)
		if ra == nil {
			continue
		}
		r, err := espl.DecodeGroupReceipt(ra.Data)
		if err != nil || r.Split == 0 {
			continue
		}
		sp := &devchain.Split{Of: r.Split, Paid: r.Executed}
		g := group{src, e.Group}
		if hi[g]-lo[g] == r.Split-1 {
			idx := int(e.TaskID - lo[g])
			sp.Index = &idx
		}
		e.Split = sp
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
