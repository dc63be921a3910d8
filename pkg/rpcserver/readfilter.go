package rpcserver

import (
	"context"
	"errors"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// CodeAccountAccessDenied is the JSON-RPC error of a read of an account
// the caller may not see: a private account of a rollup that filters reads
// (a TEE rollup, or ferry's local one), read without the token of a wallet
// allowed to see it.
const CodeAccountAccessDenied = chainclient.CodeAccessDenied

// ReadFilter decides whether the caller of a request may see an account
// (non-nil) the response would contain. It returns nil to show it, or an
// error: an *Error chooses the JSON-RPC code (AccessDenied builds the
// usual one); any other error is -32090 with its text. The caller is
// known from ctx: RequestToken is the ?token= of the HTTP request, and an
// in-process caller may have put its own identity there.
//
// A filter runs once per account read for a response, so it must be
// cheap; it may read ledgers (never the one being served under a lock it
// could be holding: it is called after the read).
type ReadFilter func(ctx context.Context, key solana.PublicKey, a *ledger.Account) error

// AccessDenied is the -32090 error for key, with why as its detail.
func AccessDenied(key solana.PublicKey, why string) *Error {
	return &Error{Code: CodeAccountAccessDenied,
		Message: "Access denied: account " + key.String() + " is private (" + why + "); read it with ?token=<the login token of a wallet allowed to see it>"}
}

type tokenKey struct{}

// WithRequestToken returns ctx carrying the ?token= of a request (what
// ServeHTTP does; HandleBody callers that serve their own transport use
// it too).
func WithRequestToken(ctx context.Context, token string) context.Context {
	if token == "" {
		return ctx
	}
	return context.WithValue(ctx, tokenKey{}, token)
}

// RequestToken is the ?token= of the request being served ("" when none).
func RequestToken(ctx context.Context) string {
	t, _ := ctx.Value(tokenKey{}).(string)
	return t
}

// SetReadFilter installs (or, with nil, removes) the read filter. It may
// be called while serving.
func (h *Handler) SetReadFilter(f ReadFilter) {
	if f == nil {
		h.filter.Store(nil)
		return
	}
	h.filter.Store(&f)
}

// The methods below are the only way a method may read accounts whose
// contents (data, lamports or token amounts) go into a response: each
// passes what it read through the read filter. Methods added later must
// use them too:
//
//   - ReadAccount for one account named by the request (getAccountInfo,
//     getTokenAccountBalance, ...): a hidden account is an error;
//   - ReadAccounts for a list the request names (getMultipleAccounts):
//     any hidden one is an error;
//   - VisibleAccounts for results of a scan (getProgramAccounts,
//     getTokenAccountsByOwner, getTokenLargestAccounts): hidden ones are
//     left out, as a filtering rollup leaves them out;
//   - CheckRead for an account obtained otherwise (a simulation's
//     post-state).

// Check applies f to one account: nil when f is nil, the account is
// missing (nil) or f shows it; otherwise the error as a JSON-RPC *Error
// (-32090 unless f chose another code). Other front ends of a ledger
// (pkg/pubsub) filter with it as the Handler does.
func (f ReadFilter) Check(ctx context.Context, key solana.PublicKey, a *ledger.Account) error {
	if f == nil || a == nil {
		return nil
	}
	err := f(ctx, key, a)
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeAccountAccessDenied, Message: err.Error()}
}

// readFilter is the installed filter (nil when none).
func (h *Handler) readFilter() ReadFilter {
	if f := h.filter.Load(); f != nil {
		return *f
	}
	return nil
}

// CheckRead applies the read filter to one account (nil passes).
func (h *Handler) CheckRead(ctx context.Context, key solana.PublicKey, a *ledger.Account) error {
	return h.readFilter().Check(ctx, key, a)
}

// ReadAccount reads key at commitment c through the read filter. A missing
// account is (nil, slot, nil).
func (h *Handler) ReadAccount(ctx context.Context, key solana.PublicKey, c ledger.Commitment) (*ledger.Account, uint64, error) {
	a, slot := h.l.Account(key, c)
	if err := h.CheckRead(ctx, key, a); err != nil {
		return nil, slot, err
	}
	return a, slot, nil
}

// ReadAccounts reads keys at commitment c through the read filter; one
// hidden account fails the whole read.
func (h *Handler) ReadAccounts(ctx context.Context, keys []solana.PublicKey, c ledger.Commitment) ([]*ledger.Account, uint64, error) {
	accts, slot := h.l.Accounts(keys, c)
	for i, a := range accts {
		if err := h.CheckRead(ctx, keys[i], a); err != nil {
			return nil, slot, err
		}
	}
	return accts, slot, nil
}

// VisibleAccounts returns the accounts of a scan the caller may see, in
// order (accts itself when nothing is filtered).
func (h *Handler) VisibleAccounts(ctx context.Context, accts []ledger.KeyedAccount) []ledger.KeyedAccount {
	if h.filter.Load() == nil {
		return accts
	}
	out := make([]ledger.KeyedAccount, 0, len(accts))
	for _, a := range accts {
		if h.CheckRead(ctx, a.Key, a.Account) == nil {
			out = append(out, a)
		}
	}
	return out
}

// visibleTokenBalances drops the token balances (of a simulation or a
// landed transaction, whose account keys are keys) that belong to
// accounts the caller may not read: a private balance must not leak
// through the metadata of a transaction that touched it. Entries whose
// account cannot be named are dropped too.
func (f ReadFilter) visibleTokenBalances(ctx context.Context, keys []solana.PublicKey, tbs []uiTokenBalance) []uiTokenBalance {
	if f == nil || len(tbs) == 0 {
		return tbs
	}
	out := make([]uiTokenBalance, 0, len(tbs))
	for _, tb := range tbs {
		if int(tb.AccountIndex) >= len(keys) {
			continue
		}
		// What the filter needs of the account: its program, mint and
		// owner (the balance itself is what is being protected).
		a := &ledger.Account{Owner: tb.ProgramID, Data: spl.TokenAccount{Mint: tb.Mint, Owner: tb.Owner, State: spl.StateInitialized}.Encode()}
		if f.Check(ctx, keys[tb.AccountIndex], a) == nil {
			out = append(out, tb)
		}
	}
	return out
}

// hideSimulated applies visibleTokenBalances to a simulation result.
func (h *Handler) hideSimulated(ctx context.Context, keys []solana.PublicKey, u *uiSimulate) {
	f := h.readFilter()
	if u == nil || f == nil {
		return
	}
	u.PreTokenBalances = f.visibleTokenBalances(ctx, keys, u.PreTokenBalances)
	u.PostTokenBalances = f.visibleTokenBalances(ctx, keys, u.PostTokenBalances)
}

// hideMeta applies visibleTokenBalances to a landed transaction's
// metadata.
func (f ReadFilter) hideMeta(ctx context.Context, r *ledger.TxRecord, t *uiTxWithMeta) {
	if t == nil || t.Meta == nil || f == nil {
		return
	}
	var keys []solana.PublicKey
	if tx, err := r.Transaction(); err == nil {
		keys = tx.Message.AccountKeys
	}
	t.Meta.PreTokenBalances = f.visibleTokenBalances(ctx, keys, t.Meta.PreTokenBalances)
	t.Meta.PostTokenBalances = f.visibleTokenBalances(ctx, keys, t.Meta.PostTokenBalances)
}

// hideMeta is ReadFilter.hideMeta with the installed filter.
func (h *Handler) hideMeta(ctx context.Context, r *ledger.TxRecord, t *uiTxWithMeta) {
	h.readFilter().hideMeta(ctx, r, t)
}

// errorData is the simulation a preflight failure carries, if err is one.
func errorData(err error, e **Error) (*uiSimulate, bool) {
	if !errors.As(err, e) {
		return nil, false
	}
	u, ok := (*e).Data.(*uiSimulate)
	return u, ok && u != nil
}
