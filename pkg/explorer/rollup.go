package explorer

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"net/url"
	"slices"
	"strconv"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/delegation"
	lespl "github.com/ferry-sh/ferry/pkg/ledger/programs/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/magic"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// RollupView is the rollup view: what the local validator holds and does,
// read from the evidence it leaves on both chains (docs/localnet.md §3).
type RollupView struct {
	Validator     string `json:"validator"`
	BaseSlot      uint64 `json:"baseSlot"`
	EphemeralSlot uint64 `json:"ephemeralSlot"`
	// Delegated are the accounts delegated on base (newest delegation
	// first, at most Options.MaxDelegations); DelegatedTotal counts all.
	Delegated      []DelegatedAccount `json:"delegated"`
	DelegatedTotal int                `json:"delegatedTotal"`
	// Intents are the commits, undelegations and payouts the rollup
	// scheduled that the validator has not executed on base yet (the Magic
	// context).
	Intents []IntentView `json:"intents"`
	// Queues are the private transfer queues the validator cranks.
	Queues []QueueView `json:"queues"`
	// Settlements are the validator's latest transactions on base.
	Settlements []Settlement `json:"settlements"`
}

// DelegatedAccount is one account delegated to a rollup.
type DelegatedAccount struct {
	Account string `json:"account"`
	// Kind is the account's layout ("ephemeral ATA (eATA)", "transfer
	// queue", …) or "account".
	Kind string `json:"kind"`
	// Owner and Mint are an eATA's wallet and mint.
	Owner        string `json:"owner,omitempty"`
	Mint         string `json:"mint,omitempty"`
	OwnerProgram string `json:"ownerProgram"`
	Validator    string `json:"validator"`
	ThisRollup   bool   `json:"thisRollup"`
	Slot         uint64 `json:"slot"`
}

// IntentView is one pending intent of the Magic context.
type IntentView struct {
	ID      uint64 `json:"id"`
	Kind    string `json:"kind"`
	Slot    uint64 `json:"slot"`
	Account string `json:"account,omitempty"`
	Summary string `json:"summary"`
	// Payout is the queued-transfer payout a base action pays.
	Payout *PayoutRef `json:"payout,omitempty"`
}

// PayoutRef is one payout (eSPL 202) of a queued transfer piece.
type PayoutRef struct {
	Signature   string `json:"signature,omitempty"`
	Slot        uint64 `json:"slot,omitempty"`
	Source      string `json:"source"`
	GroupID     uint32 `json:"groupId"`
	TaskID      uint32 `json:"taskId"`
	Amount      string `json:"amount"`
	Destination string `json:"destination"`
}

// QueueView is one transfer queue and the transfers queued in it.
type QueueView struct {
	Address  string `json:"address"`
	Mint     string `json:"mint"`
	Decimals uint8  `json:"decimals"`
	// Private reports that the rollup hides the queue account itself
	// (only its validator may read it, as on a TEE rollup); the
	// transfers below are read from the rollup's public transaction
	// history and base's payouts instead.
	Private bool `json:"private"`
	// Entries are the queue's entries, when the rollup shows the account.
	Entries []QueueEntry `json:"entries,omitempty"`
	// Transfers are the latest queued transfers, newest first (from the
	// queue's last Options.QueueHistory rollup transactions).
	Transfers []QueuedTransferView `json:"transfers"`
}

// QueuedTransferView is one queued private transfer (eSPL 16, sent by its
// sender on the rollup or by the validator for a private base transfer,
// eSPL 25) and its payouts.
type QueuedTransferView struct {
	Signature  string `json:"signature"`
	Slot       uint64 `json:"slot"`
	BlockTime  int64  `json:"blockTime"`
	Origin     string `json:"origin"`
	Source     string `json:"source"`
	Recipient  string `json:"recipient"`
	Amount     string `json:"amount"`
	GroupID    uint32 `json:"groupId"`
	Split      uint32 `json:"split"`
	MinDelayMs uint64 `json:"minDelayMs,string"`
	MaxDelayMs uint64 `json:"maxDelayMs,string"`
	// State is queued, paying (some pieces paid), paid or refunded (the
	// queue was full: the amount went back to the sender).
	State  string  `json:"state"`
	Pieces []Piece `json:"pieces"`
}

// Piece is one split piece of a queued transfer.
type Piece struct {
	Index  int    `json:"index"`
	Amount string `json:"amount"`
	// DueAt is when it is ready to be paid (unix ms), computed as the
	// program does from the transfer's delays and its block time.
	DueAt int64 `json:"dueAt"`
	// State is queued, scheduled (ready; its payout is pending on base),
	// paid or refunded.
	State  string     `json:"state"`
	Payout *PayoutRef `json:"payout,omitempty"`
}

// Settlement is one validator transaction on base.
type Settlement struct {
	Signature string   `json:"signature"`
	Slot      uint64   `json:"slot"`
	BlockTime *int64   `json:"blockTime,omitempty"`
	Failed    bool     `json:"failed"`
	Steps     []string `json:"steps"`
}

// Piece and transfer states.
const (
	StateQueued    = "queued"
	StateScheduled = "scheduled"
	StatePaying    = "paying"
	StatePaid      = "paid"
	StateRefunded  = "refunded"
)

// rollupView answers GET /explorer/api/rollup.
func (e *Explorer) rollupView(ctx context.Context, _ url.Values) (any, error) {
	v := &RollupView{Validator: e.cfg.Validator.String(), Delegated: []DelegatedAccount{}, Intents: []IntentView{}, Queues: []QueueView{}, Settlements: []Settlement{}}
	var err error
	if v.BaseSlot, err = e.cfg.Base.GetSlot(ctx, chainclient.Confirmed); err != nil {
		return nil, chainError(LayerBase, err)
	}
	if v.EphemeralSlot, err = e.cfg.Ephemeral.GetSlot(ctx, chainclient.Confirmed); err != nil {
		return nil, chainError(LayerEphemeral, err)
	}
	if err := e.delegated(ctx, v); err != nil {
		return nil, err
	}
	pending, err := e.intents(ctx, v)
	if err != nil {
		return nil, err
	}
	if err := e.queues(ctx, v, pending); err != nil {
		return nil, err
	}
	if err := e.settlements(ctx, v); err != nil {
		return nil, err
	}
	return v, nil
}

// delegated lists the accounts delegated on base: the delegation
// program's accounts (its owner index, not a scan of all accounts) that
// have a delegation record.
func (e *Explorer) delegated(ctx context.Context, v *RollupView) error {
	var res []rpcKeyedAccount
	err := e.cfg.Base.Call(ctx, "getProgramAccounts", []any{espl.DelegationProgramID,
		map[string]any{"encoding": "base64", "commitment": "confirmed"}}, &res)
	if err != nil {
		return chainError(LayerBase, err)
	}
	records := map[solana.PublicKey]espl.DelegationRecord{}
	for _, ka := range res {
		if len(ka.Account.Data) >= 8 && binary.LittleEndian.Uint64(ka.Account.Data) == espl.DelegationRecordDisc {
			if r, err := espl.DecodeDelegationRecord(ka.Account.Data); err == nil {
				records[ka.Pubkey] = r
			}
		}
	}
	for _, ka := range res {
		if _, isRecord := records[ka.Pubkey]; isRecord {
			continue
		}
		rk, _ := espl.FindDelegationRecord(ka.Pubkey)
		r, ok := records[rk]
		if !ok {
			continue // metadata, the intent guard
		}
		d := DelegatedAccount{Account: ka.Pubkey.String(), Kind: "account", OwnerProgram: r.Owner.String(), Validator: r.Authority.String(),
			ThisRollup: r.Authority == e.cfg.Validator, Slot: r.DelegationSlot}
		if dec := decodeAccount(ka.Pubkey, r.Owner, ka.Account.Data); dec != nil {
			d.Kind = dec.Kind
			if r.Owner == espl.ProgramID && len(ka.Account.Data) >= espl.EphemeralATALegacySize && d.Kind == "ephemeral ATA (eATA)" {
				a, _ := espl.DecodeEphemeralATA(ka.Account.Data)
				d.Owner, d.Mint = a.Owner.String(), a.Mint.String()
			}
		}
		v.Delegated = append(v.Delegated, d)
	}
	slices.SortStableFunc(v.Delegated, func(a, b DelegatedAccount) int {
		return cmp.Or(cmp.Compare(b.Slot, a.Slot), cmp.Compare(a.Account, b.Account))
	})
	v.DelegatedTotal = len(v.Delegated)
	if len(v.Delegated) > e.opts.MaxDelegations {
		v.Delegated = v.Delegated[:e.opts.MaxDelegations]
	}
	return nil
}

// payoutKey identifies the pieces of one queued transfer.
type payoutKey struct {
	source solana.PublicKey
	group  uint32
}

// intents reads the Magic context's pending intents; it returns the
// pending payouts by transfer.
func (e *Explorer) intents(ctx context.Context, v *RollupView) (map[payoutKey][]PayoutRef, error) {
	pending := map[payoutKey][]PayoutRef{}
	a, err := e.cfg.Ephemeral.GetAccountInfo(ctx, magic.ContextID, chainclient.Confirmed)
	if err != nil {
		return nil, chainError(LayerEphemeral, err)
	}
	if a == nil {
		return pending, nil
	}
	c, err := magic.DecodeContext(a.Data)
	if err != nil {
		return pending, nil
	}
	for _, it := range c.Intents {
		iv := IntentView{ID: it.ID, Kind: it.Kind.String(), Slot: it.Slot, Summary: intentSummary(it)}
		if !it.Account.IsZero() {
			iv.Account = it.Account.String()
		}
		if it.Action != nil {
			if rt, err := lespl.DecodeExecuteReady(it.Action.Instruction()); err == nil {
				p := payoutOf(rt)
				iv.Payout = &p
				k := payoutKey{rt.Entry.Source, rt.Entry.GroupID}
				pending[k] = append(pending[k], p)
			}
		}
		v.Intents = append(v.Intents, iv)
	}
	return pending, nil
}

func payoutOf(rt lespl.ReadyTransfer) PayoutRef {
	return PayoutRef{Source: rt.Entry.Source.String(), GroupID: rt.Entry.GroupID, TaskID: rt.Entry.TaskID,
		Amount: strconv.FormatUint(rt.Entry.Amount, 10), Destination: rt.Destination.String()}
}

// intentSummary says what an intent asks the validator to do on base.
func intentSummary(it magic.Intent) string {
	var s string
	switch it.Kind {
	case magic.KindCommit:
		s = fmt.Sprintf("commit %s to base", it.Account)
	case magic.KindCommitAndUndelegate:
		s = fmt.Sprintf("commit %s to base and undelegate it", it.Account)
	default:
		s = "run an action on base"
	}
	if it.Action != nil {
		s += "; then " + actionSummary(it.Action.Instruction())
	}
	return s
}

// actionSummary names a base action.
func actionSummary(ix txwire.Instruction) string {
	if rt, err := lespl.DecodeExecuteReady(ix); err == nil {
		return fmt.Sprintf("pay %d to %s (queued transfer of %s, group %d, task %d)", rt.Entry.Amount, rt.Destination, rt.Entry.Source, rt.Entry.GroupID, rt.Entry.TaskID)
	}
	if ix.ProgramID == espl.ProgramID && len(ix.Data) == 1 && ix.Data[0] == byte(lespl.IxCloseShuttle) && len(ix.Accounts) > 5 {
		return fmt.Sprintf("close shuttle %s, paying what it holds to %s", ix.Accounts[3].PublicKey, ix.Accounts[5].PublicKey)
	}
	name := labelOf(ix.ProgramID)
	if name == "" {
		name = ix.ProgramID.String()
	}
	return "call " + name
}

// queues follows the validator's transfer queues (from its bridge state,
// a public account on the rollup).
func (e *Explorer) queues(ctx context.Context, v *RollupView, pending map[payoutKey][]PayoutRef) error {
	a, err := e.cfg.Ephemeral.GetAccountInfo(ctx, magic.BridgeStateID, chainclient.Confirmed)
	if err != nil {
		return chainError(LayerEphemeral, err)
	}
	if a == nil {
		return nil
	}
	st, err := magic.DecodeBridgeState(a.Data)
	if err != nil {
		return nil
	}
	qs := st.Queues
	if len(qs) > e.opts.MaxQueues {
		qs = qs[:e.opts.MaxQueues]
	}
	for _, q := range qs {
		qv, err := e.queue(ctx, q, pending)
		if err != nil {
			return err
		}
		v.Queues = append(v.Queues, *qv)
	}
	return nil
}

// queue reads one queue: its header on base, its entries if the rollup
// shows them, the transfers queued in its latest rollup transactions and
// their payouts on base.
func (e *Explorer) queue(ctx context.Context, q solana.PublicKey, pending map[payoutKey][]PayoutRef) (*QueueView, error) {
	qv := &QueueView{Address: q.String(), Transfers: []QueuedTransferView{}}
	base, err := e.cfg.Base.GetAccountInfo(ctx, q, chainclient.Confirmed)
	if err != nil {
		return nil, chainError(LayerBase, err)
	}
	if base != nil {
		if h, err := espl.DecodeTransferQueueHeader(base.Data); err == nil {
			qv.Mint = h.Mint.String()
			if m, err := e.cfg.Base.GetAccountInfo(ctx, h.Mint, chainclient.Confirmed); err == nil && m != nil {
				if mi, err := spl.DecodeMint(m.Data); err == nil {
					qv.Decimals = mi.Decimals
				}
			}
		}
	}
	eph, err := e.cfg.Ephemeral.GetAccountInfo(ctx, q, chainclient.Confirmed)
	switch {
	case chainclient.IsAccessDenied(err):
		qv.Private = true
	case err != nil:
		return nil, chainError(LayerEphemeral, err)
	case eph != nil:
		if d := decodeQueue(eph.Data); d != nil {
			qv.Entries = d.Entries
		}
	}
	// Payouts on base, by transfer, oldest first.
	paid := map[payoutKey][]PayoutRef{}
	sigs, err := e.cfg.Base.GetSignaturesForAddress(ctx, q, chainclient.SignaturesOptions{Limit: e.opts.PayoutHistory, Commitment: chainclient.Confirmed})
	if err != nil {
		return nil, chainError(LayerBase, err)
	}
	for i := len(sigs) - 1; i >= 0; i-- {
		s := sigs[i]
		if len(s.Err) > 0 {
			continue
		}
		l, err := fetchTx(ctx, e.cfg.Base, s.Signature)
		if err != nil {
			return nil, chainError(LayerBase, err)
		}
		if l == nil {
			continue
		}
		for _, ix := range l.instructions() {
			if rt, err := lespl.DecodeExecuteReady(ix); err == nil {
				p := payoutOf(rt)
				p.Signature, p.Slot = s.Signature.String(), s.Slot
				k := payoutKey{rt.Entry.Source, rt.Entry.GroupID}
				paid[k] = append(paid[k], p)
			}
		}
	}
	// Transfers queued on the rollup, newest first.
	sigs, err = e.cfg.Ephemeral.GetSignaturesForAddress(ctx, q, chainclient.SignaturesOptions{Limit: e.opts.QueueHistory, Commitment: chainclient.Confirmed})
	if err != nil {
		return nil, chainError(LayerEphemeral, err)
	}
	for _, s := range sigs {
		if len(s.Err) > 0 {
			continue
		}
		l, err := fetchTx(ctx, e.cfg.Ephemeral, s.Signature)
		if err != nil {
			return nil, chainError(LayerEphemeral, err)
		}
		if l == nil {
			continue
		}
		for _, qt := range queuedTransfers(l) {
			if qt.ix.Queue != q {
				continue
			}
			qv.Transfers = append(qv.Transfers, transferView(s.Signature, l, qt, qv.Decimals, paid, pending))
		}
	}
	return qv, nil
}

// queuedTransfer is an eSPL 16 found in a rollup transaction.
type queuedTransfer struct {
	ix     espl.DepositAndQueueTransferIx
	origin string
}

// queuedTransfers finds the eSPL 16 instructions of a rollup
// transaction: sent by the sender itself, or run by the validator among a
// private transfer's post-delegation actions (ExecuteActions carries
// them, decrypted from the sealed payload of the base transfer).
func queuedTransfers(l *landed) []queuedTransfer {
	var out []queuedTransfer
	decode16 := func(data []byte, keys []solana.PublicKey, origin string) {
		if len(data) == 0 || data[0] != byte(espl.IxDepositAndQueueTransfer) {
			return
		}
		d, err := espl.Decode(data, keys)
		if err != nil {
			return
		}
		if ix, ok := d.(espl.DepositAndQueueTransferIx); ok {
			out = append(out, queuedTransfer{ix: ix, origin: origin})
		}
	}
	for _, ix := range l.instructions() {
		keys := make([]solana.PublicKey, len(ix.Accounts))
		for i, a := range ix.Accounts {
			keys[i] = a.PublicKey
		}
		switch ix.ProgramID {
		case espl.ProgramID:
			decode16(ix.Data, keys, "private transfer from a rollup balance (eSPL 16)")
		case magic.ActionExecutorID:
			mi, err := magic.Decode(ix.Data)
			if err != nil {
				continue
			}
			ea, ok := mi.(*magic.ExecuteActionsIx)
			if !ok {
				continue
			}
			for _, act := range ea.Actions {
				if int(act.Program) >= len(keys) || keys[act.Program] != espl.ProgramID {
					continue
				}
				akeys := make([]solana.PublicKey, 0, len(act.Accounts))
				for _, aa := range act.Accounts {
					if int(aa.Index) >= len(keys) {
						akeys = nil
						break
					}
					akeys = append(akeys, keys[aa.Index])
				}
				if akeys != nil {
					decode16(act.Data, akeys, "private transfer from base (eSPL 25), queued by the validator")
				}
			}
		}
	}
	return out
}

// transferView computes a queued transfer's pieces as the program queued
// them (espl.SplitPlan, Delay and ReadyAt from the instruction and the
// block time) and matches them with the payouts paid on base and pending
// on the rollup (by their task ids).
func transferView(sig solana.Signature, l *landed, qt queuedTransfer, decimals uint8, paid, pending map[payoutKey][]PayoutRef) QueuedTransferView {
	ix := qt.ix
	var bt int64
	if l.raw.BlockTime != nil {
		bt = *l.raw.BlockTime
	}
	t := QueuedTransferView{
		Signature: sig.String(), Slot: l.raw.Slot, BlockTime: bt, Origin: qt.origin, Source: ix.Owner.String(), Recipient: ix.Destination.String(),
		Amount: strconv.FormatUint(ix.Amount, 10), GroupID: ix.GroupID, Split: ix.Split, MinDelayMs: ix.MinDelayMs, MaxDelayMs: ix.MaxDelayMs,
		Pieces: []Piece{},
	}
	refunded := l.tokenDelta(ix.QueueVaultATA) < ix.Amount
	split := min(ix.Split, uint32(espl.DefaultTransferQueueCapacity)) // bounded by any queue's room
	for i, amt := range espl.SplitPlan(ix.Amount, split, decimals) {
		p := Piece{Index: i, Amount: strconv.FormatUint(amt, 10), DueAt: espl.ReadyAt(bt, espl.Delay(ix.Destination, uint64(i), ix.MinDelayMs, ix.MaxDelayMs)), State: StateQueued}
		if refunded {
			p.State = StateRefunded
		}
		t.Pieces = append(t.Pieces, p)
	}
	if refunded {
		t.State = StateRefunded
		return t
	}
	// The crank pays a transfer's pieces in due order, and the program
	// gave them consecutive task ids in index order: the k pieces paid or
	// scheduled are the k earliest due, and sorted by task id they are
	// those pieces sorted by index.
	k := payoutKey{ix.Owner, ix.GroupID}
	type known struct {
		p     PayoutRef
		state string
	}
	var ps []known
	for _, p := range paid[k] {
		ps = append(ps, known{p, StatePaid})
	}
	for _, p := range pending[k] {
		ps = append(ps, known{p, StateScheduled})
	}
	slices.SortStableFunc(ps, func(a, b known) int { return cmp.Compare(a.p.TaskID, b.p.TaskID) })
	if len(ps) > len(t.Pieces) {
		ps = ps[:len(t.Pieces)]
	}
	byDue := make([]int, len(t.Pieces))
	for i := range byDue {
		byDue[i] = i
	}
	slices.SortStableFunc(byDue, func(a, b int) int { return cmp.Compare(t.Pieces[a].DueAt, t.Pieces[b].DueAt) })
	done := slices.Clone(byDue[:len(ps)])
	slices.Sort(done)
	for j, kp := range ps {
		i := done[j]
		// Prefer the index the task ids give (the first piece's task id
		// is the smallest task id minus the smallest index done).
		if first := int64(ps[0].p.TaskID) - int64(done[0]); int64(kp.p.TaskID)-first >= 0 && int64(kp.p.TaskID)-first < int64(len(t.Pieces)) {
			if c := int(int64(kp.p.TaskID) - first); t.Pieces[c].State == StateQueued {
				i = c
			}
		}
		if t.Pieces[i].State != StateQueued {
			for _, c := range done {
				if t.Pieces[c].State == StateQueued {
					i = c
					break
				}
			}
		}
		pp := kp.p
		t.Pieces[i].State, t.Pieces[i].Payout = kp.state, &pp
	}
	n := 0
	for _, p := range t.Pieces {
		if p.State == StatePaid {
			n++
		}
	}
	switch {
	case n == len(t.Pieces):
		t.State = StatePaid
	case n > 0:
		t.State = StatePaying
	default:
		t.State = StateQueued
	}
	return t
}

// settlements lists the validator's latest base transactions, each step
// named: payouts, shuttle closes, commits and undelegations.
func (e *Explorer) settlements(ctx context.Context, v *RollupView) error {
	sigs, err := e.cfg.Base.GetSignaturesForAddress(ctx, e.cfg.Validator, chainclient.SignaturesOptions{Limit: e.opts.SettlementHistory, Commitment: chainclient.Confirmed})
	if err != nil {
		return chainError(LayerBase, err)
	}
	for _, s := range sigs {
		st := Settlement{Signature: s.Signature.String(), Slot: s.Slot, BlockTime: s.BlockTime, Failed: len(s.Err) > 0, Steps: []string{}}
		l, err := fetchTx(ctx, e.cfg.Base, s.Signature)
		if err != nil {
			return chainError(LayerBase, err)
		}
		if l != nil {
			for _, ix := range l.instructions() {
				if step := settlementStep(ix, l); step != "" {
					st.Steps = append(st.Steps, step)
				}
			}
		}
		v.Settlements = append(v.Settlements, st)
	}
	return nil
}

// settlementStep names one instruction of a validator transaction ("" for
// bookkeeping: compute budget, the intent guard's own record).
func settlementStep(ix txwire.Instruction, l *landed) string {
	switch ix.ProgramID {
	case espl.ProgramID:
		if rt, err := lespl.DecodeExecuteReady(ix); err == nil {
			return fmt.Sprintf("payout: %d to %s (queued transfer of %s, group %d)", rt.Entry.Amount, rt.Destination, rt.Entry.Source, rt.Entry.GroupID)
		}
		if len(ix.Data) == 1 && ix.Data[0] == byte(lespl.IxCloseShuttle) && len(ix.Accounts) > 5 {
			dest := ix.Accounts[5].PublicKey
			return fmt.Sprintf("shuttle %s closed: %d paid back to %s", ix.Accounts[3].PublicKey, l.tokenDelta(dest), dest)
		}
		return "eSPL " + espl.Name(firstByte(ix.Data))
	case espl.DelegationProgramID:
		d, err := delegation.Decode(ix.Data)
		if err != nil {
			return "delegation program: undecodable instruction"
		}
		acct := func() string {
			if len(ix.Accounts) > 1 {
				return ix.Accounts[1].PublicKey.String()
			}
			return "?"
		}
		switch d := d.(type) {
		case *delegation.IntentGuardIx:
			return fmt.Sprintf("intent %d", d.IntentID)
		case *delegation.CommitAndUndelegateIx:
			return fmt.Sprintf("commit and undelegate %s (%d bytes)", acct(), len(d.Data))
		case *delegation.CommitStateIx:
			return fmt.Sprintf("commit %s (%d bytes)", acct(), len(d.Data))
		case *delegation.DelegateIx:
			return "delegate " + acct()
		}
	case spl.ComputeBudgetProgramID:
		return ""
	}
	name := labelOf(ix.ProgramID)
	if name == "" {
		name = ix.ProgramID.String()
	}
	return "call " + name
}

func firstByte(b []byte) uint8 {
	if len(b) == 0 {
		return 0
	}
	return b[0]
}
