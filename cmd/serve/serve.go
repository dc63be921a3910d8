// Package serve implements `ferry serve`: the payments API, /mcp, the
// base and ephemeral chain nodes and the router in one process, on an
// embedded ledger pair (local mode) or in front of a real cluster
// (gateway mode).
package serve

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/server"
)

type options struct {
	dataDir       string
	inMemory      bool
	reset         bool
	addrFile      string
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
	noDemo        bool
	routes        []string
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
--reset starts over, --in-memory keeps nothing.

The base node also answers local-only faucet methods: requestAirdrop,
ferry_faucetInfo, ferry_createMint and ferry_mintTo (what "ferry airdrop"
and "ferry mint" use).

--cluster devnet|mainnet|devnet-private|mainnet-private|URL runs only the
payments API, MCP and router, as a gateway to that real cluster (no
embedded ledgers). The router lists MagicBlock's public rollup nodes of the
cluster, or the --route nodes. The hosted API's environment variables
(EPHEMERAL_RPC_URL, BASE_DEVNET_RPC_URL, CORS_ORIGIN, ...) apply.

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
  ferry serve --cluster devnet --log-format json`,
		Args: cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
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
	fl.DurationVar(&o.slotTime, "slot-time", localnet.DefaultBaseSlot, "base-layer slot duration")
	fl.DurationVar(&o.erSlotTime, "ephemeral-slot-time", localnet.DefaultEphemeralSlot, "ephemeral rollup slot duration")
	fl.IntVar(&o.finalityDepth, "finality-depth", ledger.DefaultFinalityDepth, "slots on top of a confirmed slot before it is finalized")
	fl.BoolVar(&o.noSync, "no-sync", false, "do not fsync each slot (faster; a machine crash may lose recent slots)")
	fl.BoolVar(&o.noDemo, "no-demo", false, "create no demo mint and wallets")
	fl.StringArrayVar(&o.routes, "route", nil, "gateway mode: a rollup node for the router, URL or IDENTITY=URL (repeatable; default: MagicBlock's public nodes)")
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
	if o.shutdown <= 0 {
		return cmdutil.UsageErrorf("--shutdown-timeout must be positive")
	}
	// Only the flags select gateway mode: a config file or FERRY_CLUSTER
	// that points the CLI at devnet must not turn `ferry serve` into a
	// gateway.
	clusterName := f.Cluster
	if f.URL != "" {
		clusterName = f.URL
	}
	local := server.IsLocal(clusterName)
	routes, err := parseRoutes(o.routes)
	if err != nil {
		return err
	}
	if local && len(routes) > 0 {
		return cmdutil.UsageErrorf("--route applies to gateway mode (--cluster devnet, mainnet or a URL)")
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
		SlotDuration: o.slotTime, EphemeralSlotDuration: o.erSlotTime, FinalityDepth: depth, NoSync: o.noSync,
		Demo: server.DemoOptions{Disabled: o.noDemo}, Routes: routes, ShutdownTimeout: o.shutdown, Logger: log,
	})
	if err != nil {
		return err
	}
	return n.Run(ctx, func(info *server.Info) {
		if f.JSON() {
			f.PrintJSON(info)
			return
		}
		writeBanner(f.IO.StyledOut(), info)
	})
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
			k, err := solana.PublicKeyFromBase58(id)
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
