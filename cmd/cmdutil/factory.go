// Package cmdutil holds what every ferry command shares: the global flags,
// configuration, keypair loading, output formatting and error reporting.
package cmdutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/iostreams"
)

// Output formats.
const (
	OutputText   = "text"
	OutputJSON   = "json"
	OutputBase64 = "base64"
)

// Factory carries the global flags and lazily loaded shared state into
// commands. Commands never read os.Args, os.Getenv or os.Stdout directly.
type Factory struct {
	IO     *iostreams.IOStreams
	Getenv func(string) string

	// Global flags.
	Cluster    string
	URL        string
	Keypair    string
	Output     string
	NoColor    bool
	ConfigPath string
	// EphemeralURL and RouterURL pair the base layer with a rollup and a
	// router explicitly (--ephemeral-url, --router-url).
	EphemeralURL string
	RouterURL    string
	// Verbose prints how the cluster was resolved (--verbose).
	Verbose bool
	// JSONFields and JQ filter JSON output (--json, --jq).
	JSONFields []string
	JQ         string

	config       *Config
	shownPairing bool
}

// New returns a factory for the real process environment.
func New() *Factory {
	return &Factory{IO: iostreams.System(), Getenv: os.Getenv}
}

// Config is ferry's configuration file (JSON). Every field is optional.
type Config struct {
	Cluster string `json:"cluster,omitempty"`
	Keypair string `json:"keypair,omitempty"`
	// Endpoint overrides, globally or per cluster name/kind.
	BaseRPC   string                      `json:"rpc,omitempty"`
	Ephemeral string                      `json:"ephemeral,omitempty"`
	Router    string                      `json:"router,omitempty"`
	API       string                      `json:"api,omitempty"`
	Clusters  map[string]ClusterOverrides `json:"clusters,omitempty"`
}

// ClusterOverrides replaces endpoints of one cluster.
type ClusterOverrides struct {
	BaseRPC   string `json:"rpc,omitempty"`
	Ephemeral string `json:"ephemeral,omitempty"`
	Router    string `json:"router,omitempty"`
	API       string `json:"api,omitempty"`
}

// Home is ferry's configuration directory: $FERRY_HOME, else
// $XDG_CONFIG_HOME/ferry, else ~/.config/ferry.
func (f *Factory) Home() (string, error) {
	if h := f.Getenv("FERRY_HOME"); h != "" {
		return h, nil
	}
	if x := f.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "ferry"), nil
	}
	home := f.Getenv("HOME")
	if home == "" || home == "/no-home" {
		return "", errors.New("cannot find a configuration directory: set FERRY_HOME")
	}
	return filepath.Join(home, ".config", "ferry"), nil
}

// ConfigFile is the path of the configuration file in use.
func (f *Factory) ConfigFile() (string, error) {
	if f.ConfigPath != "" {
		return f.ConfigPath, nil
	}
	if p := f.Getenv("FERRY_CONFIG"); p != "" {
		return p, nil
	}
	h, err := f.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(h, "config.json"), nil
}

// Config loads the configuration file once. A missing default file is an
// empty configuration; a missing file named with --config is an error.
func (f *Factory) Config() (*Config, error) {
	if f.config != nil {
		return f.config, nil
	}
	c := &Config{}
	p, err := f.ConfigFile()
	if err == nil {
		b, rerr := os.ReadFile(p)
		switch {
		case rerr == nil:
			if err := json.Unmarshal(b, c); err != nil {
				return nil, fmt.Errorf("read config %s: %w", p, err)
			}
		case errors.Is(rerr, os.ErrNotExist) && f.ConfigPath == "":
		default:
			return nil, fmt.Errorf("read config: %w", rerr)
		}
	}
	f.config = c
	return c, nil
}

// ClusterName is the selected cluster: --url, --cluster, FERRY_CLUSTER, the
// config file, then "local". Each may be a name, a Solana CLI moniker
// (l, d, m, t and their long forms) or an http(s) base RPC URL.
func (f *Factory) ClusterName() string {
	if f.URL != "" {
		return f.URL
	}
	if f.Cluster != "" {
		return f.Cluster
	}
	if c := f.Getenv("FERRY_CLUSTER"); c != "" {
		return c
	}
	if cfg, err := f.Config(); err == nil && cfg.Cluster != "" {
		return cfg.Cluster
	}
	return "local"
}

// Endpoints resolves the selected cluster with overrides from the config
// file and FERRY_RPC_URL, FERRY_EPHEMERAL_URL, FERRY_ROUTER_URL,
// FERRY_API_URL.
func (f *Factory) Endpoints() (cluster.Endpoints, error) {
	cfg, err := f.Config()
	if err != nil {
		return cluster.Endpoints{}, err
	}
	o := cluster.Overrides{
		BaseRPC: cfg.BaseRPC, Ephemeral: cfg.Ephemeral, Router: cfg.Router, API: cfg.API,
		PerCluster: map[string]cluster.Overrides{},
	}
	for k, v := range cfg.Clusters {
		o.PerCluster[k] = cluster.Overrides{BaseRPC: v.BaseRPC, Ephemeral: v.Ephemeral, Router: v.Router, API: v.API}
	}
	source := map[string]string{}
	for _, e := range []struct {
		env, what string
		dst       *string
	}{
		{"FERRY_RPC_URL", "rpc", &o.BaseRPC}, {"FERRY_EPHEMERAL_URL", "ephemeral", &o.Ephemeral},
		{"FERRY_ROUTER_URL", "router", &o.Router}, {"FERRY_API_URL", "api", &o.API},
	} {
		if v := f.Getenv(e.env); v != "" {
			*e.dst = v
			source[e.what] = e.env
		}
	}
	if f.EphemeralURL != "" {
		o.Ephemeral, source["ephemeral"] = f.EphemeralURL, "--ephemeral-url"
	}
	if f.RouterURL != "" {
		o.Router, source["router"] = f.RouterURL, "--router-url"
	}
	ep, err := cluster.ResolveCLI(f.ClusterName(), o)
	if err != nil {
		flag := "--cluster"
		if f.URL != "" {
			flag = "--url"
		}
		return ep, UsageErrorf("%s: %v (or a Solana CLI moniker: l, d, m, t)", flag, err)
	}
	if f.Verbose && !f.shownPairing {
		f.shownPairing = true
		f.showPairing(ep, source)
	}
	return ep, nil
}

// showPairing prints, on stderr, which endpoints the command uses and
// where each came from (--verbose).
func (f *Factory) showPairing(ep cluster.Endpoints, source map[string]string) {
	from := func(what, def string) string {
		if s := source[what]; s != "" {
			return " (" + s + ")"
		}
		return def
	}
	named := fmt.Sprintf(" (cluster %s)", ep.Name)
	if ep.Kind == cluster.Custom {
		named = " (custom base layer: not paired)"
	}
	w := f.IO.ErrOut
	fmt.Fprintf(w, "cluster %s (%s)\n", chainclient.RedactURL(ep.Name), ep.Kind)
	fmt.Fprintf(w, "  base RPC   %s%s\n", chainclient.RedactURL(ep.BaseRPC), from("rpc", ""))
	if ep.Ephemeral == "" {
		fmt.Fprintf(w, "  rollup     none: pass --ephemeral-url to pair one\n")
	} else {
		fmt.Fprintf(w, "  rollup     %s%s\n", chainclient.RedactURL(ep.Ephemeral), from("ephemeral", named))
	}
	if ep.Router == "" {
		fmt.Fprintf(w, "  router     none: pass --router-url to pair one\n")
	} else {
		fmt.Fprintf(w, "  router     %s%s\n", chainclient.RedactURL(ep.Router), from("router", named))
	}
	fmt.Fprintf(w, "  API        %s%s\n", chainclient.RedactURL(ep.API), from("api", ""))
}

// CheckOutput validates --output against the formats a command supports.
func (f *Factory) CheckOutput(allowed ...string) error {
	if f.Output == "" {
		f.Output = OutputText
	}
	for _, a := range allowed {
		if f.Output == a {
			return nil
		}
	}
	return UsageErrorf("--output must be one of %s (got %q)", strings.Join(allowed, ", "), f.Output)
}

// JSON reports whether --output json was chosen.
func (f *Factory) JSON() bool { return f.Output == OutputJSON }

// PrintJSON writes v as indented JSON to stdout, filtered by --json and
// --jq when given.
func (f *Factory) PrintJSON(v any) error {
	if len(f.JSONFields) > 0 || f.JQ != "" {
		return f.printFiltered(v)
	}
	enc := json.NewEncoder(f.IO.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// AddGlobalFlags registers the persistent flags on the root command.
func (f *Factory) AddGlobalFlags(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.StringVarP(&f.Cluster, "cluster", "c", "", "cluster: local, devnet, mainnet, devnet-private, mainnet-private, a moniker (l, d, m, t) or an http(s) base RPC URL (default local)")
	pf.StringVarP(&f.URL, "url", "u", "", "cluster as the Solana CLI takes it: a moniker (l|localhost, d|devnet, m|mainnet-beta, t|testnet) or a base-layer RPC URL (overrides --cluster)")
	pf.StringVar(&f.EphemeralURL, "ephemeral-url", "", "ephemeral rollup RPC URL (needed with a custom base URL; env FERRY_EPHEMERAL_URL)")
	pf.StringVar(&f.RouterURL, "router-url", "", "delegation router URL (needed with a custom base URL for routing; env FERRY_ROUTER_URL)")
	pf.BoolVar(&f.Verbose, "verbose", false, "show which endpoints the command uses and where each came from")
	pf.StringSliceVar(&f.JSONFields, "json", nil, "output JSON with only these top-level fields (comma-separated; implies --output json)")
	pf.StringVar(&f.JQ, "jq", "", "filter JSON output with a jq expression (implies --output json)")
	pf.StringVarP(&f.Keypair, "keypair", "k", "", "keypair file (default: Solana CLI keypair)")
	pf.StringVarP(&f.Output, "output", "o", OutputText, "output format: text or json")
	pf.BoolVar(&f.NoColor, "no-color", false, "disable colour output")
	pf.StringVar(&f.ConfigPath, "config", "", "configuration file (default $FERRY_HOME/config.json)")
}
