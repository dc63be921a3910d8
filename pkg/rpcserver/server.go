// Package rpcserver serves the Solana JSON-RPC API over HTTP on top of a
// ledger.Ledger: the envelope rules (batches, notifications, error codes),
// parameter decoding, and the result shapes of Agave, so web3.js,
// @solana/kit and solana-go clients work against it unchanged.
//
// The handler is a method table. New registers the standard methods; code
// that serves a different node (an ephemeral rollup, say) adds or replaces
// methods with Handle before serving.
package rpcserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/httpguard"
	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/ledger"
)

// Standard JSON-RPC and Solana error codes (chain-rpc.md §2).
const (
	CodeParseError                  = -32700
	CodeInvalidRequest              = -32600
	CodeMethodNotFound              = -32601
	CodeInvalidParams               = -32602
	CodeInternalError               = -32603
	CodeBlockCleanedUp              = -32001
	CodePreflightFailure            = -32002
	CodeSignatureVerificationFailed = -32003
	CodeBlockNotAvailable           = -32004
	CodeNodeUnhealthy               = -32005
	CodeSlotSkipped                 = -32007
	CodeTransactionHistoryMissing   = -32011
	CodeUnsupportedTxVersion        = -32015
	CodeMinContextSlotNotReached    = -32016
)

// Error is a JSON-RPC error object. Methods return it to choose the code;
// any other error becomes -32603.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

// Errorf builds an Error with a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidParams is -32602 with Agave's "Invalid params: <detail>." form,
// used for parameters that do not decode.
func InvalidParams(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParams, Message: "Invalid params: " + fmt.Sprintf(format, args...) + "."}
}

// InvalidParam is -32602 with a message as given (Agave's semantic
// checks, e.g. "Invalid param: could not find account").
func InvalidParam(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// Method handles one JSON-RPC method. It returns a value to marshal as the
// result, or an error (an *Error chooses the code).
type Method func(ctx context.Context, params Params) (any, error)

// Default limits of a Handler (Options).
const (
	DefaultMaxBodyBytes = 4 << 20
	DefaultMaxBatch     = 1024
)

// CodeOriginNotAllowed refuses a local-only method (LocalOnly) to a
// browser request from an origin not in Options.FaucetOrigins.
const CodeOriginNotAllowed = -32050

// maxErrorMessage bounds an error message, whatever a method put in it, so
// that no error repeats unbounded input.
const maxErrorMessage = 1024

// Options configure a Handler. Zero values mean the defaults.
type Options struct {
	// MaxBodyBytes limits a request body (DefaultMaxBodyBytes, 4 MiB);
	// larger bodies get HTTP 413.
	MaxBodyBytes int64
	// MaxBatch limits the requests in one batch (DefaultMaxBatch, 1024).
	MaxBatch int
	// MaxJSONDepth limits how deep a request body may nest
	// (inputlimit.DefaultMaxJSONDepth, 127, Agave's limit); deeper bodies
	// get -32700 Parse error before anything is decoded.
	MaxJSONDepth int
	// MaxResponseBytes is the response budget of one HTTP request, shared
	// by the items of a batch (DefaultMaxResponseBytes, 16 MiB). A request
	// whose answer would exceed it gets -32051 (CodeResponseTooLarge), as
	// do the batch items after the budget ran out.
	MaxResponseBytes int64
	// MaxResponseBytesInFlight bounds the answers the handler holds at
	// once, over all requests (default twice MaxResponseBytes,
	// DefaultMaxResponseBytesInFlight; never less than MaxResponseBytes):
	// a request for a big answer (a piece of 64 KiB or more) made while
	// it is reached gets -32052 (CodeResponsesInFlight).
	MaxResponseBytesInFlight int64
	// FaucetOrigins are the browser origins allowed to call the local-only
	// methods (requestAirdrop, ferry_createMint, ferry_mintTo; see
	// LocalOnly). Requests from non-browser clients (no Origin or
	// Sec-Fetch-Site header: the CLI, SDKs in Node, curl) are always
	// allowed; a browser request from any other origin gets -32050
	// (CodeOriginNotAllowed). The zero value allows no browser origin.
	FaucetOrigins httpguard.Origins
	// Version is reported as solana-core by getVersion and as apiVersion
	// in contexts (default "3.0.0").
	Version string
	// FeatureSet is getVersion's feature-set.
	FeatureSet uint32
	// Logger receives request errors (default: discard).
	Logger *slog.Logger
	// ReadFilter, if set, hides accounts from callers that may not see
	// them (see ReadFilter and Handler.SetReadFilter).
	ReadFilter ReadFilter
	// MaxProgramAccounts caps the accounts one getProgramAccounts or
	// getTokenAccountsBy* answer may list (default
	// DefaultMaxProgramAccounts; negative: no cap). A query matching more
	// is refused with -32012, as Agave refuses scans over its
	// accounts-index scan limit.
	MaxProgramAccounts int
	// LargestAccountsCacheTTL is how long a getLargestAccounts answer,
	// which scans every account, is reused (default
	// DefaultLargestAccountsCacheTTL; negative: never). Agave caches it
	// for two hours.
	LargestAccountsCacheTTL time.Duration
	// ClusterNode is what getClusterNodes reports about this node's
	// endpoints; SetClusterNode replaces it once they are bound.
	ClusterNode ClusterNode
}

// Handler serves JSON-RPC for one ledger. It is an http.Handler; POST any
// path. GET /health answers "ok" like Agave.
type Handler struct {
	l         *ledger.Ledger
	opts      Options
	log       *slog.Logger
	inFlight  *inFlight
	mu        sync.RWMutex
	methods   map[string]Method
	localOnly map[string]bool
	filter    atomic.Pointer[ReadFilter]

	node    atomic.Pointer[ClusterNode]
	largest largestCache
	batch   *workerPool // answers a batch's items
}

// New returns a handler with every standard method registered.
func New(l *ledger.Ledger, o Options) *Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.MaxJSONDepth <= 0 {
		o.MaxJSONDepth = inputlimit.DefaultMaxJSONDepth
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.MaxResponseBytesInFlight <= 0 {
		// Two answers of the full budget (DefaultMaxResponseBytesInFlight
		// with the default budget).
		o.MaxResponseBytesInFlight = 2 * o.MaxResponseBytes
	}
	o.MaxResponseBytesInFlight = max(o.MaxResponseBytesInFlight, o.MaxResponseBytes)
	if o.Version == "" {
		o.Version = "3.0.0"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxProgramAccounts == 0 {
		o.MaxProgramAccounts = DefaultMaxProgramAccounts
	}
	if o.LargestAccountsCacheTTL == 0 {
		o.LargestAccountsCacheTTL = DefaultLargestAccountsCacheTTL
	}
	h := &Handler{l: l, opts: o, log: o.Logger, methods: map[string]Method{}, localOnly: map[string]bool{"requestAirdrop": true},
		inFlight: &inFlight{limit: o.MaxResponseBytesInFlight}, batch: newWorkerPool()}
	h.SetReadFilter(o.ReadFilter)
	h.SetClusterNode(o.ClusterNode)
	h.registerStandard()
	return h
}

// Ledger is the ledger the handler serves.
func (h *Handler) Ledger() *ledger.Ledger { return h.l }

// Handle registers or replaces a method.
func (h *Handler) Handle(name string, m Method) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.methods[name] = m
}

// HandleLocalOnly registers or replaces a method that changes local state
// on a development node (a faucet, a cheat code): browsers may call it only
// from Options.FaucetOrigins. requestAirdrop is one from the start, and so
// is every ferry_* method however it is registered, except the reads in
// openFerryMethods.
func (h *Handler) HandleLocalOnly(name string, m Method) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.methods[name] = m
	h.localOnly[name] = true
}

// openFerryMethods are the ferry_* methods that only read, which browsers
// may call from any origin.
var openFerryMethods = map[string]bool{MethodFaucetInfo: true}

// LocalOnly reports whether name is a local-only method (HandleLocalOnly).
func (h *Handler) LocalOnly(name string) bool {
	if strings.HasPrefix(name, "ferry_") && !openFerryMethods[name] {
		return true
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.localOnly[name]
}

// Method returns a registered method (nil if none), e.g. to wrap it.
func (h *Handler) Method(name string) Method {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.methods[name]
}

// Methods lists the registered method names, sorted.
func (h *Handler) Methods() []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]string, 0, len(h.methods))
	for k := range h.methods {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// response is one JSON-RPC response.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
	ID      json.RawMessage `json:"id"`
}

var nullID = json.RawMessage("null")

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/health" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if h.l.Health() != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "unknown")
			return
		}
		io.WriteString(w, "ok")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Used HTTP Method is not allowed. POST or OPTIONS is required", http.StatusMethodNotAllowed)
		return
	}
	body, err := readBody(w, r, h.opts.MaxBodyBytes)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSON(w, http.StatusRequestEntityTooLarge, response{JSONRPC: "2.0", ID: nullID,
				Error: Errorf(CodeInvalidRequest, "request body exceeds %d bytes", h.opts.MaxBodyBytes)})
			return
		}
		return // the client went away or timed out; nobody to answer
	}
	ctx := r.Context()
	if r.URL.RawQuery != "" {
		ctx = WithRequestToken(ctx, r.URL.Query().Get("token"))
	}
	if origin, browser := httpguard.BrowserOrigin(r); browser {
		ctx = context.WithValue(ctx, browserKey{}, browserRequest{origin: origin})
	}
	parts, batch, release := h.answer(ctx, body)
	defer release() // once the answer is written
	if parts == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	// The parts are written one by one: a batch's answer is never copied
	// into one more buffer.
	size := len(parts) - 1
	if batch {
		size += 2
	}
	for _, p := range parts {
		size += len(p)
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json; charset=utf-8")
	hdr.Set("Content-Length", strconv.Itoa(size))
	if batch {
		io.WriteString(w, "[")
	}
	for i, p := range parts {
		if i > 0 {
			io.WriteString(w, ",")
		}
		w.Write(p)
	}
	if batch {
		io.WriteString(w, "]")
	}
}

// bodyPrealloc bounds what readBody allocates before the bytes arrive: a
// client that declares 4 MiB and sends a byte a second must not cost
// 4 MiB per connection.
const bodyPrealloc = 64 << 10

// readBody reads a request body of at most limit bytes. A declared length
// over the limit fails before anything is read; memory grows with the
// bytes that actually arrive.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	var buf bytes.Buffer
	if n := r.ContentLength; n > 0 {
		// ReadFrom wants bytes.MinRead free before every read, the one
		// that finds the end too: a buffer of exactly the declared length
		// was copied into one twice as large once the body filled it.
		buf.Grow(int(min(n, bodyPrealloc)) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// browserRequest marks the context of a request a browser sent.
type browserRequest struct{ origin string }

type browserKey struct{}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// HandleBody answers a raw request body (a request or a batch). It returns
// nil when nothing must be sent back (only notifications).
func (h *Handler) HandleBody(ctx context.Context, body []byte) []byte {
	parts, batch, release := h.answer(ctx, body)
	defer release()
	switch {
	case parts == nil:
		return nil
	case !batch:
		return parts[0]
	}
	size := len(parts) + 1
	for _, p := range parts {
		size += len(p)
	}
	out := make([]byte, 0, size)
	out = append(out, '[')
	for i, p := range parts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, p...)
	}
	return append(out, ']')
}

// answer returns the encoded responses to a body: one part for a single
// request, the batch's items (without the brackets) for a batch, nil when
// nothing must be sent back. Call release once the parts are sent: it
// returns their bytes to the node's in-flight bound.
func (h *Handler) answer(ctx context.Context, body []byte) (parts [][]byte, batch bool, release func()) {
	noop := func() {}
	one := func(e *Error) ([][]byte, bool, func()) {
		return [][]byte{mustMarshal(response{JSONRPC: "2.0", ID: nullID, Error: e})}, false, noop
	}
	switch err := checkJSON(body, h.opts.MaxJSONDepth); err {
	case nil:
	case errTooDeep:
		return one(&Error{Code: CodeParseError, Message: "Parse error", Data: fmt.Sprintf("JSON nested deeper than %d levels", h.opts.MaxJSONDepth)})
	default:
		return one(Errorf(CodeParseError, "Parse error"))
	}
	budget := &responseBudget{limit: h.opts.MaxResponseBytes, node: h.inFlight}
	if items, ok := splitArray(body); ok {
		if len(items) == 0 {
			return one(Errorf(CodeInvalidRequest, "Invalid request"))
		}
		if len(items) > h.opts.MaxBatch {
			return one(Errorf(CodeInvalidRequest, "batch of %d requests exceeds the limit of %d", len(items), h.opts.MaxBatch))
		}
		out := make([][]byte, len(items))
		h.runBatch(ctx, budget, items, out)
		parts := out[:0]
		for _, p := range out {
			if p != nil {
				parts = append(parts, p)
			}
		}
		if len(parts) == 0 {
			return nil, true, budget.release
		}
		return parts, true, budget.release
	}
	if p := h.answerOne(ctx, budget, body); p != nil {
		return [][]byte{p}, false, budget.release
	}
	return nil, false, budget.release
}

// answerOne answers one request object within the budget: the encoded
// response, or nil for a notification.
func (h *Handler) answerOne(ctx context.Context, budget *responseBudget, raw json.RawMessage) []byte {
	it := &itemBudget{b: budget}
	r := h.handleOne(context.WithValue(ctx, itemBudgetKey{}, it), raw)
	if r == nil {
		it.settle(0)
		return nil
	}
	out := marshalResponse(r)
	if r.Error == nil && !it.settle(int64(len(out))) {
		return mustMarshal(&response{JSONRPC: "2.0", ID: r.ID, Error: budget.err()})
	}
	if r.Error != nil {
		it.settle(0) // errors are small and not charged
	}
	return out
}

// runBatch answers batch items concurrently (a batch of sends should not
// serialize their signature checks), keeping their order.
func (h *Handler) runBatch(ctx context.Context, budget *responseBudget, items []json.RawMessage, out [][]byte) {
	const workers = 8
	if len(items) == 1 {
		out[0] = h.answerOne(ctx, budget, items[0])
		return
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	n := min(workers, len(items))
	wg.Add(n)
	for range n {
		h.batch.run(func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(items); i = int(next.Add(1) - 1) {
				out[i] = h.answerOne(ctx, budget, items[i])
			}
		})
	}
	wg.Wait()
}

// marshalResponse encodes a response, writing the hottest shapes (the
// signature sendTransaction returns, plain numbers and strings) directly.
func marshalResponse(r *response) []byte {
	if r.Error == nil {
		var b []byte
		head := `{"jsonrpc":"2.0","result":`
		switch v := r.Result.(type) {
		case solana.Signature:
			b = append(append(append([]byte(head), '"'), v.String()...), '"')
		case uint64:
			b = strconv.AppendUint([]byte(head), v, 10)
		case string:
			if !needsEscape(v) {
				b = append(append(append([]byte(head), '"'), v...), '"')
			}
		}
		if b != nil {
			b = append(append(append(b, `,"id":`...), r.ID...), '}')
			return b
		}
	}
	return mustMarshal(r)
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			return true
		}
	}
	return false
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Results are plain data; this only fires on a programming error.
		b, _ = json.Marshal(response{JSONRPC: "2.0", ID: nullID, Error: Errorf(CodeInternalError, "Internal error: %v", err)})
	}
	return b
}

// handleOne answers one request object; nil for a notification.
func (h *Handler) handleOne(ctx context.Context, raw json.RawMessage) (resp *response) {
	// raw is valid JSON here (HandleBody checked the whole body).
	req, ok := scanEnvelope(raw)
	if !ok {
		return &response{JSONRPC: "2.0", ID: nullID, Error: Errorf(CodeInvalidRequest, "Invalid request")}
	}
	id := req.id
	notification := id == nil
	if notification {
		id = nullID
	}
	invalid := func() *response {
		return &response{JSONRPC: "2.0", ID: id, Error: Errorf(CodeInvalidRequest, "Invalid request")}
	}
	if v, ok := plainString(req.jsonrpc); !ok || v != "2.0" {
		return invalid()
	}
	method, ok := plainString(req.method)
	if !ok && (len(req.method) == 0 || req.method[0] != '"' || json.Unmarshal(req.method, &method) != nil) {
		return invalid()
	}
	var params Params
	if p := bytes.TrimSpace(req.params); len(p) > 0 && !bytes.Equal(p, []byte("null")) {
		if p[0] != '[' {
			if notification {
				return nil
			}
			return &response{JSONRPC: "2.0", ID: id, Error: InvalidParams("invalid type: map, expected a sequence")}
		}
		if params, ok = splitArray(p); !ok {
			return invalid()
		}
	}
	m := h.Method(method)
	if m == nil {
		if notification {
			return nil
		}
		return &response{JSONRPC: "2.0", ID: id, Error: Errorf(CodeMethodNotFound, "Method not found")}
	}
	if e := h.checkOrigin(ctx, method); e != nil {
		if notification {
			return nil
		}
		return &response{JSONRPC: "2.0", ID: id, Error: e}
	}
	if it, _ := ctx.Value(itemBudgetKey{}).(*itemBudget); it != nil && it.b.spent() {
		// The batch's budget ran out: later items are not run.
		if notification {
			return nil
		}
		return &response{JSONRPC: "2.0", ID: id, Error: it.b.err()}
	}
	defer func() {
		// A bug in one method must not take the node down.
		if p := recover(); p != nil {
			h.log.Error("rpc method panicked", "method", method, "panic", p)
			resp = &response{JSONRPC: "2.0", ID: id, Error: Errorf(CodeInternalError, "Internal error")}
			if notification {
				resp = nil
			}
		}
	}()
	start := time.Now()
	result, err := m(ctx, params)
	if notification {
		return nil
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			h.log.Warn("rpc method failed", "method", method, "err", err, "elapsed", time.Since(start))
			e = Errorf(CodeInternalError, "Internal error: %v", err)
		}
		if len(e.Message) > maxErrorMessage {
			e = &Error{Code: e.Code, Message: inputlimit.Truncate(e.Message, maxErrorMessage), Data: e.Data}
		}
		return &response{JSONRPC: "2.0", ID: id, Error: e}
	}
	if result == nil {
		result = jsonNull{}
	}
	return &response{JSONRPC: "2.0", ID: id, Result: result}
}

// checkOrigin refuses a local-only method to a browser request from an
// origin the operator did not allow.
func (h *Handler) checkOrigin(ctx context.Context, method string) *Error {
	br, ok := ctx.Value(browserKey{}).(browserRequest)
	if !ok || !h.LocalOnly(method) || h.opts.FaucetOrigins.Allows(br.origin) {
		return nil
	}
	from := "origin " + strconv.Quote(inputlimit.Truncate(br.origin, inputlimit.MaxEcho))
	hint := "ferry serve --allow-origin " + inputlimit.Truncate(br.origin, inputlimit.MaxEcho)
	if br.origin == "" {
		from, hint = "a browser page (no Origin header)", `ferry serve --allow-origin "*"`
	}
	return &Error{Code: CodeOriginNotAllowed, Message: fmt.Sprintf(
		"%s changes local state and is refused to browser requests from %s; allow the origin with `%s`", method, from, hint)}
}

// jsonNull marshals as null; it stands in for a nil result, which
// omitempty would otherwise drop.
type jsonNull struct{}

func (jsonNull) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// Null is a result that marshals as JSON null (e.g. getTransaction for an
// unknown signature).
var Null any = jsonNull{}
