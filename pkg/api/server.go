// Package api is ferry's payments HTTP API, compatible with MagicBlock's
// hosted payments.magicblock.app ("SPL Private Payments API"): every route
// of payments-api.md §1.1 except the merchant routes, the same request
// fields, defaults and validation messages, and the same error contract
// ({"error":{"code","message","details"}}).
//
// The operations live in Service, with typed inputs and outputs; the HTTP
// handlers only decode, call the service and encode, and the MCP endpoint
// calls the same methods. Clusters maps each request's cluster field to
// long-lived cached chain clients, which ferry serve points at its
// embedded chain nodes in-process.
//
// GET /doc is an OpenAPI 3.1 document generated from the same request and
// response types the handlers decode and encode; GET /reference renders it
// without any external resource.
package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/schema"
)

// Transport-level error codes (besides the hosted API's NOT_FOUND and
// INTERNAL_ERROR).
const (
	// 400: the body is not JSON.
	CodeInvalidJSON = "INVALID_JSON"
	// 405: the path exists, the method does not (see the Allow header).
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	// 413: the body is larger than Config.MaxBodyBytes.
	CodePayloadTooLarge = "PAYLOAD_TOO_LARGE"
	// 415: a body whose Content-Type is not JSON.
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
)

// Server is the payments HTTP API. It is an http.Handler; create it with
// New and stop its background work with Close.
type Server struct {
	svc     *Service
	log     *slog.Logger
	cors    corsPolicy
	maxBody int64

	mu     sync.RWMutex
	paths  map[string]map[string]*route // path → method → route
	routes []*route
	// doc is the generated OpenAPI document (nil: not generated since the
	// routes last changed; Doc). docMu makes one caller generate it.
	doc   atomic.Pointer[[]byte]
	docMu sync.Mutex

	idPrefix string
	idSeq    atomic.Uint64
}

// New returns the API server of cfg.
func New(cfg Config) (*Server, error) {
	svc, err := NewService(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{svc: svc, log: svc.log, cors: newCORS(cfg.CORSOrigin), maxBody: cfg.MaxBodyBytes, paths: map[string]map[string]*route{}}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	var p [4]byte
	rand.Read(p[:])
	s.idPrefix = hex.EncodeToString(p[:]) + "-"
	for _, r := range s.builtinRoutes() {
		s.add(r)
	}
	return s, nil
}

// Service is the server's service layer (for the MCP endpoint).
func (s *Server) Service() *Service { return s.svc }

// Close stops background work.
func (s *Server) Close() error { return s.svc.Close() }

// route is one method on one path.
type route struct {
	op     Operation
	hidden bool // not in /doc
	serve  func(w *responseWriter, r *http.Request)
}

func (s *Server) add(r *route) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.paths[r.op.Path]
	if m == nil {
		m = map[string]*route{}
		s.paths[r.op.Path] = m
	}
	if old := m[r.op.Method]; old != nil {
		s.routes = slices.DeleteFunc(s.routes, func(x *route) bool { return x == old })
	}
	m[r.op.Method] = r
	s.routes = append(s.routes, r)
	s.doc.Store(nil)
}

// Handle mounts an extra handler (the MCP endpoint, say) at op.Method and
// op.Path, behind the server's middleware (request ids, logging, CORS,
// panics). It appears in /doc unless hidden. Call it before serving.
func (s *Server) Handle(op Operation, h http.Handler, hidden bool) {
	s.add(&route{op: op, hidden: hidden, serve: func(w *responseWriter, r *http.Request) { h.ServeHTTP(w, r) }})
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	start := time.Now()
	w := &responseWriter{ResponseWriter: rw}
	id := r.Header.Get("X-Request-Id")
	if !validRequestID(id) {
		id = s.idPrefix + strconv.FormatUint(s.idSeq.Add(1), 10)
	}
	h := w.Header()
	h["X-Request-Id"] = []string{id}
	s.cors.apply(h, r)
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			err := fmt.Errorf("panic: %v\n%s", p, debug.Stack())
			if !w.wroteHeader {
				s.writeError(w, r, apierr.Internal(err))
			} else {
				w.err = err
			}
		}
		s.logRequest(r, w, id, start)
	}()

	path := r.URL.Path
	if path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		http.Redirect(w, r, "/reference", http.StatusFound)
		return
	}
	s.mu.RLock()
	methods := s.paths[path]
	rt := methods[r.Method]
	if rt == nil && r.Method == http.MethodHead {
		rt = methods[http.MethodGet]
	}
	s.mu.RUnlock()
	switch {
	case methods == nil && r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "":
		s.cors.preflight(w, r) // Hono's cors middleware answers preflights on any path
	case methods == nil:
		s.writeError(w, r, apierr.New(http.StatusNotFound, apierr.CodeNotFound, "Route not found"))
	case rt == nil && r.Method == http.MethodOptions:
		if r.Header.Get("Access-Control-Request-Method") != "" {
			s.cors.preflight(w, r)
			return
		}
		w.Header().Set("Allow", allow(methods))
		w.WriteHeader(http.StatusNoContent)
	case rt == nil:
		w.Header().Set("Allow", allow(methods))
		s.writeError(w, r, apierr.New(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "Method Not Allowed"))
	default:
		rt.serve(w, r)
	}
}

func allow(methods map[string]*route) string {
	var ms []string
	for m := range methods {
		ms = append(ms, m)
		if m == http.MethodGet {
			ms = append(ms, http.MethodHead)
		}
	}
	ms = append(ms, http.MethodOptions)
	slices.Sort(ms)
	return strings.Join(ms, ", ")
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// responseWriter records the status, size and error of a response for the
// request log.
type responseWriter struct {
	http.ResponseWriter
	status      int
	bytes       int
	wroteHeader bool
	err         error // the cause of a 5xx, for the log
}

func (w *responseWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = http.StatusOK, true
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += n
	return n, err
}

// Flush supports streaming handlers mounted with Handle.
func (w *responseWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequest writes one line per request: id, method, path (never the
// query, which may carry tokens), status, duration and size; 5xx add their
// cause.
func (s *Server) logRequest(r *http.Request, w *responseWriter, id string, start time.Time) {
	level := slog.LevelInfo
	if w.status >= 500 {
		level = slog.LevelError
	}
	ctx := r.Context()
	if !s.log.Enabled(ctx, level) {
		return
	}
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	attrs := []slog.Attr{
		slog.String("id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", status), slog.Duration("duration", time.Since(start)), slog.Int("bytes", w.bytes),
	}
	if w.err != nil {
		attrs = append(attrs, slog.String("err", apierr.RedactURLs(w.err.Error())))
	}
	s.log.LogAttrs(ctx, level, "http request", attrs...)
}

// ---- encoding ----

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuf() *bytes.Buffer {
	b := bufPool.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

func putBuf(b *bytes.Buffer) {
	if b.Cap() <= 256<<10 {
		bufPool.Put(b)
	}
}

// writeJSON encodes v (allocation-light: pooled buffers, no HTML escaping).
func (s *Server) writeJSON(w *responseWriter, r *http.Request, status int, v any) {
	buf := getBuf()
	defer putBuf(buf)
	if err := encodeJSON(buf, v); err != nil {
		s.writeError(w, r, apierr.Internal(fmt.Errorf("encode response: %w", err)))
		return
	}
	h := w.Header()
	h["Content-Type"] = contentTypeJSON
	h["Content-Length"] = []string{strconv.Itoa(buf.Len())}
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// contentTypeJSON is shared by every JSON response (header values are
// never modified in place; Add would copy).
var contentTypeJSON = []string{"application/json"}

func encodeJSON(buf *bytes.Buffer, v any) error {
	if t, ok := v.(*payments.UnsignedTransaction); ok && t != nil {
		buf.Write(appendUnsignedTransaction(buf.AvailableBuffer(), t))
		return nil
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}

// writeError writes the error envelope. Anything that is not an
// *apierr.Error is a 500 INTERNAL_ERROR without details; URLs in messages
// are redacted.
func (s *Server) writeError(w *responseWriter, r *http.Request, err error) {
	ae := apierr.As(err)
	if ae.Status >= 500 {
		w.err = err
		if ae.Err != nil {
			w.err = ae.Err
		}
	}
	if ae.Status == 0 {
		ae = apierr.Internal(err)
	}
	out := *ae
	out.Message = apierr.RedactURLs(out.Message)
	s.writeJSON(w, r, out.Status, apierr.Envelope{Error: &out})
}

// ---- decoding ----

// readBody reads a JSON body: 415 for a non-JSON Content-Type, 413 beyond
// the limit. An empty body reads as {}.
func (s *Server) readBody(w *responseWriter, r *http.Request, buf *bytes.Buffer) error {
	if r.ContentLength > s.maxBody {
		return tooLarge(s.maxBody)
	}
	_, err := buf.ReadFrom(io.LimitReader(r.Body, s.maxBody+1))
	if err != nil {
		return apierr.BadRequest(CodeInvalidJSON, "Failed to read the request body").Wrap(err)
	}
	if int64(buf.Len()) > s.maxBody {
		return tooLarge(s.maxBody)
	}
	if len(bytes.TrimSpace(buf.Bytes())) > 0 && !isJSONContentType(r.Header.Get("Content-Type")) {
		return apierr.New(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "Content-Type must be application/json")
	}
	return nil
}

func tooLarge(n int64) *apierr.Error {
	return apierr.New(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, fmt.Sprintf("Request body exceeds %d bytes", n))
}

func isJSONContentType(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// decodeBody validates a body against dst's type.
func decodeBody(body []byte, dst any) error {
	err := schema.Decode(body, dst)
	if errors.Is(err, schema.ErrMalformedJSON) {
		return apierr.BadRequest(CodeInvalidJSON, "Malformed JSON in request body").
			WithDetails(map[string]any{"message": strings.TrimPrefix(err.Error(), schema.ErrMalformedJSON.Error()+": ")})
	}
	return err
}

// decodeQuery validates query parameters against dst's type.
func decodeQuery(q url.Values, dst any) error { return schema.DecodeQuery(q, dst) }

// ---- typed routes ----

// AuthMode says whether an operation takes a bearer token.
type AuthMode int

// Auth modes.
const (
	AuthNone AuthMode = iota
	AuthOptional
	AuthRequired
)

// ErrorDoc documents one error an operation can return.
type ErrorDoc struct {
	Status  int    `json:"status"`
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
}

// ErrorSchema is the documented body of the errors of one status when it
// is not the error envelope.
type ErrorSchema struct {
	Type    reflect.Type
	Example any
}

// Operation describes one route for the router and for /doc.
type Operation struct {
	Method, Path string
	ID           string // operationId
	Tag          string // SPL, Swap, Transaction, MCP or Meta
	Summary      string
	Description  string
	// Request is the body type, or the query type when Query is set; nil
	// when the operation takes no input.
	Request reflect.Type
	Query   bool
	// Response is the 200 body type; nil means a free-form JSON object.
	Response reflect.Type
	// ResponseContentType defaults to application/json.
	ResponseContentType string
	// ErrorBodies document error bodies that are not the error envelope,
	// by status (GET /health's 503 is a HealthResponse; the errors of POST
	// /mcp are JSON-RPC responses).
	ErrorBodies map[int]ErrorSchema
	Auth        AuthMode
	Errors      []ErrorDoc
}

type call[Req, Resp any] func(ctx context.Context, req *Req, tok auth.Bearer) (*Resp, error)

// missingAuthMessage is the route-specific 400 MISSING_AUTH_TOKEN text.
var missingAuthMessage = map[string]string{
	"/v1/spl/private-balance": "authToken is required for private balance",
	"/v1/spl/stealth-pool":    "authToken is required to initialize stealth pool destinations inside the ER",
}

// jsonRoute is a route that decodes Req (body or query), checks the
// bearer token as op.Auth says, calls fn and encodes Resp.
func (s *Server) jsonRoute(op Operation, serve func(ctx context.Context, w *responseWriter, r *http.Request, body []byte) (any, error)) *route {
	return &route{op: op, serve: func(w *responseWriter, r *http.Request) {
		var body []byte
		if !op.Query && op.Request != nil {
			buf := getBuf()
			defer putBuf(buf)
			if err := s.readBody(w, r, buf); err != nil {
				s.writeError(w, r, err)
				return
			}
			body = buf.Bytes()
		}
		out, err := serve(r.Context(), w, r, body)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if out != nil {
			s.writeJSON(w, r, http.StatusOK, out)
		}
	}}
}

// typed builds the serve function of a JSON route from a service method.
func typed[Req, Resp any](s *Server, op Operation, fn call[Req, Resp]) *route {
	op.Request, op.Response = reflect.TypeFor[Req](), reflect.TypeFor[Resp]()
	return s.jsonRoute(op, func(ctx context.Context, w *responseWriter, r *http.Request, body []byte) (any, error) {
		req := new(Req)
		var err error
		if op.Query {
			err = decodeQuery(r.URL.Query(), req)
		} else {
			err = decodeBody(body, req)
		}
		if err != nil {
			return nil, err
		}
		tok := auth.Bearer{}
		if op.Auth != AuthNone {
			tok = auth.FromRequest(r)
		}
		if op.Auth == AuthRequired {
			if !tok.Present {
				return nil, apierr.Validation(apierr.Missing("authorization"))
			}
			if !tok.OK() {
				return nil, apierr.BadRequest(auth.CodeMissingAuthToken, missingAuthMessage[op.Path])
			}
		}
		return fn(ctx, req, tok)
	})
}

// ---- CORS ----

var anyOrigin = []string{"*"}

// corsPolicy mirrors Hono's cors({origin}) middleware.
type corsPolicy struct {
	any     bool
	origins []string
}

func newCORS(origin string) corsPolicy {
	origin = strings.TrimSpace(origin)
	if origin == "" || origin == "*" {
		return corsPolicy{any: true}
	}
	var p corsPolicy
	for _, o := range strings.Split(origin, ",") {
		if o = strings.TrimSpace(o); o != "" {
			p.origins = append(p.origins, o)
		}
	}
	return p
}

func (p corsPolicy) apply(h http.Header, r *http.Request) {
	if p.any {
		h["Access-Control-Allow-Origin"] = anyOrigin
		return
	}
	h.Add("Vary", "Origin")
	o := r.Header.Get("Origin")
	if slices.Contains(p.origins, o) {
		h.Set("Access-Control-Allow-Origin", o)
	} else if len(p.origins) == 1 {
		h.Set("Access-Control-Allow-Origin", p.origins[0])
	}
}

func (p corsPolicy) preflight(w *responseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "GET,HEAD,PUT,POST,DELETE,PATCH")
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		h.Set("Access-Control-Allow-Headers", req)
		h.Add("Vary", "Access-Control-Request-Headers")
	}
	h.Set("Access-Control-Max-Age", "600")
	h.Del("Content-Type")
	h.Del("Content-Length")
	w.WriteHeader(http.StatusNoContent)
}
