package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/pubsub"
)

// Websocket (PubSub) endpoints of local mode.
//
// Each chain node answers PubSub in two places: as a websocket upgrade on
// its RPC port (ws://127.0.0.1:8899, ws://127.0.0.1:7799), and on a
// listener of its own at the RPC port + 1, which is where web3.js looks
// when given only an http URL and where solana-test-validator listens
// (ws://127.0.0.1:8900). The ephemeral node's RPC port + 1 is the
// router's port (7799 + 1 = 7800), so there the router's listener serves
// both: websocket upgrades go to the ephemeral node's PubSub, everything
// else to the router. A router in front of one rollup forwarding its
// subscriptions is what MagicBlock's router does too.

// DeriveWSAddr is the default websocket address of an RPC address: the
// same host, the port + 1 (port 0 stays 0: a free port of its own).
func DeriveWSAddr(rpcAddr string) (string, error) {
	host, port, err := net.SplitHostPort(rpcAddr)
	if err != nil {
		return "", fmt.Errorf("derive websocket address from %q: %w", rpcAddr, err)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return "", fmt.Errorf("derive websocket address from %q: port %q", rpcAddr, port)
	}
	if n == 0 {
		return rpcAddr, nil
	}
	if n == 65535 {
		return "", fmt.Errorf("derive websocket address from %q: no port above it; set it explicitly", rpcAddr)
	}
	return net.JoinHostPort(host, strconv.FormatUint(n+1, 10)), nil
}

// sameListener reports whether two configured addresses name the same
// fixed listener (port 0 never does: each gets its own free port).
func sameListener(a, b string) bool {
	_, port, err := net.SplitHostPort(a)
	return err == nil && port != "0" && a == b
}

// withPubSub routes websocket upgrades to ps and the rest to h.
func withPubSub(h http.Handler, ps *pubsub.Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pubsub.IsUpgrade(r) {
			ps.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// localPubSub is the PubSub of both chain nodes.
type localPubSub struct {
	base, ephemeral *pubsub.Server
	// routerShared: the ephemeral node's websocket is the router's port.
	routerShared bool
	// ownBase, ownEphemeral: the node's websocket has a listener of its
	// own (not an HTTP port's).
	ownBase, ownEphemeral bool
}

// declarePubSub declares the websocket listeners of both nodes that are
// not shared with an HTTP port; start sets their handlers. Call before
// Bind: listeners are bound before the ledgers open (see buildLocal).
func declarePubSub(o Options, s *Server) *localPubSub {
	ps := &localPubSub{routerShared: sameListener(o.EphemeralWSAddr, o.RouterAddr)}
	if !sameListener(o.WSAddr, o.RPCAddr) {
		s.Endpoint(KeyRPCWS, o.WSAddr, nil, WithScheme("ws"), WithAnyOriginCORS())
		ps.ownBase = true
	}
	if !ps.routerShared && !sameListener(o.EphemeralWSAddr, o.EphemeralAddr) {
		s.Endpoint(KeyEphemeralWS, o.EphemeralWSAddr, nil, WithScheme("ws"), WithAnyOriginCORS())
		ps.ownEphemeral = true
	}
	return ps
}

// start runs both nodes' PubSub over p and hands them their own
// listeners. Call once the ledgers are open.
func (ps *localPubSub) start(o Options, s *Server, p *localnet.Pair) error {
	popts := o.PubSub
	if popts.Logger == nil {
		popts.Logger = o.Logger
	}
	// The rollup's PubSub hides what its JSON-RPC hides, from the same
	// callers (the ?token= of the upgrade, on any of its endpoints).
	erOpts := popts
	erOpts.ReadFilter = p.ReadFilter()
	ps.base, ps.ephemeral = pubsub.New(p.Base, popts), pubsub.New(p.Ephemeral, erOpts)
	// Registered after the ledgers' closer, so it runs before it: clients
	// are told goodbye while the ledgers still run.
	s.OnShutdown(func(context.Context) error {
		return errors.Join(ps.base.Close(), ps.ephemeral.Close())
	})
	if ps.ownBase {
		if err := s.SetHandler(KeyRPCWS, ps.base); err != nil {
			return err
		}
	}
	if ps.ownEphemeral {
		if err := s.SetHandler(KeyEphemeralWS, ps.ephemeral); err != nil {
			return err
		}
	}
	return nil
}

// publish sets the websocket URLs served through HTTP listeners. Call
// after Bind.
func (ps *localPubSub) publish(s *Server, urls map[string]string) {
	asWS := func(u string) string { return "ws" + u[len("http"):] }
	if _, ok := urls[KeyRPCWS]; !ok {
		s.SetURL(KeyRPCWS, asWS(urls[KeyRPC]))
	}
	if _, ok := urls[KeyEphemeralWS]; !ok {
		if ps.routerShared {
			s.SetURL(KeyEphemeralWS, asWS(urls[KeyRouter]))
		} else {
			s.SetURL(KeyEphemeralWS, asWS(urls[KeyEphemeral]))
		}
	}
}
