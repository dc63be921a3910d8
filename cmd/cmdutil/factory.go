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

	config *Config
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
// config file, then "local".
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
	for env, dst := range map[string]*string{
		"FERRY_RPC_URL": &o.BaseRPC, "FERRY_EPHEMERAL_URL": &o.Ephemeral,
		"FERRY_ROUTER_URL": &o.Router, "FERRY_API_URL": &o.API,
	} {
		if v := f.Getenv(env); v != "" {
			*dst = v
		}
	}
	ep, err := cluster.Resolve(f.ClusterName(), o)
	if err != nil {
		return ep, UsageErrorf("--cluster: %v", err)
	}
	return ep, nil
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

// PrintJSON writes v as indented JSON to stdout.
func (f *Factory) PrintJSON(v any) error {
	enc := json.NewEncoder(f.IO.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// AddGlobalFlags registers the persistent flags on the root command.
func (f *Factory) AddGlobalFlags(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.StringVarP(&f.Cluster, "cluster", "c", "", "cluster: local, devnet, mainnet, devnet-private, mainnet-private or an http(s) RPC URL (default local)")
	pf.StringVarP(&f.URL, "url", "u", "", "base-layer RPC URL (overrides --cluster)")
	pf.StringVarP(&f.Keypair, "keypair", "k", "", "keypair file (default: Solana CLI keypair)")
	pf.StringVarP(&f.Output, "output", "o", OutputText, "output format: text or json")
	pf.BoolVar(&f.NoColor, "no-color", false, "disable colour output")
	pf.StringVar(&f.ConfigPath, "config", "", "configuration file (default $FERRY_HOME/config.json)")
}
