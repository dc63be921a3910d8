package api

import (
	"encoding/json"
	"testing"

	"github.com/ferry-sh/ferry/pkg/cluster"
)

func TestFromEnv(t *testing.T) {
	key := seedKey("sponsor")
	nums := make([]int, len(key))
	for i, b := range key {
		nums[i] = int(b)
	}
	keyJSON, _ := json.Marshal(nums)
	env := map[string]string{
		"BASE_RPC_URL": "https://base.example/?api-key=K", "EPHEMERAL_RPC_URL": "https://er.example",
		"BASE_DEVNET_RPC_URL": "https://dbase.example", "EPHEMERAL_DEVNET_RPC_URL": "https://der.example",
		"EPHEMERAL_DEVNET_TEE_RPC_URL": "https://dtee.example", "TRANSFER_QUEUE_DEVNET_CRANK_RPC_URL": "https://dcrank.example",
		"CORS_ORIGIN": "https://app.example", "METIS_SWAP_API_URL": "https://metis.example/tok/metis",
		"CLUSTER": "devnet", "GASLESS_SPONSOR_SECRET_KEY": string(keyJSON),
	}
	cfg, err := FromEnv(func(k string) string { return env[k] }, cluster.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Default != "devnet" || cfg.CORSOrigin != "https://app.example" || cfg.SwapUpstream != "https://metis.example/tok/metis" || !cfg.Sponsor.Equal(key) {
		t.Fatalf("%+v", cfg)
	}
	check := func(name string, want cluster.Endpoints) {
		t.Helper()
		ep, err := cluster.Resolve(name, cfg.Overrides)
		if err != nil {
			t.Fatal(err)
		}
		if ep.BaseRPC != want.BaseRPC || ep.Ephemeral != want.Ephemeral || ep.CrankRPC() != want.Crank {
			t.Errorf("%s: base %s er %s crank %s", name, ep.BaseRPC, ep.Ephemeral, ep.CrankRPC())
		}
	}
	check("mainnet", cluster.Endpoints{BaseRPC: "https://base.example/?api-key=K", Ephemeral: "https://er.example", Crank: "https://er.example"})
	check("mainnet-private", cluster.Endpoints{BaseRPC: "https://base.example/?api-key=K", Ephemeral: "https://mainnet-tee.magicblock.app", Crank: "https://mainnet-tee.magicblock.app"})
	// A deployment's environment without EPHEMERAL_TEE_RPC_URL: the
	// default is not used, the cluster is a configuration error.
	for name, want := range map[string]string{"mainnet-private": "EPHEMERAL_TEE_RPC_URL", "mainnet": "", "devnet": "", "devnet-private": "", "https://my.rpc/": "", "local": ""} {
		ep, _ := cluster.Resolve(name, cfg.Overrides)
		switch {
		case want == "" && ep.Problem != nil:
			t.Errorf("%s: %v", name, ep.Problem)
		case want != "" && (ep.Problem == nil || len(ep.Problem.Issues) != 1 || ep.Problem.Issues[0].Var != want):
			t.Errorf("%s: problem %+v, want one naming %s", name, ep.Problem, want)
		}
	}
	check("devnet", cluster.Endpoints{BaseRPC: "https://dbase.example", Ephemeral: "https://der.example", Crank: "https://dcrank.example"})
	check("devnet-private", cluster.Endpoints{BaseRPC: "https://dbase.example", Ephemeral: "https://dtee.example", Crank: "https://dcrank.example"})
	// A custom URL replaces only the base and uses the mainnet rollup.
	check("https://my.rpc/", cluster.Endpoints{BaseRPC: "https://my.rpc/", Ephemeral: "https://er.example", Crank: "https://er.example"})

	env["CLUSTER"] = "custom"
	if cfg, err = FromEnv(func(k string) string { return env[k] }, cluster.Overrides{}); err != nil || cfg.Default != "https://base.example/?api-key=K" {
		t.Fatalf("%v %q", err, cfg.Default)
	}
	for k, v := range map[string]string{"CLUSTER": "moon", "GASLESS_SPONSOR_SECRET_KEY": "[1,2]"} {
		bad := map[string]string{k: v}
		if _, err := FromEnv(func(k string) string { return bad[k] }, cluster.Overrides{}); err == nil {
			t.Errorf("%s=%s accepted", k, v)
		}
	}
	for _, s := range []string{"nope", "[1,2,3]", string(keyJSON[:len(keyJSON)-4]) + "9]"} {
		if _, err := ParseSecretKey(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
	// Nothing set: ferry's defaults stand.
	cfg, err = FromEnv(func(string) string { return "" }, cluster.Overrides{})
	if err != nil || cfg.Default != "" || cfg.Sponsor != nil || cfg.Deployment {
		t.Fatal(err)
	}
	for _, name := range cluster.Names() {
		if ep, _ := cluster.Resolve(name, cfg.Overrides); ep.Problem != nil {
			t.Errorf("%s: %v", name, ep.Problem)
		}
	}
	// ferry's own configuration counts as set: a deployment variable plus
	// the config file's devnet endpoints leave devnet usable.
	cfg, err = FromEnv(func(k string) string { return map[string]string{"CORS_ORIGIN": "*"}[k] },
		cluster.Overrides{PerCluster: map[string]cluster.Overrides{"devnet": {BaseRPC: "https://d.example", Ephemeral: "https://de.example"}}})
	if err != nil || !cfg.Deployment {
		t.Fatal(err, cfg.Deployment)
	}
	if ep, _ := cluster.Resolve("devnet", cfg.Overrides); ep.Problem != nil {
		t.Errorf("devnet: %v", ep.Problem)
	}
	if ep, _ := cluster.Resolve("devnet-private", cfg.Overrides); ep.Problem == nil || ep.Problem.Issues[0].Var != "EPHEMERAL_DEVNET_TEE_RPC_URL" {
		t.Errorf("devnet-private: %+v", ep.Problem)
	}
	ep, _ := cluster.Resolve("devnet-private", cfg.Overrides)
	if ep.Ephemeral != "https://devnet-tee.magicblock.app" {
		t.Fatal(ep.Ephemeral)
	}
}
