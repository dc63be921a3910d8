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
	"sync"
	"sync/atomic"
	"time"

	"github.com/gagliardetto/solana-go"

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

// Options configure a Handler. Zero values mean the defaults.
type Options struct {
	// MaxBodyBytes limits a request body (default 4 MiB); larger bodies
	// get HTTP 413.
	MaxBodyBytes int64
	// MaxBatch limits the requests in one batch (default 1024).
	MaxBatch int
	// Version is reported as solana-core by getVersion and as apiVersion
	// in contexts (default "3.0.0").
	Version string
	// FeatureSet is getVersion's feature-set.
	FeatureSet uint32
	// Logger receives request errors (default: discard).
	Logger *slog.Logger
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
	l       *ledger.Ledger
	opts    Options
	log     *slog.Logger
	mu      sync.RWMutex
	methods map[string]Method

	node    atomic.Pointer[ClusterNode]
	largest largestCache
}

// New returns a handler with every standard method registered.
func New(l *ledger.Ledger, o Options) *Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 4 << 20
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 1024
	}
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
	h := &Handler{l: l, opts: o, log: o.Logger, methods: map[string]Method{}}
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
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSON(w, http.StatusRequestEntityTooLarge, response{JSONRPC: "2.0", ID: nullID,
				Error: Errorf(CodeInvalidRequest, "request body exceeds %d bytes", h.opts.MaxBodyBytes)})
			return
		}
		return // the client went away or timed out; nobody to answer
	}
	out := h.HandleBody(r.Context(), body)
	if out == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// HandleBody answers a raw request body (a request or a batch). It returns
// nil when nothing must be sent back (only notifications).
func (h *Handler) HandleBody(ctx context.Context, body []byte) []byte {
	if !validJSON(body) {
		return mustMarshal(response{JSONRPC: "2.0", ID: nullID, Error: Errorf(CodeParseError, "Parse error")})
	}
	if items, ok := splitArray(body); ok {
		if len(items) == 0 {
			return mustMarshal(response{JSONRPC: "2.0", ID: nullID, Error: Errorf(CodeInvalidRequest, "Invalid request")})
		}
		if len(items) > h.opts.MaxBatch {
			return mustMarshal(response{JSONRPC: "2.0", ID: nullID,
				Error: Errorf(CodeInvalidRequest, "batch of %d requests exceeds the limit of %d", len(items), h.opts.MaxBatch)})
		}
		resps := make([]*response, len(items))
		h.runBatch(ctx, items, resps)
		var out []*response
		for _, r := range resps {
			if r != nil {
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return mustMarshal(out)
	}
	r := h.handleOne(ctx, body)
	if r == nil {
		return nil
	}
	return marshalResponse(r)
}

// runBatch answers batch items concurrently (a batch of sends should not
// serialize their signature checks), keeping their order.
func (h *Handler) runBatch(ctx context.Context, items []json.RawMessage, out []*response) {
	const workers = 8
	if len(items) == 1 {
		out[0] = h.handleOne(ctx, items[0])
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(workers, len(items)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = h.handleOne(ctx, items[i])
			}
		}()
	}
	for i := range items {
		next <- i
	}
	close(next)
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
		return &response{JSONRPC: "2.0", ID: id, Error: e}
	}
	if result == nil {
		result = jsonNull{}
	}
	return &response{JSONRPC: "2.0", ID: id, Result: result}
}

// jsonNull marshals as null; it stands in for a nil result, which
// omitempty would otherwise drop.
type jsonNull struct{}

func (jsonNull) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// Null is a result that marshals as JSON null (e.g. getTransaction for an
// unknown signature).
var Null any = jsonNull{}
