package api

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ferry-sh/ferry/pkg/apierr"
)

// hostedEnv is the hosted test suite's environment, with the mock
// upstreams as its RPCs.
func hostedEnv(base, er, devBase, devER *mockUpstream) map[string]string {
	return map[string]string{
		"BASE_RPC_URL": base.URL, "EPHEMERAL_RPC_URL": er.URL,
		"BASE_DEVNET_RPC_URL": devBase.URL, "EPHEMERAL_DEVNET_RPC_URL": devER.URL,
		"CLUSTER": "mainnet", "CORS_ORIGIN": "*",
	}
}

// issuePaths are the variables a CONFIG_ERROR's details name.
func issuePaths(t *testing.T, e map[string]any) []string {
	t.Helper()
	d, _ := e["details"].(map[string]any)
	issues, _ := d["issues"].([]any)
	var out []string
	for _, is := range issues {
		m := is.(map[string]any)
		p := m["path"].([]any)
		if len(p) != 1 || m["message"] == "" {
			t.Fatalf("issue %v", m)
		}
		out = append(out, p[0].(string))
	}
	slices.Sort(out)
	return out
}

// TestParityConfigErrors: a deployment's environment that leaves out or
// mangles an RPC variable answers 500 CONFIG_ERROR naming it, before any
// upstream is contacted: never a 502 from a default host, never a 200
// that ignored the bad value (hosted cases "returns a config error when
// RPC env vars are missing", "… when devnet RPC env vars are invalid
// URLs", "… when devnet-private TEE RPC env vars are missing", "… when
// the Metis endpoint is missing").
func TestParityConfigErrors(t *testing.T) {
	log := &callLog{}
	base, er := newMockUpstream(t, "base", log), newMockUpstream(t, "er", log)
	devBase, devER := newMockUpstream(t, "devnet-base", log), newMockUpstream(t, "devnet-er", log)
	owner := pubOf(seedKey("owner"))
	deposit := fmt.Sprintf(`{"owner":%q,"amount":1}`, owner)

	t.Run("missing RPC variables", func(t *testing.T) {
		g := newGateway(t, map[string]string{"CORS_ORIGIN": "*"})
		e := wantError(t, g.do("POST", "/v1/spl/deposit", deposit), 500, apierr.CodeConfig, "Missing or invalid worker environment variables")
		if got := issuePaths(t, e); !slices.Equal(got, []string{"BASE_RPC_URL", "EPHEMERAL_RPC_URL"}) {
			t.Fatalf("issues %v", got)
		}
		if hint := e["details"].(map[string]any)["hint"].(string); !strings.Contains(hint, ".dev.vars") {
			t.Fatalf("hint %q", hint)
		}
		// Every route that uses the cluster says the same; none contacts
		// anything (the test transport refuses every non-loopback host,
		// which would have been a 502).
		for _, path := range []string{"/v1/spl/balance?address=" + owner.String() + "&mint=" + owner.String(),
			"/v1/spl/challenge?pubkey=" + owner.String()} {
			apiError(t, g.do("GET", path, nil), 500, apierr.CodeConfig)
		}
	})

	t.Run("invalid devnet URLs", func(t *testing.T) {
		env := hostedEnv(base, er, devBase, devER)
		env["BASE_DEVNET_RPC_URL"], env["EPHEMERAL_DEVNET_RPC_URL"] = "not-a-url", "still-not-a-url"
		g := newGateway(t, env)
		log.reset()
		// A mainnet deposit too: the environment is broken, not devnet.
		e := wantError(t, g.do("POST", "/v1/spl/deposit", deposit), 500, apierr.CodeConfig, "Missing or invalid worker environment variables")
		if got := issuePaths(t, e); !slices.Equal(got, []string{"BASE_DEVNET_RPC_URL", "EPHEMERAL_DEVNET_RPC_URL"}) {
			t.Fatalf("issues %v", got)
		}
		if e := apiError(t, g.do("POST", "/v1/spl/deposit", fmt.Sprintf(`{"owner":%q,"amount":1,"cluster":"devnet"}`, owner)), 500, apierr.CodeConfig); e == nil {
			t.Fatal()
		}
		if calls := log.all(); len(calls) != 0 {
			t.Fatalf("upstreams contacted: %v", log.pattern(nil))
		}
	})

	t.Run("devnet-private TEE missing", func(t *testing.T) {
		g := newGateway(t, hostedEnv(base, er, devBase, devER))
		log.reset()
		e := wantError(t, g.do("GET", "/v1/spl/challenge?pubkey="+owner.String()+"&cluster=devnet-private", nil), 500,
			apierr.CodeConfig, "Missing worker environment variables for cluster=devnet-private")
		if got := issuePaths(t, e); !slices.Equal(got, []string{"EPHEMERAL_DEVNET_TEE_RPC_URL"}) {
			t.Fatalf("issues %v", got)
		}
		want := `{"hint":"Set EPHEMERAL_DEVNET_TEE_RPC_URL before using cluster=devnet-private.","issues":[{"message":"Required for cluster=devnet-private","path":["EPHEMERAL_DEVNET_TEE_RPC_URL"]}]}`
		if b, _ := json.Marshal(e["details"]); string(b) != want {
			t.Fatalf("details %s", b)
		}
		// mainnet-private likewise; the configured clusters are unaffected.
		e = apiError(t, g.do("GET", "/v1/spl/challenge?pubkey="+owner.String()+"&cluster=mainnet-private", nil), 500, apierr.CodeConfig)
		if got := issuePaths(t, e); !slices.Equal(got, []string{"EPHEMERAL_TEE_RPC_URL"}) {
			t.Fatalf("issues %v", got)
		}
		if calls := log.all(); len(calls) != 0 {
			t.Fatalf("upstreams contacted: %v", log.pattern(nil))
		}
	})

	t.Run("Metis missing", func(t *testing.T) {
		g := newGateway(t, hostedEnv(base, er, devBase, devER))
		q := "/v1/swap/quote?inputMint=So11111111111111111111111111111111111111112&outputMint=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&amount=1000000"
		wantError(t, g.do("GET", q, nil), 500, apierr.CodeConfig, "Missing worker environment variable `METIS_SWAP_API_URL`")
		wantError(t, g.do("POST", "/v1/swap/swap", fmt.Sprintf(`{"userPublicKey":%q,"quoteResponse":%s}`, owner, mustJSON(testQuote()))), 500,
			apierr.CodeConfig, "Missing worker environment variable `METIS_SWAP_API_URL`")
	})

	t.Run("no deployment environment", func(t *testing.T) {
		// Without any of the hosted API's variables ferry's own defaults
		// stand: the cluster resolves (to the public hosts, which the
		// test transport then refuses: 502, not a config error).
		g := newGateway(t, map[string]string{})
		apiError(t, g.do("GET", "/v1/spl/balance?address="+owner.String()+"&mint="+owner.String(), nil), 502, apierr.CodeRPC)
	})
}
