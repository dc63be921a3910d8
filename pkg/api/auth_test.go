package api

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// testClock is a settable clock.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// delegateEATA records owner's eATA as delegated to validator on base
// (the account owned by the delegation program, plus its record).
func (h *harness) delegateEATA(owner solana.PublicKey, validator solana.PublicKey) solana.PublicKey {
	eata, _ := espl.FindEphemeralATA(owner, h.mint)
	h.delegate(eata, validator)
	return eata
}

func (h *harness) delegate(account, validator solana.PublicKey) {
	rec, _ := espl.FindDelegationRecord(account)
	h.put(h.base, map[solana.PublicKey]*ledger.Account{
		account: {Lamports: 2_000_000, Owner: espl.DelegationProgramID, Data: make([]byte, 8)},
		rec:     {Lamports: 2_000_000, Owner: espl.DelegationProgramID, Data: espl.DelegationRecord{Authority: validator, Owner: espl.ProgramID}.Encode()},
	})
}

// erTokens puts owner's ATA with amount on the rollup ledger.
func (h *harness) erTokens(owner solana.PublicKey, amount uint64) {
	ata := spl.AssociatedTokenAddress(owner, h.mint, spl.TokenProgramID)
	h.put(h.er, map[solana.PublicKey]*ledger.Account{
		ata:   {Lamports: 2_039_280, Owner: spl.TokenProgramID, Data: spl.TokenAccount{Mint: h.mint, Owner: owner, Amount: amount, State: spl.StateInitialized}.Encode()},
		owner: {Lamports: 1_000_000_000, Owner: spl.SystemProgramID},
	})
}

func TestLoginAndPrivateBalance(t *testing.T) {
	clk := &testClock{t: time.Now()}
	a, err := auth.New(auth.Config{Key: seedKey("auth server"), Now: clk.Now, TokenLifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOptions{cfg: func(c *Config) { c.Auth = a }})
	aliceKey, bobKey := seedKey("alice"), seedKey("bob")
	alice := pubOf(aliceKey)
	path := fmt.Sprintf("/v1/spl/private-balance?address=%s&mint=%s", alice, h.mint)

	// The challenge has the TEE service's format.
	ch := ok[auth.ChallengeResponse](t, h.do("GET", "/v1/spl/challenge?pubkey="+alice.String(), nil))
	if _, user, ok := auth.ParseChallenge(ch.Challenge); !ok || user != alice.String() {
		t.Fatalf("challenge %q", ch.Challenge)
	}
	// Login errors.
	sig := base58.Encode(ed25519.Sign(bobKey, []byte(ch.Challenge)))
	apiError(t, h.do("POST", "/v1/spl/login", map[string]string{"pubkey": alice.String(), "challenge": ch.Challenge, "signature": sig}), 403, "SIGNATURE_VERIFICATION_FAILED")
	apiError(t, h.do("POST", "/v1/spl/login", map[string]string{"pubkey": alice.String(), "challenge": ch.Challenge, "signature": "xyz"}), 400, "INVALID_SIGNATURE")
	apiError(t, h.do("POST", "/v1/spl/login", map[string]string{"pubkey": alice.String(), "challenge": "hello", "signature": sig}), 400, "INVALID_CHALLENGE")
	e := apiError(t, h.do("POST", "/v1/spl/login", map[string]string{"pubkey": alice.String()}), 422, "VALIDATION_ERROR")
	if e["message"] != "Missing required fields: challenge, signature" {
		t.Fatal(e["message"])
	}
	sig = base58.Encode(ed25519.Sign(aliceKey, []byte(ch.Challenge)))
	lr := ok[auth.LoginResponse](t, h.do("POST", "/v1/spl/login", map[string]string{"pubkey": alice.String(), "challenge": ch.Challenge, "signature": sig}))
	if !strings.HasPrefix(lr.Token, alice.String()+".eyJ") || lr.ExpiresAt == nil {
		t.Fatalf("%+v", lr)
	}
	apiError(t, h.do("POST", "/v1/spl/login", map[string]string{"pubkey": alice.String(), "challenge": ch.Challenge, "signature": sig}), 401, "CHALLENGE_EXPIRED")
	// Legacy mock flag.
	if m := ok[auth.ChallengeResponse](t, h.do("GET", "/v1/spl/challenge?pubkey="+alice.String()+"&mock=true", nil)); m.Challenge != "mock-challenge" {
		t.Fatal(m.Challenge)
	}
	if m := ok[auth.LoginResponse](t, h.do("POST", "/v1/spl/login", map[string]any{"pubkey": alice.String(), "challenge": "x", "signature": "y", "mock": true})); m.Token != alice.String()+".mock-auth-token" {
		t.Fatal(m.Token)
	}

	// Private balance: header rules.
	e = apiError(t, h.do("GET", path, nil), 422, "VALIDATION_ERROR")
	if e["message"] != "Missing required fields: authorization" {
		t.Fatal(e)
	}
	e = apiError(t, h.do("GET", path, nil, "Authorization", "Token "+lr.Token), 400, "MISSING_AUTH_TOKEN")
	if e["message"] != "authToken is required for private balance" {
		t.Fatal(e)
	}
	bobToken := h.login(bobKey)
	apiError(t, h.do("GET", path, nil, "Authorization", "Bearer "+bobToken), 403, "TOKEN_IDENTITY_MISMATCH")
	// Bob's ferry token with the binding stripped is still bob's.
	_, inner := auth.SplitToken(bobToken)
	apiError(t, h.do("GET", path, nil, "Authorization", "Bearer "+inner), 403, "TOKEN_IDENTITY_MISMATCH")
	// Re-bound to alice: the token says otherwise.
	apiError(t, h.do("GET", path, nil, "Authorization", "Bearer "+auth.Bind(alice.String(), inner)), 401, "INVALID_AUTH_TOKEN")
	// Another server's token.
	other, _ := auth.New(auth.Config{Key: seedKey("another server")})
	och := other.Challenge(alice.String())
	olr, err := other.Login(alice.String(), och, base58.Encode(ed25519.Sign(aliceKey, []byte(och))))
	if err != nil {
		t.Fatal(err)
	}
	apiError(t, h.do("GET", path, nil, "Authorization", "Bearer "+olr.Token), 401, "INVALID_AUTH_TOKEN")

	// Not delegated: 0 on the rollup.
	bal := ok[payments.BalanceResponse](t, h.do("GET", path, nil, "Authorization", "Bearer "+lr.Token))
	if bal.Balance != "0" || bal.Location != "ephemeral" || bal.ATA != spl.AssociatedTokenAddress(alice, h.mint, spl.TokenProgramID).String() {
		t.Fatalf("%+v", bal)
	}
	// Delegated to the rollup: the rollup's view of the ATA.
	h.delegateEATA(alice, erIdentity)
	h.erTokens(alice, 777)
	if bal := ok[payments.BalanceResponse](t, h.do("GET", path, nil, "Authorization", "Bearer "+lr.Token)); bal.Balance != "777" {
		t.Fatalf("%+v", bal)
	}
	// Anything this server did not issue for this cluster is refused
	// (the hosted API let unbound opaque tokens through).
	for _, bad := range []string{"1234567890", auth.Bind(alice.String(), auth.MockToken), auth.MockToken} {
		apiError(t, h.do("GET", path, nil, "Authorization", "Bearer "+bad), 401, "INVALID_AUTH_TOKEN")
	}
	// Delegated elsewhere.
	h.delegateEATA(alice, pubOf(seedKey("other validator")))
	e = apiError(t, h.do("GET", path, nil, "Authorization", "Bearer "+lr.Token), 400, "EATA_DELEGATED_ELSEWHERE")
	if e["details"].(map[string]any)["selectedValidator"] != erIdentity.String() {
		t.Fatal(e)
	}
	// Expiry.
	clk.Add(2 * time.Hour)
	e = apiError(t, h.do("GET", path, nil, "Authorization", "Bearer "+lr.Token), 401, "INVALID_AUTH_TOKEN")
	if !strings.Contains(e["message"].(string), "expired") {
		t.Fatal(e)
	}
}

// teeJWT is a token shaped like the TEE auth service's (an ES256 JWT whose
// subject is the wallet); only fakeTEE can tell whether it is valid.
func teeJWT(sub string, exp int64, sig string) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"ES256","typ":"JWT"}`))
	c := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"sub":%q,"exp":%d}`, sub, exp)))
	return h + "." + c + "." + sig
}

// fakeTEE is a TEE rollup: an auth service plus a JSON-RPC node that
// refuses requests without the token it issued (except getIdentity).
type fakeTEE struct {
	mu      sync.Mutex
	token   string
	mode    string // "", "jsonrpc-auth" (a plain ER), "429"
	queries []string
	methods []string
	hash    string
	ata     []byte
}

func (f *fakeTEE) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, r.URL.RawQuery)
	if strings.HasPrefix(r.URL.Path, "/auth/") {
		switch f.mode {
		case "jsonrpc-auth":
			io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":null}`)
			return
		case "429":
			w.WriteHeader(429)
			return
		}
		if r.URL.Path == "/auth/challenge" {
			json.NewEncoder(w).Encode(map[string]string{"challenge": "Login to Query Filtering Service\nTimestamp: 1\nUser: " + r.URL.Query().Get("pubkey")})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"token": f.token, "expiresAt": 1_800_000_000_000})
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	f.methods = append(f.methods, req.Method)
	if req.Method != "getIdentity" && r.URL.Query().Get("token") != f.token {
		w.WriteHeader(401)
		io.WriteString(w, "401 Unauthorized: missing token")
		return
	}
	var result string
	switch req.Method {
	case "getIdentity":
		result = `{"identity":"` + espl.ValidatorTEE.String() + `"}`
	case "getSlot":
		result = `1`
	case "getLatestBlockhash":
		result = `{"context":{"slot":1},"value":{"blockhash":"` + f.hash + `","lastValidBlockHeight":4242}}`
	case "getAccountInfo":
		result = `{"context":{"slot":1},"value":{"lamports":1,"owner":"` + spl.TokenProgramID.String() + `","data":["` + base64.StdEncoding.EncodeToString(f.ata) + `","base64"],"executable":false,"rentEpoch":0,"space":165}}`
	default:
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32601,"message":"Method not found"}}`)
		return
	}
	io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
}

func TestTEEClusters(t *testing.T) {
	aliceKey := seedKey("alice")
	alice, bob := pubOf(aliceKey), pubOf(seedKey("bob"))
	exp := time.Now().Add(time.Hour).Unix()
	teeToken := teeJWT(alice.String(), exp, "dGVlLXNpZw")
	tee := &fakeTEE{token: teeToken, hash: solana.Hash{7, 7, 7}.String()}
	up := httptest.NewServer(tee)
	defer up.Close()
	h := newHarness(t, harnessOptions{overrides: map[string]cluster.Overrides{
		"devnet-private": {BaseRPC: testBaseURL, Ephemeral: up.URL, Router: testRouterURL},
	}})
	h.fund(alice, 1000)

	// Challenge and login are proxied to the TEE's auth service.
	ch := ok[auth.ChallengeResponse](t, h.do("GET", "/v1/spl/challenge?cluster=devnet-private&pubkey="+alice.String(), nil))
	if ch.Challenge != "Login to Query Filtering Service\nTimestamp: 1\nUser: "+alice.String() {
		t.Fatalf("%q", ch.Challenge)
	}
	lr := ok[auth.LoginResponse](t, h.do("POST", "/v1/spl/login", map[string]any{"pubkey": alice, "challenge": ch.Challenge, "signature": "sig", "cluster": "devnet-private"}))
	if lr.Token != alice.String()+"."+teeToken || lr.ExpiresAt == nil || *lr.ExpiresAt != 1_800_000_000_000 {
		t.Fatalf("%+v", lr)
	}
	// A rollup without an auth service: mock values.
	tee.mu.Lock()
	tee.mode = "jsonrpc-auth"
	tee.mu.Unlock()
	ch = ok[auth.ChallengeResponse](t, h.do("GET", "/v1/spl/challenge?cluster=devnet-private&pubkey="+alice.String(), nil))
	if !strings.HasPrefix(ch.Challenge, "MOCK: Login to Query Filtering Service\nTimestamp: ") {
		t.Fatalf("%q", ch.Challenge)
	}
	tee.mu.Lock()
	tee.mode = "429"
	tee.mu.Unlock()
	apiError(t, h.do("POST", "/v1/spl/login", map[string]any{"pubkey": alice, "challenge": "c", "signature": "s", "cluster": "devnet-private"}), 429, "RPC_ERROR")
	tee.mu.Lock()
	tee.mode = ""
	tee.mu.Unlock()

	// Rollup reads carry the token: a transfer from the rollup, and the
	// private balance.
	body := transferBody(alice, bob, h.mint, "public", "ephemeral", "ephemeral", `,"cluster":"devnet-private"`)
	e := apiError(t, h.do("POST", "/v1/spl/transfer", body), 502, "RPC_ERROR")
	if e["message"] != "Failed to fetch recent blockhash" || strings.Contains(fmt.Sprint(e), up.URL) {
		t.Fatal(e)
	}
	out := ok[payments.UnsignedTransaction](t, h.do("POST", "/v1/spl/transfer", body, "Authorization", "Bearer "+lr.Token))
	if out.RecentBlockhash != tee.hash || out.LastValidBlockHeight != 4242 || out.SendRPCEndpoint != up.URL {
		t.Fatalf("%+v", out)
	}
	// The token names alice: bound to bob it contradicts itself.
	apiError(t, h.do("POST", "/v1/spl/transfer", body, "Authorization", "Bearer "+auth.Bind(bob.String(), teeToken)), 401, "INVALID_AUTH_TOKEN")

	h.delegateEATA(alice, espl.ValidatorTEE)
	tee.mu.Lock()
	tee.ata = spl.TokenAccount{Mint: h.mint, Owner: alice, Amount: 31337, State: spl.StateInitialized}.Encode()
	tee.mu.Unlock()
	path := fmt.Sprintf("/v1/spl/private-balance?address=%s&mint=%s&cluster=devnet-private", alice, h.mint)
	bal := ok[payments.BalanceResponse](t, h.do("GET", path, nil, "Authorization", "Bearer "+lr.Token))
	if bal.Balance != "31337" {
		t.Fatalf("%+v", bal)
	}
	// The rollup verified the token once (getSlot with ?token=); the
	// answer is reused.
	if n := tee.count("getSlot"); n != 1 {
		t.Fatalf("%d upstream verifications, want 1", n)
	}
	// Tokens the rollup did not issue are refused: locally when no rollup
	// issues such a thing, by the rollup otherwise; none reaches a read.
	reads := tee.count("getAccountInfo")
	for name, bad := range map[string]string{
		"garbage":  "1234567890",
		"mock":     auth.Bind(alice.String(), auth.MockToken),
		"alg none": alice.String() + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + strings.Split(teeToken, ".")[1] + ".",
		"expired":  auth.Bind(alice.String(), teeJWT(alice.String(), time.Now().Add(-time.Minute).Unix(), "dGVlLXNpZw")),
		"forged":   auth.Bind(alice.String(), teeJWT(alice.String(), exp, "Zm9yZ2Vk")),
		"ferry":    h.login(aliceKey), // issued for the local cluster
	} {
		e := apiError(t, h.do("GET", path, nil, "Authorization", "Bearer "+bad), 401, "INVALID_AUTH_TOKEN")
		if t.Failed() {
			t.Fatalf("%s: %v", name, e)
		}
	}
	if n := tee.count("getAccountInfo"); n != reads {
		t.Fatalf("refused tokens reached %d reads", n-reads)
	}
	if n := tee.count("getSlot"); n != 2 { // only "forged" had to be asked
		t.Fatalf("%d upstream verifications, want 2", n)
	}

	// The token goes to the rollup that issued it and nowhere else: not
	// to another sendRpcEndpoint, even an allowed one.
	other := &countingRPC{}
	otherSrv := httptest.NewServer(other)
	defer otherSrv.Close()
	h2 := newHarness(t, harnessOptions{allow: []string{"http://127.0.0.1:*"}, overrides: map[string]cluster.Overrides{
		"devnet-private": {BaseRPC: testBaseURL, Ephemeral: up.URL, Router: testRouterURL},
	}})
	r := h2.do("POST", "/v1/transaction/send", map[string]any{"transactionBase64": "AQ==", "sendTo": "ephemeral",
		"sendRpcEndpoint": otherSrv.URL, "cluster": "devnet-private"}, "Authorization", "Bearer "+lr.Token)
	if r.Status == 200 {
		t.Fatalf("%s", r.Body)
	}
	if len(other.queries()) == 0 {
		t.Fatalf("the send did not reach the allowed endpoint: %s", r.Body)
	}
	for _, q := range other.queries() {
		if strings.Contains(q, "token") {
			t.Fatalf("token sent to another endpoint: %s", q)
		}
	}
	// The token went only to the rollup, never the bound form.
	for _, q := range tee.queries {
		if strings.Contains(q, alice.String()) && strings.Contains(q, "token") {
			t.Fatalf("bound token forwarded: %s", q)
		}
	}
}

func (f *fakeTEE) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, m := range f.methods {
		if m == method {
			n++
		}
	}
	return n
}

// countingRPC records the queries of the requests it gets and answers
// every JSON-RPC call with an error.
type countingRPC struct {
	mu sync.Mutex
	qs []string
}

func (c *countingRPC) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.qs = append(c.qs, r.URL.RawQuery)
	c.mu.Unlock()
	io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Transaction simulation failed"}}`)
}

func (c *countingRPC) queries() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.qs...)
}

// TestPrivateRoutesRefuseBadTokens: every route that needs a token (the
// private balance, the stealth pool) refuses anything but a valid token
// of the right wallet, issued by this server for this cluster.
func TestPrivateRoutesRefuseBadTokens(t *testing.T) {
	clk := &testClock{t: time.Now()}
	a, err := auth.New(auth.Config{Key: seedKey("auth server"), Now: clk.Now, TokenLifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOptions{cfg: func(c *Config) { c.Auth = a }})
	aliceKey := seedKey("alice")
	alice, bob := pubOf(aliceKey), pubOf(seedKey("bob"))
	h.fund(alice, 1000)
	good := h.login(aliceKey)
	_, inner := auth.SplitToken(good)
	parts := strings.Split(inner, ".")
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	other, _ := auth.New(auth.Config{Key: seedKey("another server")})
	och := other.Challenge(alice.String())
	foreign, err := other.LoginFor("local", alice.String(), och, base58.Encode(ed25519.Sign(aliceKey, []byte(och))))
	if err != nil {
		t.Fatal(err)
	}
	routes := []struct{ method, path, body string }{
		{"GET", fmt.Sprintf("/v1/spl/private-balance?address=%s&mint=%s", alice, h.mint), ""},
		{"POST", "/v1/spl/stealth-pool", fmt.Sprintf(`{"payer":%q,"authority":%q,"handle":"a.block","destinations":[%q]}`, alice, alice, bob)},
	}
	bad := []struct {
		name, header string
		status       int
		code         string
	}{
		{"garbage", "Bearer x", 401, auth.CodeInvalidAuthToken},
		{"opaque bound", "Bearer " + auth.Bind(alice.String(), "1234567890"), 401, auth.CodeInvalidAuthToken},
		{"mock", "Bearer " + auth.Bind(alice.String(), auth.MockToken), 401, auth.CodeInvalidAuthToken},
		{"alg none", "Bearer " + auth.Bind(alice.String(), none+"."+parts[1]+"."), 401, auth.CodeInvalidAuthToken},
		{"forged signature", "Bearer " + auth.Bind(alice.String(), parts[0]+"."+parts[1]+"."+base64.RawURLEncoding.EncodeToString(make([]byte, 64))), 401, auth.CodeInvalidAuthToken},
		{"another server", "Bearer " + foreign.Token, 401, auth.CodeInvalidAuthToken},
		{"another wallet", "Bearer " + h.login(seedKey("bob")), 403, auth.CodeTokenIdentityMismatch},
		{"malformed header", "Token " + good, 400, auth.CodeMissingAuthToken},
	}
	for _, rt := range routes {
		for _, b := range bad {
			r := h.do(rt.method, rt.path, rt.body, "Authorization", b.header)
			apiError(t, r, b.status, b.code)
			if t.Failed() {
				t.Fatalf("%s %s with %s", rt.method, rt.path, b.name)
			}
		}
		apiError(t, h.do(rt.method, rt.path, rt.body), 422, "VALIDATION_ERROR")
		if r := h.do(rt.method, rt.path, rt.body, "Authorization", "Bearer "+good); r.Status != 200 {
			t.Fatalf("%s %s with alice's token: %d %s", rt.method, rt.path, r.Status, r.Body)
		}
	}
	clk.Add(2 * time.Hour)
	for _, rt := range routes {
		apiError(t, h.do(rt.method, rt.path, rt.body, "Authorization", "Bearer "+good), 401, auth.CodeInvalidAuthToken)
	}
}
