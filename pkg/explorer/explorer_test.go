package explorer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/explorer"
	"github.com/ferry-sh/ferry/pkg/keyfile"
	"github.com/ferry-sh/ferry/pkg/server"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// serve runs ferry serve in local mode on free ports with quick slots
// until the test ends.
func serve(t *testing.T) *server.Info {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *server.Info, 1)
	done := make(chan error, 1)
	o := server.Options{
		APIAddr: "127.0.0.1:0", RPCAddr: "127.0.0.1:0", EphemeralAddr: "127.0.0.1:0", RouterAddr: "127.0.0.1:0",
		SlotDuration: 20 * time.Millisecond, EphemeralSlotDuration: 10 * time.Millisecond, FinalityDepth: 2,
		ShutdownTimeout: 10 * time.Second, Ready: func(i *server.Info) { ready <- i },
	}
	go func() { done <- server.Serve(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case info := <-ready:
		return info
	case err := <-done:
		t.Fatalf("serve stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	return nil
}

// get fetches url and decodes its JSON body into out (when not nil).
func get(t *testing.T, u string, out any) (int, http.Header) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("GET %s: %s: %v", u, b, err)
		}
	}
	return resp.StatusCode, resp.Header
}

func post(t *testing.T, u, body string, out any) int {
	t.Helper()
	resp, err := http.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("POST %s: %s: %v", u, b, err)
	}
	return resp.StatusCode
}

// build asks the payments API for a transaction and signs it with the
// wallet's keypair file.
func build(t *testing.T, api, path, body, keypair string) (*txwire.Transaction, map[string]any) {
	t.Helper()
	var b map[string]any
	if st := post(t, api+path, body, &b); st != 200 {
		t.Fatalf("%s: %d %v", path, st, b)
	}
	tx, err := txwire.DecodeBase64(b["transactionBase64"].(string))
	if err != nil {
		t.Fatal(err)
	}
	key, err := keyfile.Read(keypair)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Sign(key); err != nil {
		t.Fatal(err)
	}
	return tx, b
}

// send builds, signs and sends through the API, waiting for confirmation.
func send(t *testing.T, api, path, body, keypair string) string {
	t.Helper()
	tx, b := build(t, api, path, body, keypair)
	req := fmt.Sprintf(`{"transactionBase64":%q,"sendTo":%q,"confirm":true,"recentBlockhash":%q,"lastValidBlockHeight":%v}`,
		tx.Base64(), b["sendTo"], b["recentBlockhash"], b["lastValidBlockHeight"])
	var out map[string]any
	if st := post(t, api+"/v1/transaction/send", req, &out); st != 200 {
		t.Fatalf("send %s: %d %v", path, st, out)
	}
	return out["signature"].(string)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPage checks what the page is made of: no inline script, a CSP that
// allows only this origin and the chain nodes, and a configuration with
// public keys only (no keypair path).
func TestPage(t *testing.T) {
	info := serve(t)
	resp, err := http.Get(info.URLs[server.KeyAPI] + explorer.Path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self';", "style-src 'self';", "frame-ancestors 'none'",
		info.URLs[server.KeyRPC], info.URLs[server.KeyEphemeralWS], strings.Replace(info.URLs[server.KeyEphemeral], "http", "ws", 1)} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP allows inline code: %q", csp)
	}
	html := string(body)
	for _, m := range regexp.MustCompile(`<script[^>]*>`).FindAllString(html, -1) {
		if !strings.Contains(m, `src="/explorer/app.js"`) {
			t.Errorf("inline or foreign script: %s", m)
		}
	}
	if regexp.MustCompile(`(?i)\son[a-z]+=`).MatchString(html) || regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).MatchString(html) {
		t.Errorf("inline handler or third-party resource in the page:\n%s", html)
	}
	if strings.Contains(html, ".json") || strings.Contains(html, "wallets/") {
		t.Errorf("the page names a keypair file:\n%s", html)
	}
	m := regexp.MustCompile(`data-config="([^"]*)"`).FindStringSubmatch(html)
	if m == nil {
		t.Fatal("no data-config")
	}
	var cfg struct {
		Endpoints map[string]string
		Wallets   []map[string]string
		Mint      string
	}
	if err := json.Unmarshal([]byte(htmlUnescape(m[1])), &cfg); err != nil {
		t.Fatalf("config %s: %v", m[1], err)
	}
	if cfg.Endpoints["rpcWs"] != info.URLs[server.KeyRPCWS] || cfg.Mint != info.Demo.Mint || len(cfg.Wallets) != len(info.Demo.Wallets) {
		t.Fatalf("config %+v, info %+v", cfg, info)
	}
	for i, w := range cfg.Wallets {
		if len(w) != 2 || w["address"] != info.Demo.Wallets[i].Address {
			t.Fatalf("wallet %d in the page: %v (want name and address only)", i, w)
		}
	}
	for path, ctype := range map[string]string{explorer.PathScript: "text/javascript", explorer.PathStyle: "text/css"} {
		st, h := get(t, info.URLs[server.KeyAPI]+path, nil)
		if st != 200 || !strings.HasPrefix(h.Get("Content-Type"), ctype) || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d %v", path, st, h)
		}
	}
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&#34;", `"`, "&quot;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">", "&#39;", "'", "&#43;", "+").Replace(s)
}

// TestBadInput: every JSON endpoint checks its input before reading a
// chain and answers with a clear error.
func TestBadInput(t *testing.T) {
	info := serve(t)
	api := info.URLs[server.KeyAPI]
	unknown := solana.Signature{1, 2, 3}.String()
	for _, c := range []struct {
		path   string
		status int
		code   string
	}{
		{explorer.PathTx, 400, explorer.CodeInvalidSignature},
		{explorer.PathTx + "?signature=notbase58!", 400, explorer.CodeInvalidSignature},
		{explorer.PathTx + "?signature=" + strings.Repeat("1", 89), 400, explorer.CodeInvalidSignature},
		{explorer.PathTx + "?signature=" + info.Demo.Mint, 400, explorer.CodeInvalidSignature},
		{explorer.PathTx + "?signature=" + unknown + "&layer=moon", 400, explorer.CodeInvalidLayer},
		{explorer.PathTx + "?signature=" + unknown, 404, explorer.CodeNotFound},
		{explorer.PathTx + "?signature=" + unknown + "&layer=ephemeral", 404, explorer.CodeNotFound},
		{explorer.PathAccount, 400, explorer.CodeInvalidAddress},
		{explorer.PathAccount + "?address=" + unknown, 400, explorer.CodeInvalidAddress},
		{explorer.PathAccount + "?address=0OIl", 400, explorer.CodeInvalidAddress},
		{explorer.PathAccount + "?address=" + strings.Repeat("x", 600), 414, "QUERY_TOO_LONG"},
	} {
		var body struct {
			Error struct{ Code, Message string }
		}
		st, _ := get(t, api+c.path, &body)
		if st != c.status || body.Error.Code != c.code || body.Error.Message == "" {
			t.Errorf("GET %s: %d %+v, want %d %s", c.path, st, body, c.status, c.code)
		}
	}
	var e struct{ Error struct{ Code string } }
	if st := post(t, api+explorer.PathRollup, "{}", &e); st != 405 {
		t.Errorf("POST rollup: %d %+v", st, e)
	}
}

// TestViews follows a deposit, a private split transfer and a failed
// transfer through the explorer's views, as an anonymous reader: the
// rollup hides alice's balance, the queued transfer's pieces are computed
// and then paid, the failed transfer is explained as ferry send explains
// it.
func TestViews(t *testing.T) {
	info := serve(t)
	api := info.URLs[server.KeyAPI]
	alice, bob := info.Demo.Wallets[0], info.Demo.Wallets[1]

	deposit := send(t, api, "/v1/spl/deposit", `{"owner":"`+alice.Address+`","amount":3000000}`, alice.Keypair)
	var tv explorer.TxView
	waitFor(t, "the deposit's view", func() bool {
		st, _ := get(t, api+explorer.PathTx+"?signature="+deposit, &tv)
		return st == 200
	})
	if tv.Layer != explorer.LayerBase || tv.Status != "success" || tv.Operation == nil || tv.Operation.Kind != "deposit" ||
		tv.Explanation == nil || len(tv.Explanation.Instructions) == 0 || tv.Error != nil || len(tv.Logs) == 0 {
		t.Fatalf("deposit view: %+v", tv)
	}

	// Alice's private rollup balance is hidden from the explorer (an
	// anonymous reader), as from anyone but her. Between the delegation
	// on base and the validator's clone the rollup has no such account
	// yet (shown as a visible 0), so this waits for the clone: a balance
	// that stays visible times out here.
	var av explorer.AccountView
	waitFor(t, "alice's private balance, hidden", func() bool {
		av = explorer.AccountView{}
		get(t, api+explorer.PathAccount+"?address="+alice.Address, &av)
		return len(av.PrivateBalances) == 1 && av.PrivateBalances[0].Delegated && !av.PrivateBalances[0].Visible
	})
	if pb := av.PrivateBalances[0]; pb.Visible || pb.Amount != "" || pb.Mint != info.Demo.Mint {
		t.Fatalf("alice's private balance shown to an anonymous reader: %+v", pb)
	}
	var ata explorer.AccountView
	get(t, api+explorer.PathAccount+"?address="+av.PrivateBalances[0].Balance, &ata)
	if ata.EphemeralPrivate == "" || ata.Ephemeral != nil || ata.Base == nil || ata.Base.Decoded == nil || ata.Base.Decoded.Kind != "token account" {
		t.Fatalf("alice's rollup balance account: %+v", ata)
	}
	var eata explorer.AccountView
	get(t, api+explorer.PathAccount+"?address="+av.PrivateBalances[0].EphemeralATA, &eata)
	if eata.Delegation == nil || !eata.Delegation.ThisRollup || eata.Delegation.Validator != info.Validator ||
		eata.Base.Decoded == nil || !strings.HasPrefix(eata.Base.Decoded.Kind, "ephemeral ATA") {
		t.Fatalf("alice's eATA: %+v %+v", eata, eata.Base)
	}

	// The rollup credits the deposit after it has cloned her eATA: only
	// she can see when (through the API, logged in).
	aliceTok := loginToken(t, api, alice.Keypair)
	waitFor(t, "alice's deposit credited on the rollup", func() bool {
		return privateBalance(t, api, alice.Address, info.Demo.Mint, aliceTok) == "3000000"
	})

	// A private transfer from her rollup balance to bob on base, in two
	// pieces.
	transfer := send(t, api, "/v1/spl/transfer", `{"from":"`+alice.Address+`","to":"`+bob.Address+`","mint":"`+info.Demo.Mint+
		`","amount":2000000,"visibility":"private","fromBalance":"ephemeral","toBalance":"base","split":2}`, alice.Keypair)
	var rv explorer.RollupView
	var qt explorer.QueuedTransferView
	waitFor(t, "the transfer paid", func() bool {
		rv = explorer.RollupView{}
		get(t, api+explorer.PathRollup, &rv)
		for _, q := range rv.Queues {
			for _, x := range q.Transfers {
				if x.Signature == transfer {
					qt = x
					return x.State == explorer.StatePaid
				}
			}
		}
		return false
	})
	if len(rv.Queues) != 1 || !rv.Queues[0].Private || rv.Queues[0].Entries != nil || rv.Queues[0].Mint != info.Demo.Mint {
		t.Fatalf("queue: %+v", rv.Queues)
	}
	if qt.Source != alice.Address || qt.Recipient != bob.Address || qt.Amount != "2000000" || qt.Split != 2 || len(qt.Pieces) != 2 {
		t.Fatalf("transfer: %+v", qt)
	}
	tasks := map[uint32]bool{}
	for i, p := range qt.Pieces {
		if p.Index != i || p.Amount != "1000000" || p.State != explorer.StatePaid || p.Payout == nil || p.Payout.Signature == "" ||
			p.Payout.Destination != bob.Address || p.DueAt != qt.BlockTime*1000 {
			t.Fatalf("piece %d: %+v %+v", i, p, p.Payout)
		}
		tasks[p.Payout.TaskID] = true
	}
	if len(tasks) != 2 || !tasks[qt.Pieces[0].Payout.TaskID] || qt.Pieces[1].Payout.TaskID != qt.Pieces[0].Payout.TaskID+1 {
		t.Fatalf("pieces' tasks: %+v %+v", qt.Pieces[0].Payout, qt.Pieces[1].Payout)
	}
	found := 0
	for _, s := range rv.Settlements {
		for _, step := range s.Steps {
			if strings.HasPrefix(step, "payout: 1000000 to "+bob.Address) {
				found++
			}
		}
	}
	if found != 2 {
		t.Fatalf("settlements: %+v", rv.Settlements)
	}
	if rv.DelegatedTotal < 3 || len(rv.Delegated) != rv.DelegatedTotal {
		t.Fatalf("delegated: %d %+v", rv.DelegatedTotal, rv.Delegated)
	}
	var payout explorer.TxView
	get(t, api+explorer.PathTx+"?signature="+qt.Pieces[0].Payout.Signature+"&layer=base", &payout)
	if payout.Status != "success" || len(payout.TokenBalances) == 0 {
		t.Fatalf("payout view: %+v", payout)
	}

	// A failed transfer (more than alice holds on base), sent without
	// preflight so that it lands: decoded as ferry send decodes it, with
	// the balance it had when it ran.
	tx, _ := build(t, api, "/v1/spl/transfer", `{"from":"`+alice.Address+`","to":"`+bob.Address+`","mint":"`+info.Demo.Mint+
		`","amount":5000000000,"visibility":"public","fromBalance":"base","toBalance":"base"}`, alice.Keypair)
	base, err := chainclient.New(info.URLs[server.KeyRPC])
	if err != nil {
		t.Fatal(err)
	}
	sig, err := base.SendTransaction(context.Background(), tx.Bytes(), chainclient.SendOptions{SkipPreflight: true})
	if err != nil {
		t.Fatal(err)
	}
	var fv explorer.TxView
	waitFor(t, "the failed transfer's view", func() bool {
		fv = explorer.TxView{}
		st, _ := get(t, api+explorer.PathTx+"?"+url.Values{"signature": {sig.String()}}.Encode(), &fv)
		return st == 200
	})
	if fv.Status != "failed" || fv.Error == nil || fv.Error.Explained == nil || fv.Error.Explained.Name != "InsufficientFunds" ||
		fv.Error.Text != "SPL Token program error InsufficientFunds (custom program error 0x1) in instruction 0: the source account holds fewer tokens than the instruction moves" ||
		!strings.Contains(fv.Error.Hint, "holds 997 (997000000 base units), the instruction moves 5000 (5000000000 base units)") {
		t.Fatalf("failed transfer: %+v %+v", fv, fv.Error)
	}
}

// TestResponseBudget: a view over Options.MaxResponseBytes is refused,
// not truncated silently.
func TestResponseBudget(t *testing.T) {
	info := serve(t)
	base, err := chainclient.New(info.URLs[server.KeyRPC])
	if err != nil {
		t.Fatal(err)
	}
	eph, err := chainclient.New(info.URLs[server.KeyEphemeral])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		max    int
		status int
	}{{200, http.StatusInsufficientStorage}, {0, http.StatusOK}} {
		ex, err := explorer.New(explorer.Config{Base: base, Ephemeral: eph, Validator: solana.MustPublicKeyFromBase58(info.Validator),
			Options: explorer.Options{MaxResponseBytes: c.max}})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		ex.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, explorer.PathRollup, nil))
		if rec.Code != c.status || (c.status != 200 && !bytes.Contains(rec.Body.Bytes(), []byte(explorer.CodeResponseTooLarge))) {
			t.Errorf("budget %d: %d %s", c.max, rec.Code, rec.Body.Bytes())
		}
	}
	if _, err := explorer.New(explorer.Config{}); err == nil {
		t.Error("New without chain clients succeeded")
	}
}
