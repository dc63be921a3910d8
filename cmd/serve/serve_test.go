package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/iostreams"
	"github.com/ferry-sh/ferry/pkg/server"
)

func TestServeCommand(t *testing.T) {
	io, _, out, errOut := iostreams.Test()
	f := &cmdutil.Factory{IO: io, Getenv: func(string) string { return "" }, Output: cmdutil.OutputText}
	addrFile := filepath.Join(t.TempDir(), "addr.json")
	cmd := NewCmd(f)
	cmd.SetArgs([]string{"--data", t.TempDir(), "--api-addr", "127.0.0.1:0", "--rpc-addr", "127.0.0.1:0", "--ephemeral-addr", "127.0.0.1:0",
		"--router-addr", "127.0.0.1:0", "--addr-file", addrFile, "--slot-time", "20ms", "--log-format", "json",
		"--allow-origin", "http://localhost:5173", "--max-conns", "64", "--read-timeout", "5s", "--idle-timeout", "30s", "--max-response-bytes", "1048576"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	var urls map[string]string
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(addrFile); err == nil && json.Unmarshal(b, &urls) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no address file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, k := range []string{"api", "rpc", "rpcWs", "ephemeral", "ephemeralWs", "router"} {
		if urls[k] == "" {
			t.Fatalf("address file %v lacks %s", urls, k)
		}
	}
	// The websocket listeners: port 0 RPC gives them free ports of their own.
	for _, k := range []string{"rpcWs", "ephemeralWs"} {
		if !strings.HasPrefix(urls[k], "ws://127.0.0.1:") || urls[k] == urls["router"] {
			t.Fatalf("%s = %q", k, urls[k])
		}
	}
	resp, err := http.Get(urls["api"] + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// --allow-origin reaches the base node's faucet check.
	for origin, wantRefused := range map[string]bool{"http://localhost:5173": false, "https://evil.example": true} {
		req, _ := http.NewRequest(http.MethodPost, urls["rpc"], strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"requestAirdrop","params":["`+solana.NewWallet().PublicKey().String()+`",1000000]}`))
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Error *struct{ Code int } `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if refused := r.Error != nil && r.Error.Code == -32050; refused != wantRefused {
			t.Errorf("airdrop from %s: error %+v", origin, r.Error)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	banner := out.String()
	for _, want := range []string{urls["api"], urls["api"] + "/mcp", urls["rpc"], urls["rpcWs"], urls["ephemeral"], urls["ephemeralWs"], urls["router"], "Demo mint", "alice", "Ready in", "export FERRY_API_URL="} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
	if strings.Contains(banner, "\x1b[") {
		t.Errorf("banner in a pipe has escape codes:\n%s", banner)
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(errOut.String(), "\n", 2)[0]), &first); err != nil {
		t.Errorf("log is not JSON: %q", errOut.String())
	}
}

func TestServeFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
	}{
		{args: []string{"--in-memory", "--data", "x"}},
		{args: []string{"--in-memory", "--reset"}},
		{args: []string{"--in-memory", "--log-format", "xml"}},
		{args: []string{"--in-memory", "--log-level", "loud"}},
		{args: []string{"--in-memory", "--slot-time", "0s"}},
		{args: []string{"--in-memory", "--ephemeral-slot-time", "-1s"}},
		{args: []string{"--in-memory", "--finality-depth", "-1"}},
		{args: []string{"--in-memory", "--empty-slot-batch", "-1s"}},
		{args: []string{"--in-memory", "--shutdown-timeout", "0s"}},
		{args: []string{"--in-memory", "--route", "http://127.0.0.1:1"}},
		{args: []string{"--in-memory", "--allow-origin", "localhost:3000"}},
		{args: []string{"--in-memory", "--allow-origin", "http://localhost:3000/app"}},
		{args: []string{"--in-memory", "--max-conns", "0"}},
		{args: []string{"--in-memory", "--read-timeout", "0s"}},
		{args: []string{"--in-memory", "--idle-timeout", "-1s"}},
		{args: []string{"--in-memory", "--max-response-bytes", "0"}},
		{args: []string{"--in-memory", "--memory-limit-mib", "-1"}},
		{args: []string{"--in-memory", "--account-cache", "0"}},
		{args: []string{"--in-memory", "--memory-limit-mib", "9223372036854775807"}},
		{args: []string{"--route", "nope=http://x"}, env: map[string]string{"FERRY_HOME": "/tmp"}},
		{args: nil, env: map[string]string{"HOME": "/no-home"}},
		{args: []string{"extra"}},
		{args: []string{"--in-memory", "--allow-upstream", "https://x/path"}},
		{args: []string{"--in-memory", "--allow-upstream", "ftp://x"}},
		{args: []string{"--in-memory"}, env: map[string]string{"FERRY_ALLOW_UPSTREAM": "ok.test, bad/host"}},
	} {
		io, _, _, _ := iostreams.Test()
		env := tc.env
		f := &cmdutil.Factory{IO: io, Getenv: func(k string) string { return env[k] }}
		cmd := NewCmd(f)
		cmd.SetArgs(tc.args)
		var ue *cmdutil.UsageError
		if err := cmd.Execute(); err == nil || !asUsage(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error", tc.args, err)
		}
	}
}

// TestServeWSFlagsInGatewayMode: the websocket flags name local chain
// nodes, which a gateway does not run.
func TestServeWSFlagsInGatewayMode(t *testing.T) {
	for _, flag := range []string{"--ws-addr", "--ephemeral-ws-addr"} {
		io, _, _, _ := iostreams.Test()
		f := &cmdutil.Factory{IO: io, Cluster: "devnet", Getenv: func(string) string { return "" }}
		cmd := NewCmd(f)
		cmd.SetArgs([]string{flag, "127.0.0.1:0"})
		var ue *cmdutil.UsageError
		if err := cmd.Execute(); err == nil || !asUsage(err, &ue) || !strings.Contains(err.Error(), "local mode") {
			t.Errorf("%s in gateway mode: %v, want a usage error", flag, err)
		}
	}
}

func asUsage(err error, target **cmdutil.UsageError) bool {
	u, ok := err.(*cmdutil.UsageError)
	*target = u
	return ok
}

func TestDefaultDataDir(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		goos string
		want string
	}{
		{map[string]string{"FERRY_HOME": "/f", "HOME": "/h"}, "linux", "/f/localnet"},
		{map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/h"}, "linux", "/x/ferry/localnet"},
		{map[string]string{"HOME": "/h"}, "linux", "/h/.local/share/ferry/localnet"},
		{map[string]string{"HOME": "/h"}, "darwin", "/h/Library/Application Support/ferry/localnet"},
		{map[string]string{"LOCALAPPDATA": "/w", "HOME": "/h"}, "windows", "/w/ferry/localnet"},
	} {
		got, err := DefaultDataDir(func(k string) string { return tc.env[k] }, tc.goos)
		if err != nil || got != filepath.FromSlash(tc.want) {
			t.Errorf("%v on %s: %q %v, want %q", tc.env, tc.goos, got, err, tc.want)
		}
	}
	if _, err := DefaultDataDir(func(k string) string { return map[string]string{"HOME": "/no-home"}[k] }, "linux"); err == nil {
		t.Error("no home: want an error")
	}
}

func TestParseRoutes(t *testing.T) {
	id := solana.MustPublicKeyFromBase58("MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57")
	got, err := parseRoutes([]string{"https://devnet-as.magicblock.app/", id.String() + "=https://x.example"})
	if err != nil || len(got) != 2 || !got[0].Identity.IsZero() || got[0].FQDN != "https://devnet-as.magicblock.app" ||
		got[1].Identity != id || got[1].FQDN != "https://x.example" {
		t.Fatalf("%+v %v", got, err)
	}
	for _, bad := range []string{"ftp://x", "nope=https://x", ""} {
		if _, err := parseRoutes([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestBanner(t *testing.T) {
	info := &server.Info{
		Mode: server.ModeLocal, Cluster: "local", DataDir: "/d", Created: true,
		URLs: map[string]string{"api": "http://127.0.0.1:8080", "rpc": "http://127.0.0.1:8899", "rpcWs": "ws://127.0.0.1:8900",
			"ephemeral": "http://127.0.0.1:7799", "ephemeralWs": "ws://127.0.0.1:7800", "router": "http://127.0.0.1:7800"},
		MCP: "http://127.0.0.1:8080/mcp", Validator: "V", Faucet: "F", StartupMs: 12,
		Demo: &server.Demo{Mint: "M", Decimals: 6, Wallets: []server.DemoWallet{
			{Name: "alice", Address: "A", Keypair: "/d/wallets/alice.json", Lamports: 100_000_000_000, Tokens: 1_000_000_000},
			{Name: "bob", Address: "B", Keypair: "/d/wallets/bob.json", Lamports: 100_000_000_000, Tokens: 1_000_000_000},
		}},
	}
	ios, _, b, _ := iostreams.Test()
	writeBanner(ios.StyledOut(), info)
	s := b.String()
	if strings.Contains(s, "\x1b[") {
		t.Errorf("plain banner has escape codes:\n%s", s)
	}
	for _, want := range []string{
		"ferry serve: local cluster, data in /d (new)",
		"Payments API   http://127.0.0.1:8080",
		"MCP            http://127.0.0.1:8080/mcp",
		"Base WS        ws://127.0.0.1:8900",
		"Ephemeral WS   ws://127.0.0.1:7800",
		"Demo mint M (6 decimals",
		"funded at creation with 100 SOL and 1000 tokens each",
		"  alice  A  /d/wallets/alice.json",
		"ferry deposit --sign /d/wallets/alice.json",
		"Ready in 12 ms.",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("banner lacks %q:\n%s", want, s)
		}
	}
	// Default addresses: no need to point the CLI anywhere.
	if strings.Contains(s, "export ") {
		t.Errorf("default addresses, yet an export line:\n%s", s)
	}
	info.URLs["rpc"] = "http://127.0.0.1:9999"
	if env := cliEnv(info); env != "export FERRY_RPC_URL=http://127.0.0.1:9999" {
		t.Errorf("cliEnv = %q", env)
	}

	gw := &server.Info{Mode: server.ModeGateway, Cluster: "devnet",
		URLs:     map[string]string{"api": "http://127.0.0.1:8080", "router": "http://127.0.0.1:7800"},
		Upstream: &server.Upstream{BaseRPC: "https://api.devnet.solana.com", Ephemeral: "https://devnet-as.magicblock.app"},
		Routes:   []chainclient.Route{{Identity: solana.MustPublicKeyFromBase58("MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57"), FQDN: "https://devnet-as.magicblock.app"}},
	}
	b.Reset()
	writeBanner(ios.StyledOut(), gw)
	s = b.String()
	for _, want := range []string{"ferry serve: gateway to devnet", "Upstream RPC   https://api.devnet.solana.com", "MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57  https://devnet-as.magicblock.app"} {
		if !strings.Contains(s, want) {
			t.Errorf("gateway banner lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "Base RPC") || strings.Contains(s, "Demo") || strings.Contains(s, " WS ") {
		t.Errorf("gateway banner names local parts:\n%s", s)
	}
}
