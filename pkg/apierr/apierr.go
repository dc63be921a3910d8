// Package apierr is the error contract shared by the payments HTTP API, the
// MCP tools and the CLI: an HTTP status, a stable machine code, a message and
// optional details, rendered as {"error":{"code","message","details"}}.
package apierr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// Error is a client-facing error with a stable code.
type Error struct {
	Status  int     `json:"-"`
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Details any     `json:"details,omitempty"`
	Issues  []Issue `json:"issues,omitempty"` // only for VALIDATION_ERROR
	// Err is the underlying cause; it is never serialized.
	Err error `json:"-"`
}

// Issue is one validation problem, shaped like a zod issue.
type Issue struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Path    []any  `json:"path"`
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Envelope is the JSON body of an error response.
type Envelope struct {
	Error *Error `json:"error"`
}

// MarshalJSON of an Envelope writes {"error":{...}}.
func (e *Error) Body() []byte {
	b, _ := json.Marshal(Envelope{Error: e})
	return b
}

// New returns an error with status, code and message.
func New(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

// Newf formats the message.
func Newf(status int, code, format string, args ...any) *Error {
	return New(status, code, fmt.Sprintf(format, args...))
}

// WithDetails returns a copy with details set.
func (e *Error) WithDetails(d any) *Error {
	c := *e
	c.Details = d
	return &c
}

// Wrap returns a copy carrying cause err (not serialized).
func (e *Error) Wrap(err error) *Error {
	c := *e
	c.Err = err
	return &c
}

// BadRequest is a 400 with the given code.
func BadRequest(code, message string) *Error { return New(http.StatusBadRequest, code, message) }

// Common codes.
const (
	CodeValidation     = "VALIDATION_ERROR"
	CodeNotFound       = "NOT_FOUND"
	CodeInternal       = "INTERNAL_ERROR"
	CodeRPC            = "RPC_ERROR"
	CodeConfig         = "CONFIG_ERROR"
	CodeInvalidKey     = "INVALID_PUBLIC_KEY"
	CodeInvalidCluster = "INVALID_CLUSTER"
	// CodeUpstreamNotAllowed (400): a request named an upstream URL (a
	// custom cluster, a sendRpcEndpoint) that the server is not allowed to
	// contact: neither a configured endpoint nor one the operator allowed
	// (ferry serve --allow-upstream). No connection was made.
	CodeUpstreamNotAllowed = "UPSTREAM_NOT_ALLOWED"
	// CodeLedgerHalted (503): a ledger of the request's cluster stopped
	// accepting writes (its last commit failed, e.g. the disk is full), so
	// a build or send could never land. GET /health says why; restart the
	// server once the cause is fixed.
	CodeLedgerHalted = "LEDGER_HALTED"
)

// Validation builds the 422 VALIDATION_ERROR body. When every issue is a
// missing required field the message lists them ("Missing required fields:
// a, b"), as the hosted API does; otherwise it is "Request validation failed".
func Validation(issues ...Issue) *Error {
	msg := "Request validation failed"
	var missing []string
	allMissing := len(issues) > 0
	for _, is := range issues {
		if is.Code == "invalid_type" && strings.HasSuffix(is.Message, " is required") {
			missing = append(missing, strings.TrimSuffix(is.Message, " is required"))
		} else {
			allMissing = false
		}
	}
	if allMissing {
		msg = "Missing required fields: " + strings.Join(missing, ", ")
	}
	return &Error{Status: http.StatusUnprocessableEntity, Code: CodeValidation, Message: msg, Issues: issues}
}

// Missing is the issue for an absent required field at path.
func Missing(path ...any) Issue {
	return Issue{Code: "invalid_type", Message: dotted(path) + " is required", Path: path}
}

// Invalid is a custom issue at path.
func Invalid(message string, path ...any) Issue {
	return Issue{Code: "custom", Message: message, Path: path}
}

func dotted(path []any) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ".")
}

// Internal is the 500 body that never leaks internals.
func Internal(cause error) *Error {
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "Unexpected server error", Err: cause}
}

// As extracts an *Error from err, or wraps an unknown error as Internal.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Internal(err)
}

var urlPattern = regexp.MustCompile(`https?://[^\s)]+`)

// RedactURLs replaces every http(s) URL in s with "[redacted-url]", so RPC
// endpoints (which may carry API keys or tokens) never reach clients.
func RedactURLs(s string) string { return urlPattern.ReplaceAllString(s, "[redacted-url]") }
