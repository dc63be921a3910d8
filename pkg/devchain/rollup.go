package devchain

import (
	"context"
	"errors"
	"log/slog"
	"strconv"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
)

// RollupController is the local validator's side of the rollup controls
// (pkg/localnet implements it). Each call runs on the validator's own
// goroutine, between its passes, and returns once the work it started is
// confirmed on both ledgers.
//
// How each control acts on chain:
//   - CommitNow appends a commit intent for the eATA (its projection's
//     balance as the committed amount) to the Magic context with a
//     privileged write on the rollup, as the real validator schedules its
//     periodic commits itself; the validator then runs DLP CommitState on
//     base in a transaction it signs, as for any intent.
//   - UndelegateNow does what eSPL ix 5 does without the owner's
//     signature: in one privileged write it drains and freezes the
//     projection and appends a commit-and-undelegate intent; the validator
//     then runs DLP CommitAndUndelegate on base and evicts the account.
//   - CrankNow rewrites the ready time of the chosen queue entries to the
//     rollup clock's now (a privileged write of the queue account, listed
//     in the block's Applied writes), then the validator cranks them (eSPL
//     210 on the rollup) and pays them (eSPL 202 on base) with its usual
//     signed transactions.
type RollupController interface {
	CommitNow(ctx context.Context, eata solana.PublicKey) (*RollupResult, error)
	UndelegateNow(ctx context.Context, eata solana.PublicKey) (*RollupResult, error)
	CrankNow(ctx context.Context, f CrankFilter) (*CrankResult, error)
	Queues(ctx context.Context, mint *solana.PublicKey) (*QueueView, error)
}

// CrankFilter selects queued payouts; zero fields select all.
type CrankFilter struct {
	Mint        *solana.PublicKey
	ClientRefID *uint64
}

// Matches reports whether an entry of a queue for mint passes the filter.
func (f CrankFilter) Matches(mint solana.PublicKey, e espl.QueuedTransfer) bool {
	return (f.Mint == nil || *f.Mint == mint) && (f.ClientRefID == nil || *f.ClientRefID == e.ClientRefID)
}

// AccountRequest names a delegated eATA: the eATA itself, or a wallet and
// a mint.
type AccountRequest struct {
	Account string `json:"account" validate:"required,pubkey" doc:"The delegated eATA (base58), or with mint the wallet that owns it."`
	Mint    string `json:"mint,omitempty" validate:"pubkey" doc:"With a wallet as account: the mint of its eATA."`
}

// CrankRequest is ferry_crankQueue: which queued payouts to settle now.
type CrankRequest struct {
	Mint        string `json:"mint,omitempty" validate:"pubkey" doc:"Only the queue of this mint (base58); default: every queue."`
	ClientRefID string `json:"clientRefId,omitempty" validate:"digits" doc:"Only the payouts of private transfers with this clientRefId (a u64 as a decimal string)."`
}

// QueueRequest is ferry_getQueue.
type QueueRequest struct {
	Mint string `json:"mint,omitempty" validate:"pubkey" doc:"Only the queue of this mint (base58); default: every queue."`
}

// RollupTx is a transaction the validator sent for a control.
type RollupTx struct {
	Node      string `json:"node" doc:"base or ephemeral."`
	Signature string `json:"signature" doc:"Transaction signature."`
	// Step names what it did: crank, payout, commit, undelegate,
	// acceptIntents, or validator for the rest of a pass.
	Step string `json:"step" doc:"What the transaction did: crank, payout, commit, undelegate, acceptIntents or validator."`
	Err  any    `json:"err,omitempty" doc:"The TransactionError, when it failed."`
}

// RollupResult is what a commit or undelegation did.
type RollupResult struct {
	Account string `json:"account" doc:"The eATA."`
	Owner   string `json:"owner" doc:"The wallet that owns it."`
	Mint    string `json:"mint" doc:"Its mint."`
	// Amount is the committed balance (the projection's), base units.
	Amount string `json:"amount" doc:"Committed balance in base units."`
	// Intent is the Magic-context intent id the control scheduled.
	Intent       uint64     `json:"intent" doc:"Id of the intent scheduled on the rollup."`
	Transactions []RollupTx `json:"transactions" doc:"Transactions the validator sent, in order."`
}

// CrankResult is what a crank settled.
type CrankResult struct {
	// Settled are the entries brought forward and paid.
	Settled      []QueueEntry `json:"settled" doc:"Queued payouts settled now."`
	Transactions []RollupTx   `json:"transactions" doc:"Transactions the validator sent, in order."`
}

// QueueView is ferry_getQueue's result: every transfer queue the local
// validator cranks.
type QueueView struct {
	// NowMs is the rollup clock (the Clock sysvar's unix time, in ms) that
	// ready times are compared with.
	NowMs  int64       `json:"nowMs" doc:"Rollup clock, unix milliseconds (what ready times are compared with)."`
	Queues []QueueInfo `json:"queues" doc:"Transfer queues."`
}

// QueueInfo is one transfer queue.
type QueueInfo struct {
	Address  string `json:"address" doc:"Queue account."`
	Mint     string `json:"mint" doc:"Mint it pays."`
	Capacity int    `json:"capacity" doc:"Entries it has room for."`
	// Entries are the queued payouts, earliest first, then those cranked
	// and waiting for their base payout (state paying).
	Entries []QueueEntry `json:"entries" doc:"Queued payouts, earliest first, then cranked ones waiting for their base payout."`
}

// Entry states.
const (
	// StatePending: its ready time has not come.
	StatePending = "pending"
	// StateReady: ready; the next crank pays it.
	StateReady = "ready"
	// StatePaying: cranked; its payout waits to run on base.
	StatePaying = "paying"
)

// QueueEntry is one queued (or cranked, not yet paid) payout.
type QueueEntry struct {
	Queue       string `json:"queue" doc:"Queue account."`
	TaskID      uint32 `json:"taskId" doc:"Task id within the queue."`
	Group       uint32 `json:"group" doc:"Group id of the private transfer it belongs to."`
	Source      string `json:"source" doc:"Sender (source authority)."`
	Destination string `json:"destination" doc:"Recipient (destination owner, or the stealth pool)."`
	Amount      string `json:"amount" doc:"Amount in base units."`
	ReadyAt     int64  `json:"readyAt" doc:"When it may be paid, unix milliseconds (rollup clock)."`
	ClientRefID string `json:"clientRefId" doc:"The transfer's clientRefId (0 when none)."`
	State       string `json:"state" validate:"enum=pending|ready|paying" doc:"pending, ready or paying."`
	// Split places the entry among its group's pieces.
	Split *Split `json:"split,omitempty" doc:"The piece among its group's split payouts."`
	// Intent is the payout's Magic-context intent (state paying).
	Intent uint64 `json:"intent,omitempty" doc:"Intent id of the scheduled base payout (state paying)."`
}

// Split places an entry among the pieces of its group (one private
// transfer split into Of payouts).
type Split struct {
	// Index is the piece's position (0-based) in the transfer's split
	// plan, or null when the pieces already paid leave it ambiguous
	// (pieces have consecutive task ids; the paid ones are gone).
	Index *int   `json:"index" doc:"Position of the piece (0-based), null when ambiguous."`
	Of    uint32 `json:"of" doc:"Pieces in the group."`
	Paid  uint32 `json:"paid" doc:"Pieces of the group already cranked."`
}

// Rollup serves the rollup controls over a RollupController: it parses and
// checks requests and logs every control.
type Rollup struct {
	c   RollupController
	log *slog.Logger
}

// NewRollup returns the controls of c.
func NewRollup(c RollupController, log *slog.Logger) *Rollup {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Rollup{c: c, log: log.With("component", "cheatcodes", "node", NodeEphemeral)}
}

// eata resolves the account a commit or undelegation names.
func (req AccountRequest) eata() (solana.PublicKey, error) {
	k, err := parseKey(req.Account)
	if err != nil {
		return k, err
	}
	if req.Mint == "" {
		return k, nil
	}
	mint, err := parseKey(req.Mint)
	if err != nil {
		return k, err
	}
	e, _ := espl.FindEphemeralATA(k, mint)
	return e, nil
}

// Commit commits a delegated eATA's rollup balance to base now, keeping
// it delegated.
func (r *Rollup) Commit(ctx context.Context, req AccountRequest) (*RollupResult, error) {
	e, err := req.eata()
	if err != nil {
		return nil, err
	}
	out, err := r.c.CommitNow(ctx, e)
	if err != nil {
		return nil, controlError(err)
	}
	r.log.Info("cheatcode", "method", "commit", "accounts", []string{out.Account}, "amount", out.Amount, "intent", out.Intent)
	return out, nil
}

// Undelegate commits a delegated eATA and returns it to base now, without
// its owner's signature.
func (r *Rollup) Undelegate(ctx context.Context, req AccountRequest) (*RollupResult, error) {
	e, err := req.eata()
	if err != nil {
		return nil, err
	}
	out, err := r.c.UndelegateNow(ctx, e)
	if err != nil {
		return nil, controlError(err)
	}
	r.log.Info("cheatcode", "method", "undelegate", "accounts", []string{out.Account}, "amount", out.Amount, "intent", out.Intent)
	return out, nil
}

// Crank settles the chosen queued payouts now, whatever their delay.
func (r *Rollup) Crank(ctx context.Context, req CrankRequest) (*CrankResult, error) {
	var f CrankFilter
	if req.Mint != "" {
		m, err := parseKey(req.Mint)
		if err != nil {
			return nil, err
		}
		f.Mint = &m
	}
	if req.ClientRefID != "" {
		v, err := strconv.ParseUint(req.ClientRefID, 10, 64)
		if err != nil {
			return nil, invalid("Invalid params: clientRefId %q is not a u64", req.ClientRefID)
		}
		f.ClientRefID = &v
	}
	out, err := r.c.CrankNow(ctx, f)
	if err != nil {
		return nil, controlError(err)
	}
	tasks := make([]string, len(out.Settled))
	for i, e := range out.Settled {
		tasks[i] = e.Queue + "#" + strconv.FormatUint(uint64(e.TaskID), 10)
	}
	r.log.Info("cheatcode", "method", "crank", "settled", tasks, "transactions", len(out.Transactions))
	return out, nil
}

// Queue shows the transfer queues.
func (r *Rollup) Queue(ctx context.Context, req QueueRequest) (*QueueView, error) {
	var mint *solana.PublicKey
	if req.Mint != "" {
		m, err := parseKey(req.Mint)
		if err != nil {
			return nil, err
		}
		mint = &m
	}
	out, err := r.c.Queues(ctx, mint)
	if err != nil {
		return nil, controlError(err)
	}
	return out, nil
}

// controlError keeps a controller's refusals (*Error) and reports anything
// else (a ledger failure, a transaction the validator could not land) as
// internal.
func controlError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return internal("rollup control", err)
}

// Invalidf is a refused control (CodeInvalidParams) for a controller to
// return.
func Invalidf(format string, args ...any) error { return invalid(format, args...) }
