package airdrop

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/internal/clitest"
	"github.com/ferry-sh/ferry/pkg/ledger"
)

func TestParseSOL(t *testing.T) {
	for in, want := range map[string]uint64{
		"1": 1_000_000_000, "0.5": 500_000_000, ".25": 250_000_000, "2.": 2_000_000_000,
		"0.000000001": 1, " 3 ": 3_000_000_000, "18446744073.709551615": 18446744073709551615,
	} {
		if got, err := ParseSOL(in); err != nil || got != want {
			t.Errorf("ParseSOL(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "1e3", "0x10", "1/2", "0.0000000001", "18446744073.709551616", "one", "1.2.3"} {
		if got, err := ParseSOL(bad); err == nil {
			t.Errorf("ParseSOL(%q) = %d, want an error", bad, got)
		}
	}
	if s := FormatSOL(1_500_000_000); s != "1.5" {
		t.Errorf("FormatSOL = %q", s)
	}
}

var sigLine = regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]{64,88}\n$`)

func TestAirdrop(t *testing.T) {
	n := clitest.StartNode(t)
	dir := t.TempDir()
	alice := clitest.Key("alice")
	path := filepath.Join(dir, "alice.json")
	if err := cmdutil.WriteKeypairFile(path, alice); err != nil {
		t.Fatal(err)
	}
	env := n.Env()

	// A pipe gets the signature; the airdrop is confirmed when it returns.
	r := clitest.Run(t, NewCmd, clitest.Options{Env: env}, "2", path)
	if r.Code != 0 || !sigLine.MatchString(r.Out) || r.ErrOut != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.Code, r.Out, r.ErrOut)
	}
	if a, _ := n.Base.Account(clitest.Pub(alice), ledger.Confirmed); a == nil || a.Lamports != 2_000_000_000 {
		t.Fatalf("alice after the airdrop: %+v", a)
	}

	// The default recipient is the keypair; a terminal sees the balance.
	env["FERRY_KEYPAIR"] = path
	r = clitest.Run(t, NewCmd, clitest.Options{Env: env, TTY: true}, "0.5")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	for _, want := range []string{"✓ Airdropped 0.5 SOL to " + clitest.Pub(alice).String(), "signature", "balance", "2.5 SOL"} {
		if !strings.Contains(r.Out, want) {
			t.Errorf("tty output %q lacks %q", r.Out, want)
		}
	}
	if strings.Contains(r.Out, "\x1b[") {
		t.Errorf("no colour without a colour terminal, got %q", r.Out)
	}

	// JSON.
	bob := clitest.Pub(clitest.Key("bob")).String()
	r = clitest.Run(t, NewCmd, clitest.Options{Env: env}, "1", bob, "--output", "json")
	var res Result
	if r.Code != 0 || json.Unmarshal([]byte(r.Out), &res) != nil {
		t.Fatalf("exit %d, %q %q", r.Code, r.Out, r.ErrOut)
	}
	if res.Recipient != bob || res.Lamports != 1_000_000_000 || !res.Confirmed || res.Balance == nil || *res.Balance != 1_000_000_000 {
		t.Errorf("json result %+v", res)
	}
}

func TestAirdropErrors(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		args []string
		env  map[string]string
		code int
		want string
	}{
		{nil, nil, 2, "missing AMOUNT"},
		{[]string{"lots", "11111111111111111111111111111111"}, nil, 2, `AMOUNT: "lots" is not a decimal number of SOL`},
		{[]string{"1", "nobody"}, nil, 2, `"nobody" is neither a base58 address nor a keypair file`},
		{[]string{"1", "a", "b"}, nil, 2, `unexpected argument "b"`},
		{[]string{"1"}, map[string]string{"FERRY_HOME": home}, 1, "no address given and no keypair at " + filepath.Join(home, "id.json")},
		{[]string{"1", "11111111111111111111111111111111"}, map[string]string{"FERRY_RPC_URL": "http://127.0.0.1:1"}, 6,
			"error: cannot reach RPC at http://127.0.0.1:1: is `ferry serve` running?"},
		{[]string{"1", "11111111111111111111111111111111", "-o", "base64"}, nil, 2, "--output must be one of text, json"},
	} {
		r := clitest.Run(t, NewCmd, clitest.Options{Env: tc.env}, tc.args...)
		if r.Code != tc.code || !strings.Contains(r.ErrOut, tc.want) || strings.Count(r.ErrOut, "\n") != 1 || r.Out != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want exit %d and %q", tc.args, r.Code, r.ErrOut, r.Out, tc.code, tc.want)
		}
	}
}
