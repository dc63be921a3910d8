package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/ferry-sh/ferry/pkg/api"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/router"
)

// GatewayRoutes returns the default router nodes of a cluster kind:
// MagicBlock's public devnet nodes for devnet, its mainnet nodes for
// mainnet and custom URLs.
func GatewayRoutes(kind cluster.Kind) []chainclient.Route {
	if kind == cluster.Devnet {
		return router.DevnetRoutes()
	}
	return router.MainnetRoutes()
}

// buildGateway assembles the router, payments API and MCP in front of a
// real cluster: no ledger runs here.
func buildGateway(o Options, s *Server) (*Node, error) {
	env, err := api.FromEnv(o.Getenv, o.Overrides)
	if err != nil {
		return nil, err
	}
	ep, err := cluster.Resolve(o.Cluster, env.Overrides)
	if err != nil {
		return nil, fmt.Errorf("--cluster: %w", err)
	}
	if o.DataDir != "" {
		if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("create data directory: %w", err)
		}
	}
	s.Endpoint(KeyAPI, o.APIAddr, nil, WithWriteTimeout(APIWriteTimeout))
	s.Endpoint(KeyRouter, o.RouterAddr, nil, WithAnyOriginCORS())
	urls, err := s.Bind()
	if err != nil {
		return nil, err
	}

	base, err := chainclient.New(ep.BaseRPC)
	if err != nil {
		return nil, fmt.Errorf("base RPC of %s: %w", ep.Name, err)
	}
	routes := o.Routes
	if routes == nil {
		routes = GatewayRoutes(ep.Kind)
	}
	if routes, err = resolveIdentities(routes); err != nil {
		return nil, err
	}
	reg, err := router.NewGateway(router.GatewayConfig{Routes: routes, Base: base})
	if err != nil {
		return nil, err
	}
	routerH := &router.Handler{Backend: reg}

	// The cluster's delegation lookups go to this router, in-process.
	over := env.Overrides
	over.PerCluster = clonePerCluster(over.PerCluster)
	for _, key := range []string{string(ep.Kind), ep.Name} {
		pc := over.PerCluster[key]
		pc.Router = urls[KeyRouter]
		over.PerCluster[key] = pc
	}
	// The router's rollup nodes are the operator's: a send may name them.
	trusted := make([]string, 0, len(routes))
	for _, rt := range routes {
		trusted = append(trusted, rt.FQDN)
	}
	clusters, err := api.NewClusters(api.ClustersConfig{
		Default: o.Cluster, Overrides: over,
		InProcess:     map[string]http.Handler{urls[KeyRouter]: routerH},
		AllowUpstream: o.AllowUpstream, TrustedUpstreams: trusted,
	})
	if err != nil {
		return nil, err
	}
	apiSrv, err := newAPI(o, s, clusters, &payments.Planner{}, env, o.DataDir, nil)
	if err != nil {
		return nil, err
	}
	if err := s.SetHandler(KeyAPI, apiSrv); err != nil {
		return nil, err
	}
	if err := s.SetHandler(KeyRouter, routerH); err != nil {
		return nil, err
	}
	listed, _ := reg.Routes(context.Background())
	info := &Info{
		Mode: ModeGateway, Cluster: ep.Name, URLs: urls, DataDir: o.DataDir,
		Upstream: &Upstream{BaseRPC: chainclient.RedactURL(ep.BaseRPC), Ephemeral: chainclient.RedactURL(ep.Ephemeral)},
		Routes:   listed,
	}
	return &Node{Server: s, Info: info, API: apiSrv}, nil
}

// resolveIdentities asks every route without an identity for it
// (getIdentity on its URL).
func resolveIdentities(routes []chainclient.Route) ([]chainclient.Route, error) {
	out := make([]chainclient.Route, len(routes))
	for i, rt := range routes {
		if rt.Identity.IsZero() {
			c, err := chainclient.New(rt.FQDN)
			if err != nil {
				return nil, fmt.Errorf("route %s: %w", rt.FQDN, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			id, err := c.GetIdentity(ctx)
			cancel()
			if err != nil {
				return nil, fmt.Errorf("route %s: ask its identity: %w", chainclient.RedactURL(rt.FQDN), err)
			}
			rt.Identity = id.Identity
		}
		if rt.BlockTimeMs == 0 {
			rt.BlockTimeMs = router.DefaultLocalBlockTimeMs
		}
		out[i] = rt
	}
	return out, nil
}
