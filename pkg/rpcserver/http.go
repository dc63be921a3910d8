package rpcserver

import (
	"log/slog"
	"net/http"
	"time"
)

// Timeouts for the HTTP server, so one slow or stuck client cannot hold
// a connection (and its goroutine) forever.
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 60 * time.Second
	IdleTimeout       = 120 * time.Second
	MaxHeaderBytes    = 64 << 10
)

// NewHTTPServer wraps h in an http.Server with the timeouts above; the
// caller sets Addr or calls Serve with its own listener.
func NewHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	s := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
	if log != nil {
		s.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	}
	return s
}
