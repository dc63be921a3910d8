package submit

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/rpcserver"
	"github.com/ferry-sh/ferry/pkg/schema"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func key(label string) ed25519.PrivateKey {
	s := sha256.Sum256([]byte("ferry-submit-test:" + label))
	return ed25519.NewKeyFromSeed(s[:])
}

func pub(k ed25519.PrivateKey) solana.PublicKey { return solana.PublicKeyFromBytes(k[32:]) }

func wantCode(t *testing.T, err error, status int, code string) *apierr.Error {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status != status || ae.Code != code {
		t.Fatalf("err = %v, want %d %s", err, status, code)
	}
	return ae
}

func decode(t *testing.T, body string) *Request {
	t.Helper()
	var r Request
	if err := schema.Decode([]byte(body), &r); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return &r
}

func TestValidate(t *testing.T) {
	cases := []struct {
		body  string
		paths []string
	}{
		{`{"transactionBase64":"AQ==","sendTo":"base","confirm":true}`, []string{"recentBlockhash", "lastValidBlockHeight"}},
		{`{"transactionBase64":"AQ==","sendTo":"base","confirm":true,"recentBlockhash":"x"}`, []string{"lastValidBlockHeight"}},
		{`{"transactionBase64":"AQ==","sendTo":"base","confirm":true,"lastValidBlockHeight":0}`, []string{"recentBlockhash"}},
		{`{"transactionBase64":"AQ==","sendTo":"base","sendRpcEndpoint":"https://er.example"}`, []string{"sendRpcEndpoint"}},
		{`{"transactionBase64":"AQ==","sendTo":"ephemeral","sendRpcEndpoint":"https://er.example","confirm":false}`, nil},
	}
	for _, c := range cases {
		err := decode(t, c.body).Validate()
		if c.paths == nil {
			if err != nil {
				t.Errorf("%s: %v", c.body, err)
			}
			continue
		}
		ae := wantCode(t, err, 422, "VALIDATION_ERROR")
		var got []string
		for _, is := range ae.Issues {
			got = append(got, is.Path[0].(string))
		}
		if strings.Join(got, ",") != strings.Join(c.paths, ",") || ae.Message != "Request validation failed" {
			t.Errorf("%s: %v %q", c.body, got, ae.Message)
		}
	}
	// Schema-level rules.
	for body, msg := range map[string]string{
		`{}`: "Missing required fields: transactionBase64, sendTo",
		`{"transactionBase64":"","sendTo":"base"}`:                                     "Request validation failed",
		`{"transactionBase64":"AQ==","sendTo":"rollup"}`:                               "Request validation failed",
		`{"transactionBase64":"AQ==","sendTo":"ephemeral","sendRpcEndpoint":"x"}`:      "Request validation failed",
		`{"transactionBase64":"AQ==","sendTo":"base","lastValidBlockHeight":-1}`:       "Request validation failed",
		`{"transactionBase64":"AQ==","sendTo":"base","maxRetries":1.5}`:                "Request validation failed",
		`{"transactionBase64":"AQ==","sendTo":"base","confirm":"yes"}`:                 "Request validation failed",
		`{"transactionBase64":"AQ==","sendTo":"ephemeral","sendRpcEndpoint":"ws://x"}`: "Request validation failed",
	} {
		var r Request
		ae := wantCode(t, schema.Decode([]byte(body), &r), 422, "VALIDATION_ERROR")
		if ae.Message != msg {
			t.Errorf("%s: %q", body, ae.Message)
		}
	}
}

func TestDecodeTransaction(t *testing.T) {
	for in, code := range map[string]string{
		"":            CodeInvalidTransaction,
		"   ":         CodeInvalidTransaction,
		"AQ=":         CodeInvalidTransaction,
		"AQ==\n AQ==": CodeInvalidTransaction,
		"A-_=":        CodeInvalidTransaction,
		"====":        CodeInvalidTransaction,
		"AQ===":       CodeInvalidTransaction,
		"AR==":        CodeInvalidTransaction, // non-canonical padding bits
		base64.StdEncoding.EncodeToString(make([]byte, 1233)): CodeTransactionTooLarge,
	} {
		_, err := DecodeTransaction(in)
		ae := wantCode(t, err, 400, code)
		if code == CodeTransactionTooLarge && ae.Message != "Serialized transaction exceeds 1232 bytes" {
			t.Fatal(ae.Message)
		}
	}
	if b, err := DecodeTransaction("  " + base64.StdEncoding.EncodeToString(make([]byte, 1232)) + "\n"); err != nil || len(b) != 1232 {
		t.Fatal(len(b), err)
	}
}

// node is an embedded ledger reached in-process.
func node(t *testing.T) (*ledger.Ledger, *chainclient.Client) {
	t.Helper()
	l, err := ledger.Open(ledger.Config{Name: "submit", SlotDuration: 10 * time.Millisecond, FinalityDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	c, err := chainclient.New("http://127.0.0.1:8899", chainclient.WithHandler(rpcserver.New(l, rpcserver.Options{})))
	if err != nil {
		t.Fatal(err)
	}
	return l, c
}

func signedTransfer(t *testing.T, c *chainclient.Client, from ed25519.PrivateKey, to solana.PublicKey, lamports uint64) (string, chainclient.Blockhash) {
	t.Helper()
	bh, err := c.GetLatestBlockhash(t.Context(), chainclient.Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	m, err := txwire.Compile(pub(from), []txwire.Instruction{spl.SystemTransfer(pub(from), to, lamports)}, bh.Hash)
	if err != nil {
		t.Fatal(err)
	}
	tx := txwire.NewUnsigned(m)
	if err := tx.Sign(from); err != nil {
		t.Fatal(err)
	}
	return tx.Base64(), bh
}

func TestSendAndConfirmOnEmbeddedLedger(t *testing.T) {
	l, c := node(t)
	ctx := t.Context()
	alice, bob := key("alice"), key("bob")
	sig, err := l.Faucet().Airdrop(ctx, pub(alice), 1_000_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Confirm(ctx, sig, math.MaxUint64, chainclient.Confirmed, chainclient.ConfirmOptions{PollInterval: 5 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	s := &Sender{PollInterval: 5 * time.Millisecond}
	ep := Endpoints{Base: c}

	tx, bh := signedTransfer(t, c, alice, pub(bob), 1_000_000)
	req := &Request{TransactionBase64: tx, SendTo: Base, Confirm: ptr(true), RecentBlockhash: bh.Hash.String(), LastValidBlockHeight: ptr(int64(bh.LastValidBlockHeight))}
	out, err := s.Send(ctx, ep, req, "ignored-for-base")
	if err != nil {
		t.Fatal(err)
	}
	if !out.Confirmed || out.SendTo != Base || out.ConfirmationRPCEndpoint != "http://127.0.0.1:8899" || out.ConfirmationRequiresAuthToken {
		t.Fatalf("%+v", out)
	}
	if bal, _ := c.GetBalance(ctx, pub(bob), chainclient.Confirmed); bal != 1_000_000 {
		t.Fatalf("bob has %d", bal)
	}
	// Without confirm: just the signature.
	tx, _ = signedTransfer(t, c, alice, pub(bob), 2_000_000)
	out, err = s.Send(ctx, ep, &Request{TransactionBase64: tx, SendTo: Base}, "")
	if err != nil || out.Confirmed || out.Signature == "" {
		t.Fatalf("%+v %v", out, err)
	}

	// Preflight failure: the node refused it, 400 with the simulation's
	// error and logs.
	poor := key("poor")
	tx, _ = signedTransfer(t, c, alice, pub(poor), 1)
	if _, err := s.Send(ctx, ep, &Request{TransactionBase64: tx, SendTo: Base}, ""); err == nil {
		// 1 lamport leaves the new account below rent: must fail preflight.
		t.Fatal("rent-violating transfer accepted")
	} else {
		ae := wantCode(t, err, 400, apierr.CodeRPC)
		d := ae.Details.(map[string]any)
		if ae.Message != "Failed to send transaction" || d["sendTo"] != Base || d["rpcCode"] != -32002 || d["err"] == nil || d["logs"] == nil {
			t.Fatalf("%s %v", ae.Message, d)
		}
	}
	// Landed and failed (skipPreflight): 400 TRANSACTION_FAILED with details.err.
	tx, bh = signedTransfer(t, c, alice, pub(poor), 1)
	req = &Request{TransactionBase64: tx, SendTo: Base, SkipPreflight: ptr(true), MaxRetries: ptr(int64(0)),
		Confirm: ptr(true), RecentBlockhash: bh.Hash.String(), LastValidBlockHeight: ptr(int64(bh.LastValidBlockHeight))}
	_, err = s.Send(ctx, ep, req, "")
	ae := wantCode(t, err, 400, CodeTransactionFailed)
	errJSON, _ := json.Marshal(ae.Details.(map[string]any)["err"])
	if !strings.Contains(string(errJSON), "InsufficientFundsForRent") {
		t.Fatalf("details.err = %s", errJSON)
	}
}

// fakeNode answers a fixed set of JSON-RPC methods in-process and records
// the requests.
type fakeNode struct {
	mu      sync.Mutex
	height  uint64
	status  string // raw getSignatureStatuses value element
	reqs    []string
	queries []string
}

func (f *fakeNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	json.Unmarshal(b, &req)
	f.mu.Lock()
	f.reqs = append(f.reqs, req.Method+" "+string(req.Params))
	f.queries = append(f.queries, r.URL.RawQuery)
	height, status := f.height, f.status
	f.mu.Unlock()
	var result string
	switch req.Method {
	case "sendTransaction":
		result = `"` + solana.Signature{1, 2, 3}.String() + `"`
	case "getSignatureStatuses":
		if status == "" {
			status = "null"
		}
		result = `{"context":{"slot":1},"value":[` + status + `]}`
	case "getBlockHeight":
		result = jsonNum(height)
	}
	io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
}

func jsonNum(n uint64) string { b, _ := json.Marshal(n); return string(b) }

func ptr[T any](v T) *T { return &v }

func TestEphemeralTargetsAndExpiry(t *testing.T) {
	eph := &fakeNode{height: 100}
	other := &fakeNode{height: 100}
	ephClient, _ := chainclient.New("http://127.0.0.1:7799", chainclient.WithHandler(eph))
	var dialed []string
	ep := Endpoints{Ephemeral: ephClient, Dial: func(u string) (*chainclient.Client, error) {
		dialed = append(dialed, u)
		return chainclient.New(u, chainclient.WithHandler(other))
	}}
	s := &Sender{PollInterval: time.Millisecond}
	ctx := t.Context()
	tx := base64.StdEncoding.EncodeToString([]byte{1, 2, 3})

	out, err := s.Send(ctx, ep, &Request{TransactionBase64: tx, SendTo: Ephemeral, SkipPreflight: ptr(true), MaxRetries: ptr(int64(3))}, "inner-token")
	if err != nil {
		t.Fatal(err)
	}
	if out.ConfirmationRPCEndpoint != "http://127.0.0.1:7799" || !out.ConfirmationRequiresAuthToken || out.Signature != (solana.Signature{1, 2, 3}).String() {
		t.Fatalf("%+v", out)
	}
	if eph.queries[0] != "token=inner-token" || !strings.Contains(eph.reqs[0], `"preflightCommitment":"confirmed"`) ||
		!strings.Contains(eph.reqs[0], `"skipPreflight":true`) || !strings.Contains(eph.reqs[0], `"maxRetries":3`) {
		t.Fatalf("sent %v ?%v", eph.reqs, eph.queries)
	}
	// An explicit endpoint is normalised and dialled; the token goes there.
	out, err = s.Send(ctx, ep, &Request{TransactionBase64: tx, SendTo: Ephemeral, SendRPCEndpoint: " HTTPS://ER.Example/ "}, "t2")
	if err != nil {
		t.Fatal(err)
	}
	if len(dialed) != 1 || dialed[0] != "https://er.example" || out.ConfirmationRPCEndpoint != "https://er.example" || other.queries[0] != "token=t2" {
		t.Fatalf("dialed %v out %+v queries %v", dialed, out, other.queries)
	}

	// Expiry: the height passes lastValidBlockHeight with no status.
	_, err = s.Send(ctx, ep, &Request{TransactionBase64: tx, SendTo: Ephemeral, Confirm: ptr(true), RecentBlockhash: "h", LastValidBlockHeight: ptr(int64(99))}, "")
	ae := wantCode(t, err, 502, CodeTransactionExpired)
	if ae.Details.(map[string]any)["lastValidBlockHeight"] != uint64(99) {
		t.Fatalf("details %v", ae.Details)
	}
	// Landed with an error.
	eph.mu.Lock()
	eph.status = `{"slot":5,"confirmations":0,"err":{"InstructionError":[0,{"Custom":1}]},"confirmationStatus":"confirmed"}`
	eph.mu.Unlock()
	_, err = s.Send(ctx, ep, &Request{TransactionBase64: tx, SendTo: Ephemeral, Confirm: ptr(true), RecentBlockhash: "h", LastValidBlockHeight: ptr(int64(200))}, "")
	ae = wantCode(t, err, 400, CodeTransactionFailed)
	if b, _ := json.Marshal(ae.Details.(map[string]any)["err"]); string(b) != `{"InstructionError":[0,{"Custom":1}]}` {
		t.Fatalf("err %s", b)
	}
	// Confirmed.
	eph.mu.Lock()
	eph.status = `{"slot":5,"confirmations":1,"err":null,"confirmationStatus":"confirmed"}`
	eph.mu.Unlock()
	out, err = s.Send(ctx, ep, &Request{TransactionBase64: tx, SendTo: Ephemeral, Confirm: ptr(true), RecentBlockhash: "h", LastValidBlockHeight: ptr(int64(200))}, "")
	if err != nil || !out.Confirmed {
		t.Fatalf("%+v %v", out, err)
	}
	// The caller gives up while waiting: 504.
	eph.mu.Lock()
	eph.status = ""
	eph.mu.Unlock()
	cctx, cancel := context.WithCancel(ctx)
	s.OnProgress = func(chainclient.ConfirmProgress) { cancel() }
	_, err = s.Send(cctx, ep, &Request{TransactionBase64: tx, SendTo: Ephemeral, Confirm: ptr(true), RecentBlockhash: "h", LastValidBlockHeight: ptr(int64(200))}, "")
	wantCode(t, err, 504, apierr.CodeRPC)

	// Unconfigured layers.
	_, err = s.Send(ctx, Endpoints{}, &Request{TransactionBase64: tx, SendTo: Base}, "")
	wantCode(t, err, 500, apierr.CodeConfig)
	_, err = s.Send(ctx, Endpoints{}, &Request{TransactionBase64: tx, SendTo: Ephemeral}, "")
	wantCode(t, err, 500, apierr.CodeConfig)
	// Unreachable node: 502 without the URL.
	dead, _ := chainclient.New("http://127.0.0.1:1/?token=secret")
	_, err = s.Send(ctx, Endpoints{Base: dead}, &Request{TransactionBase64: tx, SendTo: Base}, "")
	ae = wantCode(t, err, 502, apierr.CodeRPC)
	if m := ae.Details.(map[string]any)["message"].(string); strings.Contains(m, "http://") || strings.Contains(m, "secret") {
		t.Fatalf("message leaks: %s", m)
	}
}

// TestSendErrorStatus: a transaction the node refuses is the caller's
// error (400, service-interface.md §7) with the node's error, and the
// simulation's err and logs for a preflight failure; a node that cannot
// take it (unreachable, unhealthy, answering HTTP errors or garbage) is a
// 502.
func TestSendErrorStatus(t *testing.T) {
	tx := base64.StdEncoding.EncodeToString([]byte{1, 2, 3})
	cases := []struct {
		name   string
		answer func(w http.ResponseWriter)
		status int
		check  func(d map[string]any) bool
	}{
		{"preflight failure", rpcAnswer(-32002, "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1",
			`{"err":{"InstructionError":[0,{"Custom":1}]},"logs":["Program log: Error: insufficient funds"],"accounts":null,"unitsConsumed":900}`), 400,
			func(d map[string]any) bool {
				logs, _ := d["logs"].([]string)
				return d["rpcCode"] == -32002 && len(logs) == 1 && string(d["err"].(json.RawMessage)) == `{"InstructionError":[0,{"Custom":1}]}`
			}},
		{"undecodable", rpcAnswer(-32602, "failed to deserialize solana_transaction::versioned::VersionedTransaction: io error: failed to fill whole buffer", ""), 400,
			func(d map[string]any) bool {
				return d["rpcCode"] == -32602 && strings.HasPrefix(d["message"].(string), "failed to deserialize")
			}},
		{"bad signature", rpcAnswer(-32003, "Transaction signature verification failure", ""), 400, nil},
		{"signature count", rpcAnswer(-32013, "Transaction signature length mismatch", ""), 400, nil},
		{"unsupported version", rpcAnswer(-32015, "Transaction version (0) is not supported", ""), 400, nil},
		{"node unhealthy", rpcAnswer(-32005, "Node is unhealthy", ""), 502, nil},
		{"internal error", rpcAnswer(-32603, "Internal error", ""), 502, nil},
		{"HTTP error", func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }, 502, nil},
		{"garbage", func(w http.ResponseWriter) { io.WriteString(w, "<html>") }, 502, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			node, _ := chainclient.New("http://127.0.0.1:8899", chainclient.WithHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.answer(w) })))
			_, err := (&Sender{}).Send(t.Context(), Endpoints{Base: node}, &Request{TransactionBase64: tx, SendTo: Base}, "")
			ae := wantCode(t, err, c.status, apierr.CodeRPC)
			d := ae.Details.(map[string]any)
			if ae.Message != "Failed to send transaction" || d["sendTo"] != Base || (c.check != nil && !c.check(d)) {
				t.Fatalf("%s %v", ae.Message, d)
			}
		})
	}
}

func rpcAnswer(code int, message, data string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		e := map[string]any{"code": code, "message": message}
		if data != "" {
			e["data"] = json.RawMessage(data)
		}
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": 1, "error": e})
	}
}
