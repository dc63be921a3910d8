package balance

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/internal/clitest"
	"github.com/ferry-sh/ferry/pkg/spl"
)

func TestBalance(t *testing.T) {
	n := clitest.StartNode(t)
	key := clitest.Key("alice")
	alice := clitest.Pub(key)
	path := filepath.Join(t.TempDir(), "alice.json")
	if err := cmdutil.WriteKeypairFile(path, key); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Base.Faucet().Airdrop(t.Context(), alice, 1_500_000_000); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Base.Faucet().MintTo(t.Context(), n.DemoMint, alice, 42_500_000); err != nil {
		t.Fatal(err)
	}
	n.Settle(t)
	env := n.Env()
	env["FERRY_KEYPAIR"] = path

	// A pipe: name<TAB>value lines, the demo mint by default.
	r := clitest.Run(t, NewCmd, clitest.Options{Env: env})
	want := "address\t" + alice.String() + "\ncluster\tlocal\nlamports\t1500000000\nmint\t" + n.DemoMint.String() +
		"\ndecimals\t6\nbase\t42500000\nephemeral\t0\n"
	if r.Code != 0 || r.Out != want || r.ErrOut != "" {
		t.Fatalf("exit %d, stdout %q (want %q), stderr %q", r.Code, r.Out, want, r.ErrOut)
	}

	// A terminal: whole tokens.
	r = clitest.Run(t, NewCmd, clitest.Options{Env: env, TTY: true}, alice.String())
	for _, w := range []string{alice.String() + " on local", "SOL        1.5", "base       42.5 (42500000 units)", "ephemeral  0 (0 units)"} {
		if !strings.Contains(r.Out, w) {
			t.Errorf("tty output %q lacks %q", r.Out, w)
		}
	}

	// JSON; a wallet without anything; another mint.
	bob := clitest.Pub(clitest.Key("bob"))
	r = clitest.Run(t, NewCmd, clitest.Options{Env: env}, bob.String(), "--mint", n.DemoMint.String(), "-o", "json")
	var res Result
	if r.Code != 0 || json.Unmarshal([]byte(r.Out), &res) != nil {
		t.Fatalf("json: %d %q %q", r.Code, r.Out, r.ErrOut)
	}
	if res.Lamports != 0 || res.Base != "0" || res.Ephemeral == nil || *res.Ephemeral != "0" || res.Decimals == nil || *res.Decimals != 6 ||
		res.ATA != spl.AssociatedTokenAddress(bob, n.DemoMint, spl.TokenProgramID).String() {
		t.Errorf("json %+v", res)
	}

	// A TEE rollup needs a login token: without one the private balance is
	// left out; with one it is read.
	r = clitest.Run(t, NewCmd, clitest.Options{Env: env}, "--cluster", "devnet-private", "--mint", n.DemoMint.String(), "-o", "json")
	res = Result{}
	if r.Code != 0 || json.Unmarshal([]byte(r.Out), &res) != nil || res.Ephemeral != nil ||
		res.EphemeralNote != "the devnet-private rollup needs a login token: run `ferry login --cluster devnet-private`" || res.Base != "42500000" {
		t.Fatalf("TEE without token: %d %q %q", r.Code, r.Out, r.ErrOut)
	}
	f := &cmdutil.Factory{Getenv: func(k string) string { return env[k] }}
	home := t.TempDir()
	env["FERRY_HOME"] = home
	if _, err := f.SaveLoginToken("devnet-private", alice.String(), cmdutil.StoredToken{Token: alice.String() + ".tee-token"}); err != nil {
		t.Fatal(err)
	}
	r = clitest.Run(t, NewCmd, clitest.Options{Env: env}, "--cluster", "devnet-private", "--mint", n.DemoMint.String())
	if r.Code != 0 || !strings.Contains(r.Out, "ephemeral\t0\n") {
		t.Fatalf("TEE with token: %d %q %q", r.Code, r.Out, r.ErrOut)
	}
	// (The rollup is asked only for a delegated eATA; the localnet
	// testscript covers that path.)
}

func TestBalanceErrors(t *testing.T) {
	n := clitest.StartNode(t)
	addr := "11111111111111111111111111111111"
	missing := clitest.Pub(clitest.Key("no such mint")).String()
	for _, tc := range []struct {
		args []string
		env  map[string]string
		code int
		want string
	}{
		{[]string{addr, "--mint", "x"}, n.Env(), 2, "--mint:"},
		{[]string{addr, "--mint", missing}, n.Env(), 3, "error: MINT_NOT_FOUND:"},
		{[]string{addr, "b"}, n.Env(), 2, `unexpected argument "b"`},
		{[]string{addr}, map[string]string{"FERRY_RPC_URL": "http://127.0.0.1:1"}, 6, "error: cannot reach base RPC at http://127.0.0.1:1: is `ferry serve` running?"},
		{[]string{addr, "--cluster", "moon"}, nil, 2, "--cluster:"},
	} {
		r := clitest.Run(t, NewCmd, clitest.Options{Env: tc.env}, tc.args...)
		if r.Code != tc.code || !strings.Contains(r.ErrOut, tc.want) || strings.Count(r.ErrOut, "\n") != 1 || r.Out != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want exit %d and %q", tc.args, r.Code, r.ErrOut, r.Out, tc.code, tc.want)
		}
	}
}
