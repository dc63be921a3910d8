package mint

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/internal/clitest"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
)

var (
	sigLine  = regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]{64,88}\n$`)
	addrLine = regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]{32,44}\n$`)
)

func tokens(t *testing.T, n *clitest.Node, owner, mint solana.PublicKey) uint64 {
	t.Helper()
	a, _ := n.Base.Account(spl.AssociatedTokenAddress(owner, mint, spl.TokenProgramID), ledger.Confirmed)
	if a == nil {
		return 0
	}
	return spl.TokenAmountOf(a.Data)
}

func TestMint(t *testing.T) {
	n := clitest.StartNode(t)
	alice := clitest.Key("alice")
	path := filepath.Join(t.TempDir(), "alice.json")
	if err := cmdutil.WriteKeypairFile(path, alice); err != nil {
		t.Fatal(err)
	}
	env := n.Env()
	env["FERRY_KEYPAIR"] = path

	// The demo mint, to the default keypair; confirmed on return.
	r := clitest.Run(t, NewCmd, clitest.Options{Env: env}, "100000000")
	if r.Code != 0 || !sigLine.MatchString(r.Out) {
		t.Fatalf("exit %d, %q %q", r.Code, r.Out, r.ErrOut)
	}
	if got := tokens(t, n, clitest.Pub(alice), n.DemoMint); got != 100_000_000 {
		t.Fatalf("alice has %d", got)
	}

	// A new mint, then to an address; a terminal sees whole tokens.
	r = clitest.Run(t, NewCmd, clitest.Options{Env: env}, "--create", "--decimals", "2")
	if r.Code != 0 || !addrLine.MatchString(r.Out) {
		t.Fatalf("create: exit %d, %q %q", r.Code, r.Out, r.ErrOut)
	}
	mint := solana.MustPublicKeyFromBase58(strings.TrimSpace(r.Out))
	bob := clitest.Pub(clitest.Key("bob"))
	r = clitest.Run(t, NewCmd, clitest.Options{Env: env, TTY: true}, "250", bob.String(), "--mint", mint.String())
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	if want := "✓ Minted 2.5 (250 units) of " + mint.String() + " to " + bob.String(); !strings.Contains(r.Out, want) {
		t.Errorf("tty output %q lacks %q", r.Out, want)
	}
	if got := tokens(t, n, bob, mint); got != 250 {
		t.Fatalf("bob has %d", got)
	}

	// JSON, both forms.
	r = clitest.Run(t, NewCmd, clitest.Options{Env: env}, "--create", "-o", "json")
	var cm struct {
		Mint     string `json:"mint"`
		Decimals int    `json:"decimals"`
	}
	if r.Code != 0 || json.Unmarshal([]byte(r.Out), &cm) != nil || cm.Decimals != 6 {
		t.Fatalf("create json: %d %q %q", r.Code, r.Out, r.ErrOut)
	}
	r = clitest.Run(t, NewCmd, clitest.Options{Env: env}, "7", "-o", "json")
	var res Result
	if r.Code != 0 || json.Unmarshal([]byte(r.Out), &res) != nil {
		t.Fatalf("json: %d %q %q", r.Code, r.Out, r.ErrOut)
	}
	if res.Mint != n.DemoMint.String() || res.Amount != "7" || res.Balance != "100000007" || res.Decimals == nil || *res.Decimals != 6 ||
		res.ATA != spl.AssociatedTokenAddress(clitest.Pub(alice), n.DemoMint, spl.TokenProgramID).String() {
		t.Errorf("json %+v", res)
	}

	// A mint the faucet does not control.
	other := clitest.Pub(clitest.Key("other"))
	foreign, _, err := n.Base.Faucet().CreateMint(t.Context(), ledger.MintOptions{Authority: &other})
	if err != nil {
		t.Fatal(err)
	}
	r = clitest.Run(t, NewCmd, clitest.Options{Env: env}, "1", "--mint", foreign.String())
	if r.Code != 1 || !strings.Contains(r.ErrOut, "error: RPC -32602: Invalid param: the faucet") {
		t.Errorf("foreign mint: %d %q", r.Code, r.ErrOut)
	}
}

func TestMintErrors(t *testing.T) {
	// A node without the faucet methods (a real cluster).
	n := clitest.StartNode(t)
	plain := map[string]string{"FERRY_RPC_URL": n.EphemeralURL}
	addr := "11111111111111111111111111111111"
	for _, tc := range []struct {
		args []string
		env  map[string]string
		code int
		want string
	}{
		{nil, nil, 2, "missing AMOUNT"},
		{[]string{"1.5", addr}, nil, 2, "AMOUNT must be a positive whole number"},
		{[]string{"0", addr}, nil, 2, "AMOUNT must be a positive whole number"},
		{[]string{"--create", "5"}, nil, 2, "--create takes no arguments"},
		{[]string{"5", addr, "--decimals", "3"}, nil, 2, "--decimals and --token-2022 only apply with --create"},
		{[]string{"--create", "--mint", addr}, nil, 2, "--create and --mint are exclusive"},
		{[]string{"--create", "--decimals", "30"}, n.Env(), 2, "--decimals must be between 0 and 18"},
		{[]string{"5", addr, "--mint", "nope"}, nil, 2, "--mint:"},
		{[]string{"5", addr}, plain, 1, "has no test-token faucet (ferry_mintTo): ferry mint works against \"ferry serve\" only"},
		{[]string{"5", addr}, map[string]string{"FERRY_RPC_URL": "http://127.0.0.1:1"}, 6, "cannot reach RPC at http://127.0.0.1:1: is `ferry serve` running?"},
	} {
		r := clitest.Run(t, NewCmd, clitest.Options{Env: tc.env}, tc.args...)
		if r.Code != tc.code || !strings.Contains(r.ErrOut, tc.want) || strings.Count(r.ErrOut, "\n") != 1 || r.Out != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want exit %d and %q", tc.args, r.Code, r.ErrOut, r.Out, tc.code, tc.want)
		}
	}
}
