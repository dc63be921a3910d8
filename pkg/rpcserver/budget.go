package rpcserver

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/ferry-sh/ferry/pkg/ledger"
)

// DefaultMaxResponseBytes is the default response budget of one HTTP
// request (Options.MaxResponseBytes): 16 MiB, about 50 000 token accounts
// in base64, far above what a dApp asks of a local node. Agave caps the
// input instead (100 keys per getMultipleAccounts, 50 KiB bodies); ferry
// keeps the 4 MiB bodies of its batch-friendly clients and caps the
// output, so that one request can no longer ask for a gigabyte.
const DefaultMaxResponseBytes = 16 << 20

// DefaultMaxResponseBytesInFlight is the default bound on the answers a
// node builds and holds at once, over all requests
// (Options.MaxResponseBytesInFlight): two answers of the full per-request
// budget (it follows MaxResponseBytes when that is changed). Building an answer takes about three times its size (the
// encoded data, the JSON encoder's buffer, the copy kept until it is
// sent), so this bounds the node's memory for answers near 100 MiB
// however many clients ask at once; the abuse mix of tools/abuse peaks
// near 200 MiB of RSS with it (docs/performance.md).
const DefaultMaxResponseBytesInFlight = 2 * DefaultMaxResponseBytes

// bigAnswer is the reservation size from which the in-flight bound applies:
// smaller pieces (ordinary answers) always pass it, so clients holding big
// answers cannot starve small ones; they still count towards it.
const bigAnswer = 64 << 10

// Codes of the response budget.
const (
	// CodeResponseTooLarge answers a request (or the rest of a batch)
	// whose responses would exceed Options.MaxResponseBytes.
	CodeResponseTooLarge = -32051
	// CodeResponsesInFlight answers a request for a big answer while the
	// node already holds Options.MaxResponseBytesInFlight of answers not
	// yet sent; retrying later may succeed.
	CodeResponsesInFlight = -32052
)

// inFlight counts the answer bytes a node holds, across requests.
type inFlight struct {
	limit int64
	used  atomic.Int64
}

// responseBudget is one HTTP request's allowance of response bytes,
// shared by the items of a batch (which run concurrently), and its share
// of the node's in-flight bound.
type responseBudget struct {
	limit   int64
	node    *inFlight
	used    atomic.Int64
	failure atomic.Pointer[Error]
}

// take reserves n bytes; on failure nothing is reserved and the budget is
// marked spent, so the batch's later items are refused without running
// (an answer already built still goes out if it fits).
func (b *responseBudget) take(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		b.fail(&Error{Code: CodeResponseTooLarge, Message: fmt.Sprintf(
			"Response too large: the answer to this request exceeds %d bytes; ask for fewer items, use dataSlice, or split the batch", b.limit)})
		return false
	}
	if b.node != nil && b.node.used.Add(n) > b.node.limit && n >= bigAnswer {
		b.node.used.Add(-n)
		b.used.Add(-n)
		b.fail(&Error{Code: CodeResponsesInFlight, Message: fmt.Sprintf(
			"Node busy: it holds %d bytes of answers not yet sent to other clients; retry shortly or ask for less", b.node.limit)})
		return false
	}
	return true
}

func (b *responseBudget) fail(e *Error) { b.failure.CompareAndSwap(nil, e) }

func (b *responseBudget) give(n int64) {
	b.used.Add(-n)
	if b.node != nil {
		b.node.used.Add(-n)
	}
}

// release returns the request's bytes to the node once its answer is
// sent (or handed over).
func (b *responseBudget) release() {
	if b.node != nil {
		b.node.used.Add(-b.used.Load())
	}
}

func (b *responseBudget) spent() bool { return b.failure.Load() != nil }

// err is the error of the refused items.
func (b *responseBudget) err() *Error { return b.failure.Load() }

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
// (Options.MaxResponseBytes, and the node's MaxResponseBytesInFlight) for a
// result a method is about to build. It returns the -32051 "Response too
// large" (or -32052 "Node busy") *Error once the budget is spent; the
// method should return that error as is.
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
	if it.b.spent() || !it.b.take(n) {
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
