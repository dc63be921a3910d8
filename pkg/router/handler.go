package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/inputlimit"
)

// JSON-RPC error codes the router answers with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeRouterError is the MagicBlock router's code for its own errors
	// (chain-rpc.md §9.3); the message is the error's text.
	CodeRouterError = -32604
)

// Handler limits.
const (
	DefaultMaxBodyBytes = 1 << 20
	DefaultMaxBatch     = 100
	// MaxAccounts bounds getBlockhashForAccounts (a transaction cannot
	// reference more accounts).
	MaxAccounts = 256
)

// Handler serves a Backend as JSON-RPC 2.0 over HTTP POST, on any path (the
// MagicBlock router ignores it, so "/" and "/getRoutes" both work). It
// answers getRoutes, getIdentity, getDelegationStatus,
// getBlockhashForAccounts and getHealth, single or batched. Backend errors
// become code -32604 with the error's text, unless the backend returns a
// *chainclient.RPCError itself. The zero value of the limits means the
// defaults.
//
// The handler sets no CORS headers: `ferry serve` wraps its listener with
// httpguard.AnyOrigin, as for the chain nodes.
type Handler struct {
	Backend Backend
	// MaxBodyBytes bounds a request body (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxBatch bounds the number of calls in a batch (default
	// DefaultMaxBatch).
	MaxBatch int
	// MaxJSONDepth bounds how deep a body may nest (default
	// inputlimit.DefaultMaxJSONDepth); deeper bodies get -32700 before
	// anything is decoded.
	MaxJSONDepth int
}

type rpcResponse struct {
	JSONRPC string                `json:"jsonrpc"`
	Result  json.RawMessage       `json:"result,omitempty"`
	Error   *chainclient.RPCError `json:"error,omitempty"`
	ID      json.RawMessage       `json:"id"`
}

var nullID = json.RawMessage("null")

func errorResponse(id json.RawMessage, code int, msg string) *rpcResponse {
	if id == nil {
		id = nullID
	}
	return &rpcResponse{JSONRPC: "2.0", Error: &chainclient.RPCError{Code: code, Message: msg}, ID: id}
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "POST")
		writeJSON(w, http.StatusMethodNotAllowed, errorResponse(nil, CodeInvalidRequest, "Invalid request: the router accepts JSON-RPC over POST"))
		return
	}
	limit := h.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSON(w, http.StatusRequestEntityTooLarge, errorResponse(nil, CodeInvalidRequest, fmt.Sprintf("Invalid request: body larger than %d bytes", limit)))
			return
		}
		writeJSON(w, http.StatusBadRequest, errorResponse(nil, CodeParseError, "Parse error: cannot read request body"))
		return
	}
	resp := h.handleBody(r.Context(), body)
	if resp == nil {
		w.WriteHeader(http.StatusNoContent) // only notifications: nothing to answer
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// handleBody answers a request body: an object, a batch array, or nil when
// there is nothing to answer.
func (h *Handler) handleBody(ctx context.Context, body []byte) any {
	body = bytes.TrimSpace(body)
	// The depth check comes first: it is linear and allocation-free, and
	// counts a batch's calls before anything is decoded.
	shape, err := inputlimit.CheckJSON(body, h.MaxJSONDepth)
	if err != nil {
		return errorResponse(nil, CodeParseError, "Parse error: "+err.Error())
	}
	if len(body) == 0 || !json.Valid(body) {
		return errorResponse(nil, CodeParseError, "Parse error")
	}
	max := h.MaxBatch
	if max <= 0 {
		max = DefaultMaxBatch
	}
	if shape.Array && shape.Elements > max {
		return errorResponse(nil, CodeInvalidRequest, fmt.Sprintf("Invalid request: batch of %d calls, at most %d allowed", shape.Elements, max))
	}
	if body[0] != '[' {
		if resp := h.handleOne(ctx, body); resp != nil {
			return resp
		}
		return nil
	}
	var calls []json.RawMessage
	if err := json.Unmarshal(body, &calls); err != nil {
		return errorResponse(nil, CodeParseError, "Parse error")
	}
	if len(calls) == 0 {
		return errorResponse(nil, CodeInvalidRequest, "Invalid request: empty batch")
	}
	if len(calls) > max {
		return errorResponse(nil, CodeInvalidRequest, fmt.Sprintf("Invalid request: batch of %d calls, at most %d allowed", len(calls), max))
	}
	out := make([]*rpcResponse, 0, len(calls))
	for _, c := range calls {
		if resp := h.handleOne(ctx, c); resp != nil {
			out = append(out, resp)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// handleOne answers one call; nil for a valid notification (no id).
func (h *Handler) handleOne(ctx context.Context, raw json.RawMessage) (resp *rpcResponse) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return errorResponse(nil, CodeInvalidRequest, "Invalid request: not a JSON-RPC call object")
	}
	id, hasID := fields["id"]
	if hasID && !validID(id) {
		return errorResponse(nil, CodeInvalidRequest, "Invalid request: id must be a string, a number or null")
	}
	if string(fields["jsonrpc"]) != `"2.0"` {
		return errorResponse(id, CodeInvalidRequest, `Invalid request: jsonrpc must be "2.0"`)
	}
	var method string
	if err := json.Unmarshal(fields["method"], &method); err != nil || fields["method"] == nil {
		return errorResponse(id, CodeInvalidRequest, "Invalid request: method must be a string")
	}
	params := fields["params"]
	if p := bytes.TrimSpace(params); len(p) > 0 && p[0] != '[' && p[0] != '{' && !isNull(p) {
		return errorResponse(id, CodeInvalidRequest, "Invalid request: params must be an array or an object")
	}
	if !hasID {
		return nil // a notification: these methods have no side effects
	}
	defer func() {
		if p := recover(); p != nil {
			resp = errorResponse(id, CodeInternalError, "Internal error")
		}
	}()
	result, rerr := h.dispatch(ctx, method, params)
	if rerr != nil {
		return &rpcResponse{JSONRPC: "2.0", Error: rerr, ID: id}
	}
	b, err := json.Marshal(result)
	if err != nil {
		return errorResponse(id, CodeInternalError, "Internal error: cannot encode result")
	}
	return &rpcResponse{JSONRPC: "2.0", Result: b, ID: id}
}

func (h *Handler) dispatch(ctx context.Context, method string, params json.RawMessage) (any, *chainclient.RPCError) {
	switch method {
	case "getRoutes":
		routes, err := h.Backend.Routes(ctx)
		if routes == nil {
			routes = []chainclient.Route{}
		}
		return routes, backendError(err)
	case "getIdentity":
		id, err := h.Backend.Identity(ctx)
		return id, backendError(err)
	case "getHealth":
		return "ok", nil
	case "getDelegationStatus":
		args, perr := positional(params, 1, 1)
		if perr != nil {
			return nil, perr
		}
		key, perr := pubkeyParam(args[0], "pubkey")
		if perr != nil {
			return nil, perr
		}
		st, err := h.Backend.DelegationStatus(ctx, key)
		return st, backendError(err)
	case "getBlockhashForAccounts":
		args, perr := positional(params, 1, 1)
		if perr != nil {
			return nil, perr
		}
		var strs []json.RawMessage
		if err := json.Unmarshal(args[0], &strs); err != nil || strs == nil {
			return nil, invalidParams("expected [[pubkey, …]]")
		}
		if len(strs) > MaxAccounts {
			return nil, invalidParams(fmt.Sprintf("too many accounts: %d, at most %d", len(strs), MaxAccounts))
		}
		keys := make([]solana.PublicKey, len(strs))
		for i, s := range strs {
			k, perr := pubkeyParam(s, fmt.Sprintf("account %d", i))
			if perr != nil {
				return nil, perr
			}
			keys[i] = k
		}
		bh, err := h.Backend.BlockhashForAccounts(ctx, keys)
		return bh, backendError(err)
	}
	return nil, &chainclient.RPCError{Code: CodeMethodNotFound, Message: "Method not found"}
}

// positional decodes params as an array of min..max elements.
func positional(params json.RawMessage, min, max int) ([]json.RawMessage, *chainclient.RPCError) {
	var args []json.RawMessage
	if p := bytes.TrimSpace(params); len(p) > 0 && !isNull(p) {
		if err := json.Unmarshal(p, &args); err != nil {
			return nil, invalidParams("params must be an array")
		}
	}
	if len(args) < min || len(args) > max {
		want := fmt.Sprint(min)
		if max != min {
			want = fmt.Sprintf("%d to %d", min, max)
		}
		return nil, invalidParams(fmt.Sprintf("expected %s params, got %d", want, len(args)))
	}
	return args, nil
}

func pubkeyParam(raw json.RawMessage, what string) (solana.PublicKey, *chainclient.RPCError) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return solana.PublicKey{}, invalidParams(what + " must be a base58 string")
	}
	k, err := inputlimit.PublicKey(s) // refuses long text before decoding it
	if err != nil {
		return solana.PublicKey{}, invalidParams(fmt.Sprintf("%s %q is not a public key", what, inputlimit.Truncate(s, inputlimit.MaxEcho)))
	}
	return k, nil
}

func invalidParams(msg string) *chainclient.RPCError {
	return &chainclient.RPCError{Code: CodeInvalidParams, Message: "Invalid params: " + msg}
}

// backendError maps a Backend error to the JSON-RPC error the MagicBlock
// router would send.
func backendError(err error) *chainclient.RPCError {
	if err == nil {
		return nil
	}
	if re, ok := err.(*chainclient.RPCError); ok {
		return re
	}
	return &chainclient.RPCError{Code: CodeRouterError, Message: err.Error()}
}

func validID(id json.RawMessage) bool {
	t := bytes.TrimSpace(id)
	if len(t) == 0 {
		return false
	}
	switch t[0] {
	case '"', 'n':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

func isNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorResponse(nil, CodeInternalError, "Internal error"))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
