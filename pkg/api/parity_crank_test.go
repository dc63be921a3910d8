package api

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/payments"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// crankNode makes m answer what a crank needs (a blockhash with its
// slot, the epoch's block height, sends, confirmed statuses) and records
// the transactions it gets.
type crankNode struct {
	mu   sync.Mutex
	sent [][]byte
}

func (c *crankNode) serve(m *mockUpstream) {
	m.result("getLatestBlockhash", withContext(map[string]any{"blockhash": solana.Hash{9}.String(), "lastValidBlockHeight": 123}))
	m.result("getEpochInfo", map[string]any{"absoluteSlot": 1, "blockHeight": 1, "epoch": 1, "slotIndex": 1, "slotsInEpoch": 1, "transactionCount": 1})
	m.result("getBlockHeight", 1)
	m.on("sendTransaction", func(ps []json.RawMessage, _ url.Values) (any, *rpcFail) {
		var s string
		json.Unmarshal(ps[0], &s)
		raw, _ := base64.StdEncoding.DecodeString(s)
		c.mu.Lock()
		c.sent = append(c.sent, raw)
		c.mu.Unlock()
		tx, err := txwire.Decode(raw)
		if err != nil {
			return nil, &rpcFail{Code: -32602, Message: err.Error()}
		}
		return tx.Signatures[0].String(), nil
	})
	m.result("getSignatureStatuses", withContext([]any{map[string]any{"slot": 2, "confirmations": 0, "err": nil, "confirmationStatus": "confirmed"}}))
}

func (c *crankNode) transactions(t *testing.T) []*txwire.Transaction {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*txwire.Transaction
	for _, raw := range c.sent {
		tx, err := txwire.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tx)
	}
	return out
}

// checkCrankTx asserts an ESPL 17 crank of queue (validator's magic fee
// vault), signed by its throw-away payer.
func checkCrankTx(t *testing.T, tx *txwire.Transaction, queue, validator solana.PublicKey) {
	t.Helper()
	if len(tx.Message.Instructions) != 1 || tx.VerifySignatures() != nil {
		t.Fatalf("%d instructions", len(tx.Message.Instructions))
	}
	keys := accountKeys(tx, 0)
	vault, _ := espl.FindMagicFeeVault(validator)
	if len(keys) < 3 || keys[1] != queue || keys[2] != vault || keys[0] != tx.Message.AccountKeys[0] {
		t.Fatalf("keys %v", keys)
	}
}

func signatureInfo(age time.Duration, now time.Time, err any) map[string]any {
	return map[string]any{"signature": solana.Signature{5}.String(), "slot": 1, "err": err, "memo": nil,
		"blockTime": now.Add(-age).Unix(), "confirmationStatus": "confirmed"}
}

// TestParityCrank: is-mint-initialized checks the queue's activity on the
// rollup after every answer that finds it initialized, and cranks when
// nothing recent succeeded; /ensure-crank cranks whatever the activity
// (hosted cases "skips the background crank when recent transfer queue
// activity exists", "forces the transfer queue crank endpoint even when
// recent activity exists", "does not fail mint initialization when
// transfer queue activity is auth-filtered", "starts the background crank
// when recent transfer queue signatures failed", "… has no recent
// transactions", "… is older than a minute").
func TestParityCrank(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	mint, validator := solana.MustPublicKeyFromBase58("So11111111111111111111111111111111111111112"), pubOf(seedKey("validator"))
	queue, _ := espl.FindTransferQueue(mint, validator)
	names := map[string]string{queue.String(): "queue"}
	q := fmt.Sprintf("/v1/spl/is-mint-initialized?mint=%s&validator=%s", mint, validator)
	cases := []struct {
		name     string
		activity rpcHandler
		force    bool
		crank    bool
	}{
		{"recent activity", fixed([]any{signatureInfo(30*time.Second, now, nil)}), false, false},
		{"recent activity, forced", fixed([]any{signatureInfo(30*time.Second, now, nil)}), true, true},
		{"auth-filtered", func([]json.RawMessage, url.Values) (any, *rpcFail) {
			return nil, &rpcFail{Code: -32000, Message: "Missing token query param"}
		}, false, false},
		{"recent failures only", fixed([]any{signatureInfo(30*time.Second, now, "InvalidWritableAccount")}), false, true},
		{"no activity", fixed([]any{}), false, true},
		{"older than a minute", fixed([]any{signatureInfo(61*time.Second, now, nil)}), false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			log := &callLog{}
			base, er := newMockUpstream(t, "base", log), newMockUpstream(t, "er", log)
			devBase, devER := newMockUpstream(t, "devnet-base", log), newMockUpstream(t, "devnet-er", log)
			g := newGateway(t, hostedEnv(base, er, devBase, devER), gatewayOptions{now: func() time.Time { return now }})
			base.accounts(map[solana.PublicKey]*acct{queue: {Owner: espl.DelegationProgramID, Lamports: 1, Data: make([]byte, 64)}})
			node := &crankNode{}
			node.serve(er)
			er.on("getSignaturesForAddress", c.activity)
			var want []string
			if c.force {
				out := ok[payments.TransferQueueEnsureCrankResponse](t, g.do("POST", "/v1/spl/transfer-queue/ensure-crank",
					fmt.Sprintf(`{"mint":%q,"validator":%q}`, mint, validator)))
				txs := node.transactions(t)
				if len(txs) != 1 || out.CrankSignature != txs[0].Signatures[0].String() || out.TransferQueue != queue.String() ||
					out.Mint != mint.String() || out.Validator != validator.String() {
					t.Fatalf("%+v", out)
				}
				want = []string{"base getAccountInfo queue"}
			} else {
				st := ok[payments.MintInitializationResponse](t, g.do("GET", q, nil))
				if !st.Initialized || st.TransferQueue != queue.String() {
					t.Fatalf("%+v", st)
				}
				g.srv.svc.crank.wait()
				want = []string{"base getAccountInfo queue"}
			}
			want = append(want, "er getSignaturesForAddress queue")
			if c.crank {
				want = append(want, "er getLatestBlockhash", "er getEpochInfo", "er sendTransaction", "er getSignatureStatuses")
				txs := node.transactions(t)
				if len(txs) != 1 {
					t.Fatalf("%d cranks", len(txs))
				}
				checkCrankTx(t, txs[0], queue, validator)
			}
			wantCalls(t, log.pattern(names), want)
			for _, call := range log.all() {
				if call.Method == "sendTransaction" && !json.Valid(call.Params) {
					t.Fatal(string(call.Params))
				}
			}
		})
	}
}

func fixed(v any) rpcHandler {
	return func([]json.RawMessage, url.Values) (any, *rpcFail) { return v, nil }
}

// TestParityCrankAuthFiltered: when the rollup refuses the activity check
// (its auth filter), only every 100th is-mint-initialized of the queue
// cranks, to TRANSFER_QUEUE_DEVNET_CRANK_RPC_URL when it is set, or to
// the rollup itself with the token of a throw-away login (hosted cases
// "forces the transfer queue crank every 100 auth-filtered activity
// checks", "uses a throwaway auth token when auth-filtered activity
// checks force the devnet crank").
func TestParityCrankAuthFiltered(t *testing.T) {
	mint, validator := solana.MustPublicKeyFromBase58("So11111111111111111111111111111111111111112"), pubOf(seedKey("validator"))
	queue, _ := espl.FindTransferQueue(mint, validator)
	names := map[string]string{queue.String(): "queue"}
	q := fmt.Sprintf("/v1/spl/is-mint-initialized?mint=%s&validator=%s&cluster=devnet", mint, validator)
	refuse := func([]json.RawMessage, url.Values) (any, *rpcFail) {
		return nil, &rpcFail{HTTPStatus: http.StatusUnauthorized, Message: "401 Unauthorized: Missing token query param"}
	}
	for _, withCrankRPC := range []bool{true, false} {
		t.Run(fmt.Sprint("crank RPC configured: ", withCrankRPC), func(t *testing.T) {
			log := &callLog{}
			base, er := newMockUpstream(t, "base", log), newMockUpstream(t, "er", log)
			devBase, devER := newMockUpstream(t, "devnet-base", log), newMockUpstream(t, "devnet-er", log)
			crankRPC := newMockUpstream(t, "crank", log)
			env := hostedEnv(base, er, devBase, devER)
			target := devER
			if withCrankRPC {
				env["TRANSFER_QUEUE_DEVNET_CRANK_RPC_URL"] = crankRPC.URL
				target = crankRPC
			}
			g := newGateway(t, env)
			devBase.accounts(map[solana.PublicKey]*acct{queue: {Owner: espl.DelegationProgramID, Lamports: 1, Data: make([]byte, 64)}})
			devER.on("getSignaturesForAddress", refuse)
			devER.onHTTP("GET /auth/challenge", writeJSON(`{"challenge":"transfer queue crank challenge"}`))
			devER.onHTTP("POST /auth/login", writeJSON(`{"token":"throwaway-crank-token","expiresAt":1800000000000}`))
			node := &crankNode{}
			node.serve(target)

			for i := 1; i <= 100; i++ {
				if st := ok[payments.MintInitializationResponse](t, g.do("GET", q, nil)); !st.Initialized {
					t.Fatal(st)
				}
				g.srv.svc.crank.wait()
				if n := len(node.transactions(t)); i < 100 && n != 0 {
					t.Fatalf("crank after %d checks", i)
				}
			}
			txs := node.transactions(t)
			if len(txs) != 1 {
				t.Fatalf("%d cranks after 100 checks", len(txs))
			}
			checkCrankTx(t, txs[0], queue, validator)

			calls := log.pattern(names)
			if n := log.count("devnet-er", "getSignaturesForAddress"); n != 100 {
				t.Fatalf("%d activity checks", n)
			}
			last := calls[len(calls)-4:]
			var want []string
			var token string
			if withCrankRPC {
				want = []string{"crank getLatestBlockhash", "crank getEpochInfo", "crank sendTransaction", "crank getSignatureStatuses"}
				if log.count("devnet-er", "GET /auth/challenge")+log.count("devnet-er", "POST /auth/login") != 0 {
					t.Fatal("logged in for a crank RPC that is not the rollup")
				}
			} else {
				want = []string{"devnet-er getLatestBlockhash", "devnet-er getEpochInfo", "devnet-er sendTransaction", "devnet-er getSignatureStatuses"}
				auth := slices.Index(calls, "devnet-er GET /auth/challenge")
				if auth < 0 || calls[auth+1] != "devnet-er POST /auth/login" || log.count("devnet-er", "GET /auth/challenge") != 1 ||
					log.count("devnet-er", "POST /auth/login") != 1 {
					t.Fatalf("throw-away login: %v", calls)
				}
				token = "throwaway-crank-token"
			}
			wantCalls(t, last, want)
			for _, c := range log.all()[len(log.all())-4:] {
				if got := c.Query.Get("token"); got != token {
					t.Fatalf("%s %s token %q, want %q", c.Upstream, c.Method, got, token)
				}
			}
		})
	}
}
