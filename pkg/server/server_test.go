package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/localnet"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// fast are local-mode options on free ports with quick slots.
func fast(dataDir, addrFile string) Options {
	return Options{
		DataDir: dataDir, AddrFile: addrFile,
		APIAddr: "127.0.0.1:0", RPCAddr: "127.0.0.1:0", EphemeralAddr: "127.0.0.1:0", RouterAddr: "127.0.0.1:0",
		SlotDuration: 20 * time.Millisecond, EphemeralSlotDuration: 10 * time.Millisecond, FinalityDepth: 2,
		ShutdownTimeout: 10 * time.Second,
	}
}

// serveOnce runs o until fn returns, then stops it and checks that Serve
// returned cleanly and removed the address file.
func serveOnce(t *testing.T, o Options, fn func(info *Info)) {
	t.Helper()
	if o.AddrFile == "" {
		o.AddrFile = filepath.Join(t.TempDir(), "addr.json")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	ready := make(chan *Info, 1)
	o.Ready = func(info *Info) { ready <- info }
	go func() { done <- Serve(ctx, o) }()
	var info *Info
	select {
	case info = <-ready:
	case err := <-done:
		t.Fatalf("serve stopped early: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	b, err := os.ReadFile(o.AddrFile)
	if err != nil {
		t.Fatal(err)
	}
	var fromFile map[string]string
	if err := json.Unmarshal(b, &fromFile); err != nil || len(fromFile) != len(info.URLs) {
		t.Fatalf("address file %s: %v", b, err)
	}
	for k, v := range info.URLs {
		if fromFile[k] != v {
			t.Fatalf("address file %s, info %v", b, info.URLs)
		}
	}
	fn(info)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	if _, err := os.Stat(o.AddrFile); !os.IsNotExist(err) {
		t.Fatal("address file left behind")
	}
}

func postJSON(t *testing.T, url, body string, out any) int {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("POST %s: %s: %v", url, b, err)
		}
	}
	return resp.StatusCode
}

func getJSON(t *testing.T, url string, out any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("GET %s: %s: %v", url, b, err)
	}
	return resp.StatusCode
}

// TestLocalMode checks the wiring of every endpoint of local mode: the
// nodes, the router over the embedded rollup, the API reaching the nodes
// in-process with the demo mint as its default, /mcp, and the demo.
func TestLocalMode(t *testing.T) {
	dir := t.TempDir()
	serveOnce(t, fast(dir, ""), func(info *Info) {
		ctx := context.Background()
		if info.Mode != ModeLocal || !info.Created || info.Demo == nil || len(info.Demo.Wallets) != 3 || info.Validator == "" {
			t.Fatalf("info %+v", info)
		}
		for _, k := range []string{KeyAPI, KeyRPC, KeyEphemeral, KeyRouter} {
			if !strings.HasPrefix(info.URLs[k], "http://127.0.0.1:") {
				t.Fatalf("%s URL %q", k, info.URLs[k])
			}
		}
		if info.MCP != info.URLs[KeyAPI]+"/mcp" {
			t.Errorf("MCP %q", info.MCP)
		}
		// The rollup answers getIdentity with the validator identity kept in
		// the data directory.
		id, err := rpc.New(info.URLs[KeyEphemeral]).GetIdentity(ctx)
		if err != nil || id.Identity.String() != info.Validator {
			t.Fatalf("rollup identity %v %v", id, err)
		}
		if _, err := os.Stat(filepath.Join(dir, localnet.KeypairFile)); err != nil {
			t.Fatalf("validator keypair: %v", err)
		}

		// Demo wallets: keypair files (0600) holding SOL and demo tokens.
		base := rpc.New(info.URLs[KeyRPC])
		mint := solana.MustPublicKeyFromBase58(info.Demo.Mint)
		for _, w := range info.Demo.Wallets {
			st, err := os.Stat(w.Keypair)
			if err != nil || st.Mode().Perm() != 0o600 || filepath.Dir(w.Keypair) != filepath.Join(dir, WalletsDir) {
				t.Fatalf("%s keypair %s: %v %v", w.Name, w.Keypair, st, err)
			}
			owner := solana.MustPublicKeyFromBase58(w.Address)
			bal, err := base.GetBalance(ctx, owner, rpc.CommitmentProcessed)
			if err != nil || bal.Value != DefaultDemoLamports {
				t.Fatalf("%s balance %+v %v", w.Name, bal, err)
			}
			tb, err := base.GetTokenAccountBalance(ctx, spl.AssociatedTokenAddress(owner, mint, spl.TokenProgramID), rpc.CommitmentProcessed)
			if err != nil || tb.Value.Amount != "1000000000" {
				t.Fatalf("%s tokens %+v %v", w.Name, tb, err)
			}
		}

		// The faucet methods name the demo mint.
		var fi rpcserver.FaucetInfo
		c, _ := chainclient.New(info.URLs[KeyRPC])
		if err := c.Call(ctx, rpcserver.MethodFaucetInfo, nil, &fi); err != nil || fi.DefaultMint == nil || *fi.DefaultMint != info.Demo.Mint || fi.Faucet != info.Faucet {
			t.Fatalf("faucetInfo %+v %v", fi, err)
		}

		// getClusterNodes names each chain node's bound RPC address; the base
		// node has its genesis vote account.
		for _, k := range []string{KeyRPC, KeyEphemeral} {
			nodes, err := rpc.New(info.URLs[k]).GetClusterNodes(ctx)
			if err != nil || len(nodes) != 1 || nodes[0].RPC == nil || "http://"+*nodes[0].RPC != info.URLs[k] {
				t.Fatalf("%s cluster nodes %+v %v", k, nodes, err)
			}
		}
		if votes, err := base.GetVoteAccounts(ctx, nil); err != nil || len(votes.Current)+len(votes.Delinquent) != 1 {
			t.Fatalf("base vote accounts %+v %v", votes, err)
		}

		// The router lists the embedded rollup under its bound URL.
		rc, _ := chainclient.New(info.URLs[KeyRouter])
		routes, err := rc.GetRoutes(ctx)
		if err != nil || len(routes) != 1 || routes[0].FQDN != info.URLs[KeyEphemeral] || routes[0].Identity.String() != info.Validator {
			t.Fatalf("routes %+v %v", routes, err)
		}

		// The API: the demo mint is set up for private payments and is the
		// default of a deposit without mint; reads reach the nodes.
		api := info.URLs[KeyAPI]
		var hs map[string]string
		if st := getJSON(t, api+"/health", &hs); st != 200 || hs["status"] != "ok" {
			t.Fatalf("health %d %v", st, hs)
		}
		alice := info.Demo.Wallets[0].Address
		var dep map[string]any
		if st := postJSON(t, api+"/v1/spl/deposit", `{"owner":"`+alice+`","amount":1000}`, &dep); st != 200 || dep["kind"] != "deposit" {
			t.Fatalf("deposit without mint: %d %v", st, dep)
		}
		waitFor(t, "the demo mint's queue", func() bool {
			var mi map[string]any
			getJSON(t, api+"/v1/spl/is-mint-initialized?mint="+info.Demo.Mint, &mi)
			return mi["initialized"] == true
		})
		var bal map[string]any
		if st := getJSON(t, api+"/v1/spl/balance?address="+alice+"&mint="+info.Demo.Mint, &bal); st != 200 || bal["balance"] != "1000000000" {
			t.Fatalf("balance %d %v", st, bal)
		}

		// /mcp is mounted on the API.
		req, _ := http.NewRequest(http.MethodPost, info.MCP, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"serverInfo"`)) {
			t.Fatalf("mcp initialize %d %s", resp.StatusCode, b)
		}
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRestartKeepsState: a restart continues where the last run stopped
// (balances, history, the demo), and --reset starts over.
func TestRestartKeepsState(t *testing.T) {
	dir := t.TempDir()
	wallet := solana.NewWallet().PublicKey()
	var sig solana.Signature
	var first *Demo
	serveOnce(t, fast(dir, ""), func(info *Info) {
		first = info.Demo
		var err error
		if sig, err = rpc.New(info.URLs[KeyRPC]).RequestAirdrop(context.Background(), wallet, 5_000_000_000, rpc.CommitmentConfirmed); err != nil {
			t.Fatal(err)
		}
		// Shut down right away: the airdrop is only processed; a graceful
		// stop must still write its slot.
	})
	serveOnce(t, fast(dir, ""), func(info *Info) {
		c := rpc.New(info.URLs[KeyRPC])
		ctx := context.Background()
		if info.Created || info.Demo == nil || info.Demo.Mint != first.Mint || info.Demo.Wallets[0].Address != first.Wallets[0].Address {
			t.Fatalf("restart made a new demo: %+v vs %+v", info.Demo, first)
		}
		bal, err := c.GetBalance(ctx, wallet, rpc.CommitmentConfirmed)
		if err != nil || bal.Value != 5_000_000_000 {
			t.Fatalf("balance after restart %+v %v", bal, err)
		}
		st, err := c.GetSignatureStatuses(ctx, true, sig)
		if err != nil || st.Value[0] == nil {
			t.Fatalf("status after restart %+v %v", st, err)
		}
	})
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600)
	o := fast(dir, "")
	o.Reset = true
	serveOnce(t, o, func(info *Info) {
		if !info.Created || info.Demo.Mint == first.Mint {
			t.Fatalf("--reset kept the old state: %+v", info)
		}
		bal, err := rpc.New(info.URLs[KeyRPC]).GetBalance(context.Background(), wallet, rpc.CommitmentProcessed)
		if err != nil || bal.Value != 0 {
			t.Fatalf("balance after reset %+v %v", bal, err)
		}
	})
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("--reset removed a file ferry does not own: %v", err)
	}
}

// TestInMemory keeps nothing: the demo keypairs live in a temporary
// directory removed at shutdown.
func TestInMemory(t *testing.T) {
	var keypair string
	serveOnce(t, fast("", ""), func(info *Info) {
		if info.DataDir != "" || !info.Created || info.Demo == nil {
			t.Fatalf("info %+v", info)
		}
		keypair = info.Demo.Wallets[0].Keypair
		if _, err := os.Stat(keypair); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := os.Stat(keypair); !os.IsNotExist(err) {
		t.Errorf("in-memory demo keypair left behind: %v", err)
	}
	o := fast("", "")
	o.Demo.Disabled = true
	// The hosted API's CLUSTER variable does not change (or break) the mode.
	o.Getenv = func(k string) string { return map[string]string{"CLUSTER": "moon"}[k] }
	serveOnce(t, o, func(info *Info) {
		if info.Demo != nil || info.Mode != ModeLocal {
			t.Fatalf("info %+v", info)
		}
	})
}

// TestGatewayMode serves the API, MCP and router in front of an upstream
// "cluster" (a ledger behind httptest), with a route whose identity is
// asked at start.
func TestGatewayMode(t *testing.T) {
	base, err := ledger.Open(ledger.Config{Name: "up-base", SlotDuration: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { base.Close() })
	er, err := ledger.Open(ledger.Config{Name: "up-er", SlotDuration: 20 * time.Millisecond, LamportsPerSignature: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { er.Close() })
	bs := httptest.NewServer(rpcserver.New(base, rpcserver.Options{}))
	t.Cleanup(bs.Close)
	es := httptest.NewServer(rpcserver.New(er, rpcserver.Options{}))
	t.Cleanup(es.Close)

	o := Options{
		Cluster: bs.URL, DataDir: t.TempDir(), APIAddr: "127.0.0.1:0", RouterAddr: "127.0.0.1:0",
		Getenv: func(k string) string { return map[string]string{"EPHEMERAL_RPC_URL": es.URL}[k] },
		Routes: []chainclient.Route{{FQDN: es.URL, CountryCode: "TST"}},
	}
	serveOnce(t, o, func(info *Info) {
		if info.Mode != ModeGateway || len(info.URLs) != 2 || info.URLs[KeyRPC] != "" || info.Demo != nil {
			t.Fatalf("info %+v", info)
		}
		if info.Upstream == nil || info.Upstream.BaseRPC != bs.URL || info.Upstream.Ephemeral != es.URL {
			t.Fatalf("upstream %+v", info.Upstream)
		}
		if len(info.Routes) != 1 || info.Routes[0].Identity != er.Identity() || info.Routes[0].CountryCode != "TST" {
			t.Fatalf("routes %+v", info.Routes)
		}
		rc, _ := chainclient.New(info.URLs[KeyRouter])
		id, err := rc.GetIdentity(context.Background())
		if err != nil || id.Identity != er.Identity() || id.FQDN != es.URL {
			t.Fatalf("router identity %+v %v", id, err)
		}
		// The API's default cluster is the upstream: a balance read goes
		// there (its mint does not exist: 400 MINT_NOT_FOUND from base).
		var out map[string]map[string]any
		wallet := solana.NewWallet().PublicKey().String()
		if st := getJSON(t, info.URLs[KeyAPI]+"/v1/spl/balance?address="+wallet+"&mint="+wallet, &out); st != 400 || out["error"]["code"] != "MINT_NOT_FOUND" {
			t.Fatalf("balance through the gateway: %d %v", st, out)
		}
		var ch map[string]any
		if st := getJSON(t, info.URLs[KeyAPI]+"/v1/spl/challenge?pubkey="+wallet, &ch); st != 200 || ch["challenge"] == nil {
			t.Fatalf("challenge %d %v", st, ch)
		}
	})
}

func TestBuildErrors(t *testing.T) {
	o := fast("", "")
	o.RPCAddr = "256.0.0.1:1"
	if err := Serve(context.Background(), o); err == nil || !strings.Contains(err.Error(), "listen for rpc on 256.0.0.1:1") {
		t.Fatalf("bind error: %v", err)
	}
	o = fast("", "")
	o.Cluster = "moon"
	if _, err := Build(o); err == nil {
		t.Fatal("unknown cluster accepted")
	}
	o = Options{Cluster: "http://127.0.0.1:1", Routes: []chainclient.Route{{FQDN: "http://127.0.0.1:1"}}, APIAddr: "127.0.0.1:0", RouterAddr: "127.0.0.1:0"}
	if _, err := Build(o); err == nil || !strings.Contains(err.Error(), "ask its identity") {
		t.Fatalf("unreachable route: %v", err)
	}
}

// TestGracefulShutdown: a request in flight when the context ends still
// gets its answer, and shutdown functions run after it.
func TestGracefulShutdown(t *testing.T) {
	s := New(nil, "")
	started := make(chan struct{})
	var closed atomic.Bool
	s.Endpoint("slow", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		time.Sleep(300 * time.Millisecond)
		if closed.Load() {
			t.Error("shutdown functions ran before the request finished")
		}
		w.Write([]byte("done"))
	}), WithWriteTimeout(5*time.Second))
	s.OnShutdown(func(context.Context) error { closed.Store(true); return nil })
	urls, err := s.Bind()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get(urls["slow"])
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-started
	cancel()
	if b := <-got; b != "done" {
		t.Fatalf("in-flight request got %q", b)
	}
	if err := <-done; err != nil || !closed.Load() {
		t.Fatalf("run: %v, closed %v", err, closed.Load())
	}
	if err := s.SetHandler("nope", nil); err == nil {
		t.Error("SetHandler of an unknown endpoint succeeded")
	}
	// An endpoint without a handler cannot run.
	s2 := New(nil, "")
	s2.Endpoint("x", "127.0.0.1:0", nil)
	if err := s2.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "no handler") {
		t.Fatalf("run without handler: %v", err)
	}
}

func TestAPIWriteTimeout(t *testing.T) {
	n, err := Build(fast("", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Server.Close()
	for _, e := range n.Server.endpoints {
		want := rpcserver.WriteTimeout
		if e.key == KeyAPI {
			want = APIWriteTimeout
		}
		if e.writeTimeout != want || (e.key == KeyAPI && want < 2*time.Minute) {
			t.Errorf("%s write timeout %v, want %v", e.key, e.writeTimeout, want)
		}
	}
}
