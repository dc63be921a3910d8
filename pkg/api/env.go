package api

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/keyfile"
)

// EnvConfig is what the hosted API's environment variables configure
// (payments-api.md §2.1), so a deployment's .dev.vars works with ferry:
//
//	CLUSTER                              default cluster ("custom" means BASE_RPC_URL)
//	BASE_RPC_URL, EPHEMERAL_RPC_URL      mainnet base and rollup RPCs (custom URLs use the rollup too)
//	EPHEMERAL_TEE_RPC_URL                mainnet-private rollup
//	BASE_DEVNET_RPC_URL, EPHEMERAL_DEVNET_RPC_URL, EPHEMERAL_DEVNET_TEE_RPC_URL
//	TRANSFER_QUEUE_CRANK_RPC_URL, TRANSFER_QUEUE_DEVNET_CRANK_RPC_URL
//	CORS_ORIGIN, METIS_SWAP_API_URL, GASLESS_SPONSOR_SECRET_KEY (JSON byte array)
type EnvConfig struct {
	// Default is CLUSTER ("" when unset).
	Default    string
	Overrides  cluster.Overrides
	CORSOrigin string
	// SwapUpstream is METIS_SWAP_API_URL.
	SwapUpstream string
	// Sponsor is GASLESS_SPONSOR_SECRET_KEY (nil when unset).
	Sponsor ed25519.PrivateKey
}

// FromEnv reads the hosted API's environment variables on top of base
// (e.g. overrides from ferry's configuration file). Per-cluster endpoint
// variables become base.PerCluster entries.
func FromEnv(getenv func(string) string, base cluster.Overrides) (EnvConfig, error) {
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	o := base
	o.PerCluster = maps.Clone(base.PerCluster)
	if o.PerCluster == nil {
		o.PerCluster = map[string]cluster.Overrides{}
	}
	set := func(key string, f func(*cluster.Overrides)) {
		pc := o.PerCluster[key]
		f(&pc)
		o.PerCluster[key] = pc
	}
	// The -private clusters share their kind's base RPC and crank, but not
	// its rollup: pin theirs so the kind-level rollup does not leak in.
	tee := func(name, envKey string) {
		u := env(envKey)
		if u == "" {
			if pc, ok := base.PerCluster[name]; ok && pc.Ephemeral != "" {
				u = pc.Ephemeral
			} else {
				def, _ := cluster.Resolve(name, cluster.Overrides{})
				u = def.Ephemeral
			}
		}
		set(name, func(pc *cluster.Overrides) { pc.Ephemeral = u })
	}
	if v := env("BASE_RPC_URL"); v != "" {
		set("mainnet", func(pc *cluster.Overrides) { pc.BaseRPC = v })
	}
	if v := env("EPHEMERAL_RPC_URL"); v != "" {
		set("mainnet", func(pc *cluster.Overrides) { pc.Ephemeral = v })
		set("custom", func(pc *cluster.Overrides) { pc.Ephemeral = v })
	}
	if v := env("BASE_DEVNET_RPC_URL"); v != "" {
		set("devnet", func(pc *cluster.Overrides) { pc.BaseRPC = v })
	}
	if v := env("EPHEMERAL_DEVNET_RPC_URL"); v != "" {
		set("devnet", func(pc *cluster.Overrides) { pc.Ephemeral = v })
	}
	if v := env("TRANSFER_QUEUE_CRANK_RPC_URL"); v != "" {
		set("mainnet", func(pc *cluster.Overrides) { pc.Crank = v })
		set("custom", func(pc *cluster.Overrides) { pc.Crank = v })
	}
	if v := env("TRANSFER_QUEUE_DEVNET_CRANK_RPC_URL"); v != "" {
		set("devnet", func(pc *cluster.Overrides) { pc.Crank = v })
	}
	tee("mainnet-private", "EPHEMERAL_TEE_RPC_URL")
	tee("devnet-private", "EPHEMERAL_DEVNET_TEE_RPC_URL")

	out := EnvConfig{Overrides: o, CORSOrigin: env("CORS_ORIGIN"), SwapUpstream: env("METIS_SWAP_API_URL")}
	switch c := env("CLUSTER"); strings.ToLower(c) {
	case "":
	case "custom":
		out.Default = env("BASE_RPC_URL")
		if out.Default == "" {
			return out, configErr("BASE_RPC_URL", "Required for CLUSTER=custom")
		}
	default:
		out.Default = c
	}
	if out.Default != "" {
		if _, err := cluster.Resolve(out.Default, o); err != nil {
			return out, configErr("CLUSTER", err.Error())
		}
	}
	if v := env("GASLESS_SPONSOR_SECRET_KEY"); v != "" {
		k, err := ParseSecretKey(v)
		if err != nil {
			return out, apierr.New(http.StatusInternalServerError, apierr.CodeConfig, "GASLESS_SPONSOR_SECRET_KEY "+err.Error())
		}
		out.Sponsor = k
	}
	return out, nil
}

func configErr(name, msg string) *apierr.Error {
	return apierr.New(http.StatusInternalServerError, apierr.CodeConfig, fmt.Sprintf("Invalid worker environment variable %s", name)).
		WithDetails(map[string]any{"issues": []map[string]any{{"path": []string{name}, "message": msg}}, "hint": "Set " + name + " correctly."})
}

// ParseSecretKey reads a Solana secret key given as a JSON array of 64
// bytes (the hosted API's GASLESS_SPONSOR_SECRET_KEY format).
func ParseSecretKey(s string) (ed25519.PrivateKey, error) {
	k, err := keyfile.Parse([]byte(s))
	switch {
	case errors.Is(err, keyfile.ErrFormat):
		return nil, fmt.Errorf("must be a JSON-encoded secret key array")
	case err != nil:
		return nil, fmt.Errorf("is not a valid Solana secret key")
	}
	return k, nil
}
