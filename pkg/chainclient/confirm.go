package chainclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gagliardetto/solana-go"
)

// ErrBlockhashExpired means the chain passed the transaction's last valid
// block height without the transaction landing: it never will, and it is
// safe to re-sign with a new blockhash (web3.js calls this
// TransactionExpiredBlockheightExceededError).
var ErrBlockhashExpired = errors.New("blockhash expired: the transaction did not land and is safe to re-sign")

// TransactionFailedError is a transaction that landed and failed on chain.
// The fee was charged; nothing else changed.
type TransactionFailedError struct {
	Signature solana.Signature
	Slot      uint64
	// Err is the TransactionError JSON, e.g. {"InstructionError":[0,{"Custom":1}]}.
	Err json.RawMessage
}

func (e *TransactionFailedError) Error() string {
	return fmt.Sprintf("transaction %s failed in slot %d: %s", e.Signature, e.Slot, e.Err)
}

// DefaultPollInterval is how often Confirm polls when ConfirmOptions leaves
// PollInterval zero.
const DefaultPollInterval = 500 * time.Millisecond

// ConfirmOptions configures Confirm. The zero value polls every
// DefaultPollInterval and tolerates 5 consecutive transient errors.
type ConfirmOptions struct {
	PollInterval time.Duration
	// SearchHistory searches the whole ledger, not only the recent status
	// cache; use it when confirming after a restart.
	SearchHistory bool
	// MaxErrors is how many consecutive transient failures (unreachable
	// node, HTTP 429/5xx, node unhealthy) Confirm rides out; 0 means 5,
	// negative means none.
	MaxErrors int
	// OnProgress, if set, is called after every poll (from the calling
	// goroutine), e.g. to update a spinner.
	OnProgress func(ConfirmProgress)
}

// ConfirmProgress describes the state after one poll.
type ConfirmProgress struct {
	Polls int
	// Status is nil while the node does not know the transaction.
	Status *SignatureStatus
	// BlockHeight is the last block height observed (0 until one was read).
	BlockHeight          uint64
	LastValidBlockHeight uint64
	// Err is the transient error of this poll, if any.
	Err error
}

// Confirm waits until sig reaches commitment (empty means confirmed), by
// polling getSignatureStatuses and getBlockHeight as chain-rpc.md §4
// describes. It returns the final status; a *TransactionFailedError if the
// transaction landed with an error; an error wrapping ErrBlockhashExpired
// if the block height passed lastValidBlockHeight while the signature was
// still unknown; or the context's error.
func (c *Client) Confirm(ctx context.Context, sig solana.Signature, lastValidBlockHeight uint64, commitment Commitment, opts ConfirmOptions) (*SignatureStatus, error) {
	if commitment == "" {
		commitment = Confirmed
	}
	if commitment.Rank() == 0 {
		return nil, fmt.Errorf("confirm %s: unknown commitment %q", sig, commitment)
	}
	interval := opts.PollInterval
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	maxErrors := opts.MaxErrors
	if maxErrors == 0 {
		maxErrors = 5
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	errs := 0
	var height uint64
	for polls := 1; ; polls++ {
		st, done, err := c.confirmPoll(ctx, sig, lastValidBlockHeight, commitment, opts.SearchHistory, &height)
		if done {
			return st, err
		}
		if err != nil {
			errs++
			if errs > maxErrors || !isTransient(ctx, err) {
				return nil, fmt.Errorf("confirm %s: %w", sig, err)
			}
		} else {
			errs = 0
		}
		if opts.OnProgress != nil {
			opts.OnProgress(ConfirmProgress{Polls: polls, Status: st, BlockHeight: height, LastValidBlockHeight: lastValidBlockHeight, Err: err})
		}
		if timer == nil {
			timer = time.NewTimer(interval)
		} else {
			timer.Reset(interval)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("confirm %s: %w", sig, context.Cause(ctx))
		case <-timer.C:
		}
	}
}

// confirmPoll does one round. done means the returned status and error are
// final.
func (c *Client) confirmPoll(ctx context.Context, sig solana.Signature, lastValid uint64, commitment Commitment, history bool, height *uint64) (*SignatureStatus, bool, error) {
	st, err := c.signatureStatus(ctx, sig, history)
	if err != nil {
		return nil, false, err
	}
	if st != nil {
		return settle(sig, st, commitment)
	}
	h, err := c.GetBlockHeight(ctx, commitment)
	if err != nil {
		return nil, false, err
	}
	*height = h
	if h <= lastValid {
		return nil, false, nil
	}
	// Expired, unless it landed between the two calls: look once more,
	// through the whole history.
	st, err = c.signatureStatus(ctx, sig, true)
	if err != nil {
		return nil, false, err
	}
	if st != nil {
		return settle(sig, st, commitment)
	}
	return nil, true, fmt.Errorf("confirm %s: block height %d passed last valid block height %d: %w", sig, h, lastValid, ErrBlockhashExpired)
}

func settle(sig solana.Signature, st *SignatureStatus, commitment Commitment) (*SignatureStatus, bool, error) {
	if len(st.Err) > 0 {
		return st, true, &TransactionFailedError{Signature: sig, Slot: st.Slot, Err: st.Err}
	}
	if st.ConfirmationStatus.AtLeast(commitment) {
		return st, true, nil
	}
	return st, false, nil
}

func (c *Client) signatureStatus(ctx context.Context, sig solana.Signature, history bool) (*SignatureStatus, error) {
	sts, err := c.GetSignatureStatuses(ctx, []solana.Signature{sig}, history)
	if err != nil {
		return nil, err
	}
	return sts[0], nil
}

// isTransient reports whether a poll error is worth retrying: the node was
// unreachable, overloaded or briefly unhealthy, and ctx is still live.
func isTransient(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var te *TransportError
	if errors.As(err, &te) {
		return true
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he.StatusCode == http.StatusTooManyRequests || he.StatusCode >= 500
	}
	var re *RPCError
	if errors.As(err, &re) {
		return re.Code == -32005 // node unhealthy / behind
	}
	return false
}
