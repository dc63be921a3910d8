package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/ferry-sh/ferry/pkg/chainclient"
)

// reachError is a one-line explanation that still unwraps to the cause.
type reachError struct {
	msg string
	err error
}

func (e *reachError) Error() string { return e.msg }
func (e *reachError) Unwrap() error { return e.err }

// ReachError explains a failed call to the endpoint endpointURL (what names
// it: "router", "RPC"). When the server could not be contacted at all it
// returns "cannot reach <what> at <url>: …", suggesting `ferry serve` for
// a loopback address; other errors (JSON-RPC errors, HTTP errors, a
// cancelled command) are returned unchanged. The URL is shown redacted.
func ReachError(err error, what, endpointURL string) error {
	var te *chainclient.TransportError
	if err == nil || !errors.As(err, &te) || errors.Is(err, context.Canceled) {
		return err
	}
	shown := chainclient.RedactURL(endpointURL)
	if isLoopback(endpointURL) {
		return &reachError{msg: fmt.Sprintf("cannot reach %s at %s: is `ferry serve` running?", what, shown), err: err}
	}
	return &reachError{msg: fmt.Sprintf("cannot reach %s at %s: %v", what, shown, te.Err), err: err}
}

func isLoopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
