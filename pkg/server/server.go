// Package server is the lifecycle of "ferry serve": it binds the HTTP
// endpoints, publishes their URLs in an address file, serves until the
// context ends, then shuts down gracefully (in-flight requests finish,
// then ledgers flush and close).
//
// Server is deliberately generic: an endpoint is a name, an address and
// an http.Handler, and anything that must be closed afterwards is
// registered with OnShutdown. Serve assembles today's process (the base
// chain node); later components (ephemeral ledger, router, payments API,
// MCP) add their endpoints to the same Server.
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

	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// Endpoint keys in the address file.
const (
	KeyRPC       = "rpc"
	KeyEphemeral = "ephemeral"
	KeyRouter    = "router"
	KeyAPI       = "api"
)

// DefaultShutdownTimeout bounds how long in-flight requests may take to
// finish at shutdown.
const DefaultShutdownTimeout = 10 * time.Second

// Server runs HTTP endpoints and shuts them down in order.
type Server struct {
	log             *slog.Logger
	addrFile        string
	shutdownTimeout time.Duration

	mu        sync.Mutex
	endpoints []*endpoint
	closers   []func(context.Context) error
	ready     []func(map[string]string)
	urls      map[string]string
}

type endpoint struct {
	key     string
	addr    string
	handler http.Handler
	ln      net.Listener
	srv     *http.Server
}

// New returns an empty server. addrFile may be empty.
func New(log *slog.Logger, addrFile string) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{log: log, addrFile: addrFile, shutdownTimeout: DefaultShutdownTimeout, urls: map[string]string{}}
}

// SetShutdownTimeout changes DefaultShutdownTimeout.
func (s *Server) SetShutdownTimeout(d time.Duration) { s.shutdownTimeout = d }

// Endpoint adds an HTTP endpoint, published under key in the address file.
// addr may use port 0. Call before Run.
func (s *Server) Endpoint(key, addr string, h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endpoints = append(s.endpoints, &endpoint{key: key, addr: addr, handler: h})
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

// URLs returns the bound URL of each endpoint (after Run has bound them).
func (s *Server) URLs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.urls))
	for k, v := range s.urls {
		out[k] = v
	}
	return out
}

// Run binds every endpoint, writes the address file, serves until ctx is
// done or an endpoint fails, and then shuts down. It returns the first
// error (nil for a clean stop). The shutdown functions always run, even
// when binding fails.
func (s *Server) Run(ctx context.Context) (err error) {
	defer func() { err = errors.Join(err, s.shutdown()) }()
	for _, e := range s.endpoints {
		ln, lerr := net.Listen("tcp", e.addr)
		if lerr != nil {
			return fmt.Errorf("listen for %s on %s: %w", e.key, e.addr, lerr)
		}
		e.ln = ln
		e.srv = rpcserver.NewHTTPServer(e.handler, s.log)
		url := "http://" + ln.Addr().String()
		s.mu.Lock()
		s.urls[e.key] = url
		s.mu.Unlock()
		s.log.Info("listening", "endpoint", e.key, "url", url)
	}
	if s.addrFile != "" {
		if err := writeAddrFile(s.addrFile, s.URLs()); err != nil {
			return err
		}
	}
	for _, fn := range s.ready {
		fn(s.URLs())
	}
	errs := make(chan error, len(s.endpoints))
	for _, e := range s.endpoints {
		go func() {
			if err := e.srv.Serve(e.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("serve %s: %w", e.key, err)
			}
		}()
	}
	select {
	case <-ctx.Done():
		s.log.Info("shutting down")
		return nil
	case err := <-errs:
		return err
	}
}

// shutdown stops the endpoints (letting in-flight requests finish), runs
// the shutdown functions and removes the address file.
func (s *Server) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.shutdownTimeout)
	defer cancel()
	var errs []error
	for _, e := range s.endpoints {
		if e.srv == nil {
			if e.ln != nil {
				e.ln.Close()
			}
			continue
		}
		if err := e.srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shut down %s: %w", e.key, err))
			e.srv.Close()
		}
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		if err := s.closers[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if s.addrFile != "" {
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
