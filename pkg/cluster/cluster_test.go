package cluster

import "testing"

func TestCrankEndpoint(t *testing.T) {
	ep, err := Resolve("devnet", Overrides{})
	if err != nil || ep.Crank != "" || ep.CrankRPC() != ep.Ephemeral {
		t.Fatalf("%+v %v", ep, err)
	}
	o := Overrides{PerCluster: map[string]Overrides{"devnet": {Crank: "https://crank.example"}}}
	for _, name := range []string{"devnet", "devnet-private"} {
		ep, err = Resolve(name, o)
		if err != nil || ep.CrankRPC() != "https://crank.example" {
			t.Fatalf("%s: %+v %v", name, ep, err)
		}
	}
	if ep, _ = Resolve("mainnet", o); ep.CrankRPC() != ep.Ephemeral {
		t.Fatalf("%+v", ep)
	}
	if ep, _ = Resolve("local", Overrides{Crank: "http://127.0.0.1:9"}); ep.CrankRPC() != "http://127.0.0.1:9" {
		t.Fatalf("%+v", ep)
	}
	if _, err := Resolve("moon", o); err != ErrInvalid {
		t.Fatal(err)
	}
}

func TestMonikers(t *testing.T) {
	for in, want := range map[string]string{
		"l": "local", "localhost": "local", "d": "devnet", "devnet": "devnet", "m": "mainnet", "mainnet-beta": "mainnet",
		"t": TestnetRPC, "testnet": TestnetRPC, " M ": "mainnet",
		"https://api.devnet.solana.com": "devnet", "https://api.devnet.solana.com/": "devnet",
		"https://api.mainnet-beta.solana.com": "mainnet", "http://127.0.0.1:8899": "http://127.0.0.1:8899",
		"devnet-private": "devnet-private",
	} {
		if got := Canonical(in); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPairing(t *testing.T) {
	custom := "http://127.0.0.1:8899"
	// The hosted API's rule: a custom URL keeps mainnet's rollup.
	api, err := Resolve(custom, Overrides{})
	if err != nil || api.Kind != Custom || api.BaseRPC != custom || api.Ephemeral != builtins["mainnet"].Ephemeral || api.Router == "" {
		t.Fatalf("hosted pairing: %+v %v", api, err)
	}
	// The CLI's rule: no rollup and no router unless given.
	cli, err := ResolveCLI(custom, Overrides{})
	if err != nil || cli.Kind != Custom || cli.BaseRPC != custom || cli.Ephemeral != "" || cli.Router != "" {
		t.Fatalf("CLI pairing: %+v %v", cli, err)
	}
	cli, err = ResolveCLI(custom, Overrides{Ephemeral: "http://127.0.0.1:7799", Router: "http://127.0.0.1:7800"})
	if err != nil || cli.Ephemeral != "http://127.0.0.1:7799" || cli.Router != "http://127.0.0.1:7800" {
		t.Fatalf("explicit pairing: %+v %v", cli, err)
	}
	// Monikers name whole clusters: rollup and router come with them.
	for _, m := range []string{"d", "devnet", "https://api.devnet.solana.com"} {
		ep, err := ResolveCLI(m, Overrides{})
		if err != nil || ep.Name != "devnet" || ep.Ephemeral != builtins["devnet"].Ephemeral || ep.Router != builtins["devnet"].Router {
			t.Fatalf("%s: %+v %v", m, ep, err)
		}
	}
	if ep, err := ResolveCLI("l", Overrides{}); err != nil || ep.Kind != Local || ep.Ephemeral != LocalEphemeral {
		t.Fatalf("l: %+v %v", ep, err)
	}
	// testnet has no MagicBlock rollup: a custom base layer, unpaired.
	if ep, err := ResolveCLI("t", Overrides{}); err != nil || ep.Kind != Custom || ep.BaseRPC != TestnetRPC || ep.Ephemeral != "" {
		t.Fatalf("t: %+v %v", ep, err)
	}
	if _, err := ResolveCLI("moon", Overrides{}); err != ErrInvalid {
		t.Fatalf("moon: %v", err)
	}
}

func TestProblems(t *testing.T) {
	devnet := &ConfigError{Message: "devnet", Issues: []ConfigIssue{{Var: "BASE_DEVNET_RPC_URL", Message: "Required"}}}
	custom := &ConfigError{Message: "custom"}
	o := Overrides{Problems: map[string]*ConfigError{"devnet": devnet, "custom": custom}}
	for name, want := range map[string]*ConfigError{"devnet": devnet, "devnet-private": nil, "mainnet": nil, "local": nil, "https://x.example": custom} {
		ep, err := Resolve(name, o)
		if err != nil || ep.Problem != want {
			t.Errorf("%s: %v %v", name, ep.Problem, err)
		}
	}
	// A problem of every cluster wins.
	all := &ConfigError{Message: "all", Issues: []ConfigIssue{{Var: "X", Message: "Invalid url"}}}
	o.Problems[AllClusters] = all
	for _, name := range []string{"devnet", "mainnet", "https://x.example"} {
		if ep, _ := Resolve(name, o); ep.Problem != all {
			t.Errorf("%s: %v", name, ep.Problem)
		}
	}
	if ep, _ := Resolve("local", o); ep.Problem != nil {
		t.Errorf("local: %v", ep.Problem)
	}
	if all.Error() != "all (X: Invalid url)" {
		t.Fatal(all.Error())
	}
}
