package api

import (
	"crypto/ed25519"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// jsonRPCNoAuth is what a rollup without an auth service answers on its
// /auth routes (a JSON-RPC error, status 200).
const jsonRPCNoAuth = `{"jsonrpc":"2.0","error":{"code":-32600,"message":"invalid request: missing request body"}}`

func writeJSON(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

// TestParityAuthNonTEE: on a cluster whose rollup is not a TEE (mainnet
// here) challenge and login are proxied to the rollup's /auth routes, as
// the hosted API proxies them, with its outcomes (hosted cases "returns a
// challenge from the ephemeral rollup auth endpoint", "returns the mock
// challenge", "returns a token from the ephemeral rollup login endpoint",
// "returns the mock token", "maps upstream login rate limits to 429").
func TestParityAuthNonTEE(t *testing.T) {
	log := &callLog{}
	base, er := newMockUpstream(t, "base", log), newMockUpstream(t, "er", log)
	devBase, devER := newMockUpstream(t, "devnet-base", log), newMockUpstream(t, "devnet-er", log)
	g := newGateway(t, hostedEnv(base, er, devBase, devER))
	ownerKey := seedKey("owner")
	owner := pubOf(ownerKey).String()
	login := map[string]string{"pubkey": owner, "challenge": "c1", "signature": "s1"}

	t.Run("challenge from the rollup", func(t *testing.T) {
		log.reset()
		er.onHTTP("GET /auth/challenge", writeJSON(`{"challenge":"challenge-token-abc"}`))
		ch := ok[auth.ChallengeResponse](t, g.do("GET", "/v1/spl/challenge?pubkey="+owner, nil))
		if ch.Challenge != "challenge-token-abc" {
			t.Fatalf("%q", ch.Challenge)
		}
		wantCalls(t, log.pattern(nil), []string{"er GET /auth/challenge"})
		if q := log.all()[0].Query; q.Encode() != "pubkey="+owner {
			t.Fatalf("query %v", q)
		}
	})

	t.Run("token from the rollup", func(t *testing.T) {
		log.reset()
		er.onHTTP("POST /auth/login", writeJSON(`{"token":"token-xyz"}`))
		lr := ok[auth.LoginResponse](t, g.do("POST", "/v1/spl/login", login))
		// Bound to the wallet, as the newest hosted code binds it.
		if lr.Token != owner+".token-xyz" {
			t.Fatalf("%q", lr.Token)
		}
		wantCalls(t, log.pattern(nil), []string{"er POST /auth/login"})
		var sent map[string]string
		json.Unmarshal(log.all()[0].Body, &sent)
		if len(sent) != 3 || sent["pubkey"] != owner || sent["challenge"] != "c1" || sent["signature"] != "s1" {
			t.Fatalf("login body %s", log.all()[0].Body)
		}
	})

	t.Run("rate limit", func(t *testing.T) {
		log.reset()
		er.onHTTP("POST /auth/login", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"Unexpected Range status: 429 Too Many Requests; body={\"message\":\"Too many requests\",\"statusCode\":429}"}`)
		})
		wantError(t, g.do("POST", "/v1/spl/login", login), 429, apierr.CodeRPC, "Failed to login: Too Many Requests")
		wantCalls(t, log.pattern(nil), []string{"er POST /auth/login"})
	})

	t.Run("mock token", func(t *testing.T) {
		log.reset()
		er.onHTTP("POST /auth/login", writeJSON(jsonRPCNoAuth))
		lr := ok[auth.LoginResponse](t, g.do("POST", "/v1/spl/login", login))
		if lr.Token != owner+"."+auth.MockToken {
			t.Fatalf("%q", lr.Token)
		}
		wantCalls(t, log.pattern(nil), []string{"er POST /auth/login"})
	})

	t.Run("rollup without an auth service", func(t *testing.T) {
		log.reset()
		er.onHTTP("GET /auth/challenge", writeJSON(jsonRPCNoAuth))
		ch := ok[auth.ChallengeResponse](t, g.do("GET", "/v1/spl/challenge?pubkey="+owner, nil))
		if !strings.Contains(ch.Challenge, "Login to Query Filtering Service") || !strings.Contains(ch.Challenge, owner) {
			t.Fatalf("%q", ch.Challenge)
		}
		wantCalls(t, log.pattern(nil), []string{"er GET /auth/challenge"})
		// ferry, not the hosted API's mock: the challenge is this
		// server's, its login is checked here (no upstream call) and the
		// token works.
		sig := base58.Encode(ed25519.Sign(ownerKey, []byte(ch.Challenge)))
		lr := ok[auth.LoginResponse](t, g.do("POST", "/v1/spl/login", map[string]string{"pubkey": owner, "challenge": ch.Challenge, "signature": sig}))
		wantCalls(t, log.pattern(nil), []string{"er GET /auth/challenge"})
		prefix, inner := auth.SplitToken(lr.Token)
		if prefix != owner || !auth.IsFerryToken(inner) {
			t.Fatalf("%q", lr.Token)
		}
		// A wrong signature is refused here.
		ch = ok[auth.ChallengeResponse](t, g.do("GET", "/v1/spl/challenge?pubkey="+owner, nil))
		bad := base58.Encode(ed25519.Sign(seedKey("mallory"), []byte(ch.Challenge)))
		apiError(t, g.do("POST", "/v1/spl/login", map[string]string{"pubkey": owner, "challenge": ch.Challenge, "signature": bad}), 403, auth.CodeSignatureVerificationFailed)
	})
}

// TestParityUpstreamTokenNonTEE: a token the mainnet rollup's auth service
// issued is the rollup's to check (getSlot with ?token=) and goes to that
// rollup, and nowhere else, on the reads of the request; what no rollup
// issues is refused before any read. The hosted API passes any token
// through (documented difference).
func TestParityUpstreamTokenNonTEE(t *testing.T) {
	log := &callLog{}
	base, er := newMockUpstream(t, "base", log), newMockUpstream(t, "er", log)
	devBase, devER := newMockUpstream(t, "devnet-base", log), newMockUpstream(t, "devnet-er", log)
	g := newGateway(t, hostedEnv(base, er, devBase, devER))
	owner := pubOf(seedKey("owner"))
	validator := pubOf(seedKey("validator"))
	mint := spl.NativeMintID
	eata, _ := espl.FindEphemeralATA(owner, mint)
	rec, _ := espl.FindDelegationRecord(eata)
	ata := spl.AssociatedTokenAddress(owner, mint, spl.TokenProgramID)
	base.accounts(map[solana.PublicKey]*acct{
		mint: {Owner: spl.TokenProgramID, Lamports: 1, Data: make([]byte, 82)},
		rec:  {Owner: espl.DelegationProgramID, Lamports: 1, Data: espl.DelegationRecord{Authority: validator, Owner: espl.ProgramID}.Encode()},
	})
	data := make([]byte, 165)
	binary.LittleEndian.PutUint64(data[64:], 9)
	upstreamTok := teeJWT(owner.String(), time.Now().Add(time.Hour).Unix(), "c2ln")
	er.identity(validator).
		on("getSlot", func(_ []json.RawMessage, q url.Values) (any, *rpcFail) {
			if q.Get("token") != upstreamTok {
				return nil, &rpcFail{Code: -32000, Message: "Unauthorized: invalid token"}
			}
			return 5, nil
		}).
		accounts(map[solana.PublicKey]*acct{ata: {Owner: spl.TokenProgramID, Lamports: 1, Data: data}})
	names := map[string]string{mint.String(): "mint", rec.String(): "eata-record", ata.String(): "ata"}
	path := fmt.Sprintf("/v1/spl/private-balance?address=%s&mint=%s", owner, mint)

	bal := ok[payments.BalanceResponse](t, g.do("GET", path, nil, "Authorization", "Bearer "+owner.String()+"."+upstreamTok))
	if bal.Balance != "9" || bal.Location != "ephemeral" {
		t.Fatalf("%+v", bal)
	}
	wantCalls(t, log.pattern(names), []string{"er getSlot", "base getAccountInfo mint", "base getAccountInfo eata-record", "er getIdentity", "er getAccountInfo ata"})
	for _, c := range log.all() {
		if got := c.Query.Get("token"); c.Upstream == "er" && c.Method != "getIdentity" && got != upstreamTok || c.Upstream != "er" && got != "" {
			t.Fatalf("%s %s got token %q", c.Upstream, c.Method, got)
		}
	}

	// Tokens no rollup issues: 401 before any read or verification.
	for _, bad := range []string{"1234567890", auth.MockToken, owner.String() + "." + auth.MockToken} {
		log.reset()
		apiError(t, g.do("GET", path, nil, "Authorization", "Bearer "+bad), 401, auth.CodeInvalidAuthToken)
		if n := len(log.all()); n != 0 {
			t.Fatalf("%s: %v", bad, log.pattern(names))
		}
	}
	// One the rollup refuses: 401 after asking it, and no read.
	log.reset()
	forged := teeJWT(owner.String(), time.Now().Add(time.Hour).Unix(), "Zm9yZ2Vk")
	apiError(t, g.do("GET", path, nil, "Authorization", "Bearer "+forged), 401, auth.CodeInvalidAuthToken)
	wantCalls(t, log.pattern(names), []string{"er getSlot"})
}
