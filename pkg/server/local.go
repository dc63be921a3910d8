package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/api"
	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/explorer"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/pubsub"
	"github.com/ferry-sh/ferry/pkg/router"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// Local is local mode's embedded chain: the ledger pair, the router over
// it and the demo mint and wallets.
type Local struct {
	Pair   *localnet.Pair
	Router *router.Registry
	Demo   *Demo
	// BasePubSub and EphemeralPubSub are the nodes' websocket servers.
	BasePubSub, EphemeralPubSub *pubsub.Server
	// Dev is the cheatcodes and rollup controls (nil with NoCheatcodes).
	Dev *devchain.Chain
}

// dataDirEntries is everything ferry keeps in a data directory; Reset
// removes exactly these (never the directory itself, which may hold other
// files).
var dataDirEntries = []string{"base", "ephemeral", localnet.KeypairFile, auth.KeyFileName, DemoFile, WalletsDir}

// ResetDataDir deletes what ferry serve keeps in dir: ledgers, validator
// identity, token key, demo wallets and demo.json (and the staging
// directories of an unfinished demo). The caller must hold the
// directory's lock (LockDataDir).
func ResetDataDir(dir string) error {
	if err := removeDemoStaging(dir); err != nil {
		return fmt.Errorf("reset %s: %w", dir, err)
	}
	for _, name := range dataDirEntries {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("reset %s: %w", dir, err)
		}
	}
	return nil
}

// buildLocal opens the ledger pair and assembles every endpoint over it.
// Nothing in the data directory is touched before the directory's lock is
// held and every listener is bound: a --reset that would collide with a
// running instance (same directory or same ports) fails without deleting
// anything.
func buildLocal(o Options, s *Server) (*Node, error) {
	log := o.Logger
	dir := o.DataDir
	if dir != "" {
		lock, err := LockDataDir(dir)
		if err != nil {
			return nil, err
		}
		// Registered first, so released last: after the ledgers closed.
		s.OnShutdown(func(context.Context) error { return lock.Unlock() })
	}
	s.Endpoint(KeyAPI, o.APIAddr, nil, WithWriteTimeout(APIWriteTimeout))
	s.Endpoint(KeyRPC, o.RPCAddr, nil, WithAnyOriginCORS())
	s.Endpoint(KeyEphemeral, o.EphemeralAddr, nil, WithAnyOriginCORS())
	s.Endpoint(KeyRouter, o.RouterAddr, nil, WithAnyOriginCORS())
	ps := declarePubSub(o, s)
	urls, err := s.Bind()
	if err != nil {
		return nil, err
	}
	if dir != "" && o.Reset {
		if err := ResetDataDir(dir); err != nil {
			return nil, err
		}
		log.Info("data directory reset", "dir", dir)
	}
	created := dir == ""
	if !created {
		_, err := os.Stat(filepath.Join(dir, "base"))
		created = os.IsNotExist(err)
	}
	p, err := localnet.Open(localnet.Config{
		DataDir: dir, BaseSlot: o.SlotDuration, EphemeralSlot: o.EphemeralSlotDuration,
		FinalityDepth: o.FinalityDepth, NoSync: o.NoSync, LimitLedgerSize: o.LimitLedgerSize, EmptySlotBatch: o.EmptySlotBatch, Logger: log,
		AccountCacheSize: o.AccountCacheSize, RPC: rpcserver.Options{MaxResponseBytes: o.MaxResponseBytes, FaucetOrigins: o.AllowOrigins},
	})
	if err != nil {
		return nil, fmt.Errorf("start ledgers: %w", err)
	}
	s.OnShutdown(func(context.Context) error {
		if err := p.Close(); err != nil {
			return fmt.Errorf("close ledgers: %w", err)
		}
		log.Info("ledgers closed", "base", p.Base.Slot(ledger.Confirmed), "ephemeral", p.Ephemeral.Slot(ledger.Confirmed))
		return nil
	})

	if err := ps.start(o, s, p); err != nil {
		return nil, err
	}
	ps.publish(s, urls)
	urls = s.URLs()

	var fork *ForkInfo
	if o.Fork.Cluster != "" {
		if fork, err = startFork(o, p); err != nil {
			return nil, err
		}
	}
	demo, demoCreated, err := ensureDemo(context.Background(), p, o.Demo, dir, s)
	if err != nil {
		return nil, err
	}
	var demoMint solana.PublicKey
	if demo != nil {
		demoMint = solana.MustPublicKeyFromBase58(demo.Mint)
	}
	p.BaseRPC.EnableFaucet(rpcserver.FaucetOptions{DefaultMint: func() solana.PublicKey { return demoMint }})
	var dev *devchain.Chain
	if !o.NoCheatcodes {
		if dev, err = enableCheatcodes(p, log); err != nil {
			return nil, err
		}
	}
	p.BaseRPC.SetClusterNode(clusterNode(urls[KeyRPC], urls[KeyRPCWS]))
	p.EphemeralRPC.SetClusterNode(clusterNode(urls[KeyEphemeral], urls[KeyEphemeralWS]))

	reg, err := router.NewLocal(router.LocalConfig{
		Identity: p.Identity(), URL: urls[KeyEphemeral],
		Blockhash:     ledgerBlockhash(p.Ephemeral),
		Base:          ledgerAccounts(p.Base),
		BaseBlockhash: ledgerBlockhash(p.Base),
	})
	if err != nil {
		return nil, err
	}
	routerH := &router.Handler{Backend: reg}

	// The API reaches the embedded nodes in-process under their bound
	// URLs: the same clients, caches and code paths as against a real
	// cluster, without an HTTP hop.
	over := o.Overrides
	over.PerCluster = clonePerCluster(over.PerCluster)
	over.PerCluster[string(cluster.Local)] = cluster.Overrides{
		BaseRPC: urls[KeyRPC], Ephemeral: urls[KeyEphemeral], Router: urls[KeyRouter], API: urls[KeyAPI],
	}
	env, err := api.FromEnv(o.Getenv, over)
	if err != nil {
		return nil, err
	}
	clusters, err := api.NewClusters(api.ClustersConfig{
		Default:       string(cluster.Local),
		Overrides:     env.Overrides,
		InProcess:     map[string]http.Handler{urls[KeyRPC]: p.BaseRPC, urls[KeyEphemeral]: p.EphemeralRPC, urls[KeyRouter]: routerH},
		AllowUpstream: o.AllowUpstream,
		// Builds and sends on the local cluster answer 503 once a ledger
		// halts (GET /health says why).
		Health: map[string]api.HealthCheck{
			urls[KeyRPC]:       {Name: "base ledger", Check: p.Base.Health},
			urls[KeyEphemeral]: {Name: "ephemeral ledger", Check: p.Ephemeral.Health},
		},
	})
	if err != nil {
		return nil, err
	}
	planner := &payments.Planner{}
	if demo != nil {
		planner.DefaultMints = map[cluster.Kind]solana.PublicKey{cluster.Local: demoMint}
	}
	apiSrv, err := newAPI(o, s, clusters, planner, env, dir, dev)
	if err != nil {
		return nil, err
	}
	if err := mountExplorer(o, apiSrv, p, urls, demo); err != nil {
		return nil, err
	}
	// The rollup hides private accounts from everyone but their owners,
	// who prove who they are with the token the API issued for the local
	// cluster (kept valid across restarts by the key in the data dir).
	svc := apiSrv.Service()
	p.SetTokenVerifier(func(tok string) (string, error) { return svc.VerifyIssued(tok, string(cluster.Local)) })
	var routerEP http.Handler = routerH
	if ps.routerShared {
		routerEP = withPubSub(routerH, ps.ephemeral)
	}
	for key, h := range map[string]http.Handler{
		KeyAPI: apiSrv, KeyRPC: withPubSub(p.BaseRPC, ps.base), KeyEphemeral: withPubSub(p.EphemeralRPC, ps.ephemeral), KeyRouter: routerEP,
	} {
		if err := s.SetHandler(key, h); err != nil {
			return nil, err
		}
	}
	routes, _ := reg.Routes(context.Background())
	info := &Info{
		Mode: ModeLocal, Cluster: string(cluster.Local), URLs: urls, DataDir: dir, Created: created, DemoCreated: demoCreated,
		Validator: p.Identity().String(), Faucet: p.Base.Faucet().PublicKey().String(), Demo: demo, Routes: routes, Fork: fork,
	}
	return &Node{Server: s, Info: info, API: apiSrv, Local: &Local{Pair: p, Router: reg, Demo: demo, BasePubSub: ps.base, EphemeralPubSub: ps.ephemeral, Dev: dev}}, nil
}

// enableCheatcodes registers the development cheatcodes on both chain
// nodes and the rollup controls on the ephemeral one, and returns them for
// the MCP endpoint.
func enableCheatcodes(p *localnet.Pair, log *slog.Logger) (*devchain.Chain, error) {
	base, err := devchain.New(devchain.Config{Ledger: p.Base, Name: devchain.NodeBase, Encode: p.BaseRPC.AccountEncoder(), Logger: log})
	if err != nil {
		return nil, err
	}
	er, err := devchain.New(devchain.Config{
		Ledger: p.Ephemeral, Name: devchain.NodeEphemeral, Encode: p.EphemeralRPC.AccountEncoder(), Logger: log,
		Backing: &devchain.VaultBacking{Base: p.Base, Logger: log},
	})
	if err != nil {
		return nil, err
	}
	dev := &devchain.Chain{Base: base, Ephemeral: er, Rollup: devchain.NewRollup(p, log)}
	p.BaseRPC.EnableDevMethods(base.Methods())
	p.EphemeralRPC.EnableDevMethods(er.Methods())
	p.EphemeralRPC.EnableDevMethods(dev.Rollup.Methods())
	return dev, nil
}

func clonePerCluster(m map[string]cluster.Overrides) map[string]cluster.Overrides {
	out := make(map[string]cluster.Overrides, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// clusterNode is what getClusterNodes reports for a chain node bound at
// rpcURL with its websocket (PubSub) endpoint at wsURL ("" while none is
// bound): host:port socket addresses, as Agave reports them.
func clusterNode(rpcURL, wsURL string) rpcserver.ClusterNode {
	hostPort := func(u string) string {
		if p, err := url.Parse(u); err == nil && p.Host != "" {
			return p.Host
		}
		return ""
	}
	return rpcserver.ClusterNode{RPC: hostPort(rpcURL), PubSub: hostPort(wsURL)}
}

// ledgerBlockhash is a router.BlockhashSource over a ledger (confirmed).
func ledgerBlockhash(l *ledger.Ledger) router.BlockhashSource {
	return router.BlockhashSourceFunc(func(context.Context) (chainclient.Blockhash, error) {
		bh, _ := l.LatestBlockhash(ledger.Confirmed)
		return chainclient.Blockhash{Hash: bh.Blockhash, LastValidBlockHeight: bh.LastValidBlockHeight}, nil
	})
}

// ledgerAccounts is a router.AccountReader over a ledger (confirmed).
func ledgerAccounts(l *ledger.Ledger) router.AccountReader {
	return router.AccountReaderFunc(func(_ context.Context, key solana.PublicKey) (*router.Account, error) {
		a, _ := l.Account(key, ledger.Confirmed)
		if a == nil {
			return nil, nil
		}
		return &router.Account{Lamports: a.Lamports, Owner: a.Owner, Data: a.Data}, nil
	})
}

// mountExplorer serves the explorer page on the API listener. Its JSON
// endpoints read the chain nodes in-process through their public JSON-RPC
// handlers, without a token: they see what any anonymous client sees.
func mountExplorer(o Options, apiSrv *api.Server, p *localnet.Pair, urls map[string]string, demo *Demo) error {
	base, err := chainclient.New(urls[KeyRPC], chainclient.WithHandler(p.BaseRPC))
	if err != nil {
		return err
	}
	eph, err := chainclient.New(urls[KeyEphemeral], chainclient.WithHandler(p.EphemeralRPC))
	if err != nil {
		return err
	}
	cfg := explorer.Config{
		Endpoints: explorer.Endpoints{RPC: urls[KeyRPC], RPCWS: urls[KeyRPCWS], Ephemeral: urls[KeyEphemeral],
			EphemeralWS: urls[KeyEphemeralWS], Router: urls[KeyRouter]},
		Base: base, Ephemeral: eph, Validator: p.Identity(), Options: o.Explorer, Logger: o.Logger,
	}
	if demo != nil {
		cfg.Mint, cfg.Decimals = solana.MustPublicKeyFromBase58(demo.Mint), demo.Decimals
		for _, w := range demo.Wallets {
			cfg.Wallets = append(cfg.Wallets, explorer.Wallet{Name: w.Name, Address: w.Address})
		}
	}
	ex, err := explorer.New(cfg)
	if err != nil {
		return err
	}
	ex.Mount(apiSrv)
	return nil
}
