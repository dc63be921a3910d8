// Package clitest helps the command packages' tests: it runs one ferry
// subcommand with a test Factory, and serves an in-memory base ledger and
// ephemeral ledger over HTTP, with the local faucet methods of ferry serve.
package clitest

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/iostreams"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// Result is the outcome of one command.
type Result struct {
	Code        int
	Out, ErrOut string
}

// Options configure Run.
type Options struct {
	// Env is the command's environment; FERRY_HOME defaults to a fresh
	// temporary directory.
	Env map[string]string
	// TTY makes stdout and stderr terminals.
	TTY bool
	// Stdin is the command's input (not a terminal).
	Stdin string
}

// Run executes "ferry NAME ARGS" for the subcommand newCmd builds, with the
// global flags and ferry's error reporting, and returns its exit code and
// output.
func Run(t testing.TB, newCmd func(*cmdutil.Factory) *cobra.Command, o Options, args ...string) Result {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	ios.SetTTY(false, o.TTY, o.TTY)
	in.WriteString(o.Stdin)
	env := map[string]string{}
	for k, v := range o.Env {
		env[k] = v
	}
	if env["FERRY_HOME"] == "" {
		env["FERRY_HOME"] = t.TempDir()
	}
	f := &cmdutil.Factory{IO: ios, Getenv: func(k string) string { return env[k] }}
	root := &cobra.Command{Use: "ferry", SilenceUsage: true, SilenceErrors: true,
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			ios.SetNoColor(f.NoColor)
			return f.CheckJSONFlags(c.Flags().Changed("output"))
		}}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return cmdutil.UsageErrorf("%v", err) })
	f.AddGlobalFlags(root)
	sub := newCmd(f)
	root.AddCommand(sub)
	root.SetArgs(append([]string{sub.Name()}, args...))
	root.SetIn(ios.In)
	root.SetOut(out)
	root.SetErr(errOut)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := cmdutil.Report(root.ExecuteContext(ctx), errOut, f.JSON())
	return Result{Code: code, Out: out.String(), ErrOut: errOut.String()}
}

// Key returns a deterministic keypair for label.
func Key(label string) ed25519.PrivateKey {
	s := sha256.Sum256([]byte("ferry-clitest:" + label))
	return ed25519.NewKeyFromSeed(s[:])
}

// Pub is the public key of k.
func Pub(k ed25519.PrivateKey) solana.PublicKey { return solana.PublicKeyFromBytes(k[32:]) }

// Node is a base ledger and an ephemeral ledger served over HTTP. The base
// node has the faucet methods; DemoMint is its default mint.
type Node struct {
	Base, Ephemeral       *ledger.Ledger
	BaseURL, EphemeralURL string
	BaseRPC               *rpcserver.Handler
	DemoMint              solana.PublicKey

	mu        sync.Mutex
	erQueries []string
}

// EphemeralQueries returns the raw query strings of the requests the
// ephemeral node served (where a ?token= would show).
func (n *Node) EphemeralQueries() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.erQueries...)
}

// Env returns the environment that points the CLI's local cluster at the
// node.
func (n *Node) Env() map[string]string {
	return map[string]string{"FERRY_RPC_URL": n.BaseURL, "FERRY_EPHEMERAL_URL": n.EphemeralURL}
}

// StartNode starts a Node with fast slots and a 6-decimals demo mint.
func StartNode(t testing.TB) *Node {
	t.Helper()
	n := &Node{}
	var err error
	n.Base, err = ledger.Open(ledger.Config{Name: "clitest-base", SlotDuration: 10 * time.Millisecond, FinalityDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Base.Close() })
	n.Ephemeral, err = ledger.Open(ledger.Config{Name: "clitest-er", SlotDuration: 10 * time.Millisecond, FinalityDepth: -1,
		LamportsPerSignature: -1, AllowUnfundedFeePayers: true, Identity: Key("er identity")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Ephemeral.Close() })
	n.BaseRPC = rpcserver.New(n.Base, rpcserver.Options{})
	n.BaseRPC.EnableFaucet(rpcserver.FaucetOptions{DefaultMint: func() solana.PublicKey { return n.DemoMint }})
	bs := httptest.NewServer(n.BaseRPC)
	t.Cleanup(bs.Close)
	erH := rpcserver.New(n.Ephemeral, rpcserver.Options{})
	es := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		n.erQueries = append(n.erQueries, r.URL.RawQuery)
		n.mu.Unlock()
		erH.ServeHTTP(w, r)
	}))
	t.Cleanup(es.Close)
	n.BaseURL, n.EphemeralURL = bs.URL, es.URL
	n.DemoMint, _, err = n.Base.Faucet().CreateMint(context.Background(), ledger.MintOptions{Decimals: 6, Key: Key("demo mint")})
	if err != nil {
		t.Fatal(err)
	}
	n.Settle(t)
	return n
}

// Settle waits until everything processed so far is confirmed on both
// ledgers.
func (n *Node) Settle(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, l := range []*ledger.Ledger{n.Base, n.Ephemeral} {
		if err := l.WaitForSlot(ctx, l.Slot(ledger.Processed), ledger.Confirmed); err != nil {
			t.Fatal(err)
		}
	}
}
