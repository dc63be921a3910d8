// Package serve implements `ferry serve`: the payments API, /mcp, the
// base and ephemeral chain nodes and the router in one process, on an
// embedded ledger pair (local mode) or in front of a real cluster
// (gateway mode).
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/api"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/httpguard"
	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/server"
)

type options struct {
	dataDir       string
	inMemory      bool
	reset         bool
	addrFile      string
	envFile       string
	apiAddr       string
	rpcAddr       string
	ephemeralAddr string
	routerAddr    string
	wsAddr        string
	erWSAddr      string
	slotTime      time.Duration
	erSlotTime    time.Duration
	finalityDepth int
	noSync        bool
	limitLedger   uint64
	accountCache  int
	emptyBatch    time.Duration
	memoryLimit   int64
	memoryLimitOn bool // --memory-limit-mib was given
	noDemo        bool
	noCheatcodes  bool
	fork          string
	forkSlot      uint64
	clone         []string
	cloneFile     string
	routes        []string
	allowUpstream []string
	allowOrigins  []string
	maxConns      int
	readTimeout   time.Duration
	idleTimeout   time.Duration
	maxResponse   int64
	shutdown      time.Duration
	logFormat     string
	logLevel      string
}

// NewCmd returns the serve command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the payments API, MCP, chain nodes and router locally",
		Long: `Run ferry's backend in one process until interrupted (SIGINT or SIGTERM):

  payments API + MCP   http://127.0.0.1:8080  (/v1/..., /mcp, /doc, /reference)
  base-layer RPC       http://127.0.0.1:8899  (Solana JSON-RPC, 400 ms slots)
  base-layer PubSub    ws://127.0.0.1:8900    (Solana websocket subscriptions)
  ephemeral RPC        http://127.0.0.1:7799  (the rollup, 50 ms slots)
  router               http://127.0.0.1:7800  (getRoutes, getDelegationStatus, ...)
  ephemeral PubSub     ws://127.0.0.1:7800    (on the router's port)

Each chain node serves Solana PubSub (signatureSubscribe, accountSubscribe,
programSubscribe, logsSubscribe, slot, root and block subscriptions) at its
RPC port + 1, where web3.js looks, and as a websocket upgrade on the RPC port
itself. The ephemeral RPC port + 1 is the router's port: websocket upgrades
there reach the ephemeral node, everything else the router.
--ws-addr and --ephemeral-ws-addr move the PubSub listeners.

The two chain nodes are an embedded ledger pair with a local MagicBlock
validator between them (deposits, private transfers, queued payouts and
withdrawals settle as on devnet; see docs/localnet.md). The API reaches them
in-process. web3.js, @solana/kit, solana-go and every ferry command
(cluster "local", the default) work against it.

On first start ferry creates a demo mint (6 decimals, set up for private
payments) and funded demo wallets whose keypair files live in the data
directory, and prints them with every endpoint. State is kept in --data
(default $FERRY_HOME/localnet, else the user data directory, e.g.
~/.local/share/ferry/localnet) and a restart continues where it stopped;
--reset starts over, --in-memory keeps nothing. History (blocks and
transactions) is kept whole unless --limit-ledger-size N bounds it: each
chain node then keeps the slots holding its newest N transactions (and
always the last 152 blocks), and older ones answer as purged slots do on a
Solana validator (getBlock error -32001, getTransaction null); accounts are
never pruned.

The base node also answers local-only faucet methods: requestAirdrop,
ferry_faucetInfo, ferry_createMint and ferry_mintTo (what "ferry airdrop"
and "ferry mint" use). Both nodes answer the development cheatcodes (what
"ferry dev" uses; the MCP endpoint has them as dev.* tools): surfpool's
surfnet_setAccount, surfnet_setTokenAccount, surfnet_resetAccount,
surfnet_profileTransaction, surfnet_exportSnapshot (and more, each with a
ferry_* alias), ferry_setMint, ferry_importSnapshot, ferry_haltLedger,
which halts the node as a full disk does, and ferry_advanceSlot, which
ends the working slot now (or the next n); the ephemeral node adds the
rollup controls ferry_commitAccount, ferry_undelegateAccount,
ferry_crankQueue and ferry_getQueue. Every change they make is logged.
The clock controls (surfnet_timeTravel, surfnet_pauseClock,
surfnet_resumeClock, ferry_advanceClock, ferry_setBlockProductionMode,
ferry_mineBlocks, ferry_getClock) move either node's slots and Clock
sysvar. --no-cheatcodes leaves them all out (they then answer Method not
found, as on a real cluster).

--fork devnet|mainnet|testnet|URL starts the base layer as a lazy fork of a
real cluster: it begins empty (genesis only) and copies each account from
the remote the first time it is read or written (then it is local: the
remote is not asked again, and a miss is remembered). --clone ADDRESS
(repeatable) and --clone-file copy accounts at start; --fork-slot records
the slot the fork stands for. ferry runs only its builtin programs: a
transaction calling an SBF program of the remote is refused, naming it. A
URL must match --allow-upstream (else UPSTREAM_NOT_ALLOWED). The rollup on
top works as in plain local mode. The chain nodes and the router allow any web origin
(CORS, as Solana validators do), but a browser may call the methods that
change local state (requestAirdrop, the ferry_* methods, the cheatcodes)
only from an origin given with --allow-origin; other clients (the CLI,
scripts, SDKs in Node) are not affected.

Every listener caps its open connections (--max-conns) and cuts off slow
requests (--read-timeout) and idle connections (--idle-timeout); request
bodies, JSON nesting, batches and responses are bounded too (docs/limits.md
lists every limit).

--cluster devnet|mainnet|devnet-private|mainnet-private|URL runs only the
payments API, MCP and router, as a gateway to that real cluster (no
embedded ledgers). The router lists MagicBlock's public rollup nodes of the
cluster, or the --route nodes. The hosted API's environment variables
(EPHEMERAL_RPC_URL, BASE_DEVNET_RPC_URL, CORS_ORIGIN, ...) apply.

Requests may name a custom cluster URL or a sendRpcEndpoint only when it is
one of the configured endpoints or matches an --allow-upstream pattern
(repeatable; also FERRY_ALLOW_UPSTREAM, comma-separated):
[scheme://]host[:port], where * in the host matches anything, a pattern
without a scheme allows only https, and one without a port only the
scheme's default port ("http://127.0.0.1:8899", "https://*.helius-rpc.com",
"*://rpc.example.com:*"). Anything else is 400 UPSTREAM_NOT_ALLOWED and
nothing is contacted. See docs/security.md.

If a ledger cannot write (a full disk), it halts without a partial write:
GET /health on the API answers 503 {"status":"halted","reason":...},
builds and sends answer 503 LEDGER_HALTED, and a "halted" line is printed.
Free the space and restart ferry serve: it resumes from the last confirmed
slot.

On shutdown, in-flight requests finish (up to --shutdown-timeout), then the
ledgers write their last slot and close. --addr-file writes the bound URLs
as JSON ({"api": ..., "rpc": ..., "rpcWs": ..., "ephemeral": ...,
"ephemeralWs": ..., "router": ...}) once everything serves, so scripts and
tests can use port 0 (the websocket listeners then get free ports too).
Logs go to stderr (--log-format text or json); the banner goes to stdout
(--output json prints it as JSON).`,
		Example: `  # Everything on the default ports, state in the default data directory
  ferry serve

  # Start over with a fresh ledger and new demo wallets
  ferry serve --reset

  # Tests: free ports, addresses in a file, nothing kept
  ferry serve --in-memory --api-addr 127.0.0.1:0 --rpc-addr 127.0.0.1:0 \
    --ephemeral-addr 127.0.0.1:0 --router-addr 127.0.0.1:0 --addr-file /tmp/ferry.json

  # A payments API, MCP endpoint and router in front of devnet
  ferry serve --cluster devnet --log-format json

  # Let a dApp on a Vite dev server use the faucet from the browser
  ferry serve --allow-origin http://localhost:5173`,
		Args: cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.memoryLimitOn = cmd.Flags().Changed("memory-limit-mib")
			return run(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.dataDir, "data", "", "data directory (default $FERRY_HOME/localnet, else the user data directory)")
	fl.BoolVar(&o.reset, "reset", false, "delete the ledgers, demo wallets and keys in the data directory first")
	fl.BoolVar(&o.inMemory, "in-memory", false, "keep nothing: ledgers in memory, demo keypairs in a temporary directory")
	fl.StringVar(&o.apiAddr, "api-addr", server.DefaultAPIAddr, "listen address of the payments API and /mcp")
	fl.StringVar(&o.rpcAddr, "rpc-addr", server.DefaultRPCAddr, "listen address of the base-layer JSON-RPC")
	fl.StringVar(&o.ephemeralAddr, "ephemeral-addr", server.DefaultEphemeralAddr, "listen address of the ephemeral rollup's JSON-RPC")
	fl.StringVar(&o.routerAddr, "router-addr", server.DefaultRouterAddr, "listen address of the router")
	fl.StringVar(&o.wsAddr, "ws-addr", "", "listen address of the base layer's PubSub websocket (default: the RPC port + 1)")
	fl.StringVar(&o.erWSAddr, "ephemeral-ws-addr", "", "listen address of the ephemeral rollup's PubSub websocket (default: its RPC port + 1, the router's port)")
	fl.StringVar(&o.addrFile, "addr-file", "", "write the bound endpoint URLs to this JSON file")
	fl.StringVar(&o.envFile, "env-file", "", "write the CLI's environment for these endpoints (export FERRY_RPC_URL=... lines, for `. FILE`) once everything serves; removed at exit")
	fl.DurationVar(&o.slotTime, "slot-time", localnet.DefaultBaseSlot, "base-layer slot duration")
	fl.DurationVar(&o.erSlotTime, "ephemeral-slot-time", localnet.DefaultEphemeralSlot, "ephemeral rollup slot duration")
	fl.IntVar(&o.finalityDepth, "finality-depth", ledger.DefaultFinalityDepth, "slots on top of a confirmed slot before it is finalized")
	fl.BoolVar(&o.noSync, "no-sync", false, "do not fsync each slot (faster; a machine crash may lose recent slots)")
	fl.DurationVar(&o.emptyBatch, "empty-slot-batch", ledger.DefaultEmptySlotBatch, "commit slots without transactions together, at most this long after the first (0: every slot on its own; confirmed trails by up to this while idle)")
	fl.Uint64Var(&o.limitLedger, "limit-ledger-size", 0, "keep the history of only about this many newest transactions per chain node, pruning older slots (0: keep all; accounts are never pruned)")
	fl.IntVar(&o.accountCache, "account-cache", ledger.DefaultAccountCacheSize, "accounts each chain node keeps decoded in memory after reading them from disk (more helps clients that read a large set of accounts over and over; each one costs the garbage collector work)")
	fl.Int64Var(&o.memoryLimit, "memory-limit-mib", DefaultMemoryLimitMiB, "soft limit of the process's Go memory in MiB: the garbage collector works harder near it instead of letting the heap double (0: off; GOMEMLIMIT in the environment wins unless this is given)")
	fl.BoolVar(&o.noDemo, "no-demo", false, "create no demo mint and wallets")
	fl.BoolVar(&o.noCheatcodes, "no-cheatcodes", false, "leave out the development cheatcodes and rollup controls (ferry dev, dev.* MCP tools, ferry_haltLedger, ferry_advanceSlot)")
	fl.StringVar(&o.fork, "fork", "", "local mode: start the base layer as a lazy fork of this cluster (moniker or RPC URL): each account is copied the first time it is read or written")
	fl.Uint64Var(&o.forkSlot, "fork-slot", 0, "with --fork: the slot the fork is recorded at (the remote must have reached it; default: its confirmed slot at start)")
	fl.StringArrayVar(&o.clone, "clone", nil, "with --fork: copy this account at start (repeatable)")
	fl.StringVar(&o.cloneFile, "clone-file", "", "with --fork: copy the accounts listed in this file at start (one address a line, # comments)")
	fl.StringArrayVar(&o.routes, "route", nil, "gateway mode: a rollup node for the router, URL or IDENTITY=URL (repeatable; default: MagicBlock's public nodes)")
	fl.StringArrayVar(&o.allowUpstream, "allow-upstream", nil, "let requests name this upstream as cluster or sendRpcEndpoint: [scheme://]host[:port] glob (repeatable; also "+cluster.AllowEnv+")")
	fl.StringArrayVar(&o.allowOrigins, "allow-origin", nil, `web origin (scheme://host[:port], "null" or "*") whose pages may call the faucet methods from a browser (repeatable; default: none)`)
	fl.IntVar(&o.maxConns, "max-conns", httpguard.DefaultMaxConns, "open connections each listener holds at most")
	fl.DurationVar(&o.readTimeout, "read-timeout", rpcserver.ReadTimeout, "time a client has to send a whole request, body included")
	fl.DurationVar(&o.idleTimeout, "idle-timeout", rpcserver.IdleTimeout, "close keep-alive connections idle this long")
	fl.Int64Var(&o.maxResponse, "max-response-bytes", rpcserver.DefaultMaxResponseBytes, "chain nodes: bytes of answers one request (or batch) may get")
	fl.DurationVar(&o.shutdown, "shutdown-timeout", server.DefaultShutdownTimeout, "how long in-flight requests may take to finish at shutdown")
	fl.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	fl.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.SortFlags = false
	_ = cmd.RegisterFlagCompletionFunc("log-format", fixed("text", "json"))
	_ = cmd.RegisterFlagCompletionFunc("log-level", fixed("debug", "info", "warn", "error"))
	return cmd
}

func fixed(vals ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return vals, cobra.ShellCompDirectiveNoFileComp
	}
}

func run(ctx context.Context, f *cmdutil.Factory, o *options) error {
	if err := f.CheckOutput(cmdutil.OutputText, cmdutil.OutputJSON); err != nil {
		return err
	}
	log, err := newLogger(f, o)
	if err != nil {
		return err
	}
	if o.slotTime <= 0 || o.erSlotTime <= 0 {
		return cmdutil.UsageErrorf("--slot-time and --ephemeral-slot-time must be positive")
	}
	if o.finalityDepth < 0 {
		return cmdutil.UsageErrorf("--finality-depth must not be negative")
	}
	if o.emptyBatch < 0 {
		return cmdutil.UsageErrorf("--empty-slot-batch must not be negative")
	}
	if o.shutdown <= 0 {
		return cmdutil.UsageErrorf("--shutdown-timeout must be positive")
	}
	if o.accountCache <= 0 {
		return cmdutil.UsageErrorf("--account-cache must be positive")
	}
	if o.memoryLimit < 0 || o.memoryLimit > maxMemoryLimitMiB {
		return cmdutil.UsageErrorf("--memory-limit-mib must be between 0 and %d", maxMemoryLimitMiB)
	}
	if o.maxConns <= 0 || o.readTimeout <= 0 || o.idleTimeout <= 0 || o.maxResponse <= 0 {
		return cmdutil.UsageErrorf("--max-conns, --read-timeout, --idle-timeout and --max-response-bytes must be positive")
	}
	origins, err := httpguard.ParseOrigins(o.allowOrigins)
	if err != nil {
		return cmdutil.UsageErrorf("--allow-origin: %v", err)
	}
	// Only the flags select gateway mode: a config file or FERRY_CLUSTER
	// that points the CLI at devnet must not turn `ferry serve` into a
	// gateway.
	clusterName := f.Cluster
	if f.URL != "" {
		clusterName = f.URL
	}
	if clusterName != "" {
		// The Solana CLI's monikers (-u l, d, m); a custom URL keeps the
		// hosted API's pairing here: this process is that API.
		clusterName = cluster.Canonical(clusterName)
	}
	local := server.IsLocal(clusterName)
	routes, err := parseRoutes(o.routes)
	if err != nil {
		return err
	}
	if local && len(routes) > 0 {
		return cmdutil.UsageErrorf("--route applies to gateway mode (--cluster devnet, mainnet or a URL)")
	}
	forkOpts, err := o.forkOptions(local)
	if err != nil {
		return err
	}
	if !local && (o.wsAddr != "" || o.erWSAddr != "") {
		return cmdutil.UsageErrorf("--ws-addr and --ephemeral-ws-addr apply to local mode (gateway mode runs no chain node)")
	}
	if !local {
		if _, err := cluster.Resolve(clusterName, cluster.Overrides{}); err != nil {
			return cmdutil.UsageErrorf("--cluster: %v", err)
		}
	}
	dataDir := ""
	switch {
	case o.inMemory && o.dataDir != "":
		return cmdutil.UsageErrorf("--in-memory and --data are exclusive")
	case o.inMemory && o.reset:
		return cmdutil.UsageErrorf("--in-memory and --reset are exclusive (memory starts empty)")
	case o.dataDir != "":
		dataDir = o.dataDir
	case !o.inMemory:
		if dataDir, err = DefaultDataDir(f.Getenv, runtime.GOOS); err != nil {
			return cmdutil.UsageErrorf("%v (or pass --data DIR or --in-memory)", err)
		}
	}
	allow := append(append([]string(nil), o.allowUpstream...), cluster.SplitAllowPatterns(f.Getenv(cluster.AllowEnv))...)
	if _, err := cluster.NewAllowList(allow); err != nil {
		return cmdutil.UsageErrorf("--allow-upstream / %s: %v", cluster.AllowEnv, err)
	}
	depth := o.finalityDepth
	if depth == 0 {
		depth = -1 // the ledger's "finalize immediately"
	}
	overrides, err := configOverrides(f)
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if limit, ok := memoryLimit(o.memoryLimit, o.memoryLimitOn, f.Getenv("GOMEMLIMIT")); ok {
		debug.SetMemoryLimit(limit)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first signal, a second one kills the process at once.
		<-ctx.Done()
		stop()
	}()
	n, err := server.Build(server.Options{
		Cluster: clusterName, Overrides: overrides, Getenv: f.Getenv,
		DataDir: dataDir, Reset: o.reset,
		APIAddr: o.apiAddr, RPCAddr: o.rpcAddr, EphemeralAddr: o.ephemeralAddr, RouterAddr: o.routerAddr, AddrFile: o.addrFile,
		WSAddr: o.wsAddr, EphemeralWSAddr: o.erWSAddr,
		SlotDuration: o.slotTime, EphemeralSlotDuration: o.erSlotTime, FinalityDepth: depth, NoSync: o.noSync, LimitLedgerSize: o.limitLedger, EmptySlotBatch: emptySlotBatch(o.emptyBatch),
		AccountCacheSize: o.accountCache, Demo: server.DemoOptions{Disabled: o.noDemo}, NoCheatcodes: o.noCheatcodes, Fork: forkOpts, Routes: routes, ShutdownTimeout: o.shutdown, Logger: log,
		AllowUpstream: allow, OnHealthChange: func(h *api.HealthResponse) { printHealth(f, h) },
		Limits:           server.Limits{MaxConns: o.maxConns, ReadTimeout: o.readTimeout, IdleTimeout: o.idleTimeout},
		MaxResponseBytes: o.maxResponse, AllowOrigins: origins,
	})
	if err != nil {
		return err
	}
	var envErr error
	err = n.Run(ctx, func(info *server.Info) {
		if o.envFile != "" {
			if envErr = writeEnvFile(o.envFile, info); envErr != nil {
				log.Error("write --env-file", "err", envErr)
			}
		}
		if f.JSON() {
			f.PrintJSON(info)
			return
		}
		writeBanner(f.IO.StyledOut(), info)
	})
	if o.envFile != "" && envErr == nil {
		if rerr := os.Remove(o.envFile); rerr != nil && !os.IsNotExist(rerr) {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// writeEnvFile writes the CLI's environment for info's endpoints as shell
// export lines, atomically (a script waiting for the file never reads half
// of it).
func writeEnvFile(path string, info *server.Info) error {
	var b strings.Builder
	for _, e := range []struct{ key, name string }{
		{server.KeyRPC, "FERRY_RPC_URL"}, {server.KeyEphemeral, "FERRY_EPHEMERAL_URL"},
		{server.KeyRouter, "FERRY_ROUTER_URL"}, {server.KeyAPI, "FERRY_API_URL"},
	} {
		if u := info.URLs[e.key]; u != "" {
			fmt.Fprintf(&b, "export %s=%s\n", e.name, u)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ferry-env-*")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(b.String())
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// configOverrides are the configuration file's per-cluster endpoints
// (the CLI's "clusters" section), for gateway mode.
func configOverrides(f *cmdutil.Factory) (cluster.Overrides, error) {
	cfg, err := f.Config()
	if err != nil {
		return cluster.Overrides{}, err
	}
	o := cluster.Overrides{PerCluster: map[string]cluster.Overrides{}}
	for k, v := range cfg.Clusters {
		if server.IsLocal(k) {
			continue // local endpoints are the ones served here
		}
		o.PerCluster[k] = cluster.Overrides{BaseRPC: v.BaseRPC, Ephemeral: v.Ephemeral, Router: v.Router, API: v.API}
	}
	return o, nil
}

// parseRoutes reads --route values: URL, or IDENTITY=URL.
func parseRoutes(vals []string) ([]chainclient.Route, error) {
	var out []chainclient.Route
	for _, v := range vals {
		var rt chainclient.Route
		u := v
		if id, rest, ok := strings.Cut(v, "="); ok && !strings.Contains(id, "://") {
			k, err := inputlimit.PublicKey(id)
			if err != nil {
				return nil, cmdutil.UsageErrorf("--route %s: identity: %v", v, err)
			}
			rt.Identity, u = k, rest
		}
		fqdn, err := chainclient.NormalizeFQDN(u)
		if err != nil {
			return nil, cmdutil.UsageErrorf("--route %s: %v", v, err)
		}
		rt.FQDN = fqdn
		out = append(out, rt)
	}
	return out, nil
}

// DefaultDataDir is serve's default --data: $FERRY_HOME/localnet when
// FERRY_HOME is set, else "ferry/localnet" in the user data directory:
// $XDG_DATA_HOME, else ~/.local/share (Linux and other Unix),
// ~/Library/Application Support (macOS) or %LocalAppData% (Windows).
func DefaultDataDir(getenv func(string) string, goos string) (string, error) {
	if h := getenv("FERRY_HOME"); h != "" {
		return filepath.Join(h, "localnet"), nil
	}
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "ferry", "localnet"), nil
	}
	if goos == "windows" {
		if d := getenv("LOCALAPPDATA"); d != "" {
			return filepath.Join(d, "ferry", "localnet"), nil
		}
	}
	home := getenv("HOME")
	if home == "" || home == "/no-home" {
		return "", fmt.Errorf("cannot find a data directory: set FERRY_HOME")
	}
	if goos == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "ferry", "localnet"), nil
	}
	return filepath.Join(home, ".local", "share", "ferry", "localnet"), nil
}

func newLogger(f *cmdutil.Factory, o *options) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return nil, cmdutil.UsageErrorf("--log-level must be debug, info, warn or error (got %q)", o.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(o.logFormat) {
	case "text":
		return slog.New(slog.NewTextHandler(f.IO.ErrOut, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(f.IO.ErrOut, opts)), nil
	}
	return nil, cmdutil.UsageErrorf("--log-format must be text or json (got %q)", o.logFormat)
}

// printHealth is the readiness line of a health change: JSON with
// --output json, else one line on stdout, next to the banner.
func printHealth(f *cmdutil.Factory, h *api.HealthResponse) {
	if f.JSON() {
		f.PrintJSON(h)
		return
	}
	if h.Status == api.HealthOK {
		fmt.Fprintln(f.IO.Out, "ready: every ledger accepts writes")
		return
	}
	fmt.Fprintf(f.IO.Out, "halted: %s\n  builds and sends answer 503 LEDGER_HALTED; fix the cause (free disk space) and restart ferry serve\n", h.Reason)
}

// forkOptions checks and gathers --fork, --fork-slot, --clone and
// --clone-file.
func (o *options) forkOptions(local bool) (server.ForkOptions, error) {
	f := server.ForkOptions{Cluster: o.fork, Slot: o.forkSlot}
	if o.fork == "" {
		if o.forkSlot != 0 || len(o.clone) > 0 || o.cloneFile != "" {
			return f, cmdutil.UsageErrorf("--fork-slot, --clone and --clone-file need --fork")
		}
		return f, nil
	}
	if !local {
		return f, cmdutil.UsageErrorf("--fork applies to local mode (it forks the embedded base layer); drop --cluster")
	}
	for _, c := range o.clone {
		k, err := solana.PublicKeyFromBase58(c)
		if err != nil {
			return f, cmdutil.UsageErrorf("--clone: %q is not an address", c)
		}
		f.Clone = append(f.Clone, k)
	}
	if o.cloneFile != "" {
		ks, err := server.ReadCloneFile(o.cloneFile)
		if err != nil {
			return f, cmdutil.UsageErrorf("%v", err)
		}
		f.Clone = append(f.Clone, ks...)
	}
	return f, nil
}

// emptySlotBatch maps --empty-slot-batch to ledger.Config.EmptySlotBatch,
// where 0 means the default and a negative value every slot on its own.
func emptySlotBatch(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
