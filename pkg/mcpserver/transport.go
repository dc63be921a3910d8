package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/ferry-sh/ferry/pkg/inputlimit"
)

// JSON-RPC error codes of transport errors.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInternalError  = -32603
	// CodeServerError is the generic transport error (the hosted API's 415
	// and every other refusal that has no JSON-RPC code of its own).
	CodeServerError = -32000
)

// The hosted API's exact bodies (payments-api.md §5.15).
const (
	parseErrorBody     = `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}`
	mediaTypeErrorBody = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Unsupported Media Type: Content-Type must be application/json"},"id":null}`
	internalErrorBody  = `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal server error"},"id":null}`
)

// CodeResponseTooLarge replaces an answer larger than
// Config.MaxResponseBytes (the chain nodes' code for the same refusal).
const CodeResponseTooLarge = -32051

// servePOST normalises the request's headers as the hosted service does,
// checks the body's nesting and batch size, then lets the SDK serve it,
// turning its plain-text errors into JSON-RPC bodies and holding its
// answer to the response budget.
func (h *Handler) servePOST(w http.ResponseWriter, r *http.Request) {
	r = r.Clone(r.Context()) // the headers and body are changed below
	r.Header.Add("Accept", "application/json, text/event-stream")
	if ct := r.Header.Get("Content-Type"); ct == "" || isTextPlain(ct) {
		r.Header.Set("Content-Type", "application/json")
	}
	if !h.precheck(w, r) {
		return
	}
	tw := &errorTranslator{w: w, budget: h.maxResponse}
	h.sdk.ServeHTTP(tw, r)
	tw.finish()
}

// precheck reads the body (up to the body limit) and refuses, before the
// SDK decodes anything, a body nested deeper than MaxJSONDepth (400 -32700)
// or a batch of more than MaxBatch messages (400 -32600). The SDK then
// reads the same bytes; a body over the limit is left to its 413.
func (h *Handler) precheck(w http.ResponseWriter, r *http.Request) bool {
	if r.Body == nil {
		return true
	}
	if r.ContentLength > h.maxBody {
		// The SDK's own answer, without reading a byte.
		writeJSON(w, http.StatusRequestEntityTooLarge, rpcErrorBody(CodeServerError, fmt.Sprintf("request body exceeds %d bytes", h.maxBody), nil))
		return false
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(r.Body, h.maxBody+1)); err != nil {
		writeJSON(w, http.StatusBadRequest, rpcErrorBody(CodeParseError, "Parse error", "cannot read the request body"))
		return false
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(buf.Bytes()), r.Body), r.Body}
	if int64(buf.Len()) > h.maxBody {
		return true
	}
	shape, err := inputlimit.CheckJSON(buf.Bytes(), h.maxDepth)
	switch {
	case err != nil:
		writeJSON(w, http.StatusBadRequest, rpcErrorBody(CodeParseError, "Parse error", err.Error()))
		return false
	case shape.Array && shape.Elements > h.maxBatch:
		writeJSON(w, http.StatusBadRequest, rpcErrorBody(CodeInvalidRequest,
			fmt.Sprintf("Invalid Request: batch of %d messages exceeds the limit of %d", shape.Elements, h.maxBatch), nil))
		return false
	}
	return true
}

func isTextPlain(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "text/plain"
}

// errorTranslator passes responses through, except error responses the
// SDK writes as text/plain (http.Error), which it buffers and rewrites as
// JSON-RPC error bodies when the handler returns.
//
// It also holds the answer to budget bytes: an answer that would exceed it
// is replaced, if nothing was written yet, by a -32051 error (else cut).
type errorTranslator struct {
	w           http.ResponseWriter
	wroteHeader bool
	translating bool
	status      int
	buf         bytes.Buffer

	budget   int64
	written  int64
	overflow bool
}

// maxErrorText bounds the buffered text of an SDK error.
const maxErrorText = 4 << 10

func (t *errorTranslator) Header() http.Header { return t.w.Header() }

func (t *errorTranslator) WriteHeader(code int) {
	if t.wroteHeader {
		return
	}
	t.wroteHeader = true
	if code >= 400 && strings.HasPrefix(t.w.Header().Get("Content-Type"), "text/plain") {
		t.translating, t.status = true, code
		return
	}
	t.w.WriteHeader(code)
}

func (t *errorTranslator) Write(p []byte) (int, error) {
	if !t.wroteHeader {
		t.WriteHeader(http.StatusOK)
	}
	if t.translating {
		if room := maxErrorText - t.buf.Len(); room > 0 {
			t.buf.Write(p[:min(len(p), room)])
		}
		return len(p), nil
	}
	if t.overflow {
		return 0, errResponseTooLarge
	}
	if t.budget > 0 && t.written+int64(len(p)) > t.budget {
		t.overflow = true
		if t.written == 0 {
			// Nothing sent yet: the answer becomes the error.
			t.w.Header().Del("Content-Length")
			body := rpcErrorBody(CodeResponseTooLarge, fmt.Sprintf(
				"Response too large: the answer exceeds %d bytes; send fewer messages per request", t.budget), nil)
			t.w.Write(body)
		}
		return 0, errResponseTooLarge
	}
	n, err := t.w.Write(p)
	t.written += int64(n)
	return n, err
}

var errResponseTooLarge = errors.New("MCP response exceeds the response budget")

// Flush supports the SDK's streaming writes.
func (t *errorTranslator) Flush() {
	if t.translating {
		return
	}
	if f, ok := t.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *errorTranslator) Unwrap() http.ResponseWriter { return t.w }

func (t *errorTranslator) finish() {
	if !t.translating {
		return
	}
	hdr := t.w.Header()
	hdr.Del("X-Content-Type-Options")
	writeJSON(t.w, t.status, transportErrorBody(t.status, strings.TrimSpace(t.buf.String())))
}

// transportErrorBody maps one of the SDK's plain-text errors to a JSON-RPC
// error body (see the package documentation).
func transportErrorBody(status int, text string) []byte {
	switch {
	case status == http.StatusUnsupportedMediaType:
		return []byte(mediaTypeErrorBody)
	case status >= 500:
		return []byte(internalErrorBody)
	case status == http.StatusBadRequest && (strings.HasPrefix(text, "malformed payload") ||
		strings.HasPrefix(text, "POST requires a non-empty body")):
		return []byte(parseErrorBody)
	}
	code, msg := CodeServerError, text
	if rest, ok := strings.CutPrefix(text, "JSON RPC not handled: "); ok {
		code, msg = CodeMethodNotFound, "Method not found: "+rest
	} else if rest, ok := strings.CutPrefix(text, "invalid request: "); ok {
		code, msg = CodeInvalidRequest, "Invalid Request: "+rest
	}
	return rpcErrorBody(code, msg, nil)
}

// rpcErrorBody is a JSON-RPC error response with id null; data is left
// out when nil.
func rpcErrorBody(code int, msg string, data any) []byte {
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	}
	body, err := encodeJSON(struct {
		JSONRPC string   `json:"jsonrpc"`
		Error   rpcError `json:"error"`
		ID      any      `json:"id"`
	}{"2.0", rpcError{code, msg, data}, nil})
	if err != nil { // cannot happen for these types
		return []byte(internalErrorBody)
	}
	return body
}

// encodeJSON encodes v as the REST API does: no HTML escaping, no trailing
// newline.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
