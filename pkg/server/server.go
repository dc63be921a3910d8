// Package server is the lifecycle of "ferry serve": it binds the HTTP
// endpoints, publishes their URLs in an address file, serves until the
// context ends, then shuts down gracefully (in-flight requests finish,
// then ledgers flush and close).
//
// Server is deliberately generic: an endpoint is a name, an address and
// an http.Handler, and anything that must be closed afterwards is
// registered with OnShutdown. Endpoints can be bound before their
// handlers exist (Bind, then SetHandler), so that handlers which must
// know the bound URLs (the router names the rollup's URL, the payments
// API reaches the chain nodes in-process under theirs) work with port 0.
//
// Build assembles the whole process from Options: in local mode the
// embedded base ledger and ephemeral rollup (pkg/localnet) with their
// JSON-RPC endpoints, the router, the payments API and /mcp; in gateway
// mode (Options.Cluster) the router, the payments API and /mcp in front
// of real clusters.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ferry-sh/ferry/pkg/httpguard"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// Endpoint keys in the address file.
const (
	KeyRPC       = "rpc"
	KeyEphemeral = "ephemeral"
	KeyRouter    = "router"
	KeyAPI       = "api"
	// KeyRPCWS and KeyEphemeralWS are the chain nodes' PubSub websocket
	// URLs (ws://).
	KeyRPCWS       = "rpcWs"
	KeyEphemeralWS = "ephemeralWs"
)

// DefaultShutdownTimeout bounds how long in-flight requests may take to
// finish at shutdown.
const DefaultShutdownTimeout = 30 * time.Second

// Server runs HTTP endpoints and shuts them down in order.
type Server struct {
	log             *slog.Logger
	addrFile        string
	shutdownTimeout time.Duration
	limits          Limits

	mu        sync.Mutex
	endpoints []*endpoint
	closers   []func(context.Context) error
	ready     []func(map[string]string)
	urls      map[string]string
	bound     bool
	wroteAddr bool
	stopOnce  sync.Once
	stopErr   error
}

type endpoint struct {
	key          string
	addr         string
	scheme       string
	handler      http.Handler
	writeTimeout time.Duration
	maxConns     int
	cors         bool
	ln           net.Listener
	lim          *httpguard.LimitListener
	srv          *http.Server
}

// EndpointOption tunes one endpoint's HTTP server.
type EndpointOption func(*endpoint)

// WithWriteTimeout replaces the endpoint's write timeout
// (rpcserver.WriteTimeout by default): how long a handler may take to
// answer, e.g. a send that waits for confirmation.
func WithWriteTimeout(d time.Duration) EndpointOption {
	return func(e *endpoint) { e.writeTimeout = d }
}

// WithMaxConns replaces Limits.MaxConns for this endpoint (e.g. a
// websocket listener whose clients each hold a connection).
func WithMaxConns(n int) EndpointOption {
	return func(e *endpoint) { e.maxConns = n }
}

// WithAnyOriginCORS serves the endpoint with the CORS policy of a Solana
// JSON-RPC node (httpguard.AnyOrigin): any origin, preflights answered
// before the handler. The chain nodes and the router use it; the payments
// API applies its own, configured policy (CORS_ORIGIN).
func WithAnyOriginCORS() EndpointOption {
	return func(e *endpoint) { e.cors = true }
}

// Limits bound what clients can hold on every listener of a Server. Zero
// values mean the defaults.
type Limits struct {
	// MaxConns caps the open connections of each listener
	// (httpguard.DefaultMaxConns, 1024). At the cap a new connection
	// replaces the one idle longest, or gets 503 when all are busy.
	MaxConns int
	// ReadHeaderTimeout bounds reading a request's headers
	// (rpcserver.ReadHeaderTimeout, 5 s).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included
	// (rpcserver.ReadTimeout, 10 s).
	ReadTimeout time.Duration
	// IdleTimeout closes idle keep-alive connections
	// (rpcserver.IdleTimeout, 60 s).
	IdleTimeout time.Duration
}

func (l Limits) normalized() Limits {
	if l.MaxConns <= 0 {
		l.MaxConns = httpguard.DefaultMaxConns
	}
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = rpcserver.ReadHeaderTimeout
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = rpcserver.ReadTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = rpcserver.IdleTimeout
	}
	return l
}

// WithScheme sets the scheme of the endpoint's published URL ("http" by
// default; "ws" for a websocket endpoint).
func WithScheme(scheme string) EndpointOption {
	return func(e *endpoint) { e.scheme = scheme }
}

// New returns an empty server. addrFile may be empty.
func New(log *slog.Logger, addrFile string) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{log: log, addrFile: addrFile, shutdownTimeout: DefaultShutdownTimeout, urls: map[string]string{}, limits: Limits{}.normalized()}
}

// SetShutdownTimeout changes DefaultShutdownTimeout.
func (s *Server) SetShutdownTimeout(d time.Duration) { s.shutdownTimeout = d }

// SetLimits sets the limits of every listener (call before Run).
func (s *Server) SetLimits(l Limits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits = l.normalized()
}

// Endpoint adds an HTTP endpoint, published under key in the address file.
// addr may use port 0. h may be nil when it is set later with SetHandler
// (before Run). Call before Bind.
func (s *Server) Endpoint(key, addr string, h http.Handler, opts ...EndpointOption) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := &endpoint{key: key, addr: addr, scheme: "http", handler: h, writeTimeout: rpcserver.WriteTimeout}
	for _, o := range opts {
		o(e)
	}
	s.endpoints = append(s.endpoints, e)
}

// SetHandler sets the handler of the endpoint key.
func (s *Server) SetHandler(key string, h http.Handler) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.endpoints {
		if e.key == key {
			e.handler = h
			return nil
		}
	}
	return fmt.Errorf("set handler: no endpoint %q", key)
}

// OnShutdown registers fn to run after every endpoint has stopped, in
// reverse registration order (like defer), e.g. closing a ledger.
func (s *Server) OnShutdown(fn func(context.Context) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closers = append(s.closers, fn)
}

// OnReady registers fn to be called with the endpoint URLs once every
// endpoint is bound and the address file is written.
func (s *Server) OnReady(fn func(urls map[string]string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ready = append(s.ready, fn)
}

// URLs returns the bound URL of each endpoint (after Bind).
func (s *Server) URLs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.urls))
	for k, v := range s.urls {
		out[k] = v
	}
	return out
}

// SetURL publishes an extra URL under key, for a service reached
// through another endpoint's listener (a websocket upgrade on an HTTP
// port). Call after Bind, before Run.
func (s *Server) SetURL(key, url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.urls[key] = url
}

// Bind listens on every endpoint's address (if not done yet) and returns
// the URLs. Nothing is served before Run. On error the listeners bound so
// far stay open until Run or Close.
func (s *Server) Bind() (map[string]string, error) {
	s.mu.Lock()
	if s.bound {
		s.mu.Unlock()
		return s.URLs(), nil
	}
	eps := s.endpoints
	s.mu.Unlock()
	for _, e := range eps {
		if e.ln != nil {
			continue
		}
		ln, err := net.Listen("tcp", e.addr)
		if err != nil {
			return nil, fmt.Errorf("listen for %s on %s: %w", e.key, e.addr, err)
		}
		e.ln = ln
		s.mu.Lock()
		s.urls[e.key] = e.scheme + "://" + ln.Addr().String()
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.bound = true
	s.mu.Unlock()
	return s.URLs(), nil
}

// Run binds every endpoint (unless Bind did), writes the address file,
// serves until ctx is done or an endpoint fails, and then shuts down. It
// returns the first error (nil for a clean stop). The shutdown functions
// always run, even when binding fails.
func (s *Server) Run(ctx context.Context) (err error) {
	defer func() { err = errors.Join(err, s.Close()) }()
	if _, err := s.Bind(); err != nil {
		return err
	}
	for _, e := range s.endpoints {
		if e.handler == nil {
			return fmt.Errorf("serve %s: no handler", e.key)
		}
		h := e.handler
		if e.cors {
			h = httpguard.AnyOrigin(h)
		}
		maxConns := s.limits.MaxConns
		if e.maxConns > 0 {
			maxConns = e.maxConns
		}
		e.lim = httpguard.NewLimitListener(e.ln, maxConns)
		e.srv = rpcserver.NewHTTPServer(h, s.log)
		e.srv.WriteTimeout = e.writeTimeout
		e.srv.ReadHeaderTimeout = s.limits.ReadHeaderTimeout
		e.srv.ReadTimeout = s.limits.ReadTimeout
		e.srv.IdleTimeout = s.limits.IdleTimeout
		e.srv.ConnState = e.lim.ConnState
		s.log.Info("listening", "endpoint", e.key, "url", s.urls[e.key], "maxConns", maxConns)
	}
	if s.addrFile != "" {
		if err := writeAddrFile(s.addrFile, s.URLs()); err != nil {
			return err
		}
		s.wroteAddr = true
	}
	errs := make(chan error, len(s.endpoints))
	for _, e := range s.endpoints {
		go func() {
			if err := e.srv.Serve(e.lim); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("serve %s: %w", e.key, err)
			}
		}()
	}
	for _, fn := range s.ready {
		fn(s.URLs())
	}
	select {
	case <-ctx.Done():
		s.log.Info("shutting down")
		return nil
	case err := <-errs:
		return err
	}
}

// Close stops the endpoints (letting in-flight requests finish, within
// the shutdown timeout), runs the shutdown functions and removes the
// address file. Run calls it; call it yourself only when Run is never
// called (a failed start). Later calls return the first call's result.
func (s *Server) Close() error {
	s.stopOnce.Do(func() { s.stopErr = s.shutdown() })
	return s.stopErr
}

func (s *Server) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.shutdownTimeout)
	defer cancel()
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, e := range s.endpoints {
		if e.srv == nil {
			if e.ln != nil {
				e.ln.Close()
			}
			continue
		}
		// In parallel: every listener stops accepting at once, and each
		// endpoint's in-flight requests get the whole timeout.
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.srv.Shutdown(ctx); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("shut down %s: %w", e.key, err))
				mu.Unlock()
				e.srv.Close()
			}
		}()
	}
	wg.Wait()
	for i := len(s.closers) - 1; i >= 0; i-- {
		if err := s.closers[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if s.wroteAddr {
		if err := os.Remove(s.addrFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove address file: %w", err))
		}
	}
	return errors.Join(errs...)
}

// writeAddrFile writes the URLs as a JSON object, atomically, so a reader
// polling for the file never sees it half written.
func writeAddrFile(path string, urls map[string]string) error {
	b, err := json.MarshalIndent(urls, "", "  ")
	if err != nil {
		return fmt.Errorf("write address file: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write address file: %w", err)
	}
	f, err := os.CreateTemp(dir, ".addr-*.json")
	if err != nil {
		return fmt.Errorf("write address file: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write address file: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write address file: %w", err)
	}
	return nil
}
