package routes

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/spf13/cobra"

	"github.com/ferry-sh/ferry/cmd/cmdutil"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/iostreams"
	"github.com/ferry-sh/ferry/pkg/router"
)

// staticRouter is a router backend with fixed routes (or a fixed error).
type staticRouter struct {
	routes []chainclient.Route
	err    error
}

func (s staticRouter) Routes(context.Context) ([]chainclient.Route, error) { return s.routes, s.err }
func (s staticRouter) Identity(context.Context) (chainclient.Identity, error) {
	return chainclient.Identity{}, errors.New("unused")
}
func (s staticRouter) DelegationStatus(context.Context, solana.PublicKey) (chainclient.DelegationStatus, error) {
	return chainclient.DelegationStatus{}, errors.New("unused")
}
func (s staticRouter) BlockhashForAccounts(context.Context, []solana.PublicKey) (chainclient.Blockhash, error) {
	return chainclient.Blockhash{}, errors.New("unused")
}

var sample = []chainclient.Route{
	{Identity: solana.MustPublicKeyFromBase58("MUS3hc9TCw4cGC12vHNoYcCGzJG1txjgQLZWVoeNHNd"), FQDN: "https://devnet-us.magicblock.app", BaseFee: 0, BlockTimeMs: 100, CountryCode: "USA"},
	{Identity: solana.MustPublicKeyFromBase58("MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57"), FQDN: "https://devnet-as.magicblock.app", BaseFee: 0, BlockTimeMs: 50, CountryCode: "SGP"},
	{Identity: solana.MustPublicKeyFromBase58("MEUGGrYPxKk17hCr7wpT6s8dtNokZj5U2L57vjYMS8e"), FQDN: "https://devnet-eu.magicblock.app", BaseFee: 5, BlockTimeMs: 50, CountryCode: "DEU"},
}

func serveRouter(t *testing.T, b router.Backend) string {
	srv := httptest.NewServer(&router.Handler{Backend: b})
	t.Cleanup(srv.Close)
	return srv.URL
}

// run executes "ferry routes ARGS" against routerURL and returns the exit
// code, stdout and stderr.
func run(t *testing.T, routerURL string, tty bool, args ...string) (int, string, string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ios.SetTTY(false, tty, tty)
	env := map[string]string{"FERRY_HOME": t.TempDir(), "FERRY_ROUTER_URL": routerURL}
	f := &cmdutil.Factory{IO: ios, Getenv: func(k string) string { return env[k] }}
	root := &cobra.Command{Use: "ferry", SilenceUsage: true, SilenceErrors: true}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return cmdutil.UsageErrorf("%v", err) })
	f.AddGlobalFlags(root)
	root.AddCommand(NewCmd(f))
	root.SetArgs(append([]string{"routes"}, args...))
	root.SetOut(out)
	root.SetErr(errOut)
	code := cmdutil.ExitCode(root.Execute(), errOut)
	return code, out.String(), errOut.String()
}

func TestTable(t *testing.T) {
	url := serveRouter(t, staticRouter{routes: sample})
	code, out, errOut := run(t, url, true)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("got %d lines:\n%s", len(lines), out)
	}
	for _, h := range []string{"IDENTITY", "ENDPOINT", "BLOCK TIME", "BASE FEE", "COUNTRY"} {
		if !strings.Contains(lines[0], h) {
			t.Errorf("header %q missing from %q", h, lines[0])
		}
	}
	if !strings.Contains(lines[1], "─") {
		t.Errorf("no header rule: %q", lines[1])
	}
	// Fastest first; equal block times keep the router's order.
	for i, want := range []string{"MAS1Dt9q", "MEUGGrYP", "MUS3hc9T"} {
		row := lines[2+i]
		if !strings.HasPrefix(row, want) {
			t.Errorf("row %d = %q, want it to start with %s", i, row, want)
		}
	}
	if !strings.Contains(lines[2], "https://devnet-as.magicblock.app") || !strings.Contains(lines[2], "50 ms") || !strings.HasSuffix(lines[2], "SGP") {
		t.Errorf("row = %q", lines[2])
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("ANSI codes in a non-colour terminal's output: %q", out)
	}
}

func TestPipe(t *testing.T) {
	url := serveRouter(t, staticRouter{routes: sample})
	code, out, errOut := run(t, url, false)
	want := "MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57\thttps://devnet-as.magicblock.app\t50\t0\tSGP\n" +
		"MEUGGrYPxKk17hCr7wpT6s8dtNokZj5U2L57vjYMS8e\thttps://devnet-eu.magicblock.app\t50\t5\tDEU\n" +
		"MUS3hc9TCw4cGC12vHNoYcCGzJG1txjgQLZWVoeNHNd\thttps://devnet-us.magicblock.app\t100\t0\tUSA\n"
	if code != 0 || out != want || errOut != "" {
		t.Errorf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr: %q", code, out, want, errOut)
	}
}

func TestJSON(t *testing.T) {
	url := serveRouter(t, staticRouter{routes: sample[:2]})
	for _, tty := range []bool{true, false} {
		code, out, _ := run(t, url, tty, "--output", "json")
		want := `[
  {
    "identity": "MUS3hc9TCw4cGC12vHNoYcCGzJG1txjgQLZWVoeNHNd",
    "fqdn": "https://devnet-us.magicblock.app",
    "baseFee": 0,
    "blockTimeMs": 100,
    "countryCode": "USA"
  },
  {
    "identity": "MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57",
    "fqdn": "https://devnet-as.magicblock.app",
    "baseFee": 0,
    "blockTimeMs": 50,
    "countryCode": "SGP"
  }
]
`
		if code != 0 || out != want {
			t.Errorf("tty=%v: exit %d, stdout:\n%s", tty, code, out)
		}
	}
	url = serveRouter(t, staticRouter{})
	if code, out, _ := run(t, url, false, "-o", "json"); code != 0 || out != "[]\n" {
		t.Errorf("no routes: exit %d, %q", code, out)
	}
}

func TestEmpty(t *testing.T) {
	url := serveRouter(t, staticRouter{})
	code, out, errOut := run(t, url, true)
	if code != 0 || out != "" || errOut != "The router at "+url+" lists no rollup nodes.\n" {
		t.Errorf("tty: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = run(t, url, false)
	if code != 0 || out != "" || errOut != "" {
		t.Errorf("pipe: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	code, out, errOut := run(t, closed, true)
	if code != 6 || out != "" || errOut != "error: cannot reach router at "+closed+": is `ferry serve` running?\n" {
		t.Errorf("unreachable: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	url := serveRouter(t, staticRouter{err: errors.New("routing table not loaded")})
	code, _, errOut = run(t, url, false)
	if code != 1 || errOut != "error: getRoutes at "+url+": RPC -32604: routing table not loaded\n" {
		t.Errorf("router error: exit %d, stderr %q", code, errOut)
	}

	if code, _, errOut := run(t, url, false, "--output", "base64"); code != 2 || !strings.Contains(errOut, "--output must be one of text, json") {
		t.Errorf("bad --output: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := run(t, url, false, "extra"); code != 2 || !strings.Contains(errOut, `unexpected argument "extra"`) {
		t.Errorf("extra argument: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := run(t, "ftp://nope", false); code != 2 || !strings.Contains(errOut, "router URL") {
		t.Errorf("bad router URL: exit %d, stderr %q", code, errOut)
	}
}

func TestHelpHasExamples(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	cmd := NewCmd(&cmdutil.Factory{IO: ios, Getenv: func(string) string { return "" }})
	if !strings.Contains(cmd.Example, "ferry routes") {
		t.Errorf("no examples: %q", cmd.Example)
	}
	var buf bytes.Buffer
	cmd.SetOut(&buf)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil || !strings.Contains(buf.String(), "Examples:") {
		t.Errorf("help: %v\n%s", err, buf.String())
	}
}
