package server

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// Default listen addresses.
const (
	DefaultRPCAddr = "127.0.0.1:8899"
)

// Options configure Serve.
type Options struct {
	// DataDir holds each ledger's database in a subdirectory ("base").
	// Empty runs in memory.
	DataDir string
	// RPCAddr is the base chain node's JSON-RPC address (port 0 picks a
	// free port).
	RPCAddr string
	// AddrFile, if set, receives the bound URLs as JSON.
	AddrFile string
	// SlotDuration and FinalityDepth configure the base ledger (defaults:
	// the ledger's).
	SlotDuration  time.Duration
	FinalityDepth int
	// NoSync skips fsync on commit (development only).
	NoSync bool
	// EphemeralAddr, when set, runs the rollup in a box (pkg/localnet):
	// the base ledger gains the eSPL, delegation and permission programs,
	// an ephemeral-rollup ledger (in "ephemeral" under DataDir) is served
	// on this address, and the local validator bridges the two.
	EphemeralAddr string
	// EphemeralSlotDuration is the rollup's slot time (default 50 ms).
	EphemeralSlotDuration time.Duration
	Logger                *slog.Logger
	// Ready, if set, is called once every endpoint is listening.
	Ready func(urls map[string]string)
}

// Node is what Serve assembles; later components attach to it.
type Node struct {
	Server  *Server
	Base    *ledger.Ledger
	BaseRPC *rpcserver.Handler
	// Pair is the rollup in a box when Options.EphemeralAddr is set (nil
	// otherwise); Pair.Ephemeral and Pair.EphemeralRPC are the rollup.
	Pair *localnet.Pair
}

// Build opens the base ledger and registers its JSON-RPC endpoint on a new
// Server, without starting it. Run it with Node.Server.Run.
func Build(o Options) (*Node, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	addr := o.RPCAddr
	if addr == "" {
		addr = DefaultRPCAddr
	}
	if o.EphemeralAddr != "" {
		return buildPair(o, log, addr)
	}
	cfg := ledger.Config{
		Name: "base", SlotDuration: o.SlotDuration, FinalityDepth: o.FinalityDepth,
		NoSync: o.NoSync, Logger: log,
	}
	if o.DataDir != "" {
		cfg.DataDir = filepath.Join(o.DataDir, "base")
	}
	base, err := ledger.Open(cfg)
	if err != nil {
		return nil, fmt.Errorf("start base ledger: %w", err)
	}
	s := New(log, o.AddrFile)
	s.OnShutdown(func(context.Context) error {
		if err := base.Close(); err != nil {
			return fmt.Errorf("close base ledger: %w", err)
		}
		log.Info("base ledger closed", "slot", base.Slot(ledger.Confirmed))
		return nil
	})
	h := rpcserver.New(base, rpcserver.Options{Logger: log})
	s.Endpoint(KeyRPC, addr, h)
	return &Node{Server: s, Base: base, BaseRPC: h}, nil
}

// buildPair opens the base ledger and ephemeral rollup as a localnet pair
// and registers both JSON-RPC endpoints.
func buildPair(o Options, log *slog.Logger, addr string) (*Node, error) {
	p, err := localnet.Open(localnet.Config{
		DataDir: o.DataDir, BaseSlot: o.SlotDuration, EphemeralSlot: o.EphemeralSlotDuration,
		FinalityDepth: o.FinalityDepth, NoSync: o.NoSync, Logger: log,
	})
	if err != nil {
		return nil, fmt.Errorf("start ledgers: %w", err)
	}
	s := New(log, o.AddrFile)
	s.OnShutdown(func(context.Context) error {
		if err := p.Close(); err != nil {
			return fmt.Errorf("close ledgers: %w", err)
		}
		log.Info("ledgers closed", "base", p.Base.Slot(ledger.Confirmed), "ephemeral", p.Ephemeral.Slot(ledger.Confirmed))
		return nil
	})
	s.Endpoint(KeyRPC, addr, p.BaseRPC)
	s.Endpoint(KeyEphemeral, o.EphemeralAddr, p.EphemeralRPC)
	return &Node{Server: s, Base: p.Base, BaseRPC: p.BaseRPC, Pair: p}, nil
}

// Serve runs ferry's local node until ctx ends, then shuts down
// gracefully.
func Serve(ctx context.Context, o Options) error {
	n, err := Build(o)
	if err != nil {
		return err
	}
	if o.Ready != nil {
		n.Server.OnReady(o.Ready)
	}
	return n.Server.Run(ctx)
}
