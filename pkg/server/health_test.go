package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/ferry-sh/ferry/pkg/api"
	"github.com/ferry-sh/ferry/pkg/apierr"
)

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// running is a node served until stop is called.
type running struct {
	n    *Node
	info *Info
	stop func() error
}

func start(t *testing.T, o Options) *running {
	t.Helper()
	n, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan *Info, 1)
	go func() { done <- n.Run(ctx, func(i *Info) { ready <- i }) }()
	r := &running{n: n}
	select {
	case r.info = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("serve stopped early: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("serve did not start")
	}
	var once sync.Once
	var stopErr error
	r.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(30 * time.Second):
				stopErr = errors.New("serve did not stop")
			}
		})
		return stopErr
	}
	t.Cleanup(func() { r.stop() })
	return r
}

func request(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHaltedLedger: when a ledger cannot commit (the disk is full; here
// the ledger's failpoint), /health says halted and why, builds and sends
// (REST and MCP) answer 503 LEDGER_HALTED instead of transactions that
// could never land, reads still work, and ferry serve reports the change.
// A restart after the cause is fixed resumes with everything that was
// confirmed before.
func TestHaltedLedger(t *testing.T) {
	dir := t.TempDir()
	logs := &lockedBuffer{}
	changes := make(chan *api.HealthResponse, 4)
	o := fast(dir, "")
	o.HealthInterval = 10 * time.Millisecond
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	o.OnHealthChange = func(h *api.HealthResponse) { changes <- h }
	r := start(t, o)
	apiURL, rpcURL := r.info.URLs[KeyAPI], r.info.URLs[KeyRPC]
	alice := r.info.Demo.Wallets[0].Address

	// Before: healthy; a confirmed airdrop we will look for after the
	// restart.
	if st, body := request(t, "GET", apiURL+"/health", ""); st != 200 || body != `{"status":"ok"}` {
		t.Fatalf("health before: %d %s", st, body)
	}
	wallet := solana.NewWallet().PublicKey()
	c := rpc.New(rpcURL)
	sig, err := c.RequestAirdrop(context.Background(), wallet, 3_000_000_000, rpc.CommitmentConfirmed)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the airdrop to be confirmed", func() bool {
		st, err := c.GetSignatureStatuses(context.Background(), false, sig)
		return err == nil && st.Value[0] != nil && st.Value[0].ConfirmationStatus != rpc.ConfirmationStatusProcessed
	})
	deposit := `{"owner":"` + alice + `","amount":1000}`
	if st, body := request(t, "POST", apiURL+"/v1/spl/deposit", deposit); st != 200 {
		t.Fatalf("deposit before: %d %s", st, body)
	}

	// The disk fills.
	r.n.Local.Pair.Base.FailCommits(errors.New("write ledger page: no space left on device"))
	var health string
	waitFor(t, "/health to report the halt", func() bool {
		st, body := request(t, "GET", apiURL+"/health", "")
		health = body
		return st == http.StatusServiceUnavailable
	})
	if !strings.Contains(health, `"status":"halted"`) || !strings.Contains(health, "base ledger: ledger halted") ||
		!strings.Contains(health, "no space left on device") || !strings.Contains(health, `{"name":"ephemeral ledger","status":"ok"}`) {
		t.Fatalf("health: %s", health)
	}
	select {
	case h := <-changes:
		if h.Status != api.HealthHalted || !strings.Contains(h.Reason, "no space left") {
			t.Fatalf("readiness change %+v", h)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no readiness change reported")
	}
	if l := logs.String(); !strings.Contains(l, "not ready") || !strings.Contains(l, "no space left on device") {
		t.Fatalf("no readiness log line: %s", l)
	}
	// The chain node says so too.
	if st, _ := request(t, "GET", rpcURL+"/health", ""); st != http.StatusServiceUnavailable {
		t.Fatalf("base node /health %d", st)
	}

	// Builds and sends: 503 LEDGER_HALTED, on REST and MCP.
	for _, rq := range []struct{ path, body string }{
		{"/v1/spl/deposit", deposit},
		{"/v1/spl/transfer", `{"from":"` + alice + `","to":"` + wallet.String() + `","mint":"` + r.info.Demo.Mint + `","amount":1,"visibility":"public","fromBalance":"base","toBalance":"base"}`},
		{"/v1/spl/withdraw", `{"owner":"` + alice + `","mint":"` + r.info.Demo.Mint + `","amount":1}`},
		{"/v1/transaction/send", `{"transactionBase64":"AQ==","sendTo":"base"}`},
	} {
		st, body := request(t, "POST", apiURL+rq.path, rq.body)
		if st != http.StatusServiceUnavailable || !strings.Contains(body, `"code":"`+apierr.CodeLedgerHalted+`"`) || !strings.Contains(body, "base ledger") {
			t.Fatalf("%s while halted: %d %s", rq.path, st, body)
		}
	}
	st, body := request(t, "POST", r.info.MCP, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"spl.deposit","arguments":`+deposit+`}}`)
	if st != 200 || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, apierr.CodeLedgerHalted) {
		t.Fatalf("MCP deposit while halted: %d %s", st, body)
	}
	// Reads still answer from what is known.
	if st, body := request(t, "GET", apiURL+"/v1/spl/balance?address="+alice+"&mint="+r.info.Demo.Mint, ""); st != 200 {
		t.Fatalf("balance while halted: %d %s", st, body)
	}

	// The operator frees space and restarts: everything confirmed is
	// there, and the server builds again.
	if err := r.stop(); err != nil {
		t.Logf("stop of a halted node: %v", err)
	}
	r = start(t, fast(dir, ""))
	apiURL = r.info.URLs[KeyAPI]
	if st, body := request(t, "GET", apiURL+"/health", ""); st != 200 || body != `{"status":"ok"}` {
		t.Fatalf("health after restart: %d %s", st, body)
	}
	c = rpc.New(r.info.URLs[KeyRPC])
	bal, err := c.GetBalance(context.Background(), wallet, rpc.CommitmentConfirmed)
	if err != nil || bal.Value != 3_000_000_000 {
		t.Fatalf("the confirmed airdrop after restart: %+v %v", bal, err)
	}
	if st, body := request(t, "POST", apiURL+"/v1/spl/deposit", deposit); st != 200 {
		t.Fatalf("deposit after restart: %d %s", st, body)
	}
}
