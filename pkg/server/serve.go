package server

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/ferry-sh/ferry/pkg/api"
	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/explorer"
	"github.com/ferry-sh/ferry/pkg/httpguard"
	"github.com/ferry-sh/ferry/pkg/mcpserver"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/pubsub"
)

// Default listen addresses (ARCHITECTURE.md).
const (
	DefaultAPIAddr       = "127.0.0.1:8080"
	DefaultRPCAddr       = "127.0.0.1:8899"
	DefaultEphemeralAddr = "127.0.0.1:7799"
	DefaultRouterAddr    = "127.0.0.1:7800"
)

// DefaultHealthInterval is how often ferry serve checks whether its
// ledgers still accept writes (Options.HealthInterval).
const DefaultHealthInterval = time.Second

// APIWriteTimeout is the payments API's write timeout: a send with
// confirm waits up to a blockhash's lifetime (about 90 s on real
// clusters) before it answers.
const APIWriteTimeout = 3 * time.Minute

// Modes of a served process.
const (
	ModeLocal   = "local"
	ModeGateway = "gateway"
)

// Options configure Build. The zero value serves the local cluster in
// memory on the default addresses.
type Options struct {
	// Cluster selects the mode: "" or "local" runs the embedded ledgers;
	// devnet, mainnet, devnet-private, mainnet-private or an http(s) base
	// RPC URL runs the API, MCP and router as a gateway to that cluster.
	Cluster string
	// Overrides replace cluster endpoints (ferry's configuration file);
	// the hosted API's environment variables (Getenv) apply on top.
	Overrides cluster.Overrides
	// Getenv reads the hosted API's environment variables (api.FromEnv:
	// CORS_ORIGIN, EPHEMERAL_RPC_URL, GASLESS_SPONSOR_SECRET_KEY, ...;
	// CLUSTER is ignored, Cluster decides). Nil reads none.
	Getenv func(string) string

	// DataDir holds the ledgers, the validator identity, the API's token
	// key, the demo wallets and demo.json. Empty runs in memory (demo
	// keypairs then go to a temporary directory removed at shutdown).
	DataDir string
	// Reset deletes what ferry keeps in DataDir before starting.
	Reset bool

	// Listen addresses; port 0 picks a free port. Empty means the
	// defaults. RPCAddr and EphemeralAddr are unused in gateway mode.
	APIAddr, RPCAddr, EphemeralAddr, RouterAddr string
	// WSAddr and EphemeralWSAddr are the chain nodes' PubSub listeners.
	// Empty means the RPC port + 1 (port 0 for an RPC port 0). The
	// ephemeral one on the router's address shares the router's listener;
	// one equal to its node's RPC address adds no listener (the RPC port
	// answers websocket upgrades anyway). Unused in gateway mode.
	WSAddr, EphemeralWSAddr string
	// PubSub tunes both nodes' websocket servers (limits, timeouts). The
	// ephemeral node's ReadFilter is always the rollup's own (its private
	// accounts), whatever is set here.
	PubSub pubsub.Options
	// AddrFile, if set, receives the bound URLs as JSON once every
	// endpoint serves ({"api":..., "rpc":..., "rpcWs":..., "ephemeral":...,
	// "ephemeralWs":..., "router":...}).
	AddrFile string

	// SlotDuration and EphemeralSlotDuration are the ledgers' slot times
	// (defaults 400 ms and 50 ms); FinalityDepth is the base ledger's
	// (ledger.Config; -1 finalizes immediately). NoSync skips fsync.
	SlotDuration, EphemeralSlotDuration time.Duration
	FinalityDepth                       int
	NoSync                              bool
	// LimitLedgerSize bounds each chain node's history to about this many
	// newest transactions (ledger.Config.LimitLedgerSize; 0 keeps all).
	LimitLedgerSize uint64
	// EmptySlotBatch is both ledgers' ledger.Config.EmptySlotBatch (0:
	// the default; negative: every slot commits on its own).
	EmptySlotBatch time.Duration
	// AccountCacheSize is both ledgers' ledger.Config.AccountCacheSize
	// (0: ledger.DefaultAccountCacheSize).
	AccountCacheSize int

	// Demo configures the demo mint and wallets made on first start.
	Demo DemoOptions

	// Routes are the gateway router's rollup nodes, closest first; a
	// route with a zero identity is asked for it (getIdentity) at start.
	// Nil means MagicBlock's public nodes of the cluster (router
	// DevnetRoutes / MainnetRoutes).
	Routes []chainclient.Route

	// AllowUpstream are the URL patterns (cluster.AllowPattern:
	// [scheme://]host[:port] globs) that requests may name as their
	// cluster or sendRpcEndpoint besides the configured endpoints
	// (--allow-upstream, FERRY_ALLOW_UPSTREAM). Anything else is 400
	// UPSTREAM_NOT_ALLOWED.
	AllowUpstream []string

	// HealthInterval is how often the served ledgers' health is checked
	// for the readiness line (DefaultHealthInterval).
	HealthInterval time.Duration
	// OnHealthChange, if set, is called when the API's health changes
	// (a ledger halted), after the change is logged.
	OnHealthChange func(*api.HealthResponse)

	// Limits bound connections and request times on every listener.
	Limits Limits
	// Explorer bounds the explorer page's JSON endpoints (local mode).
	Explorer explorer.Options
	// MaxResponseBytes is the chain nodes' response budget per request
	// (rpcserver.DefaultMaxResponseBytes when zero).
	MaxResponseBytes int64
	// AllowOrigins are the browser origins that may call the base and
	// ephemeral nodes' local-only methods (requestAirdrop, ferry_createMint,
	// ferry_mintTo, the cheatcodes); the zero value allows none
	// (rpcserver.Options FaucetOrigins).
	AllowOrigins httpguard.Origins
	// NoCheatcodes leaves out the development cheatcodes of local mode
	// (pkg/devchain: surfnet_* and ferry_* state cheatcodes, the rollup
	// controls, ferry_haltLedger) on the chain nodes and the MCP endpoint.
	// Gateway mode never has them.
	NoCheatcodes bool
	// Fork, when its Cluster is set, makes local mode's base layer a lazy
	// fork of a remote cluster (ferry serve --fork).
	Fork ForkOptions

	// ShutdownTimeout bounds graceful shutdown (DefaultShutdownTimeout).
	ShutdownTimeout time.Duration
	Logger          *slog.Logger
	// Ready, if set, is called once every endpoint serves.
	Ready func(*Info)
}

// Info describes a started process (the banner of ferry serve).
type Info struct {
	Mode    string `json:"mode"`
	Cluster string `json:"cluster"`
	// URLs of the served endpoints by key (KeyAPI, KeyRPC, ...).
	URLs map[string]string `json:"urls"`
	// MCP is the MCP endpoint's URL.
	MCP string `json:"mcp"`
	// Explorer is the explorer page's URL (local mode).
	Explorer string `json:"explorer,omitempty"`
	DataDir  string `json:"dataDir,omitempty"`
	// Created reports a fresh data directory (first start or --reset).
	Created bool `json:"created"`
	// DemoCreated reports that this start created the demo mint and
	// wallets (with Created, or after a start that stopped before its
	// demo was complete).
	DemoCreated bool `json:"demoCreated"`
	// Validator is the local rollup validator's identity (local mode).
	Validator string `json:"validator,omitempty"`
	// Faucet is the base ledger's faucet (local mode).
	Faucet string `json:"faucet,omitempty"`
	// Demo is the demo mint and wallets (local mode).
	Demo *Demo `json:"demo,omitempty"`
	// Fork is the forked cluster of a local base layer (--fork).
	Fork *ForkInfo `json:"fork,omitempty"`
	// Upstream are the real cluster's endpoints (gateway mode).
	Upstream *Upstream `json:"upstream,omitempty"`
	// Routes are the router's rollup nodes.
	Routes []chainclient.Route `json:"routes"`
	// StartupMs is the time from Build to serving.
	StartupMs float64 `json:"startupMs"`
}

// Upstream are the chain endpoints a gateway forwards to (redacted).
type Upstream struct {
	BaseRPC   string `json:"rpc"`
	Ephemeral string `json:"ephemeral"`
}

// Node is what Build assembles.
type Node struct {
	Server *Server
	Info   *Info
	// API is the payments API (with /mcp mounted).
	API *api.Server
	// Local is the embedded pair and its handlers (nil in gateway mode).
	Local *Local

	start          time.Time
	log            *slog.Logger
	healthInterval time.Duration
	onHealth       func(*api.HealthResponse)
}

// Build prepares the process of o without serving: it opens the ledgers
// (local mode), binds every endpoint, creates the demo mint and wallets on
// first start and builds the handlers. Serve it with Run.
func Build(o Options) (*Node, error) {
	start := time.Now()
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o.Logger = log
	for _, a := range []*string{&o.APIAddr, &o.RPCAddr, &o.EphemeralAddr, &o.RouterAddr, &o.WSAddr, &o.EphemeralWSAddr} {
		*a = strings.TrimSpace(*a)
	}
	setDefault(&o.APIAddr, DefaultAPIAddr)
	setDefault(&o.RPCAddr, DefaultRPCAddr)
	setDefault(&o.EphemeralAddr, DefaultEphemeralAddr)
	setDefault(&o.RouterAddr, DefaultRouterAddr)
	if IsLocal(o.Cluster) {
		var err error
		if o.WSAddr == "" {
			if o.WSAddr, err = DeriveWSAddr(o.RPCAddr); err != nil {
				return nil, err
			}
		}
		if o.EphemeralWSAddr == "" {
			if o.EphemeralWSAddr, err = DeriveWSAddr(o.EphemeralAddr); err != nil {
				return nil, err
			}
		}
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	// The hosted API's CLUSTER variable is Options.Cluster's job here: a
	// stray value must not change, or break, what serve runs.
	o.Getenv = func(k string) string {
		if k == "CLUSTER" {
			return ""
		}
		return getenv(k)
	}
	s := New(log, o.AddrFile)
	if o.ShutdownTimeout > 0 {
		s.SetShutdownTimeout(o.ShutdownTimeout)
	}
	s.SetLimits(o.Limits)
	var (
		n   *Node
		err error
	)
	if IsLocal(o.Cluster) {
		n, err = buildLocal(o, s)
	} else {
		n, err = buildGateway(o, s)
	}
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	n.start, n.log, n.healthInterval, n.onHealth = start, log, o.HealthInterval, o.OnHealthChange
	if n.healthInterval <= 0 {
		n.healthInterval = DefaultHealthInterval
	}
	return n, nil
}

// IsLocal reports whether cluster selects the embedded ledgers.
func IsLocal(c string) bool {
	c = strings.ToLower(strings.TrimSpace(c))
	return c == "" || c == "local"
}

func setDefault(p *string, def string) {
	if *p == "" {
		*p = def
	}
}

// Run serves until ctx ends, then shuts down gracefully; Ready (if any)
// is called with the node's Info once every endpoint serves. While it
// serves, it watches the API's health and logs a readiness line (and
// calls Options.OnHealthChange) when it changes.
func (n *Node) Run(ctx context.Context, ready func(*Info)) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	n.Server.OnReady(func(urls map[string]string) {
		n.Info.URLs = urls
		n.Info.MCP = urls[KeyAPI] + mcpserver.Path
		if n.Local != nil {
			n.Info.Explorer = urls[KeyAPI] + explorer.Path
		}
		n.Info.StartupMs = float64(time.Since(n.start).Microseconds()) / 1000
		if ready != nil {
			ready(n.Info)
		}
		go n.watchHealth(ctx)
	})
	return n.Server.Run(ctx)
}

// watchHealth reports every change of the API's health until ctx ends: a
// halted ledger is logged as an error with its reason ("not ready"), a
// recovery as "ready".
func (n *Node) watchHealth(ctx context.Context) {
	t := time.NewTicker(n.healthInterval)
	defer t.Stop()
	last := api.HealthOK
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h := n.API.Service().Health(ctx)
		if h.Status == last || ctx.Err() != nil {
			continue
		}
		last = h.Status
		if h.Status == api.HealthOK {
			n.log.Info("ready: every ledger accepts writes again")
		} else {
			n.log.Error("not ready: a ledger halted; builds and sends answer 503 LEDGER_HALTED until restart", "status", h.Status, "reason", h.Reason)
		}
		if n.onHealth != nil {
			n.onHealth(h)
		}
	}
}

// Serve builds and runs the process of o until ctx ends.
func Serve(ctx context.Context, o Options) error {
	n, err := Build(o)
	if err != nil {
		return err
	}
	return n.Run(ctx, o.Ready)
}

// newAPI builds the payments API with /mcp mounted, on clusters, with a
// token key kept in dataDir (in memory when dataDir is empty).
func newAPI(o Options, s *Server, clusters *api.Clusters, planner *payments.Planner, env api.EnvConfig, dataDir string, dev *devchain.Chain) (*api.Server, error) {
	var key ed25519.PrivateKey
	if dataDir != "" {
		var err error
		if key, err = auth.LoadOrCreateKey(filepath.Join(dataDir, auth.KeyFileName)); err != nil {
			return nil, err
		}
	}
	var authSvc *auth.Service
	if key != nil {
		var err error
		if authSvc, err = auth.New(auth.Config{Key: key}); err != nil {
			return nil, fmt.Errorf("start auth: %w", err)
		}
	}
	srv, err := api.New(api.Config{
		Clusters: clusters, Planner: planner, Sponsor: env.Sponsor, Auth: authSvc, Logger: o.Logger,
		CORSOrigin: env.CORSOrigin, Swap: api.SwapConfig{UpstreamURL: env.SwapUpstream},
	})
	if err != nil {
		return nil, fmt.Errorf("start payments API: %w", err)
	}
	s.OnShutdown(func(context.Context) error { return srv.Close() })
	mcp, err := mcpserver.New(mcpserver.Config{Service: srv.Service(), Clusters: clusters, Logger: o.Logger, Dev: dev})
	if err != nil {
		return nil, fmt.Errorf("start MCP endpoint: %w", err)
	}
	mcp.Mount(srv)
	return srv, nil
}
