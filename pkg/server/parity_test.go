package server

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// upstream is a mock of the real cluster's nodes and services for a
// gateway: JSON-RPC answers by method, plain routes by "METHOD /path",
// every request recorded.
type upstream struct {
	*httptest.Server
	mu    sync.Mutex
	calls []string
	rpc   map[string]string // method → raw JSON-RPC response member ("result":… or "error":…)
	http  map[string]string // route → JSON body
}

func newUpstream(t *testing.T, rpc, plain map[string]string) *upstream {
	u := &upstream{rpc: rpc, http: plain}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		route := r.Method + " " + r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		if body, ok := u.http[route]; ok {
			u.record(route)
			io.WriteString(w, body)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(b, &req)
		u.record(req.Method)
		member, ok := u.rpc[req.Method]
		if !ok {
			member = `"error":{"code":-32601,"message":"Method not found"}`
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,`+member+`}`)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) record(s string) { u.mu.Lock(); u.calls = append(u.calls, s); u.mu.Unlock() }

func (u *upstream) seen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.calls...)
}

func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("POST %s: %s", url, b)
	}
	return resp.StatusCode, out
}

// TestGatewayParity runs cases of the hosted API's suite against ferry
// serve --cluster mainnet (Build, real listeners) with mock upstreams
// standing in for its RPCs, auth service and Metis: a deployment
// environment without its RPC variables, challenge proxying, a private
// swap, and a send the node refuses. pkg/api's parity tests cover every
// case in detail.
func TestGatewayParity(t *testing.T) {
	owner, recipient := solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey()
	route := []chainclient.Route{{FQDN: "http://127.0.0.1:1", Identity: solana.NewWallet().PublicKey(), CountryCode: "TST"}}
	gateway := func(env map[string]string, fn func(api string)) {
		o := Options{Cluster: "mainnet", APIAddr: "127.0.0.1:0", RouterAddr: "127.0.0.1:0", Routes: route,
			Getenv: func(k string) string { return env[k] }}
		serveOnce(t, o, func(info *Info) { fn(info.URLs[KeyAPI]) })
	}

	// Missing RPC variables: 500 CONFIG_ERROR, not a public host.
	gateway(map[string]string{"CORS_ORIGIN": "*"}, func(api string) {
		st, out := post(t, api+"/v1/spl/deposit", fmt.Sprintf(`{"owner":%q,"amount":1}`, owner))
		e := out["error"].(map[string]any)
		if st != 500 || e["code"] != "CONFIG_ERROR" || !strings.Contains(e["details"].(map[string]any)["hint"].(string), ".dev.vars") {
			t.Fatalf("%d %v", st, out)
		}
	})

	memo := spl.Memo("jupiter-mock")
	m, err := txwire.CompileV0(owner, []txwire.Instruction{memo}, solana.Hash{1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := newUpstream(t, map[string]string{
		"sendTransaction": `"error":{"code":-32002,"message":"Transaction simulation failed: Blockhash not found","data":{"err":"BlockhashNotFound","logs":[]}}`,
	}, nil)
	er := newUpstream(t, nil, map[string]string{"GET /auth/challenge": `{"challenge":"challenge-token-abc"}`})
	metis := newUpstream(t, nil, map[string]string{"POST /tok/metis/swap": `{"swapTransaction":"` + txwire.NewUnsigned(m).Base64() + `"}`})
	env := map[string]string{"BASE_RPC_URL": base.URL, "EPHEMERAL_RPC_URL": er.URL, "CORS_ORIGIN": "*", "METIS_SWAP_API_URL": metis.URL + "/tok/metis"}
	gateway(env, func(api string) {
		var ch map[string]any
		if st := getJSON(t, api+"/v1/spl/challenge?pubkey="+owner.String(), &ch); st != 200 || ch["challenge"] != "challenge-token-abc" {
			t.Fatalf("challenge %d %v", st, ch)
		}
		quote := `{"inputMint":"So11111111111111111111111111111111111111112","inAmount":"1000000","outputMint":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",` +
			`"outAmount":"999000","otherAmountThreshold":"998000","swapMode":"ExactIn","slippageBps":50,"priceImpactPct":"0.01","routePlan":[]}`
		st, out := post(t, api+"/v1/swap/swap", fmt.Sprintf(`{"userPublicKey":%q,"quoteResponse":%s,"visibility":"private","destination":%q,`+
			`"minDelayMs":"0","maxDelayMs":"0","split":1}`, owner, quote, recipient))
		if st != 200 || out["privateTransfer"] == nil {
			t.Fatalf("private swap %d %v", st, out)
		}
		tx, err := txwire.DecodeBase64(out["swapTransaction"].(string))
		if err != nil || tx.Message.Version != txwire.V0 || len(tx.Message.Instructions) != 3 {
			t.Fatalf("rebuilt swap: %v", err)
		}
		st, out = post(t, api+"/v1/transaction/send", `{"transactionBase64":"`+base64.StdEncoding.EncodeToString(tx.Bytes())+`","sendTo":"base"}`)
		e := out["error"].(map[string]any)
		if st != 400 || e["code"] != "RPC_ERROR" || e["details"].(map[string]any)["err"] != "BlockhashNotFound" {
			t.Fatalf("send %d %v", st, out)
		}
	})
	if got := strings.Join(er.seen(), ","); got != "GET /auth/challenge" {
		t.Errorf("rollup saw %s", got)
	}
	if got := strings.Join(metis.seen(), ","); got != "POST /tok/metis/swap" {
		t.Errorf("metis saw %s", got)
	}
	if got := strings.Join(base.seen(), ","); got != "sendTransaction" {
		t.Errorf("base saw %s", got)
	}
}
