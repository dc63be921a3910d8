//go:build browser

// The browser test drives the explorer page in headless Chromium (Debian's
// chromium package; .ci/run installs it and runs this file with
// `go test -tags browser ./pkg/explorer/`). It is behind the build tag so
// that `go test ./...` needs no browser.
//
// FERRY_CHROMIUM names the browser binary (default: chromium on PATH);
// FERRY_ARTIFACTS the folder for the screenshots (default:
// testdata/explorer/out at the repository root, gitignored).

package explorer_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/keyfile"
)

// repoRoot is the module's root (this package is pkg/explorer).
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

// cli runs ferry commands against one `ferry serve`.
type cli struct {
	t    *testing.T
	bin  string
	env  []string
	urls map[string]string
}

func (c *cli) run(stdin []byte, args ...string) []byte {
	c.t.Helper()
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		c.t.Fatalf("ferry %s: %v\n%s%s", strings.Join(args, " "), err, out.Bytes(), errb.Bytes())
	}
	return out.Bytes()
}

// pipe runs `ferry BUILD... | ferry send SEND...` and returns send's output.
func (c *cli) pipe(build []string, send ...string) []byte {
	c.t.Helper()
	return c.run(c.run(nil, build...), append([]string{"send"}, send...)...)
}

// startServe builds ferry and starts `ferry serve` on free ports.
func startServe(t *testing.T) (*cli, string) {
	t.Helper()
	work := t.TempDir()
	bin := filepath.Join(work, "ferry")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data, addr := filepath.Join(work, "data"), filepath.Join(work, "addr.json")
	serve := exec.Command(bin, "serve", "--data", data, "--addr-file", addr,
		"--api-addr", "127.0.0.1:0", "--rpc-addr", "127.0.0.1:0", "--ephemeral-addr", "127.0.0.1:0", "--router-addr", "127.0.0.1:0")
	logf, err := os.Create(filepath.Join(work, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	serve.Stdout, serve.Stderr = logf, logf
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- serve.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			serve.Process.Kill()
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("ferry serve log:\n%s", b)
		}
	})
	var urls map[string]string
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(addr); err == nil && json.Unmarshal(b, &urls) == nil && urls["api"] != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ferry serve wrote no address file")
		}
		time.Sleep(100 * time.Millisecond)
	}
	home := filepath.Join(work, "home")
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "NO_COLOR=1",
		"FERRY_API_URL="+urls["api"], "FERRY_RPC_URL="+urls["rpc"], "FERRY_EPHEMERAL_URL="+urls["ephemeral"], "FERRY_ROUTER_URL="+urls["router"])
	return &cli{t: t, bin: bin, env: env, urls: urls}, filepath.Join(data, "wallets")
}

func artifacts(t *testing.T) string {
	dir := os.Getenv("FERRY_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(repoRoot(t), "testdata", "explorer", "out")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBrowser opens the overview, makes a deposit and a private split
// transfer with the CLI and watches the page show them (the deposit, the
// queued payouts with their due times, their settlement) without a
// reload; then it opens the transaction view of a failed transfer and
// reads the decoded error. Screenshots of each view go to the artifacts
// folder.
func TestBrowser(t *testing.T) {
	c, wallets := startServe(t)
	alice, bob := filepath.Join(wallets, "alice.json"), filepath.Join(wallets, "bob.json")
	aliceKey, err := keyfile.Read(alice)
	if err != nil {
		t.Fatal(err)
	}
	aliceAddr := solana.PublicKeyFromBytes(aliceKey.Public().(ed25519.PublicKey)).String()
	mint := strings.TrimSpace(string(c.run(nil, "balance", alice, "--jq", ".mint")))
	out := artifacts(t)

	browser := os.Getenv("FERRY_CHROMIUM")
	if browser == "" {
		browser = "chromium"
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	defer cancel()
	var consoleErrors []string
	if err := listenConsole(ctx, &consoleErrors); err != nil {
		t.Fatalf("start %s: %v", browser, err)
	}

	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(out, "explorer-"+name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// waitText waits until the element sel (in the page) contains want.
	waitText := func(what, sel, want string) {
		t.Helper()
		js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, want)
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(90*time.Second))); err != nil {
			got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {textContent: "(no element)"}).textContent`, sel)))
			t.Fatalf("%s: %s never contained %q (it reads %q): %v; console: %v", what, sel, want, got, err, consoleErrors)
		}
	}
	waitJS := func(what, js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(90*time.Second))); err != nil {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('view').innerText`))
			t.Fatalf("%s: %v\npage:\n%s\nconsole: %v", what, err, body, consoleErrors)
		}
	}

	// Overview: both chains live, the demo wallets with their balances.
	row := fmt.Sprintf(`tr[data-address=%q]`, aliceAddr)
	if err := chromedp.Do(ctx, chromedp.Navigate(c.urls["api"]+"/explorer"), eval(`window.__sameDocument = true`)); err != nil {
		t.Fatal(err)
	}
	waitText("alice's base balance", row+" .base-token", "1000")
	waitJS("live slots", `(() => ['base', 'ephemeral'].every((l) => /^[0-9]+$/.test(document.querySelector('#chain-' + l + ' .slot').textContent)))()`)
	waitText("live status", "#status", "live")

	// A deposit with the CLI: the page shows it without a reload, the
	// rollup balance as private to anyone but alice.
	c.pipe([]string{"deposit", "--sign", alice, "--amount", "50", "--ui", "--output", "json"}, "--confirm")
	waitText("alice's base balance after the deposit", row+" .base-token", "950")
	waitText("alice's rollup balance, private", row+" .eph-token", "private")
	shot("overview")
	// Logged in as alice (a token pasted in the page), her rollup balance.
	token := loginToken(t, c.urls["api"], alice)
	if err := chromedp.Do(ctx, chromedp.Click(`details.card summary`), chromedp.SendKeys(`#token-input`, token), chromedp.Click(`#login-form button[type="submit"]`)); err != nil {
		t.Fatal(err)
	}
	waitText("alice's rollup balance, read as alice", row+" .eph-token", "50")
	shot("overview-owner")

	// A private split transfer with the CLI, from alice's rollup balance
	// to bob on base: the rollup view shows its queued pieces with their
	// due times, then their payouts, live.
	if err := chromedp.Do(ctx, eval(`location.hash = '#/rollup'`)); err != nil {
		t.Fatal(err)
	}
	waitText("rollup view", "#queues", "Queue")
	sent := make(chan []byte, 1)
	go func() {
		sent <- c.pipe([]string{"transfer", "--sign", alice, "--to", bob, "--mint", mint, "--amount", "10", "--ui",
			"--visibility", "private", "--from-balance", "ephemeral", "--to-balance", "base", "--split", "2",
			"--min-delay-ms", "6000", "--max-delay-ms", "9000", "--output", "json"}, "--confirm")
	}()
	waitJS("the queued transfer", `document.querySelectorAll('.transfer .piece[data-state="queued"]').length === 2`)
	dues, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.transfer .piece td.due')].map((e) => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(dues) != 2 || !strings.Contains(dues[0], "in ") {
		t.Fatalf("due times of the queued pieces: %q", dues)
	}
	shot("rollup-queued")
	waitJS("the payouts", `document.querySelectorAll('.transfer .piece[data-state="paid"]').length === 2 && document.querySelector('.transfer').dataset.state === 'paid'`)
	waitText("the settlement history", "#settlements", "payout: 5000000")
	shot("rollup-paid")
	select {
	case <-sent:
	case <-time.After(2 * time.Minute):
		t.Fatal("ferry send --confirm of the transfer did not finish")
	}

	// A failed transfer (more tokens than alice holds, sent without
	// preflight so that it lands): its transaction view shows the decoded
	// program error and the hint `ferry send` gives.
	sig := strings.TrimSpace(string(c.pipe([]string{"transfer", "--sign", alice, "--to", bob, "--mint", mint, "--amount", "5000", "--ui",
		"--visibility", "public", "--from-balance", "base", "--to-balance", "base", "--output", "json"}, "--skip-preflight")))
	if err := chromedp.Do(ctx, eval(`document.getElementById('search-input').value = `+jsString(sig)), chromedp.Click(`#search button`)); err != nil {
		t.Fatal(err)
	}
	waitText("the decoded error", "#tx-error", "SPL Token program error InsufficientFunds (custom program error 0x1) in instruction 0")
	waitText("the funds hint", "#tx-error .hint", "holds 950")
	waitText("the explanation", "#tx-explanation", "SPL Token program Transfer")
	shot("tx-failed")

	// The account view of alice: her private balance, delegation, history.
	if err := chromedp.Do(ctx, eval(`location.hash = '#/account/`+aliceAddr+`'`)); err != nil {
		t.Fatal(err)
	}
	waitText("alice's account", "#view", "Private balances on the rollup")
	shot("account")

	// Pinning an address (kept in localStorage) adds it to the overview.
	validator := strings.TrimSpace(string(c.run(nil, "rpc", "--ephemeral", "getIdentity", "--jq", ".identity")))
	if err := chromedp.Do(ctx, eval(`location.hash = '#/account/`+validator+`'`)); err != nil {
		t.Fatal(err)
	}
	waitText("the validator's account", "#pin", "Pin to overview")
	if err := chromedp.Do(ctx, eval(`document.getElementById('pin').click()`), eval(`location.hash = '#/'`)); err != nil {
		t.Fatal(err)
	}
	waitText("the pinned validator on the overview", fmt.Sprintf(`tr[data-address=%q] .base-sol`, validator), "SOL")
	pinned, err := chromedp.Run(ctx, chromedp.Evaluate[string](`localStorage.getItem('ferry.explorer.pins')`))
	if err != nil || pinned != `["`+validator+`"]` {
		t.Fatalf("pins in localStorage: %q %v", pinned, err)
	}

	// Every view changed without a reload; the page logged no error.
	if same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__sameDocument === true`)); err != nil || !same {
		t.Fatalf("the page reloaded (%v)", err)
	}
	// On a phone-sized screen.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), eval(`location.hash = '#/'`)); err != nil {
		t.Fatal(err)
	}
	waitText("overview on a phone", row+" .base-token", "9")
	shot("overview-phone")
	if len(consoleErrors) > 0 {
		t.Fatalf("console errors: %q", consoleErrors)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// eval evaluates a script whose value does not matter.
func eval(js string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[any](js)(ctx, t)
		return chromedp.Void{}, err
	}
}

// listenConsole records the page's uncaught exceptions, console errors
// and browser log errors (a CSP violation, a failed request). It starts
// the browser.
func listenConsole(ctx context.Context, errs *[]string) error {
	var mu sync.Mutex
	add := func(s string) {
		mu.Lock()
		*errs = append(*errs, s)
		mu.Unlock()
	}
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *cdpruntime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			add(fmt.Sprintf("exception: %s (%s:%d)", msg, d.URL, d.LineNumber))
		case *cdpruntime.EventConsoleAPICalled:
			if ev.Type == cdpruntime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				add("console: " + strings.Join(parts, " "))
			}
		case *cdplog.EventEntryAdded:
			if ev.Entry != nil && ev.Entry.Level == cdplog.EntryLevelError {
				add("log: " + ev.Entry.Text + " " + ev.Entry.URL)
			}
		}
	})
	if err != nil {
		return err
	}
	_, err = chromedp.Call(ctx, cdplog.Enable, cdp.Empty{})
	return err
}
