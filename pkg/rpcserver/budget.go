package rpcserver

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/ferry-sh/ferry/pkg/ledger"
)

// DefaultMaxResponseBytes is the default response budget of one HTTP
// request (Options.MaxResponseBytes): 32 MiB, above any honest answer of a
// local node (a getBlock of a full slot under load, a getProgramAccounts of
// a busy program) and small enough that a few concurrent requests cannot
// push the process past a few hundred MiB. Agave caps the input instead
// (100 keys per getMultipleAccounts, 50 KiB bodies); ferry keeps the 4 MiB
// body of its batch-friendly clients and caps the output.
const DefaultMaxResponseBytes = 32 << 20

// CodeResponseTooLarge answers a request (or the rest of a batch) whose
// responses would exceed Options.MaxResponseBytes.
const CodeResponseTooLarge = -32051

// responseBudget is one HTTP request's allowance of response bytes,
// shared by the items of a batch (which run concurrently).
type responseBudget struct {
	limit    int64
	used     atomic.Int64
	exceeded atomic.Bool
}

// take reserves n bytes; on failure nothing is reserved and the budget is
// marked spent, so the batch's later items are refused without running.
func (b *responseBudget) take(n int64) bool {
	if b.used.Add(n) <= b.limit {
		return true
	}
	b.used.Add(-n)
	b.exceeded.Store(true)
	return false
}

func (b *responseBudget) give(n int64) { b.used.Add(-n) }

func (b *responseBudget) spent() bool { return b.exceeded.Load() }

func (b *responseBudget) err() *Error {
	return &Error{Code: CodeResponseTooLarge, Message: fmt.Sprintf(
		"Response too large: the answer to this request exceeds %d bytes; ask for fewer items, use dataSlice, or split the batch", b.limit)}
}

// itemBudget is one request object's share: what its method reserved in
// advance (ChargeResponse), settled against the encoded size afterwards.
type itemBudget struct {
	b        *responseBudget
	reserved atomic.Int64
}

// settle accounts for the encoded response of n bytes: the part the method
// did not reserve is taken now, an over-reservation is given back. It
// reports false (and releases everything) when the response does not fit.
func (it *itemBudget) settle(n int64) bool {
	r := it.reserved.Swap(0)
	switch extra := n - r; {
	case extra > 0:
		if !it.b.take(extra) {
			it.b.give(r)
			return false
		}
	case extra < 0:
		it.b.give(-extra)
	}
	return true
}

type itemBudgetKey struct{}

// ChargeResponse reserves n bytes of the current request's response budget
// (Options.MaxResponseBytes) for a result a method is about to build. It
// returns the -32051 "Response too large" *Error once the budget is spent;
// the method should return that error as is.
//
// Methods whose answer grows with stored state (account data, lists of
// accounts, blocks) call it before encoding each piece, so an oversized
// answer is refused before it is built rather than after: use
// chargeAccount for accounts, ChargeResponse with an upper bound of the
// encoded size for anything else. Whatever a method does not reserve is
// charged when its response is encoded, so the budget holds either way;
// reserving only makes the refusal cheap. Outside an HTTP request (a
// method called directly) it always succeeds.
func ChargeResponse(ctx context.Context, n int64) error {
	it, _ := ctx.Value(itemBudgetKey{}).(*itemBudget)
	if it == nil || n <= 0 {
		return nil
	}
	if !it.b.take(n) {
		return it.b.err()
	}
	it.reserved.Add(n)
	return nil
}

// accountOverhead bounds the JSON of an account apart from its data
// (lamports, owner, flags, pubkey in keyed lists).
const accountOverhead = 256

// parsedAccountSize bounds a jsonParsed token account or mint.
const parsedAccountSize = 2048

// accountResponseSize is an upper bound of the JSON encodeAccount writes
// for a with enc and slice.
func accountResponseSize(a *ledger.Account, enc string, slice *dataSlice) int64 {
	n := uint64(len(a.Data))
	if slice != nil {
		off := min(slice.Offset, n)
		n = min(slice.Length, n-off)
	}
	var data uint64
	switch enc {
	case encBinary, encBase58:
		data = n*138/100 + 1
	case encJSONParsed:
		data = max(parsedAccountSize, (n+2)/3*4)
	case encBase64Zstd: // incompressible data grows by zstd's block and frame headers
		data = (n+n/128+64+2)/3*4 + 16
	default:
		data = (n+2)/3*4 + 16
	}
	return int64(data + accountOverhead)
}

// chargeAccount reserves the response bytes of one account (see
// ChargeResponse); methods that list accounts call it for each before
// encoding it.
func chargeAccount(ctx context.Context, a *ledger.Account, enc string, slice *dataSlice) error {
	if a == nil {
		return nil
	}
	return ChargeResponse(ctx, accountResponseSize(a, enc, slice))
}
