package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ferry-sh/ferry/pkg/apierr"
)

// listener is a local JSON-RPC endpoint that counts what it gets.
type listener struct {
	*httptest.Server
	n  atomic.Int64
	mu sync.Mutex
	qs []string
}

func newListener(t *testing.T, h http.HandlerFunc) *listener {
	l := &listener{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.n.Add(1)
		l.mu.Lock()
		l.qs = append(l.qs, r.URL.RawQuery)
		l.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *listener) queries() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.qs...)
}

// nullRPC answers every JSON-RPC call with a null result (no such
// account).
func nullRPC(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"context":{"slot":1},"value":null}}`)
}

// clusterRequests are one request per route that takes a cluster (or an
// endpoint), each naming u.
func clusterRequests(h *harness, u string) []struct{ method, path, body string } {
	alice, bob := pubOf(seedKey("alice")), pubOf(seedKey("bob"))
	m := h.mint.String()
	q := url.QueryEscape(u)
	cl := fmt.Sprintf(`,"cluster":%q`, u)
	return []struct{ method, path, body string }{
		{"GET", "/v1/spl/balance?address=" + alice.String() + "&mint=" + m + "&cluster=" + q, ""},
		{"GET", "/v1/spl/private-balance?address=" + alice.String() + "&mint=" + m + "&cluster=" + q, ""},
		{"GET", "/v1/spl/is-mint-initialized?mint=" + m + "&cluster=" + q, ""},
		{"GET", "/v1/spl/stealth-pool?handle=a.block&cluster=" + q, ""},
		{"GET", "/v1/spl/challenge?pubkey=" + alice.String() + "&cluster=" + q, ""},
		{"POST", "/v1/spl/login", fmt.Sprintf(`{"pubkey":%q,"challenge":"c","signature":"s"%s}`, alice, cl)},
		{"POST", "/v1/spl/deposit", fmt.Sprintf(`{"owner":%q,"mint":%q,"amount":1%s}`, alice, m, cl)},
		{"POST", "/v1/spl/withdraw", fmt.Sprintf(`{"owner":%q,"mint":%q,"amount":1%s}`, alice, m, cl)},
		{"POST", "/v1/spl/transfer", transferBody(alice, bob, h.mint, "public", "base", "base", cl)},
		{"POST", "/v1/spl/initialize-mint", fmt.Sprintf(`{"payer":%q,"mint":%q%s}`, alice, m, cl)},
		{"POST", "/v1/spl/transfer-queue/ensure-crank", fmt.Sprintf(`{"mint":%q%s}`, m, cl)},
		{"POST", "/v1/spl/undelegate-ephemeral-ata", fmt.Sprintf(`{"payer":%q,"mint":%q%s}`, alice, m, cl)},
		{"POST", "/v1/spl/stealth-pool", fmt.Sprintf(`{"payer":%q,"authority":%q,"handle":"a.block","destinations":[%q]%s}`, alice, alice, bob, cl)},
		{"POST", "/v1/transaction/send", fmt.Sprintf(`{"transactionBase64":"AQ==","sendTo":"base"%s}`, cl)},
		{"POST", "/v1/transaction/send", fmt.Sprintf(`{"transactionBase64":"AQ==","sendTo":"ephemeral","sendRpcEndpoint":%q}`, u)},
	}
}

// TestOutboundAllowList: a request can make the server contact only the
// configured endpoints and those the operator allowed; anything else is
// 400 UPSTREAM_NOT_ALLOWED and the named listener never sees a request.
func TestOutboundAllowList(t *testing.T) {
	target := newListener(t, nullRPC)
	h := newHarness(t)
	tok := h.login(seedKey("alice"))
	for _, rq := range clusterRequests(h, target.URL+"/rpc?api-key=SECRET") {
		r := h.do(rq.method, rq.path, rq.body, "Authorization", "Bearer "+tok)
		e := apiError(t, r, 400, apierr.CodeUpstreamNotAllowed)
		d := e["details"].(map[string]any)
		if host := strings.TrimPrefix(target.URL, "http://"); d["host"] != host || bytes.Contains(r.Body, []byte("SECRET")) {
			t.Errorf("%s %s: %s", rq.method, rq.path, r.Body)
		}
	}
	if n := target.n.Load(); n != 0 {
		t.Fatalf("the disallowed listener got %d requests", n)
	}
	// Named clusters and the configured endpoints themselves stay usable.
	ok[struct{ Balance string }](t, h.do("GET", "/v1/spl/balance?address="+pubOf(seedKey("alice")).String()+"&mint="+h.mint.String()+"&cluster="+url.QueryEscape(testBaseURL), nil))

	// Allowed by a pattern: the same requests reach it.
	port := target.URL[strings.LastIndex(target.URL, ":")+1:]
	h = newHarness(t, harnessOptions{allow: []string{"http://127.0.0.1:" + port}})
	tok = h.login(seedKey("alice"))
	for _, rq := range clusterRequests(h, target.URL) {
		r := h.do(rq.method, rq.path, rq.body, "Authorization", "Bearer "+tok)
		if r.Status == 400 && bytes.Contains(r.Body, []byte(apierr.CodeUpstreamNotAllowed)) {
			t.Errorf("%s %s refused: %s", rq.method, rq.path, r.Body)
		}
	}
	if target.n.Load() == 0 {
		t.Fatal("the allowed listener got no request")
	}
	// Another port of the same host is still refused.
	apiError(t, h.do("GET", "/v1/spl/balance?address="+pubOf(seedKey("alice")).String()+"&mint="+h.mint.String()+
		"&cluster="+url.QueryEscape("http://127.0.0.1:1"), nil), 400, apierr.CodeUpstreamNotAllowed)
}

// TestUpstreamAnswersAreSanitised: an allowed upstream cannot redirect the
// server elsewhere, its error pages are not echoed, and "unreachable"
// reads the same whether the port is closed, resets the connection or
// cannot be dialled at all.
func TestUpstreamAnswersAreSanitised(t *testing.T) {
	elsewhere := newListener(t, nullRPC)
	redirect := newListener(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/internal", http.StatusSeeOther)
	})
	errorPage := newListener(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "<html>SECRET-INTERNAL-PAGE db=10.0.0.7</html>")
	})
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String()
	closed.Close()
	reset, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer reset.Close()
	go func() {
		for {
			c, err := reset.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	h := newHarness(t, harnessOptions{allow: []string{"http://*:*"}})
	balance := func(u string) *response {
		return h.do("GET", "/v1/spl/balance?address="+pubOf(seedKey("alice")).String()+"&mint="+h.mint.String()+"&cluster="+url.QueryEscape(u), nil)
	}

	r := balance(redirect.URL)
	apiError(t, r, 502, apierr.CodeRPC)
	if elsewhere.n.Load() != 0 || bytes.Contains(r.Body, []byte("internal")) {
		t.Fatalf("redirect followed (%d requests): %s", elsewhere.n.Load(), r.Body)
	}
	if !bytes.Contains(r.Body, []byte("HTTP 303")) {
		t.Fatalf("the redirect status is not reported: %s", r.Body)
	}

	r = balance(errorPage.URL)
	apiError(t, r, 502, apierr.CodeRPC)
	if bytes.Contains(r.Body, []byte("SECRET")) || bytes.Contains(r.Body, []byte("10.0.0.7")) || !bytes.Contains(r.Body, []byte("HTTP 500")) {
		t.Fatalf("upstream body echoed: %s", r.Body)
	}

	var bodies []string
	for _, u := range []string{closedURL, "http://" + reset.Addr().String(), "http://no-such-host.invalid:8899"} {
		r := balance(u)
		apiError(t, r, 502, apierr.CodeRPC)
		bodies = append(bodies, string(r.Body))
	}
	if bodies[0] != bodies[1] || bodies[1] != bodies[2] || !strings.Contains(bodies[0], "upstream unreachable") {
		t.Fatalf("unreachable answers differ:\n%s\n%s\n%s", bodies[0], bodies[1], bodies[2])
	}
}

// TestTokenStaysHome: a token this server issued is never sent to any
// endpoint, even an allowed sendRpcEndpoint.
func TestTokenStaysHome(t *testing.T) {
	other := newListener(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Transaction simulation failed"}}`)
	})
	h := newHarness(t, harnessOptions{allow: []string{"http://127.0.0.1:*"}})
	tok := h.login(seedKey("alice"))
	r := h.do("POST", "/v1/transaction/send", map[string]any{"transactionBase64": "AQ==", "sendTo": "ephemeral", "sendRpcEndpoint": other.URL},
		"Authorization", "Bearer "+tok)
	apiError(t, r, 400, apierr.CodeRPC) // the endpoint refused the transaction
	_, inner, _ := strings.Cut(tok, ".")
	qs := other.queries()
	if len(qs) == 0 {
		t.Fatal("the send did not reach the endpoint")
	}
	for _, q := range qs {
		if strings.Contains(q, "token") || strings.Contains(q, inner) {
			t.Fatalf("token forwarded: %q", q)
		}
	}
}
