package auth

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// upstream is a fake TEE auth service.
type upstream struct {
	mu      sync.Mutex
	status  int
	body    string
	block   bool
	paths   []string
	queries []string
	bodies  []string
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.paths = append(u.paths, r.Method+" "+r.URL.Path)
	u.queries = append(u.queries, r.URL.RawQuery)
	u.bodies = append(u.bodies, string(b))
	status, body, block := u.status, u.body, u.block
	u.mu.Unlock()
	if block {
		<-r.Context().Done()
		return
	}
	if status == 0 {
		status = 200
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (u *upstream) set(status int, body string) {
	u.mu.Lock()
	u.status, u.body = status, body
	u.mu.Unlock()
}

func TestProxy(t *testing.T) {
	up := &upstream{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	s, clk := newService(t, Config{UpstreamTimeout: 200 * time.Millisecond})
	ctx := t.Context()
	alice := pubOf(seedKey("alice"))
	rpc := srv.URL + "/rpc/"

	up.set(200, `{"challenge":"Login to Query Filtering Service\nTimestamp: 1\nUser: `+alice+`"}`)
	ch, err := s.ProxyChallenge(ctx, rpc, alice)
	if err != nil || !strings.HasPrefix(ch.Challenge, "Login to Query") {
		t.Fatalf("%+v %v", ch, err)
	}
	if up.paths[0] != "GET /rpc/auth/challenge" || up.queries[0] != "pubkey="+alice {
		t.Fatalf("request %s ?%s", up.paths[0], up.queries[0])
	}
	up.set(200, `{"token":"eyJupstream.jwt.sig","expiresAt":1800000000000}`)
	lr, err := s.ProxyLogin(ctx, rpc, &LoginRequest{Pubkey: alice, Challenge: "c", Signature: "s"})
	if err != nil || lr.Token != alice+".eyJupstream.jwt.sig" || lr.ExpiresAt == nil || *lr.ExpiresAt != 1_800_000_000_000 {
		t.Fatalf("%+v %v", lr, err)
	}
	var sent map[string]string
	json.Unmarshal([]byte(up.bodies[1]), &sent)
	if up.paths[1] != "POST /rpc/auth/login" || sent["pubkey"] != alice || sent["challenge"] != "c" || sent["signature"] != "s" {
		t.Fatalf("login request %s %s", up.paths[1], up.bodies[1])
	}

	// A plain rollup answers JSON-RPC: mock values.
	up.set(200, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":null}`)
	ch, err = s.ProxyChallenge(ctx, rpc, alice)
	if err != nil || ch.Challenge != "MOCK: Login to Query Filtering Service\nTimestamp: "+clk.now().UTC().Format("2006-01-02T15:04:05.000Z")+"\nUser: "+alice {
		t.Fatalf("%q %v", ch.Challenge, err)
	}
	lr, err = s.ProxyLogin(ctx, rpc, &LoginRequest{Pubkey: alice})
	if err != nil || lr.Token != alice+".mock-auth-token" {
		t.Fatalf("%+v %v", lr, err)
	}

	cases := []struct {
		status      int
		body        string
		wantStatus  int
		wantMessage string
	}{
		{200, `{"error":"account flagged"}`, 502, "Failed to get challenge: account flagged"},
		{200, `{"error":{"message":"bad"}}`, 502, "Failed to get challenge: bad"},
		{200, `{}`, 502, "No challenge received"},
		{200, `<html>`, 502, "Failed to get challenge: the auth service did not answer JSON"},
		{403, `{"error":"Signature verification failed"}`, 403, "Failed to get challenge: Forbidden"},
		{429, `slow down`, 429, "Failed to get challenge: Too Many Requests"},
		{500, `upstream said 429 Too Many Requests`, 429, "Failed to get challenge: Too Many Requests"},
		{400, `{"error":"Unexpected Range status: 429 Too Many Requests; body={\"statusCode\":429}"}`, 429, "Failed to get challenge: Too Many Requests"},
		{404, `no such route`, 404, "Failed to get challenge: Not Found"},
		{302, ``, 502, "Failed to get challenge: Bad Gateway"},
		{503, ``, 503, "Failed to get challenge: Service Unavailable"},
	}
	for _, c := range cases {
		up.set(c.status, c.body)
		_, err := s.ProxyChallenge(ctx, rpc, alice)
		if ae := wantCode(t, err, c.wantStatus, "RPC_ERROR"); ae.Message != c.wantMessage {
			t.Errorf("%d %s: %q", c.status, c.body, ae.Message)
		}
	}
	up.set(200, `{"token":""}`)
	_, err = s.ProxyLogin(ctx, rpc, &LoginRequest{Pubkey: alice})
	if ae := wantCode(t, err, 502, "RPC_ERROR"); ae.Message != "No token received" {
		t.Fatal(ae.Message)
	}
	up.set(200, `{"error":"nope"}`)
	_, err = s.ProxyLogin(ctx, rpc, &LoginRequest{Pubkey: alice})
	if ae := wantCode(t, err, 502, "RPC_ERROR"); ae.Message != "Failed to login: nope" {
		t.Fatal(ae.Message)
	}

	// Timeout → 504.
	up.mu.Lock()
	up.block = true
	up.mu.Unlock()
	_, err = s.ProxyChallenge(ctx, rpc, alice)
	if ae := wantCode(t, err, 504, "RPC_ERROR"); ae.Message != "Auth endpoint timed out" {
		t.Fatal(ae.Message)
	}
	up.mu.Lock()
	up.block = false
	up.mu.Unlock()

	// Unreachable: 502 without the URL.
	srv.Close()
	_, err = s.ProxyChallenge(ctx, rpc, alice)
	if ae := wantCode(t, err, 502, "RPC_ERROR"); ae.Message != "Failed to get challenge: auth endpoint unreachable" || ae.Err == nil {
		t.Fatal(ae.Message)
	}
	_, err = s.ProxyChallenge(ctx, "ftp://x", alice)
	wantCode(t, err, 500, "CONFIG_ERROR")
}

// TestProxyVia: on a rollup that is not a TEE the rollup's auth service is
// asked first, as the hosted API asks it; when the rollup has none (a
// JSON-RPC answer, or no such route) this server issues the challenge and
// checks the login itself, and its token is a real one.
func TestProxyVia(t *testing.T) {
	up := &upstream{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	s, _ := newService(t, Config{})
	ctx := t.Context()
	key := seedKey("alice")
	alice := pubOf(key)

	// The rollup has an auth service: its challenge and its token.
	up.set(200, `{"challenge":"rollup challenge"}`)
	ch, err := s.ChallengeVia(ctx, srv.URL, alice)
	if err != nil || ch.Challenge != "rollup challenge" || s.Issued(ch.Challenge) {
		t.Fatalf("%+v %v", ch, err)
	}
	up.set(200, `{"token":"token-xyz"}`)
	lr, err := s.LoginVia(ctx, srv.URL, "mainnet", &LoginRequest{Pubkey: alice, Challenge: "c1", Signature: "s1"})
	if err != nil || lr.Token != alice+".token-xyz" {
		t.Fatalf("%+v %v", lr, err)
	}
	if n := len(up.paths); n != 2 || up.paths[1] != "POST /auth/login" || up.bodies[1] != `{"challenge":"c1","pubkey":"`+alice+`","signature":"s1"}` {
		t.Fatalf("%v %v", up.paths, up.bodies)
	}
	// A login the rollup rate-limits (in the body of a 400).
	up.set(400, `{"error":"Unexpected Range status: 429 Too Many Requests"}`)
	_, err = s.LoginVia(ctx, srv.URL, "mainnet", &LoginRequest{Pubkey: alice, Challenge: "c1", Signature: "s1"})
	if ae := wantCode(t, err, 429, "RPC_ERROR"); ae.Message != "Failed to login: Too Many Requests" {
		t.Fatal(ae.Message)
	}

	// No auth service: this server's challenge, checked here.
	for _, noService := range []struct {
		status int
		body   string
	}{{200, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"invalid request: missing request body"}}`}, {405, "POST or OPTIONS is required"}, {404, ""}} {
		up.set(noService.status, noService.body)
		before := len(up.paths)
		ch, err := s.ChallengeVia(ctx, srv.URL, alice)
		if err != nil || !s.Issued(ch.Challenge) || !strings.HasPrefix(ch.Challenge, ChallengeTitle+"\n") || !strings.HasSuffix(ch.Challenge, "User: "+alice) {
			t.Fatalf("%d: %+v %v", noService.status, ch, err)
		}
		lr, err := s.LoginVia(ctx, srv.URL, "devnet", &LoginRequest{Pubkey: alice, Challenge: ch.Challenge, Signature: sign(key, ch.Challenge)})
		if err != nil {
			t.Fatal(err)
		}
		if len(up.paths) != before+1 {
			t.Fatalf("the login of a challenge of this server went upstream: %v", up.paths[before:])
		}
		b, err := s.AuthenticateFor(ParseHeader("Bearer "+lr.Token), "devnet")
		if err != nil || !b.Verified || b.Identity != alice {
			t.Fatalf("%+v %v", b, err)
		}
		// Once used, the challenge is the rollup's business again.
		if s.Issued(ch.Challenge) {
			t.Fatal("challenge still outstanding")
		}
	}
	// The TEE flavour keeps the hosted API's outcome for a missing route.
	up.set(405, "")
	_, err = s.ProxyChallenge(ctx, srv.URL, alice)
	wantCode(t, err, 405, "RPC_ERROR")
}
