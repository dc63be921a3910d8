package rpc

import (
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/iostreams"
	"github.com/ferry-sh/ferry/pkg/keyfile"
)

// node is a fake JSON-RPC endpoint answering every call with a fixed raw
// result or error object, recording the requests.
type node struct {
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []map[string]json.RawMessage
	tokens []string // each request's ?token=
	result string   // raw JSON
	rpcErr string   // raw JSON error object, if set
}

func newNode(t *testing.T, result string) *node {
	n := &node{result: result}
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req map[string]json.RawMessage
		json.Unmarshal(b, &req)
		n.mu.Lock()
		n.reqs = append(n.reqs, req)
		n.tokens = append(n.tokens, r.URL.Query().Get("token"))
		n.mu.Unlock()
		if n.rpcErr != "" {
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"error":` + n.rpcErr + `}`))
			return
		}
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"result":` + n.result + `}`))
	}))
	t.Cleanup(n.srv.Close)
	return n
}

func (n *node) last(t *testing.T) (method, params string) {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.reqs) == 0 {
		t.Fatal("no request received")
	}
	r := n.reqs[len(n.reqs)-1]
	return string(r["method"]), string(r["params"])
}

func (n *node) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.reqs)
}

type env map[string]string

// run executes "ferry rpc ARGS" and returns the exit code, stdout and
// stderr.
func run(t *testing.T, e env, tty bool, args ...string) (int, string, string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ios.SetTTY(false, tty, tty)
	if e["FERRY_HOME"] == "" {
		e["FERRY_HOME"] = t.TempDir()
	}
	f := &cmdutil.Factory{IO: ios, Getenv: func(k string) string { return e[k] }}
	root := &cobra.Command{Use: "ferry", SilenceUsage: true, SilenceErrors: true}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return cmdutil.UsageErrorf("%v", err) })
	f.AddGlobalFlags(root)
	root.AddCommand(NewCmd(f))
	root.SetArgs(append([]string{"rpc"}, args...))
	root.SetOut(out)
	root.SetErr(errOut)
	code := cmdutil.ExitCode(root.Execute(), errOut)
	return code, out.String(), errOut.String()
}

func TestParseParams(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, `[]`},
		{[]string{"123"}, `[123]`},
		{[]string{"-1.5e3", "0"}, `[-1.5e3,0]`},
		{[]string{"18446744073709551615"}, `[18446744073709551615]`},
		{[]string{"true", "false", "null"}, `[true,false,null]`},
		{[]string{"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"}, `["9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"]`},
		{[]string{"key", `{"commitment": "confirmed"}`}, `["key",{"commitment":"confirmed"}]`},
		{[]string{`{"commitment":"finalized"}`}, `[{"commitment":"finalized"}]`},
		{[]string{` [["sig"], {"searchTransactionHistory": true}]`}, `[["sig"], {"searchTransactionHistory": true}]`},
		{[]string{`[1]`, "x"}, `[[1],"x"]`},
		{[]string{`"123"`}, `["123"]`},
		{[]string{"01", "1e", "TRUE", "hello world", ""}, `["01","1e","TRUE","hello world",""]`},
	} {
		got, err := ParseParams(tc.args)
		if err != nil || string(got) != tc.want {
			t.Errorf("ParseParams(%q) = %s, %v; want %s", tc.args, got, err, tc.want)
		}
	}
	for _, bad := range [][]string{{`{bad`}, {`[1,`}, {"x", `[1,`}, {`"open`}, {`{"a":1} {"b":2}`}} {
		if got, err := ParseParams(bad); err == nil {
			t.Errorf("ParseParams(%q) = %s, want an error", bad, got)
		}
	}
}

func TestPipeOutputIsExactResult(t *testing.T) {
	n := newNode(t, `{"context": {"slot": 5}, "value": {"blockhash": "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N", "lastValidBlockHeight": 18446744073709551615}}`)
	e := env{"FERRY_RPC_URL": n.srv.URL}
	code, out, errOut := run(t, e, false, "getLatestBlockhash", `{"commitment":"confirmed"}`)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if want := `{"context":{"slot":5},"value":{"blockhash":"EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N","lastValidBlockHeight":18446744073709551615}}` + "\n"; out != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
	method, params := n.last(t)
	if method != `"getLatestBlockhash"` || params != `[{"commitment":"confirmed"}]` {
		t.Errorf("sent %s %s", method, params)
	}

	// --output json on a terminal is compact too.
	code, out, _ = run(t, e, true, "-o", "json", "getSlot")
	if code != 0 || !strings.HasPrefix(out, `{"context":{"slot":5}`) || strings.Count(out, "\n") != 1 {
		t.Errorf("json on a tty: exit %d, %q", code, out)
	}
	if _, params := n.last(t); params != `[]` {
		t.Errorf("no params sent as %s, want []", params)
	}
}

func TestTerminalOutputIsPretty(t *testing.T) {
	n := newNode(t, `{"identity":"mAGicPQYBMvcYveUZA5F5UNNwyHvfYh5xkLS2Fr1mev","n":[1,true,null]}`)
	code, out, _ := run(t, env{"FERRY_RPC_URL": n.srv.URL}, true, "getIdentity")
	want := `{
  "identity": "mAGicPQYBMvcYveUZA5F5UNNwyHvfYh5xkLS2Fr1mev",
  "n": [
    1,
    true,
    null
  ]
}
`
	if code != 0 || out != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", code, out, want)
	}
	n.result = `"ok"`
	if _, out, _ := run(t, env{"FERRY_RPC_URL": n.srv.URL}, true, "getHealth"); out != "\"ok\"\n" {
		t.Errorf("scalar result = %q", out)
	}
}

func TestRPCError(t *testing.T) {
	n := newNode(t, `null`)
	n.rpcErr = `{"code":-32602,"message":"Invalid param:\n WrongSize","data":{"x":1}}`
	code, out, errOut := run(t, env{"FERRY_RPC_URL": n.srv.URL}, false, "getBalance", "nope")
	if code != 1 || out != "" || errOut != "error: RPC -32602: Invalid param: WrongSize\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = run(t, env{"FERRY_RPC_URL": n.srv.URL}, true, "-o", "json", "getBalance", "nope")
	if code != 1 || errOut != "error: RPC -32602: Invalid param: WrongSize\n" {
		t.Errorf("json: exit %d, stderr %q", code, errOut)
	}
}

func TestTargets(t *testing.T) {
	base, eph, rtr, other := newNode(t, `1`), newNode(t, `2`), newNode(t, `3`), newNode(t, `4`)
	e := env{"FERRY_RPC_URL": base.srv.URL, "FERRY_EPHEMERAL_URL": eph.srv.URL, "FERRY_ROUTER_URL": rtr.srv.URL}
	for _, tc := range []struct {
		args []string
		want string
		node *node
	}{
		{[]string{"getSlot"}, "1\n", base},
		{[]string{"--ephemeral", "getSlot"}, "2\n", eph},
		{[]string{"getRoutes", "--router"}, "3\n", rtr},
		{[]string{"--endpoint", other.srv.URL, "getSlot"}, "4\n", other},
	} {
		before := tc.node.count()
		code, out, errOut := run(t, e, false, tc.args...)
		if code != 0 || out != tc.want || tc.node.count() != before+1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", tc.args, code, out, errOut)
		}
	}
	// A negative number after "--" is a parameter, not a flag.
	if code, _, errOut := run(t, e, false, "getBlocks", "--", "-1", "5"); code != 0 {
		t.Errorf("negative param: exit %d, %q", code, errOut)
	}
	if _, params := base.last(t); params != `[-1,5]` {
		t.Errorf("params = %s", params)
	}
	// --url selects the base RPC like everywhere else.
	if code, out, _ := run(t, env{}, false, "--url", other.srv.URL, "getSlot"); code != 0 || out != "4\n" {
		t.Errorf("--url: exit %d, %q", code, out)
	}
}

func TestUsageErrors(t *testing.T) {
	n := newNode(t, `1`)
	e := env{"FERRY_RPC_URL": n.srv.URL}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{nil, "missing METHOD"},
		{[]string{"--router", "--ephemeral", "getSlot"}, "mutually exclusive"},
		{[]string{"getSlot", "{bad"}, "parameter 1"},
		{[]string{"getSlot", "[1,"}, "not a valid JSON array"},
		{[]string{"--endpoint", "localhost:8899", "getSlot"}, "not an http(s) URL"},
		{[]string{"-o", "base64", "getSlot"}, "--output must be one of"},
		{[]string{"--nope", "getSlot"}, "unknown flag"},
	} {
		code, _, errOut := run(t, e, false, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.msg)
		}
	}
	if n.count() != 0 {
		t.Errorf("%d requests sent for invalid invocations", n.count())
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	code, _, errOut := run(t, env{"FERRY_RPC_URL": "http://" + addr}, false, "getSlot")
	if code != 6 || errOut != "error: cannot reach RPC at http://"+addr+": is `ferry serve` running?\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = run(t, env{}, false, "--endpoint", "http://"+addr+"/?token=hunter2", "getSlot")
	if code != 6 || strings.Contains(errOut, "hunter2") || !strings.Contains(errOut, "token=REDACTED") {
		t.Errorf("token: exit %d, stderr %q", code, errOut)
	}
}

func TestHelpHasExamples(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	cmd := NewCmd(&cmdutil.Factory{IO: ios, Getenv: func(string) string { return "" }})
	for _, want := range []string{"ferry rpc getSlot", "--ephemeral", "--router", "--endpoint"} {
		if !strings.Contains(cmd.Example, want) {
			t.Errorf("examples lack %q", want)
		}
	}
}

// TestAuthToken: which bearer token goes out as ?token=, and that it
// never shows in output.
func TestAuthToken(t *testing.T) {
	base, eph := newNode(t, `1`), newNode(t, `2`)
	home := t.TempDir()
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	wallet := cmdutil.PublicKeyOf(key).String()
	keyPath := filepath.Join(home, "id.json")
	if err := keyfile.Write(keyPath, key); err != nil {
		t.Fatal(err)
	}
	e := func(extra ...string) env {
		m := env{"FERRY_HOME": home, "FERRY_KEYPAIR": keyPath, "FERRY_RPC_URL": base.srv.URL, "FERRY_EPHEMERAL_URL": eph.srv.URL}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	f := &cmdutil.Factory{Getenv: func(k string) string { return e()[k] }}
	if _, err := f.SaveLoginToken("local", wallet, cmdutil.StoredToken{Token: wallet + ".stored-secret"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  env
		args []string
		node *node
		want string
	}{
		{"base: none, even with a stored login", e(), []string{"getSlot"}, base, ""},
		{"flag", e(), []string{"--auth-token", "flag-secret", "getSlot"}, base, "flag-secret"},
		{"env, bound form sends the inner token", e("FERRY_AUTH_TOKEN", wallet+".env-secret"), []string{"getSlot"}, base, "env-secret"},
		{"ephemeral: the stored login", e(), []string{"--ephemeral", "getSlot"}, eph, "stored-secret"},
		{"ephemeral: the flag wins", e(), []string{"--ephemeral", "--auth-token", "flag-secret", "getSlot"}, eph, "flag-secret"},
		{"ephemeral: no keypair, no token", e("FERRY_KEYPAIR", filepath.Join(home, "missing.json")), []string{"--ephemeral", "getSlot"}, eph, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.node.count()
			code, out, errOut := run(t, tc.env, false, tc.args...)
			if code != 0 || tc.node.count() != before+1 {
				t.Fatalf("exit %d, %d requests; stderr %q", code, tc.node.count()-before, errOut)
			}
			tc.node.mu.Lock()
			got := tc.node.tokens[len(tc.node.tokens)-1]
			tc.node.mu.Unlock()
			if got != tc.want {
				t.Errorf("?token=%q, want %q", got, tc.want)
			}
			if strings.Contains(out+errOut, "secret") {
				t.Errorf("token printed: %q %q", out, errOut)
			}
		})
	}

	// An unreachable endpoint's error names it without the token.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	code, _, errOut := run(t, e(), false, "--endpoint", dead.URL, "--auth-token", "dead-secret", "getSlot")
	if code == 0 || strings.Contains(errOut, "dead-secret") || !strings.Contains(errOut, strings.TrimPrefix(dead.URL, "http://")) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
