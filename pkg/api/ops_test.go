package api

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/auth"
	"github.com/ferry-sh/ferry/pkg/cluster"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/submit"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func TestUndelegateRoute(t *testing.T) {
	h := newHarness(t)
	aliceKey := seedKey("alice")
	alice := pubOf(aliceKey)
	h.fund(alice, 1000)
	body := fmt.Sprintf(`{"payer":%q,"mint":%q}`, alice, h.mint)

	// Not delegated: the router says no, there is no record.
	e := apiError(t, h.do("POST", "/v1/spl/undelegate-ephemeral-ata", body), 400, "EPHEMERAL_ENDPOINT_UNRESOLVED")
	d := e["details"].(map[string]any)
	if d["routerIsDelegated"] != false || d["cluster"] != "local" || d["routerError"] != nil {
		t.Fatal(d)
	}
	// Delegated to the local rollup: the router names it.
	eata := h.delegateEATA(alice, erIdentity)
	out := ok[payments.UndelegateEphemeralATAResponse](t, h.do("POST", "/v1/spl/undelegate-ephemeral-ata", body))
	if out.Kind != "undelegateEphemeralAta" || out.SendTo != "ephemeral" || out.SendRPCEndpoint != testERURL || out.InstructionCount != 1 ||
		h.layerOf(out.RecentBlockhash) != "ephemeral" || out.Validator != erIdentity.String() {
		t.Fatalf("%+v", out)
	}
	if got := instructionLabels(t, &out.UnsignedTransaction); got[0] != "espl:5" {
		t.Fatal(got)
	}
	// A bearer token must verify and be bound to payer; a token this
	// server issued never leaves it (the local rollup needs none).
	apiError(t, h.do("POST", "/v1/spl/undelegate-ephemeral-ata", body, "Authorization", "Bearer "+h.login(seedKey("bob"))), 403, "TOKEN_IDENTITY_MISMATCH")
	apiError(t, h.do("POST", "/v1/spl/undelegate-ephemeral-ata", body, "Authorization", "Bearer "+auth.Bind(alice.String(), "tok1")), 401, "INVALID_AUTH_TOKEN")
	tok := h.login(seedKey("alice"))
	ok[payments.UndelegateEphemeralATAResponse](t, h.do("POST", "/v1/spl/undelegate-ephemeral-ata", body, "Authorization", "Bearer "+tok))
	if qs := h.erQueryLog(); len(qs) == 0 || slices.ContainsFunc(qs, func(q string) bool { return strings.Contains(q, "token") }) {
		t.Fatalf("ER queries %v", qs)
	}
	// The payer itself is delegated elsewhere.
	h.delegate(alice, pubOf(seedKey("other validator")))
	e = apiError(t, h.do("POST", "/v1/spl/undelegate-ephemeral-ata", body), 400, "VALIDATOR_MISMATCH")
	if e["details"].(map[string]any)["ephemeralAta"] != eata.String() {
		t.Fatal(e)
	}
	apiError(t, h.do("POST", "/v1/spl/undelegate-ephemeral-ata", fmt.Sprintf(`{"payer":%q}`, alice)), 422, "VALIDATION_ERROR")
}

func TestStealthPoolRoutes(t *testing.T) {
	h := newHarness(t)
	payerKey := seedKey("payer")
	payer, authority, dest := pubOf(payerKey), pubOf(seedKey("authority")), pubOf(seedKey("dest"))
	h.fund(payer, 1000)
	body := fmt.Sprintf(`{"payer":%q,"authority":%q,"handle":"alice.block","destinations":[%q],"splitAcrossKeys":false}`, payer, authority, dest)
	tok := h.login(payerKey)

	e := apiError(t, h.do("POST", "/v1/spl/stealth-pool", body), 422, "VALIDATION_ERROR")
	if e["message"] != "Missing required fields: authorization" {
		t.Fatal(e)
	}
	e = apiError(t, h.do("POST", "/v1/spl/stealth-pool", body, "Authorization", "Bearer"), 400, "MISSING_AUTH_TOKEN")
	if e["message"] != "authToken is required to initialize stealth pool destinations inside the ER" {
		t.Fatal(e)
	}
	apiError(t, h.do("POST", "/v1/spl/stealth-pool", body, "Authorization", "Bearer "+h.login(seedKey("carol"))), 403, "TOKEN_IDENTITY_MISMATCH")
	out := ok[payments.StealthPoolResponse](t, h.do("POST", "/v1/spl/stealth-pool", body, "Authorization", "Bearer "+tok))
	pool, _, _ := espl.FindStealthPool([]byte("alice.block"))
	if out.StealthPool != pool.String() || out.SendTo != "ephemeral" || out.SetupTransaction == nil || out.SetupTransaction.SendTo != "base" ||
		h.layerOf(out.RecentBlockhash) != "ephemeral" || h.layerOf(out.SetupTransaction.RecentBlockhash) != "base" ||
		strings.Join(out.RequiredSigners, ",") != payer.String()+","+authority.String() || out.SetupTransaction.Validator != erIdentity.String() {
		t.Fatalf("%+v", out)
	}
	e = apiError(t, h.do("POST", "/v1/spl/stealth-pool", strings.Replace(body, "alice.block", strings.Repeat("é", 128), 1), "Authorization", "Bearer "+tok), 422, "VALIDATION_ERROR")
	if e["issues"].([]any)[0].(map[string]any)["message"] != "Handle must be 255 UTF-8 bytes or fewer." {
		t.Fatal(e)
	}

	st := ok[payments.StealthPoolStatusResponse](t, h.do("GET", "/v1/spl/stealth-pool?handle=alice.block", nil))
	if st.Exists || st.StealthPool != pool.String() {
		t.Fatalf("%+v", st)
	}
	apiError(t, h.do("GET", "/v1/spl/stealth-pool", nil), 422, "VALIDATION_ERROR")
	// Once the pool exists, private transfers can name the handle.
	h.put(h.base, map[solana.PublicKey]*ledger.Account{pool: {Lamports: 5_000_000, Owner: espl.DelegationProgramID, Data: make([]byte, espl.StealthPoolSize)}})
	if st := ok[payments.StealthPoolStatusResponse](t, h.do("GET", "/v1/spl/stealth-pool?handle=alice.block", nil)); !st.Exists {
		t.Fatal("pool not found")
	}
	tr := ok[payments.UnsignedTransaction](t, h.do("POST", "/v1/spl/transfer", fmt.Sprintf(
		`{"from":%q,"to":"alice.block","mint":%q,"amount":100,"visibility":"private","fromBalance":"base","toBalance":"base"}`, payer, h.mint)))
	if strings.Join(instructionLabels(t, tr), " ") != "espl:0 espl:4 espl:25" {
		t.Fatal(instructionLabels(t, tr))
	}
}

// fakeCrank is a crank RPC: it accepts any transaction and reports it
// confirmed (or fails, or reports a recent crank).
type fakeCrank struct {
	mu     sync.Mutex
	sent   [][]byte
	params []string
	fail   bool
}

func (f *fakeCrank) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	f.mu.Lock()
	defer f.mu.Unlock()
	reply := func(result string) {
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
	}
	switch req.Method {
	case "getLatestBlockhash":
		reply(`{"context":{"slot":1},"value":{"blockhash":"` + solana.Hash{9}.String() + `","lastValidBlockHeight":100}}`)
	case "getBlockHeight":
		reply(`10`)
	case "getEpochInfo":
		reply(`{"absoluteSlot":1,"blockHeight":10,"epoch":0,"slotIndex":1,"slotsInEpoch":432000}`)
	case "sendTransaction":
		var s string
		json.Unmarshal(req.Params[0], &s)
		raw, _ := base64.StdEncoding.DecodeString(s)
		f.sent = append(f.sent, raw)
		f.params = append(f.params, string(req.Params[1]))
		tx, _ := txwire.Decode(raw)
		reply(`"` + tx.Signatures[0].String() + `"`)
	case "getSignatureStatuses":
		if f.fail {
			reply(`{"context":{"slot":1},"value":[{"slot":2,"confirmations":0,"err":{"InstructionError":[0,"InvalidAccountData"]},"confirmationStatus":"confirmed"}]}`)
		} else {
			reply(`{"context":{"slot":1},"value":[{"slot":2,"confirmations":0,"err":null,"confirmationStatus":"confirmed"}]}`)
		}
	default:
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32601,"message":"Method not found"}}`)
	}
}

func (f *fakeCrank) sentCount() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.sent) }

func TestMintStatusAndCrank(t *testing.T) {
	crank := &fakeCrank{}
	h := newHarness(t, harnessOptions{
		overrides: map[string]cluster.Overrides{"local": {BaseRPC: testBaseURL, Ephemeral: testERURL, Router: testRouterURL, Crank: "http://crank.ferry.test"}},
		inProcess: map[string]http.Handler{"http://crank.ferry.test": crank},
	})
	q := "/v1/spl/is-mint-initialized?mint=" + h.mint.String()
	queue, _ := espl.FindTransferQueue(h.mint, erIdentity)
	st := ok[payments.MintInitializationResponse](t, h.do("GET", q, nil))
	if st.Initialized || st.Validator != erIdentity.String() || st.TransferQueue != queue.String() || st.Mint != h.mint.String() {
		t.Fatalf("%+v", st)
	}
	crankBody := fmt.Sprintf(`{"mint":%q}`, h.mint)
	e := apiError(t, h.do("POST", "/v1/spl/transfer-queue/ensure-crank", crankBody), 400, "TRANSFER_QUEUE_NOT_INITIALIZED")
	if e["details"].(map[string]any)["transferQueue"] != queue.String() {
		t.Fatal(e)
	}
	// initialize-mint ran: the queue is delegated. The background check
	// reads the queue's activity on the rollup (none): a crank goes to
	// the crank RPC.
	h.put(h.base, map[solana.PublicKey]*ledger.Account{queue: {Lamports: 10_000_000, Owner: espl.DelegationProgramID, Data: make([]byte, 64)}})
	if st := ok[payments.MintInitializationResponse](t, h.do("GET", q, nil)); !st.Initialized {
		t.Fatal("not initialized")
	}
	h.srv.svc.crank.wait()
	if n := crank.sentCount(); n != 1 {
		t.Fatalf("%d background cranks", n)
	}
	// Forced crank.
	out := ok[payments.TransferQueueEnsureCrankResponse](t, h.do("POST", "/v1/spl/transfer-queue/ensure-crank", crankBody))
	if out.TransferQueue != queue.String() || out.Validator != erIdentity.String() || out.CrankSignature == "" || crank.sentCount() != 2 {
		t.Fatalf("%+v sent %d", out, crank.sentCount())
	}
	tx, err := txwire.Decode(crank.sent[1])
	if err != nil || tx.VerifySignatures() != nil || tx.Signatures[0].String() != out.CrankSignature {
		t.Fatal("crank transaction not signed by its payer")
	}
	ix, err := espl.Decode(tx.Message.Instructions[0].Data, accountKeys(tx, 0))
	if c, isCrank := ix.(espl.EnsureQueueCrankIx); err != nil || !isCrank || c.Queue != queue || c.Payer != tx.Message.AccountKeys[0] {
		t.Fatalf("%T %v", ix, err)
	}
	if !strings.Contains(crank.params[1], `"skipPreflight":true`) || !strings.Contains(crank.params[1], `"preflightCommitment":"confirmed"`) {
		t.Fatal(crank.params[1])
	}
	// Every is-mint-initialized checks again (the rollup still shows no
	// crank): one more crank each.
	for i := range 2 {
		ok[payments.MintInitializationResponse](t, h.do("GET", q, nil))
		h.srv.svc.crank.wait()
		if n := crank.sentCount(); n != 3+i {
			t.Fatalf("%d cranks sent", n)
		}
	}
	if !strings.Contains(h.logs.String(), "background transfer-queue crank") {
		t.Fatal("no log line")
	}
	// A crank that fails on chain.
	crank.mu.Lock()
	crank.fail = true
	crank.mu.Unlock()
	e = apiError(t, h.do("POST", "/v1/spl/transfer-queue/ensure-crank", crankBody), 502, "RPC_ERROR")
	d := e["details"].(map[string]any)
	if e["message"] != "Failed to ensure transfer queue crank" || !strings.Contains(d["message"].(string), "Transfer queue crank transaction failed") || d["mint"] != h.mint.String() {
		t.Fatal(e)
	}
}

func accountKeys(tx *txwire.Transaction, i int) []solana.PublicKey {
	var ks []solana.PublicKey
	for _, a := range tx.Message.Instructions[i].Accounts {
		ks = append(ks, tx.Message.AccountKeys[a])
	}
	return ks
}

func TestSendRoute(t *testing.T) {
	h := newHarness(t)
	aliceKey, bobKey := seedKey("alice"), seedKey("bob")
	alice, bob := pubOf(aliceKey), pubOf(bobKey)
	h.fund(alice, 1000)
	h.fund(bob, 1)

	apiError(t, h.do("POST", "/v1/transaction/send", `{"transactionBase64":"not base64!","sendTo":"base"}`), 400, "INVALID_TRANSACTION")
	big := base64.StdEncoding.EncodeToString(make([]byte, 1233))
	e := apiError(t, h.do("POST", "/v1/transaction/send", `{"transactionBase64":"`+big+`","sendTo":"base"}`), 400, "TRANSACTION_TOO_LARGE")
	if e["message"] != "Serialized transaction exceeds 1232 bytes" {
		t.Fatal(e)
	}
	apiError(t, h.do("POST", "/v1/transaction/send", `{"transactionBase64":"AQ==","sendTo":"base","cluster":"nope"}`), 400, "INVALID_CLUSTER")
	// Unsigned: the node refuses it (signature verification), a send
	// error: 400 with the node's error.
	out := ok[payments.UnsignedTransaction](t, h.do("POST", "/v1/spl/transfer", transferBody(alice, bob, h.mint, "public", "base", "base", "")))
	e = apiError(t, h.do("POST", "/v1/transaction/send", map[string]any{"transactionBase64": out.TransactionBase64, "sendTo": "base"}), 400, "RPC_ERROR")
	if d := e["details"].(map[string]any); e["message"] != "Failed to send transaction" || d["sendTo"] != "base" || d["rpcCode"] != float64(-32003) ||
		d["message"] != "Transaction signature verification failure" {
		t.Fatal(e)
	}
	// Lands and fails on chain (more tokens than alice has, no preflight):
	// 400 TRANSACTION_FAILED with the TransactionError.
	out = ok[payments.UnsignedTransaction](t, h.do("POST", "/v1/spl/transfer", strings.Replace(transferBody(alice, bob, h.mint, "public", "base", "base", ""), `"amount":1000`, `"amount":5000`, 1)))
	r := h.do("POST", "/v1/transaction/send", map[string]any{"transactionBase64": sign(t, out, aliceKey), "sendTo": "base", "skipPreflight": true,
		"confirm": true, "recentBlockhash": out.RecentBlockhash, "lastValidBlockHeight": out.LastValidBlockHeight})
	e = apiError(t, r, 400, "TRANSACTION_FAILED")
	if !strings.Contains(string(r.Body), `"err":{"InstructionError":[0,{"Custom":1}]}`) {
		t.Fatalf("%s", r.Body)
	}

	// Ephemeral: a public rollup-to-rollup transfer, sent to
	// sendRpcEndpoint and confirmed there. The token (this server's) is
	// checked but never forwarded.
	h.erTokens(alice, 1500)
	h.erTokens(bob, 0)
	h.delegateEATA(alice, erIdentity)
	h.delegateEATA(bob, erIdentity)
	tok := h.login(aliceKey)
	out = ok[payments.UnsignedTransaction](t, h.do("POST", "/v1/spl/transfer", transferBody(alice, bob, h.mint, "public", "ephemeral", "ephemeral", ""), "Authorization", "Bearer "+tok))
	_, inner := auth.SplitToken(tok)
	before := len(h.erQueryLog())
	sent := ok[submit.Response](t, h.send(out, sign(t, out, aliceKey), "Authorization", "Bearer "+tok))
	if !sent.Confirmed || sent.SendTo != "ephemeral" || sent.ConfirmationRPCEndpoint != testERURL || !sent.ConfirmationRequiresAuthToken {
		t.Fatalf("%+v", sent)
	}
	if qs := h.erQueryLog()[before:]; len(qs) == 0 || slices.ContainsFunc(qs, func(q string) bool { return strings.Contains(q, inner) }) {
		t.Fatalf("ER saw %v", qs)
	}
	apiError(t, h.send(out, sign(t, out, aliceKey), "Authorization", "Bearer "+auth.Bind(alice.String(), "not-a-token")), 401, "INVALID_AUTH_TOKEN")
	bal := ok[payments.BalanceResponse](t, h.do("GET", fmt.Sprintf("/v1/spl/private-balance?address=%s&mint=%s", bob, h.mint), nil, "Authorization", "Bearer "+h.login(bobKey)))
	if bal.Balance != "1000" {
		t.Fatalf("bob on the rollup: %+v", bal)
	}
}

func TestSwapRoutes(t *testing.T) {
	h := newHarness(t)
	user := pubOf(seedKey("alice"))
	quote := "/v1/swap/quote?inputMint=" + user.String() + "&outputMint=" + h.mint.String() + "&amount=100&slippageBps=50&onlyDirectRoutes=TRUE"
	wantError(t, h.do("GET", quote, nil), 500, "CONFIG_ERROR", "Missing worker environment variable `METIS_SWAP_API_URL`")
	e := apiError(t, h.do("GET", "/v1/swap/quote?amount=1.5", nil), 422, "VALIDATION_ERROR")
	if len(e["issues"].([]any)) != 3 {
		t.Fatal(e)
	}
	swapBody := fmt.Sprintf(`{"userPublicKey":%q,"quoteResponse":%s,"wrapAndUnwrapSol":true,"prioritizationFeeLamports":{"jitoTipLamports":1}}`, user, mustJSON(testQuote()))
	wantError(t, h.do("POST", "/v1/swap/swap", swapBody), 500, "CONFIG_ERROR", "Missing worker environment variable `METIS_SWAP_API_URL`")
	apiError(t, h.do("POST", "/v1/swap/swap", fmt.Sprintf(`{"userPublicKey":%q}`, user)), 422, "VALIDATION_ERROR")

	var mu sync.Mutex
	var got []string
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+" "+string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/metis/quote" {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":"no route"}`)
			return
		}
		io.WriteString(w, `{"swapTransaction":"AQ==","lastValidBlockHeight":5}`)
	})
	h2 := newHarness(t, harnessOptions{cfg: func(c *Config) {
		c.Swap = SwapConfig{UpstreamURL: "http://swap.ferry.test/metis/", HTTPClient: &http.Client{Transport: roundTripper(up)}}
	}})
	r := h2.do("GET", quote, nil)
	if r.Status != 400 || string(r.Body) != `{"error":"no route"}` {
		t.Fatalf("quote %d %s", r.Status, r.Body)
	}
	r = h2.do("POST", "/v1/swap/swap", swapBody)
	if r.Status != 200 || string(r.Body) != `{"swapTransaction":"AQ==","lastValidBlockHeight":5}` {
		t.Fatalf("swap %d %s", r.Status, r.Body)
	}
	mu.Lock()
	if len(got) != 2 || got[0] != "GET /metis/quote?"+quote[len("/v1/swap/quote?"):]+" " || got[1] != "POST /metis/swap? "+swapBody {
		t.Fatalf("upstream saw %q", got)
	}
	mu.Unlock()
	// A private swap without its fields: refused before the upstream.
	wantError(t, h2.do("POST", "/v1/swap/swap", strings.Replace(swapBody, `"wrapAndUnwrapSol"`, `"visibility":"private","wrapAndUnwrapSol"`, 1)), 400,
		"INVALID_REQUEST", "destination, minDelayMs, maxDelayMs, and split are required when visibility=private")
	h3 := newHarness(t, harnessOptions{cfg: func(c *Config) { c.Swap = SwapConfig{UpstreamURL: "http://127.0.0.1:1"} }})
	e = apiError(t, h3.do("POST", "/v1/swap/swap", swapBody), 502, "SWAP_UPSTREAM_ERROR")
	if strings.Contains(fmt.Sprint(e), "127.0.0.1") {
		t.Fatal(e)
	}
}

type roundTripper http.HandlerFunc

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := newRecorder()
	if r.Body == nil {
		r.Body = http.NoBody
	}
	http.HandlerFunc(f).ServeHTTP(rec, r)
	code := rec.code
	if code == 0 {
		code = 200
	}
	return &http.Response{StatusCode: code, Header: rec.h, Body: io.NopCloser(strings.NewReader(rec.body.String())), Request: r}, nil
}

func TestConfigAndKeyErrors(t *testing.T) {
	h := newHarness(t, harnessOptions{overrides: map[string]cluster.Overrides{
		"devnet": {BaseRPC: testBaseURL, Ephemeral: "ftp://not-http", Router: testRouterURL},
	}})
	alice := pubOf(seedKey("alice"))
	e := apiError(t, h.do("GET", fmt.Sprintf("/v1/spl/balance?address=%s&mint=%s&cluster=devnet", alice, h.mint), nil), 500, "CONFIG_ERROR")
	if e["message"] != "The ephemeral RPC of cluster=devnet is not a valid http(s) URL" {
		t.Fatal(e)
	}
	// A destination that is a valid key but can never own tokens.
	tok := h.login(seedKey("alice"))
	e = apiError(t, h.do("POST", "/v1/spl/stealth-pool", fmt.Sprintf(`{"payer":%q,"authority":%q,"handle":"h","destinations":["11111111111111111111111111111111"]}`, alice, alice),
		"Authorization", "Bearer "+tok), 400, "INVALID_PUBLIC_KEY")
	if e["message"] != "Invalid destinations[0]" {
		t.Fatal(e)
	}
}
