package rpcserver

import (
	"log/slog"
	"net/http"
	"time"
)

// Timeouts for the HTTP server, so one slow or stuck client cannot hold
// a connection (and its goroutine) for long. They are the defaults of
// every listener of `ferry serve` (server.Limits).
const (
	// ReadHeaderTimeout bounds reading a request's headers; a connection
	// that opens and sends nothing is closed after it.
	ReadHeaderTimeout = 5 * time.Second
	// ReadTimeout bounds reading a whole request, body included: a client
	// that trickles its body is cut off. A 4 MiB body needs 3.2 Mbit/s.
	ReadTimeout = 10 * time.Second
	// WriteTimeout bounds writing the answer (from the end of the request
	// headers): a client that does not read its answer is cut off.
	WriteTimeout = 60 * time.Second
	// IdleTimeout closes keep-alive connections that carry no request for
	// this long.
	IdleTimeout = 60 * time.Second
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes = 64 << 10
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
