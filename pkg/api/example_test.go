package api_test

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"

	"github.com/ferry-sh/ferry/pkg/api"
	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/payments"
)

// Example shows how `ferry serve` wires the API: the embedded chain nodes
// are reached in-process under their published URLs, everything else over
// the network; tokens are signed with a key kept in the data directory.
func Example() {
	var baseRPC, ephemeralRPC, router http.Handler // the embedded pair and router (e.g. localnet.Pair handlers)
	const baseURL, erURL, routerURL = "http://127.0.0.1:8899", "http://127.0.0.1:7799", "http://127.0.0.1:7800"
	dataDir := os.TempDir()

	env, err := api.FromEnv(os.Getenv, cluster.Overrides{PerCluster: map[string]cluster.Overrides{
		"local": {BaseRPC: baseURL, Ephemeral: erURL, Router: routerURL}, // the bound addresses
	}})
	if err != nil {
		panic(err)
	}
	clusters, err := api.NewClusters(api.ClustersConfig{
		Default:   env.Default, // "" → local; `ferry serve --cluster devnet` passes "devnet"
		Overrides: env.Overrides,
		InProcess: map[string]http.Handler{baseURL: baseRPC, erURL: ephemeralRPC, routerURL: router},
	})
	if err != nil {
		panic(err)
	}
	key, err := auth.LoadOrCreateKey(filepath.Join(dataDir, auth.KeyFileName))
	if err != nil {
		panic(err)
	}
	authSvc, err := auth.New(auth.Config{Key: key})
	if err != nil {
		panic(err)
	}
	srv, err := api.New(api.Config{
		Clusters:   clusters,
		Planner:    &payments.Planner{},
		Sponsor:    env.Sponsor,
		Auth:       authSvc,
		Logger:     slog.Default(),
		CORSOrigin: env.CORSOrigin,
		Swap:       api.SwapConfig{UpstreamURL: env.SwapUpstream},
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	_ = http.Handler(srv) // serve it on 127.0.0.1:8080
}
