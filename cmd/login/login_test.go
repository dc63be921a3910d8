package login

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/internal/clitest"
	"github.com/ferry-sh/ferry/pkg/api"
	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/cluster"
)

func TestLogin(t *testing.T) {
	authSvc, err := auth.New(auth.Config{Key: clitest.Key("auth")})
	if err != nil {
		t.Fatal(err)
	}
	// devnet's rollup is a local node without an auth service (no
	// /auth routes): the API then issues the devnet token itself, and
	// nothing leaves the machine.
	rollup := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "POST is required", http.StatusMethodNotAllowed)
	}))
	t.Cleanup(rollup.Close)
	clusters, err := api.NewClusters(api.ClustersConfig{Overrides: cluster.Overrides{PerCluster: map[string]cluster.Overrides{
		"devnet": {Ephemeral: rollup.URL},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(api.Config{Clusters: clusters, Auth: authSvc, DisableBackgroundCrank: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)

	key := clitest.Key("alice")
	alice := clitest.Pub(key).String()
	path := filepath.Join(t.TempDir(), "alice.json")
	if err := cmdutil.WriteKeypairFile(path, key); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := map[string]string{"FERRY_HOME": home, "FERRY_API_URL": hs.URL}

	r := clitest.Run(t, NewCmd, clitest.Options{Env: env}, "--keypair", path)
	if r.Code != 0 || !strings.HasPrefix(r.Out, "✓ Logged in to local as "+alice+"\n") || r.ErrOut != "" {
		t.Fatalf("exit %d, %q %q", r.Code, r.Out, r.ErrOut)
	}
	tokens := filepath.Join(home, cmdutil.TokensFileName)
	st, err := os.Stat(tokens)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", st, err)
	}
	f := &cmdutil.Factory{Getenv: func(k string) string { return env[k] }}
	tok, ok := f.LoginToken("local", alice)
	if !ok || !strings.HasPrefix(tok.Token, alice+".") || tok.ExpiresAt == nil {
		t.Fatalf("stored token %+v %v", tok, ok)
	}
	if strings.Contains(r.Out, tok.Inner()) {
		t.Errorf("the token was printed: %q", r.Out)
	}
	if b, err := authSvc.Authenticate(auth.ParseHeader("Bearer " + tok.Token)); err != nil || b.Identity != alice {
		t.Errorf("the server does not accept the stored token: %+v %v", b, err)
	}

	// JSON names the file, never the token; a second wallet and cluster
	// are stored next to the first.
	env["FERRY_KEYPAIR"] = path
	r = clitest.Run(t, NewCmd, clitest.Options{Env: env}, "-o", "json", "--cluster", "devnet")
	var res Result
	if r.Code != 0 || json.Unmarshal([]byte(r.Out), &res) != nil || res.Cluster != "devnet" || res.Wallet != alice || res.TokenFile != tokens {
		t.Fatalf("json: %d %q %q", r.Code, r.Out, r.ErrOut)
	}
	if strings.Contains(r.Out, "token\"") {
		t.Errorf("json carries a token: %s", r.Out)
	}
	if _, ok := f.LoginToken("local", alice); !ok {
		t.Error("the local token was lost")
	}
	if _, ok := f.LoginToken("devnet", alice); !ok {
		t.Error("no devnet token")
	}
}

func TestLoginErrors(t *testing.T) {
	key := clitest.Key("alice")
	path := filepath.Join(t.TempDir(), "alice.json")
	if err := cmdutil.WriteKeypairFile(path, key); err != nil {
		t.Fatal(err)
	}
	notAPI := httptest.NewServer(clitestNotFound{})
	t.Cleanup(notAPI.Close)
	for _, tc := range []struct {
		args []string
		env  map[string]string
		code int
		want string
	}{
		{nil, map[string]string{"FERRY_KEYPAIR": filepath.Join(t.TempDir(), "none.json")}, 3, "login needs your keypair: keypair "},
		{[]string{"--keypair", path}, map[string]string{"FERRY_API_URL": "http://127.0.0.1:1"}, 6,
			"error: cannot reach payments API at http://127.0.0.1:1: is `ferry serve` running?"},
		{[]string{"--keypair", path}, map[string]string{"FERRY_API_URL": notAPI.URL}, 3, "error: NOT_FOUND: Route not found"},
		{[]string{"--keypair", path}, map[string]string{"FERRY_API_URL": "ftp://x"}, 2, "is not an http(s) URL"},
		{[]string{"extra"}, nil, 2, `unexpected argument "extra"`},
	} {
		r := clitest.Run(t, NewCmd, clitest.Options{Env: tc.env}, tc.args...)
		if r.Code != tc.code || !strings.Contains(r.ErrOut, tc.want) || strings.Count(r.ErrOut, "\n") != 1 || r.Out != "" {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tc.args, r.Code, r.ErrOut, tc.code, tc.want)
		}
	}
}
