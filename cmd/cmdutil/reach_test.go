package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ferry-sh/ferry/pkg/chainclient"
)

func TestReachError(t *testing.T) {
	refused := fmt.Errorf("getSlot at x: %w", &chainclient.TransportError{Err: errors.New("connect: connection refused")})
	for _, tc := range []struct {
		err       error
		url, want string
	}{
		{refused, "http://127.0.0.1:7800", "cannot reach router at http://127.0.0.1:7800: is `ferry serve` running?"},
		{refused, "http://localhost:7800/", "cannot reach router at http://localhost:7800/: is `ferry serve` running?"},
		{refused, "http://[::1]:7800", "cannot reach router at http://[::1]:7800: is `ferry serve` running?"},
		{refused, "https://devnet-tee.magicblock.app?token=abc", "cannot reach router at https://devnet-tee.magicblock.app?token=REDACTED: connect: connection refused"},
	} {
		got := ReachError(tc.err, "router", tc.url)
		if got.Error() != tc.want {
			t.Errorf("ReachError(%q) = %q, want %q", tc.url, got, tc.want)
		}
		var te *chainclient.TransportError
		if !errors.As(got, &te) {
			t.Errorf("ReachError(%q) lost the cause", tc.url)
		}
	}
	rpcErr := fmt.Errorf("getSlot at x: %w", &chainclient.RPCError{Code: -32601, Message: "Method not found"})
	cancelled := fmt.Errorf("getSlot at x: %w", &chainclient.TransportError{Err: context.Canceled})
	for _, err := range []error{nil, rpcErr, cancelled} {
		if got := ReachError(err, "RPC", "http://127.0.0.1:1"); got != err {
			t.Errorf("ReachError(%v) = %v, want it unchanged", err, got)
		}
	}
}
