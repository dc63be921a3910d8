package confirm

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/internal/clitest"
)

// TestWatchGivesUpOnUnhealthyNode: --watch on a transaction that will
// never land stops as soon as a real node (rpcserver over a ledger)
// answers getHealth with "node unhealthy", naming the node (exit 6),
// instead of waiting for --timeout.
func TestWatchGivesUpOnUnhealthyNode(t *testing.T) {
	n := clitest.StartNode(t)
	var sig solana.Signature
	sig[0] = 7
	go func() {
		time.Sleep(300 * time.Millisecond)
		n.Ephemeral.Close() // its Health() now fails: getHealth answers -32005
	}()
	start := time.Now()
	r := clitest.Run(t, NewCmd, clitest.Options{Env: n.Env()}, "--watch", "--timeout", "50s", sig.String())
	if r.Code != 6 || !regexp.MustCompile(`^error: NODE_UNHEALTHY: gave up confirming \w+: the ephemeral node at http://127.0.0.1:\d+ reports it is unhealthy`).MatchString(r.ErrOut) {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.Code, r.Out, r.ErrOut)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatal("waited for the timeout instead of giving up")
	}
}

func TestStatusAndErrors(t *testing.T) {
	n := clitest.StartNode(t)
	sig, err := n.Base.Faucet().Airdrop(t.Context(), clitest.Pub(clitest.Key("alice")), 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	n.Settle(t)
	r := clitest.Run(t, NewCmd, clitest.Options{Env: n.Env()}, sig.String())
	if r.Code != 0 || !regexp.MustCompile(`^(confirmed|finalized) on base in slot \d+\n$`).MatchString(r.Out) {
		t.Fatalf("landed: exit %d, %q %q", r.Code, r.Out, r.ErrOut)
	}
	// --watch on a plain transaction: settled once confirmed.
	r = clitest.Run(t, NewCmd, clitest.Options{Env: n.Env()}, "--watch", sig.String(), "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Out, `"event":"result"`) || !strings.Contains(r.Out, `"status":"settled"`) {
		t.Fatalf("watch: exit %d, %q %q", r.Code, r.Out, r.ErrOut)
	}
	var unknown solana.Signature
	unknown[1] = 9
	r = clitest.Run(t, NewCmd, clitest.Options{Env: n.Env()}, unknown.String())
	if r.Code != 1 || r.Out != "not found\n" {
		t.Fatalf("unknown: exit %d, %q %q", r.Code, r.Out, r.ErrOut)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `"nope" is not a transaction signature`},
		{nil, "confirm takes one SIGNATURE"},
		{[]string{unknown.String(), "--layer", "moon"}, "--layer must be base or ephemeral"},
	} {
		r := clitest.Run(t, NewCmd, clitest.Options{Env: n.Env()}, tc.args...)
		if r.Code != 2 || !strings.Contains(r.ErrOut, tc.want) {
			t.Errorf("%q: exit %d, %q", tc.args, r.Code, r.ErrOut)
		}
	}
}
