package api

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
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
//
// An environment that sets any of them is a deployment's environment and
// is taken as the hosted worker takes it: there are no built-in endpoints
// for what it leaves out. A cluster whose RPC variables are missing
// answers 500 CONFIG_ERROR (naming them) instead of falling back to a
// public host, and a variable that is not an http(s) URL makes every
// cluster answer 500 CONFIG_ERROR instead of being ignored (see
// cluster.Overrides.Problems). Endpoints from ferry's own configuration
// (base) count as set. Without any of these variables ferry's defaults
// stand.
type EnvConfig struct {
	// Default is CLUSTER ("" when unset).
	Default    string
	Overrides  cluster.Overrides
	CORSOrigin string
	// SwapUpstream is METIS_SWAP_API_URL.
	SwapUpstream string
	// Sponsor is GASLESS_SPONSOR_SECRET_KEY (nil when unset).
	Sponsor ed25519.PrivateKey
	// Deployment reports that the environment sets at least one of the
	// hosted API's variables (EnvVars): endpoints it leaves out are
	// configuration errors, not defaults.
	Deployment bool
}

// EnvVars are the hosted API's environment variables FromEnv reads. Any
// one of them set makes the environment a deployment's (see EnvConfig).
var EnvVars = []string{
	"CLUSTER", "BASE_RPC_URL", "EPHEMERAL_RPC_URL", "EPHEMERAL_TEE_RPC_URL",
	"BASE_DEVNET_RPC_URL", "EPHEMERAL_DEVNET_RPC_URL", "EPHEMERAL_DEVNET_TEE_RPC_URL",
	"TRANSFER_QUEUE_CRANK_RPC_URL", "TRANSFER_QUEUE_DEVNET_CRANK_RPC_URL",
	"CORS_ORIGIN", "METIS_SWAP_API_URL", "GASLESS_SPONSOR_SECRET_KEY",
}

// urlVars are the variables that must hold an http(s) URL when set.
var urlVars = []string{
	"BASE_RPC_URL", "EPHEMERAL_RPC_URL", "EPHEMERAL_TEE_RPC_URL",
	"BASE_DEVNET_RPC_URL", "EPHEMERAL_DEVNET_RPC_URL", "EPHEMERAL_DEVNET_TEE_RPC_URL",
	"TRANSFER_QUEUE_CRANK_RPC_URL", "TRANSFER_QUEUE_DEVNET_CRANK_RPC_URL",
}

// clusterVars are the RPC variables each named cluster needs in a
// deployment's environment: its base RPC, then its rollup.
var clusterVars = []struct {
	name       string
	base, roll string
}{
	{"mainnet", "BASE_RPC_URL", "EPHEMERAL_RPC_URL"},
	{"mainnet-private", "BASE_RPC_URL", "EPHEMERAL_TEE_RPC_URL"},
	{"devnet", "BASE_DEVNET_RPC_URL", "EPHEMERAL_DEVNET_RPC_URL"},
	{"devnet-private", "BASE_DEVNET_RPC_URL", "EPHEMERAL_DEVNET_TEE_RPC_URL"},
	{string(cluster.Custom), "", "EPHEMERAL_RPC_URL"}, // the base is the request's URL
}

// EnvHint is the hint of the CONFIG_ERROR of a deployment without the
// mainnet RPC variables (the hosted worker's, for ferry serve).
const EnvHint = "Create .dev.vars from .dev.vars.example (or export the variables before ferry serve) and set BASE_RPC_URL and " +
	"EPHEMERAL_RPC_URL. If you want cluster=devnet, also set BASE_DEVNET_RPC_URL and EPHEMERAL_DEVNET_RPC_URL."

// FromEnv reads the hosted API's environment variables on top of base
// (e.g. overrides from ferry's configuration file). Per-cluster endpoint
// variables become base.PerCluster entries; missing and invalid ones of a
// deployment's environment become Overrides.Problems.
func FromEnv(getenv func(string) string, base cluster.Overrides) (EnvConfig, error) {
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	o := base
	o.PerCluster = maps.Clone(base.PerCluster)
	if o.PerCluster == nil {
		o.PerCluster = map[string]cluster.Overrides{}
	}
	o.Problems = maps.Clone(base.Problems)
	if o.Problems == nil {
		o.Problems = map[string]*cluster.ConfigError{}
	}
	set := func(key string, f func(*cluster.Overrides)) {
		pc := o.PerCluster[key]
		f(&pc)
		o.PerCluster[key] = pc
	}
	deployment := false
	for _, k := range EnvVars {
		if env(k) != "" {
			deployment = true
		}
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
	if deployment {
		addEnvProblems(&o, base, env)
	}

	out := EnvConfig{Overrides: o, CORSOrigin: env("CORS_ORIGIN"), SwapUpstream: env("METIS_SWAP_API_URL"), Deployment: deployment}
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

// addEnvProblems records the configuration problems of a deployment's
// environment: an RPC variable that is not an http(s) URL breaks every
// cluster (as the hosted worker's schema does); a named cluster whose RPC
// variables are missing (and not given by ferry's own configuration,
// base) is unusable.
func addEnvProblems(o *cluster.Overrides, base cluster.Overrides, env func(string) string) {
	var invalid []cluster.ConfigIssue
	for _, k := range urlVars {
		if v := env(k); v != "" && !isHTTPURL(v) {
			invalid = append(invalid, cluster.ConfigIssue{Var: k, Message: "Invalid url"})
		}
	}
	if invalid != nil {
		o.Problems[cluster.AllClusters] = &cluster.ConfigError{
			Message: "Missing or invalid worker environment variables", Issues: invalid,
			Hint: "Set " + joinVars(invalid) + " to http(s) URLs.",
		}
	}
	configured := func(name, v string, baseURL bool) bool {
		if env(v) != "" {
			return true
		}
		if pc := base.PerCluster[name]; baseURL && pc.BaseRPC != "" || !baseURL && pc.Ephemeral != "" {
			return true
		}
		// A kind's base RPC serves its -private cluster too; its rollup
		// does not.
		if pc := base.PerCluster[kindOf(name)]; baseURL && pc.BaseRPC != "" {
			return true
		}
		return baseURL && base.BaseRPC != "" || !baseURL && base.Ephemeral != ""
	}
	for _, c := range clusterVars {
		var missing []cluster.ConfigIssue
		if c.base != "" && !configured(c.name, c.base, true) {
			missing = append(missing, cluster.ConfigIssue{Var: c.base, Message: "Required for cluster=" + c.name})
		}
		if !configured(c.name, c.roll, false) {
			missing = append(missing, cluster.ConfigIssue{Var: c.roll, Message: "Required for cluster=" + c.name})
		}
		if missing == nil {
			continue
		}
		p := &cluster.ConfigError{Message: "Missing worker environment variables for cluster=" + c.name, Issues: missing,
			Hint: "Set " + joinVars(missing) + " before using cluster=" + c.name + "."}
		if c.name == "mainnet" || c.name == string(cluster.Custom) {
			// The hosted worker requires these for every request.
			for i := range p.Issues {
				p.Issues[i].Message = "Required"
			}
			p.Message, p.Hint = "Missing or invalid worker environment variables", EnvHint
		}
		o.Problems[c.name] = p
	}
}

func kindOf(name string) string {
	if ep, err := cluster.Resolve(name, cluster.Overrides{}); err == nil {
		return string(ep.Kind)
	}
	return name
}

func joinVars(issues []cluster.ConfigIssue) string {
	vars := make([]string, len(issues))
	for i, is := range issues {
		vars[i] = is.Var
	}
	return strings.Join(vars, " and ")
}

// isHTTPURL reports whether s is an absolute http(s) URL with a host.
func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
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
