// Package cluster maps cluster names (local, devnet, mainnet, devnet-private,
// mainnet-private, or a custom http(s) URL) to the endpoints ferry talks to:
// base-layer RPC, ephemeral-rollup RPC, router and payments API.
package cluster

import (
	"fmt"
	"net/url"
	"strings"
)

// Kind is the internal cluster a name maps to. It drives defaults such as the
// default mint (devnet USDC on devnet) and whether lookup tables exist.
type Kind string

// Cluster kinds.
const (
	Local   Kind = "local"
	Devnet  Kind = "devnet"
	Mainnet Kind = "mainnet"
	Custom  Kind = "custom"
)

// Endpoints are the URLs for one cluster selection.
type Endpoints struct {
	Name      string // as given, normalised to lower case for names
	Kind      Kind
	BaseRPC   string
	Ephemeral string
	Router    string
	API       string // payments API (a running ferry serve, or the hosted API)
	// Crank is the RPC that transfer-queue cranks are sent to (the hosted
	// API's TRANSFER_QUEUE_*_CRANK_RPC_URL); empty means Ephemeral.
	Crank string
	// TEE marks a private (TEE) ephemeral rollup whose RPC needs ?token=.
	TEE bool
	// Problem, when set, says why the cluster cannot be used as
	// configured: a deployment's environment leaves out or mangles its
	// endpoints (see Overrides.Problems). The URLs above are then only the
	// built-in defaults, which a caller must not contact in their place.
	Problem *ConfigError
}

// Defaults of ferry serve on one machine.
const (
	LocalBaseRPC   = "http://127.0.0.1:8899"
	LocalEphemeral = "http://127.0.0.1:7799"
	LocalRouter    = "http://127.0.0.1:7800"
	LocalAPI       = "http://127.0.0.1:8080"
)

// Overrides replace individual endpoints; empty fields keep the default.
// They come from flags, FERRY_* environment variables or the config file.
type Overrides struct {
	BaseRPC, Ephemeral, Router, API string
	// Crank overrides Endpoints.Crank.
	Crank string
	// Per-cluster overrides, keyed by Kind or name ("devnet-private").
	PerCluster map[string]Overrides
	// Problems are configuration problems, keyed by cluster name
	// ("mainnet", "devnet-private", ...; "custom" for every custom URL) or
	// AllClusters. Resolve reports them in Endpoints.Problem: a problem of
	// AllClusters (an invalid value anywhere) before the cluster's own. The
	// local cluster (ferry's embedded pair) has none. Only the top-level
	// Overrides' Problems count.
	Problems map[string]*ConfigError
}

// AllClusters is the Overrides.Problems key of a problem that makes every
// cluster unusable.
const AllClusters = "*"

// ConfigIssue is one problem with one configuration variable.
type ConfigIssue struct {
	// Var is the variable, e.g. BASE_DEVNET_RPC_URL.
	Var string
	// Message says what is wrong: "Required" or "Invalid url".
	Message string
}

// ConfigError reports a cluster whose endpoints are missing from, or
// invalid in, the configuration. Its text is the hosted payments API's
// CONFIG_ERROR message.
type ConfigError struct {
	Message string
	Issues  []ConfigIssue
	// Hint tells the operator what to set.
	Hint string
}

func (e *ConfigError) Error() string {
	vars := make([]string, len(e.Issues))
	for i, is := range e.Issues {
		vars[i] = is.Var + ": " + is.Message
	}
	return e.Message + " (" + strings.Join(vars, "; ") + ")"
}

var builtins = map[string]Endpoints{
	"local": {Kind: Local, BaseRPC: LocalBaseRPC, Ephemeral: LocalEphemeral, Router: LocalRouter, API: LocalAPI},
	"devnet": {Kind: Devnet, BaseRPC: "https://api.devnet.solana.com", Ephemeral: "https://devnet-as.magicblock.app",
		Router: "https://devnet-router.magicblock.app", API: "https://payments.magicblock.app"},
	"mainnet": {Kind: Mainnet, BaseRPC: "https://api.mainnet-beta.solana.com", Ephemeral: "https://as.magicblock.app",
		Router: "https://router.magicblock.app", API: "https://payments.magicblock.app"},
	"devnet-private": {Kind: Devnet, BaseRPC: "https://api.devnet.solana.com", Ephemeral: "https://devnet-tee.magicblock.app",
		Router: "https://devnet-router.magicblock.app", API: "https://payments.magicblock.app", TEE: true},
	"mainnet-private": {Kind: Mainnet, BaseRPC: "https://api.mainnet-beta.solana.com", Ephemeral: "https://mainnet-tee.magicblock.app",
		Router: "https://router.magicblock.app", API: "https://payments.magicblock.app", TEE: true},
}

// CrankRPC is the RPC transfer-queue cranks go to: Crank, else Ephemeral.
func (e Endpoints) CrankRPC() string {
	if e.Crank != "" {
		return e.Crank
	}
	return e.Ephemeral
}

// Names lists the named clusters.
func Names() []string {
	return []string{"local", "devnet", "mainnet", "devnet-private", "mainnet-private"}
}

// ErrInvalid is returned for a cluster that is neither a known name nor an
// http(s) URL. Its text matches the hosted API's INVALID_CLUSTER message.
var ErrInvalid = fmt.Errorf(`cluster must be "mainnet", "devnet", "mainnet-private", "devnet-private", or a valid http(s) URL`)

// Pairing is the rule that gives a custom base-layer URL its rollup and
// router. The two callers of this package need different rules, so each
// says which one it uses.
type Pairing int

const (
	// PairHosted is the hosted payments API's rule for its request field
	// "cluster" (payments-api.md): a custom http(s) URL replaces only the
	// base RPC and keeps mainnet's ephemeral rollup and router. Resolve
	// uses it.
	PairHosted Pairing = iota
	// PairExplicit is the CLI's rule: a custom base URL gets no rollup
	// and no router unless they are given explicitly (Overrides), so a
	// local or private base layer is never silently paired with a remote
	// rollup. ResolveCLI uses it.
	PairExplicit
)

// Solana CLI cluster monikers (solana -u) and what ferry makes of them.
var monikers = map[string]string{
	"l": "local", "localhost": "local",
	"d": "devnet",
	"m": "mainnet", "mainnet-beta": "mainnet",
	"t": TestnetRPC, "testnet": TestnetRPC,
}

// TestnetRPC is Solana's testnet RPC. MagicBlock runs no rollup for it, so
// the testnet moniker is a custom base layer whose rollup must be given.
const TestnetRPC = "https://api.testnet.solana.com"

// Canonical maps the Solana CLI's monikers (l, localhost, d, m,
// mainnet-beta, t, testnet) to ferry's cluster names, and the public base
// RPC URL of a named cluster (https://api.devnet.solana.com) to that
// cluster's name; anything else is returned trimmed.
func Canonical(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if c, ok := monikers[n]; ok {
		return c
	}
	u := strings.TrimRight(strings.TrimSpace(name), "/")
	for _, k := range []string{"devnet", "mainnet"} {
		if strings.EqualFold(u, builtins[k].BaseRPC) {
			return k
		}
	}
	return strings.TrimSpace(name)
}

// Resolve returns the endpoints for name with the hosted API's pairing
// (PairHosted): a custom http(s) URL replaces only the base RPC and keeps
// the default (mainnet) ephemeral RPC; "local" is ferry's own embedded
// pair.
func Resolve(name string, o Overrides) (Endpoints, error) {
	return ResolveWith(name, o, PairHosted)
}

// ResolveCLI returns the endpoints for name as the CLI selects them:
// monikers are accepted (Canonical) and a custom base URL is paired
// explicitly (PairExplicit): its Ephemeral and Router are empty unless
// the overrides give them.
func ResolveCLI(name string, o Overrides) (Endpoints, error) {
	return ResolveWith(Canonical(name), o, PairExplicit)
}

// ResolveWith returns the endpoints for name with the given pairing rule.
func ResolveWith(name string, o Overrides, pairing Pairing) (Endpoints, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		n = "local"
	}
	ep, ok := builtins[n]
	if ok {
		ep.Name = n
	} else {
		u, err := url.Parse(strings.TrimSpace(name))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Endpoints{}, ErrInvalid
		}
		ep = builtins["mainnet"]
		ep.Name, ep.Kind, ep.BaseRPC = u.String(), Custom, u.String()
		if pairing == PairExplicit {
			ep.Ephemeral, ep.Router, ep.TEE = "", "", false
		}
	}
	apply := func(o Overrides) {
		if o.BaseRPC != "" && ep.Kind != Custom {
			ep.BaseRPC = o.BaseRPC
		}
		if o.Ephemeral != "" {
			ep.Ephemeral = o.Ephemeral
		}
		if o.Router != "" {
			ep.Router = o.Router
		}
		if o.API != "" {
			ep.API = o.API
		}
		if o.Crank != "" {
			ep.Crank = o.Crank
		}
	}
	if pc, ok := o.PerCluster[string(ep.Kind)]; ok {
		apply(pc)
	}
	if pc, ok := o.PerCluster[n]; ok && n != string(ep.Kind) {
		apply(pc)
	}
	apply(o)
	if p := o.Problems[AllClusters]; p != nil && ep.Kind != Local {
		ep.Problem = p
	} else if ep.Kind == Custom {
		ep.Problem = o.Problems[string(Custom)]
	} else {
		ep.Problem = o.Problems[n]
	}
	return ep, nil
}
