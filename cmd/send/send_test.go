package send

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/internal/clitest"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/outcome"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/submit"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

var sigLine = regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]{64,88}\n$`)

// unsigned compiles ixs for payer against l's latest confirmed blockhash.
func unsigned(t *testing.T, l *ledger.Ledger, payer solana.PublicKey, ixs ...txwire.Instruction) (*txwire.Transaction, ledger.BlockhashInfo) {
	t.Helper()
	bh, _ := l.LatestBlockhash(ledger.Confirmed)
	msg, err := txwire.Compile(payer, ixs, bh.Blockhash)
	if err != nil {
		t.Fatal(err)
	}
	return txwire.NewUnsigned(msg), bh
}

func status(t *testing.T, l *ledger.Ledger, sig string) *ledger.SignatureStatus {
	t.Helper()
	st, err := l.SignatureStatuses([]solana.Signature{solana.MustSignatureFromBase58(sig)})
	if err != nil {
		t.Fatal(err)
	}
	return st[0]
}

type fixture struct {
	n     *clitest.Node
	alice solana.PublicKey
	path  string
	env   map[string]string
}

func newFixture(t *testing.T) *fixture {
	n := clitest.StartNode(t)
	key := clitest.Key("alice")
	fx := &fixture{n: n, alice: clitest.Pub(key), path: filepath.Join(t.TempDir(), "alice.json"), env: n.Env()}
	if err := cmdutil.WriteKeypairFile(fx.path, key); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Base.Faucet().Airdrop(t.Context(), fx.alice, 5_000_000_000); err != nil {
		t.Fatal(err)
	}
	n.Settle(t)
	return fx
}

func TestSendBase(t *testing.T) {
	fx := newFixture(t)
	bob := clitest.Pub(clitest.Key("bob"))

	// An unsigned base64 build on stdin, signed here, sent and confirmed;
	// the layer is detected from the blockhash.
	tx, _ := unsigned(t, fx.n.Base, fx.alice, spl.SystemTransfer(fx.alice, bob, 1_000_000))
	r := clitest.Run(t, NewCmd, clitest.Options{Env: fx.env, Stdin: tx.Base64() + "\n"}, "-", "--sign", fx.path, "--confirm")
	if r.Code != 0 || !sigLine.MatchString(r.Out) || r.ErrOut != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.Code, r.Out, r.ErrOut)
	}
	if st := status(t, fx.n.Base, strings.TrimSpace(r.Out)); st == nil || st.Status < ledger.Confirmed || st.Err != nil {
		t.Fatalf("status %+v", st)
	}
	if a, _ := fx.n.Base.Account(bob, ledger.Confirmed); a == nil || a.Lamports != 1_000_000 {
		t.Fatalf("bob %+v", a)
	}

	// The JSON of a build names sendTo and the expiry; --output json is the
	// API's response; a terminal sees the confirmation on stderr.
	tx, bh := unsigned(t, fx.n.Base, fx.alice, spl.SystemTransfer(fx.alice, bob, 2_000_000))
	if err := tx.Sign(clitest.Key("alice")); err != nil {
		t.Fatal(err)
	}
	build := fmt.Sprintf(`{"kind":"transfer","transactionBase64":%q,"sendTo":"base","recentBlockhash":%q,"lastValidBlockHeight":%d}`,
		tx.Base64(), bh.Blockhash, bh.LastValidBlockHeight)
	r = clitest.Run(t, NewCmd, clitest.Options{Env: fx.env, Stdin: build}, "--confirm", "-o", "json")
	resp, oc := lastResult(t, r.Out)
	if r.Code != 0 || oc.Kind != outcome.KindTransaction || oc.Status != outcome.Settled {
		t.Fatalf("json: exit %d, %q %q", r.Code, r.Out, r.ErrOut)
	}
	if !resp.Confirmed || resp.SendTo != "base" || resp.ConfirmationRPCEndpoint != fx.n.BaseURL || resp.ConfirmationRequiresAuthToken {
		t.Errorf("response %+v", resp)
	}

	tx, _ = unsigned(t, fx.n.Base, fx.alice, spl.SystemTransfer(fx.alice, bob, 3_000_000))
	r = clitest.Run(t, NewCmd, clitest.Options{Env: fx.env, TTY: true}, tx.Base64(), "--sign", fx.path, "--confirm", "--send-to", "base")
	if r.Code != 0 || !sigLine.MatchString(r.Out) || !regexp.MustCompile(`✓ Confirmed on base \(\d+\.\ds\)`).MatchString(r.ErrOut) {
		t.Fatalf("tty: exit %d, %q %q", r.Code, r.Out, r.ErrOut)
	}

	// Without --confirm it returns once the node accepted it.
	tx, _ = unsigned(t, fx.n.Base, fx.alice, spl.SystemTransfer(fx.alice, bob, 4_000_000))
	r = clitest.Run(t, NewCmd, clitest.Options{Env: fx.env}, tx.Base64(), "--sign", fx.path, "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Out, `"confirmed": false`) {
		t.Fatalf("no confirm: exit %d, %q %q", r.Code, r.Out, r.ErrOut)
	}
}

func TestSendEphemeral(t *testing.T) {
	fx := newFixture(t)
	// A rollup transaction (fees are zero there) is detected from its
	// blockhash and carries the stored login token of its fee payer.
	home := t.TempDir()
	fx.env["FERRY_HOME"] = home
	f := &cmdutil.Factory{Getenv: func(k string) string { return fx.env[k] }}
	if _, err := f.SaveLoginToken("local", fx.alice.String(), cmdutil.StoredToken{Token: fx.alice.String() + ".secret-inner"}); err != nil {
		t.Fatal(err)
	}
	tx, _ := unsigned(t, fx.n.Ephemeral, fx.alice, spl.Memo("hello rollup", fx.alice))
	r := clitest.Run(t, NewCmd, clitest.Options{Env: fx.env}, tx.Base64(), "--sign", fx.path, "--confirm", "-o", "json")
	resp, _ := lastResult(t, r.Out)
	if r.Code != 0 {
		t.Fatalf("exit %d, %q %q", r.Code, r.Out, r.ErrOut)
	}
	if resp.SendTo != "ephemeral" || !resp.Confirmed || !resp.ConfirmationRequiresAuthToken || strings.Contains(resp.ConfirmationRPCEndpoint, "secret") {
		t.Errorf("response %+v", resp)
	}
	if st := status(t, fx.n.Ephemeral, resp.Signature); st == nil || st.Err != nil {
		t.Fatalf("ER status %+v", st)
	}
	found := false
	for _, q := range fx.n.EphemeralQueries() {
		if q == "token=secret-inner" {
			found = true
		}
	}
	if !found {
		t.Errorf("no request carried the inner token: %q", fx.n.EphemeralQueries())
	}
}

func TestSendFailures(t *testing.T) {
	fx := newFixture(t)
	bob := clitest.Pub(clitest.Key("bob"))
	tooMuch := func() string {
		tx, _ := unsigned(t, fx.n.Base, fx.alice, spl.SystemTransfer(fx.alice, bob, 100_000_000_000))
		return tx.Base64()
	}

	// Preflight catches it: nothing lands; the error names the program
	// error and shows the balance and the amount (exit 4).
	explained := "System program error ResultWithNegativeLamports (custom program error 0x1) in instruction 0: " +
		"the account has fewer lamports (SOL) than the instruction moves; " + fx.alice.String() + " has "
	r := clitest.Run(t, NewCmd, clitest.Options{Env: fx.env}, tooMuch(), "--sign", fx.path, "--confirm")
	if r.Code != 4 || r.Out != "" || !strings.HasPrefix(r.ErrOut, "error: RPC_ERROR: Failed to send transaction ("+explained) ||
		!strings.HasSuffix(r.ErrOut, " SOL, the instruction moves 100 SOL)\n") || strings.Count(r.ErrOut, "\n") != 1 {
		t.Errorf("preflight: exit %d, %q %q", r.Code, r.Out, r.ErrOut)
	}

	// Without preflight it lands and fails: the signature is printed, the
	// exit status is 4 and the error explains the TransactionError.
	r = clitest.Run(t, NewCmd, clitest.Options{Env: fx.env}, tooMuch(), "--sign", fx.path, "--confirm", "--skip-preflight")
	if r.Code != 4 || !sigLine.MatchString(r.Out) || !strings.HasPrefix(r.ErrOut, "error: TRANSACTION_FAILED: Transaction failed ("+explained) {
		t.Errorf("landed and failed: exit %d, %q %q", r.Code, r.Out, r.ErrOut)
	}

	tx, _ := unsigned(t, fx.n.Base, fx.alice, spl.SystemTransfer(fx.alice, bob, 1))
	for _, tc := range []struct {
		args  []string
		stdin string
		env   map[string]string
		code  int
		want  string
	}{
		{[]string{tx.Base64()}, "", fx.env, 3, "error: transaction is not signed by " + fx.alice.String() + ": pass --sign KEYPAIR"},
		{[]string{tx.Base64(), "--sign", filepath.Join(t.TempDir(), "none.json")}, "", fx.env, 3, "error: --sign: keypair "},
		{[]string{"bm90IGEgdHg="}, "", fx.env, 3, "error: INVALID_TRANSACTION: not a transaction"},
		{nil, `{"sendTo":"base"}`, fx.env, 3, "error: INVALID_TRANSACTION: not a transaction"},
		{[]string{tx.Base64(), "--send-to", "moon"}, "", fx.env, 2, "--send-to must be base or ephemeral"},
		{[]string{tx.Base64(), "--sign", fx.path, "--send-to", "base", "--send-rpc-endpoint", "http://127.0.0.1:9"}, "", fx.env, 3,
			"error: VALIDATION_ERROR: sendRpcEndpoint: sendRpcEndpoint can only be used when sendTo is ephemeral"},
		{[]string{tx.Base64(), "--sign", fx.path, "--send-to", "base"}, "", map[string]string{"FERRY_RPC_URL": "http://127.0.0.1:1"}, 6,
			"error: RPC_ERROR: cannot reach base RPC at http://127.0.0.1:1: is `ferry serve` running?"},
		{[]string{tx.Base64(), "a"}, "", fx.env, 2, `unexpected argument "a"`},
	} {
		r := clitest.Run(t, NewCmd, clitest.Options{Env: tc.env, Stdin: tc.stdin}, tc.args...)
		if r.Code != tc.code || !strings.Contains(r.ErrOut, tc.want) || strings.Count(r.ErrOut, "\n") != 1 {
			t.Errorf("%.60q: exit %d, stderr %q; want exit %d and %q", tc.args, r.Code, r.ErrOut, tc.code, tc.want)
		}
	}
}

func TestProgressLabel(t *testing.T) {
	st := &chainclient.SignatureStatus{ConfirmationStatus: chainclient.Processed}
	for _, tc := range []struct {
		pr   chainclient.ConfirmProgress
		want string
	}{
		{chainclient.ConfirmProgress{}, "Confirming on base: waiting for the transaction"},
		{chainclient.ConfirmProgress{Status: st, BlockHeight: 100, LastValidBlockHeight: 250}, "Confirming on base: processed, blockhash valid 150 more blocks"},
		{chainclient.ConfirmProgress{BlockHeight: 300, LastValidBlockHeight: 250}, "Confirming on base: waiting for the transaction, blockhash valid 0 more blocks"},
	} {
		if got := progressLabel("base", tc.pr); got != tc.want {
			t.Errorf("progressLabel(%+v) = %q, want %q", tc.pr, got, tc.want)
		}
	}
}

// lastResult decodes the last JSON line of send --confirm --output json:
// the API's response with the operation's outcome.
func lastResult(t *testing.T, out string) (submit.Response, outcome.Result) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last struct {
		Event string `json:"event"`
		submit.Response
		Outcome outcome.Result `json:"outcome"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Event != "result" {
		t.Fatalf("no result line in %q: %v", out, err)
	}
	for _, l := range lines[:len(lines)-1] {
		var ev outcome.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Event == "" {
			t.Fatalf("not an event line: %q", l)
		}
	}
	return last.Response, last.Outcome
}
