package outcome

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/espl"
	lespl "github.com/ferry-sh/ferry/pkg/ledger/programs/espl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Status is how an operation ended.
type Status string

// Statuses.
const (
	// Settled: the operation did what it was built for.
	Settled Status = "settled"
	// Refunded: the rollup did not take it and the tokens went back to
	// the sender (on base, or to the sender's rollup balance).
	Refunded Status = "refunded"
	// Failed: it ended without moving the tokens (a withdrawal the rollup
	// balance did not cover).
	Failed Status = "failed"
	// Unknown: settlement is not followed on this cluster (Track stopped
	// after the confirmation).
	Unknown Status = "unknown"
)

// Event is one step of an operation, reported as it is observed.
type Event struct {
	// Event names the step: confirmed, settling, shuttleClosed, credited,
	// queued, scheduled, payout, refunded, failed, settled, unknown.
	Event string `json:"event"`
	Kind  Kind   `json:"kind"`
	// Message says what happened, for people.
	Message string `json:"message"`
	// Signature is the transaction of this step, when there is one.
	Signature string `json:"signature,omitempty"`
	Layer     string `json:"layer,omitempty"`
	Slot      uint64 `json:"slot,omitempty"`
	// Amount is what this step moved, in base units.
	Amount string `json:"amount,omitempty"`
	// Account is the token account credited.
	Account string `json:"account,omitempty"`
	// Piece and Pieces number the payouts of a split transfer.
	Piece  int `json:"piece,omitempty"`
	Pieces int `json:"pieces,omitempty"`
	// Balance is the credited account's balance afterwards, when read.
	Balance string `json:"balance,omitempty"`
}

// Payout is one settled piece of a queued transfer.
type Payout struct {
	Signature   string `json:"signature"`
	Slot        uint64 `json:"slot"`
	Amount      string `json:"amount"`
	Destination string `json:"destination"`
}

// Result is how an operation ended.
type Result struct {
	Kind      Kind   `json:"kind"`
	Status    Status `json:"status"`
	Message   string `json:"message"`
	Signature string `json:"signature"`
	// Refunded is the amount that went back to the sender.
	Refunded string   `json:"refunded,omitempty"`
	Payouts  []Payout `json:"payouts,omitempty"`
}

// Tracker follows operations on one cluster.
type Tracker struct {
	// Base and Ephemeral are the cluster's chain nodes (Ephemeral with
	// the caller's token on private rollups).
	Base, Ephemeral *chainclient.Client
	// Follow enables settlement tracking. It is the local cluster's
	// validator whose evidence Track reads (see the package doc); when
	// false, Track reports Unknown right after the confirmation.
	Follow bool
	// PollInterval is how often the chains are read (DefaultPollInterval
	// when zero).
	PollInterval time.Duration
	// OnEvent, if set, sees every step as it is observed, from the
	// calling goroutine.
	OnEvent func(Event)
}

// DefaultPollInterval is Tracker's default poll interval.
const DefaultPollInterval = 200 * time.Millisecond

// HistoryPage is how many signatures one getSignaturesForAddress call
// asks for while looking for the validator's transactions.
const HistoryPage = 100

// ErrHalted is the cause of a Track (or a confirmation under WatchHealth)
// that stopped because a chain node reported it is unhealthy (a halted
// ledger answers getHealth with -32005).
var ErrHalted = errors.New("node is unhealthy")

// HaltedError names the node that reported it is unhealthy.
type HaltedError struct {
	Layer string
	URL   string
	Err   error
}

func (e *HaltedError) Error() string {
	return fmt.Sprintf("the %s node at %s reports it is unhealthy (%v): it stopped producing blocks, so the operation cannot settle; see its logs (a halted ledger says why)",
		e.Layer, chainclient.RedactURL(e.URL), e.Err)
}

// Unwrap returns ErrHalted.
func (e *HaltedError) Unwrap() error { return ErrHalted }

func (t *Tracker) emit(ev Event) {
	if t.OnEvent != nil {
		t.OnEvent(ev)
	}
}

func (t *Tracker) interval() time.Duration {
	if t.PollInterval > 0 {
		return t.PollInterval
	}
	return DefaultPollInterval
}

// Track follows op, whose transaction is confirmed, to its end. It returns
// the Result, or an error when it could not find out: ctx ended (the
// cause is kept: context.DeadlineExceeded for a timeout, a *HaltedError
// from WatchHealth), or a node failed.
func (t *Tracker) Track(ctx context.Context, op Operation) (*Result, error) {
	res := &Result{Kind: op.Kind, Signature: op.Signature.String()}
	if op.Kind == KindTransaction {
		res.Status, res.Message = Settled, "confirmed"
		t.emit(Event{Event: "settled", Kind: op.Kind, Message: res.Message, Signature: res.Signature, Layer: op.Layer})
		return res, nil
	}
	if !t.Follow || t.Ephemeral == nil {
		res.Status = Unknown
		res.Message = "confirmed; settlement is not followed on this cluster (only the local validator's evidence is known): check the balances"
		t.emit(Event{Event: "unknown", Kind: op.Kind, Message: res.Message, Signature: res.Signature, Layer: op.Layer})
		return res, nil
	}
	var err error
	switch op.Kind {
	case KindDeposit, KindRollupTransfer, KindWithdraw:
		err = t.shuttle(ctx, op, res)
	case KindPrivateTransfer:
		if err = t.shuttle(ctx, op, res); err == nil && res.Status == "" {
			err = t.payouts(ctx, op, res)
		}
	case KindQueuedTransfer:
		err = t.payouts(ctx, op, res)
	}
	if err != nil {
		return nil, t.cause(ctx, err)
	}
	t.emit(Event{Event: string(res.Status), Kind: op.Kind, Message: res.Message, Signature: res.Signature})
	return res, nil
}

// cause returns ctx's cause when ctx ended, so that a timeout or a halted
// node is reported as such rather than as a cancelled RPC call.
func (t *Tracker) cause(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		if c := context.Cause(ctx); c != nil {
			return c
		}
	}
	return err
}

// wait sleeps one poll interval.
func (t *Tracker) wait(ctx context.Context) error {
	timer := time.NewTimer(t.interval())
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-timer.C:
		return nil
	}
}

// shuttle waits for the validator's CloseShuttle of op's shuttle on base
// and judges by what it paid back to the owner. For a private transfer a
// shuttle closed empty leaves res.Status unset: the payouts decide.
func (t *Tracker) shuttle(ctx context.Context, op Operation, res *Result) error {
	t.emit(Event{Event: "settling", Kind: op.Kind, Layer: Ephemeral,
		Message: "waiting for the rollup validator to run the shuttle's actions and close it on base"})
	var closed *closeShuttle
	for {
		c, err := t.findClose(ctx, op)
		if err != nil {
			return err
		}
		if c != nil {
			closed = c
			break
		}
		if err := t.wait(ctx); err != nil {
			return err
		}
	}
	paid := strconv.FormatUint(closed.paid, 10)
	t.emit(Event{Event: "shuttleClosed", Kind: op.Kind, Layer: Base, Signature: closed.sig.String(), Slot: closed.slot,
		Amount: paid, Account: closed.dest.String(), Message: fmt.Sprintf("shuttle closed on base, %s paid back to %s", paid, closed.dest)})
	amount := strconv.FormatUint(op.Amount, 10)
	switch op.Kind {
	case KindDeposit, KindRollupTransfer:
		if closed.paid > 0 {
			res.Status, res.Refunded = Refunded, paid
			res.Message = fmt.Sprintf("the rollup did not take the deposit: %s went back to %s on base", paid, closed.dest)
			return nil
		}
		ev := Event{Event: "credited", Kind: op.Kind, Layer: Ephemeral, Amount: amount, Account: op.Destination.String(),
			Message: fmt.Sprintf("%s credited to %s on the rollup", amount, op.Destination)}
		if b, err := t.Ephemeral.GetTokenAccountBalance(ctx, op.Destination, chainclient.Confirmed); err == nil {
			ev.Balance = strconv.FormatUint(b.Amount, 10)
			ev.Message += " (balance " + ev.Balance + ")"
		}
		t.emit(ev)
		res.Status, res.Message = Settled, ev.Message
	case KindWithdraw:
		if closed.paid == 0 {
			res.Status = Failed
			res.Message = fmt.Sprintf("nothing was withdrawn: the rollup balance of %s did not cover %s (the validator closed the shuttle empty)", op.Owner, amount)
			return nil
		}
		ev := Event{Event: "credited", Kind: op.Kind, Layer: Base, Signature: closed.sig.String(), Amount: paid, Account: closed.dest.String(),
			Message: fmt.Sprintf("%s back on base in %s", paid, closed.dest)}
		if closed.post != nil {
			ev.Balance = strconv.FormatUint(*closed.post, 10)
			ev.Message += " (balance " + ev.Balance + ")"
		}
		t.emit(ev)
		res.Status, res.Message = Settled, ev.Message
		if closed.paid != op.Amount {
			res.Message += fmt.Sprintf("; %s was asked for", amount)
		}
	case KindPrivateTransfer:
		if closed.paid > 0 {
			res.Status, res.Refunded = Refunded, paid
			res.Message = fmt.Sprintf("the rollup did not queue the transfer: %s went back to %s on base", paid, closed.dest)
		}
	}
	return nil
}

// closeShuttle is a landed CloseShuttle (eSPL 201) and what it paid.
type closeShuttle struct {
	sig  solana.Signature
	slot uint64
	dest solana.PublicKey
	paid uint64
	post *uint64
}

// findClose looks for the successful CloseShuttle of op's shuttle in the
// shuttle's base history after op's transaction.
func (t *Tracker) findClose(ctx context.Context, op Operation) (*closeShuttle, error) {
	sigs, err := t.Base.GetSignaturesForAddress(ctx, op.Shuttle, chainclient.SignaturesOptions{
		Limit: HistoryPage, Until: op.Signature, Commitment: chainclient.Confirmed,
	})
	if err != nil {
		return nil, err
	}
	for i := len(sigs) - 1; i >= 0; i-- { // oldest first
		s := sigs[i]
		if s.Signature == op.Signature || len(s.Err) > 0 {
			continue
		}
		tx, err := t.fetch(ctx, t.Base, s.Signature)
		if err != nil || tx == nil {
			return nil, err
		}
		for _, ix := range tx.instructions() {
			if ix.ProgramID != espl.ProgramID || len(ix.Data) != 1 || ix.Data[0] != byte(lespl.IxCloseShuttle) ||
				len(ix.Accounts) < 6 || ix.Accounts[3].PublicKey != op.Shuttle {
				continue
			}
			dest := ix.Accounts[5].PublicKey
			pre, post := tx.tokenAmount(dest)
			c := &closeShuttle{sig: s.Signature, slot: tx.Slot, dest: dest, post: post}
			if post != nil {
				var before uint64
				if pre != nil {
					before = *pre
				}
				if *post > before {
					c.paid = *post - before
				}
			}
			return c, nil
		}
	}
	return nil, nil
}

// payouts follows a queued transfer's group receipt on the rollup and its
// payouts (eSPL 202) on base until every piece is paid.
func (t *Tracker) payouts(ctx context.Context, op Operation, res *Result) error {
	receiptKey, _ := espl.FindGroupReceipt(op.Queue, op.Owner, op.GroupID)
	var receipt espl.GroupReceipt
	for tries := 0; ; tries++ {
		a, err := t.Ephemeral.GetAccountInfo(ctx, receiptKey, chainclient.Confirmed)
		if chainclient.IsAccessDenied(err) {
			// The rollup shows a queued transfer's records only to its
			// sender (as a TEE rollup does): without the sender's login
			// token there is nothing to follow.
			res.Status = Unknown
			res.Message = fmt.Sprintf("confirmed; the rollup keeps the transfer's queue records private: log in as the sender %s (ferry login) to follow its payouts", op.Owner)
			return nil
		}
		if err != nil {
			return err
		}
		if a != nil {
			if receipt, err = espl.DecodeGroupReceipt(a.Data); err != nil {
				return fmt.Errorf("read group receipt %s: %w", receiptKey, err)
			}
			break
		}
		// The receipt is made in the same rollup transaction that queues
		// the transfer, which ran before the shuttle closed (eSPL 25) or
		// is the confirmed transaction itself (eSPL 16): a few reads
		// absorb the node's confirmation lag.
		if tries >= 10 {
			res.Status = Refunded
			res.Message = fmt.Sprintf("the transfer was not queued (the transfer queue %s was full): %d went back to the sender's rollup balance", op.Queue, op.Amount)
			res.Refunded = strconv.FormatUint(op.Amount, 10)
			return nil
		}
		if err := t.wait(ctx); err != nil {
			return err
		}
	}
	pieces := int(receipt.Split)
	t.emit(Event{Event: "queued", Kind: op.Kind, Layer: Ephemeral, Amount: strconv.FormatUint(receipt.Amount, 10), Pieces: pieces,
		Message: fmt.Sprintf("queued on the rollup: %d in %d piece(s) for %s", receipt.Amount, pieces, receipt.DestinationOwner)})
	seen := map[solana.Signature]bool{}
	scheduled := uint32(0)
	var total uint64
	for len(res.Payouts) < pieces {
		if a, err := t.Ephemeral.GetAccountInfo(ctx, receiptKey, chainclient.Confirmed); err == nil && a != nil {
			if r, err := espl.DecodeGroupReceipt(a.Data); err == nil && r.Executed > scheduled {
				scheduled = r.Executed
				t.emit(Event{Event: "scheduled", Kind: op.Kind, Layer: Ephemeral, Piece: int(scheduled), Pieces: pieces,
					Message: fmt.Sprintf("%d of %d piece(s) ready and scheduled for payout", scheduled, pieces)})
			}
		}
		opts := chainclient.SignaturesOptions{Limit: HistoryPage, Commitment: chainclient.Confirmed}
		if op.Layer == Base {
			opts.Until = op.Signature
		}
		sigs, err := t.Base.GetSignaturesForAddress(ctx, op.Queue, opts)
		if err != nil {
			return err
		}
		for i := len(sigs) - 1; i >= 0 && len(res.Payouts) < pieces; i-- {
			s := sigs[i]
			if seen[s.Signature] || s.Signature == op.Signature {
				continue
			}
			seen[s.Signature] = true
			if len(s.Err) > 0 {
				continue
			}
			tx, err := t.fetch(ctx, t.Base, s.Signature)
			if err != nil {
				return err
			}
			if tx == nil {
				delete(seen, s.Signature)
				continue
			}
			for _, ix := range tx.instructions() {
				rt, err := lespl.DecodeExecuteReady(ix)
				if err != nil || rt.Entry.Source != op.Owner || rt.Entry.GroupID != op.GroupID {
					continue
				}
				p := Payout{Signature: s.Signature.String(), Slot: tx.Slot, Amount: strconv.FormatUint(rt.Entry.Amount, 10), Destination: rt.Destination.String()}
				res.Payouts = append(res.Payouts, p)
				total += rt.Entry.Amount
				t.emit(Event{Event: "payout", Kind: op.Kind, Layer: Base, Signature: p.Signature, Slot: p.Slot, Amount: p.Amount,
					Account: p.Destination, Piece: len(res.Payouts), Pieces: pieces,
					Message: fmt.Sprintf("piece %d of %d paid on base: %s to %s", len(res.Payouts), pieces, p.Amount, p.Destination)})
			}
		}
		if len(res.Payouts) >= pieces {
			break
		}
		if err := t.wait(ctx); err != nil {
			return err
		}
	}
	res.Status = Settled
	res.Message = fmt.Sprintf("all %d piece(s) paid on base: %d to %s", pieces, total, receipt.DestinationOwner)
	return nil
}

// landed is a fetched transaction with what Track reads of its meta.
type landed struct {
	Slot uint64
	tx   *txwire.Transaction
	pre  map[int]uint64
	post map[int]uint64
}

func (l *landed) instructions() []txwire.Instruction {
	return txwire.ResolveInstructions(&l.tx.Message, l.tx.Message.AccountKeys)
}

// tokenAmount returns the token balance of key before and after the
// transaction (nil when it had none).
func (l *landed) tokenAmount(key solana.PublicKey) (pre, post *uint64) {
	for i, k := range l.tx.Message.AccountKeys {
		if k != key {
			continue
		}
		if v, ok := l.pre[i]; ok {
			pre = &v
		}
		if v, ok := l.post[i]; ok {
			post = &v
		}
	}
	return pre, post
}

// fetch reads a confirmed transaction (nil while the node has none).
func (t *Tracker) fetch(ctx context.Context, c *chainclient.Client, sig solana.Signature) (*landed, error) {
	wire, raw, err := c.GetTransactionWire(ctx, sig, chainclient.Confirmed)
	if err != nil || raw == nil {
		return nil, err
	}
	var v struct {
		Slot uint64 `json:"slot"`
		Meta *struct {
			Pre  []tokenBalance `json:"preTokenBalances"`
			Post []tokenBalance `json:"postTokenBalances"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("getTransaction %s: %w", sig, err)
	}
	tx, err := txwire.Decode(wire)
	if err != nil {
		return nil, fmt.Errorf("getTransaction %s: %w", sig, err)
	}
	l := &landed{Slot: v.Slot, tx: tx, pre: map[int]uint64{}, post: map[int]uint64{}}
	if v.Meta != nil {
		for _, tb := range v.Meta.Pre {
			if n, err := strconv.ParseUint(tb.UI.Amount, 10, 64); err == nil {
				l.pre[tb.Index] = n
			}
		}
		for _, tb := range v.Meta.Post {
			if n, err := strconv.ParseUint(tb.UI.Amount, 10, 64); err == nil {
				l.post[tb.Index] = n
			}
		}
	}
	return l, nil
}

type tokenBalance struct {
	Index int `json:"accountIndex"`
	UI    struct {
		Amount string `json:"amount"`
	} `json:"uiTokenAmount"`
}
