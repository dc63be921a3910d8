package rpcserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func manualNode(t testing.TB) *node {
	return startNode(t, ledger.Config{Name: "manual", ManualSlots: true, FinalityDepth: 2})
}

func (n *node) fund(t testing.TB, lamports uint64) solana.PublicKey {
	k := newKey(t)
	if _, err := n.l.Faucet().Airdrop(ctxT(t), pub(k), lamports); err != nil {
		t.Fatal(err)
	}
	return pub(k)
}

func req(method string, params ...any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return string(b)
}

func errCode(v any) (int, string, any) {
	m, ok := v.(map[string]any)
	if !ok {
		return 0, "", nil
	}
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0, "", nil
	}
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return int(code), msg, e["data"]
}

func TestSendTransactionPipelineErrors(t *testing.T) {
	n := manualNode(t)
	ctx := ctxT(t)
	payer := newKey(t)
	if _, err := n.l.Faucet().Airdrop(ctx, pub(payer), 1_000_000_000); err != nil {
		t.Fatal(err)
	}
	stale, _ := n.l.LatestBlockhash(ledger.Processed)
	if _, err := n.l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	bh, _ := n.l.LatestBlockhash(ledger.Processed)
	transfer := func(lamports uint64) []txwire.Instruction {
		return []txwire.Instruction{spl.SystemTransfer(pub(payer), pub(newKey(t)), lamports)}
	}
	dup := signed(t, bh.Blockhash, payer, transfer(1_000_000))
	if _, err := n.l.Process(ctx, dup); err != nil {
		t.Fatal(err)
	}
	staleTx := signed(t, stale.Blockhash, payer, transfer(1_000_001))
	if _, err := n.l.AdvanceSlots(ctx, ledger.MaxProcessingAge+1); err != nil {
		t.Fatal(err)
	}
	bh, _ = n.l.LatestBlockhash(ledger.Processed)
	badSig := signed(t, bh.Blockhash, payer, transfer(1_000_002))
	badSig[3] ^= 0xff
	big := signed(t, bh.Blockhash, payer, []txwire.Instruction{spl.Memo(strings.Repeat("m", 1300))})
	dupKeys := signed(t, bh.Blockhash, payer, transfer(1_000_003))
	// Make account 2 a copy of account 1: the message lists a key twice.
	off := 1 + 64 + 3 + 1
	copy(dupKeys[off+64:off+96], dupKeys[off+32:off+64])
	b64 := base64.StdEncoding.EncodeToString
	bigAcct := pub(newKey(t))
	if _, err := n.l.Apply(ctx, func(w ledger.AccountWriter) error {
		w.Set(bigAcct, &ledger.Account{Lamports: 10_000_000, Owner: spl.SystemProgramID, Data: make([]byte, 200)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name    string
		body    string
		code    int
		message string
	}{
		{"bad signature", req("sendTransaction", b64(badSig), map[string]any{"encoding": "base64"}), -32003, "Transaction signature verification failure"},
		{"stale blockhash", req("sendTransaction", b64(staleTx), map[string]any{"encoding": "base64", "preflightCommitment": "processed"}), -32002, "Transaction simulation failed: Blockhash not found"},
		{"duplicate", req("sendTransaction", b64(dup), map[string]any{"encoding": "base64", "preflightCommitment": "processed"}), -32002, "Transaction simulation failed: Blockhash not found"},
		{"fee payer without lamports", req("sendTransaction", b64(signed(t, bh.Blockhash, newKey(t), []txwire.Instruction{spl.Memo("x")})), map[string]any{"encoding": "base64", "preflightCommitment": "processed"}), -32002, "Transaction simulation failed: Attempt to debit an account but found no record of a prior credit."},
		{"oversize", req("sendTransaction", b64(big), map[string]any{"encoding": "base64"}), -32602, "base64 encoded solana_transaction::versioned::VersionedTransaction too large"},
		{"oversize base58", req("sendTransaction", base58.Encode(big)), -32602, "base58 encoded solana_transaction::versioned::VersionedTransaction too large"},
		{"malformed base64", req("sendTransaction", "not base64!!", map[string]any{"encoding": "base64"}), -32602, "invalid base64 encoding"},
		{"malformed base58", req("sendTransaction", "0OIl"), -32602, "invalid base58 encoding"},
		{"undecodable", req("sendTransaction", b64([]byte{1, 2, 3}), map[string]any{"encoding": "base64"}), -32602, "failed to deserialize solana_transaction::versioned::VersionedTransaction"},
		{"sanitize", req("sendTransaction", b64(dupKeys), map[string]any{"encoding": "base64"}), -32602, "invalid transaction: Account loaded twice"},
		{"unsupported encoding", req("sendTransaction", "abc", map[string]any{"encoding": "json"}), -32602, "unsupported encoding: json"},
		{"unknown method", req("getEverything"), -32601, "Method not found"},
		{"wrong param type", req("getBalance", 42), -32602, "Invalid params: invalid type: number"},
		{"bad pubkey", req("getBalance", "zzz"), -32602, "Invalid param: Invalid"},
		{"too many params", req("getSlot", map[string]any{}, 1), -32602, "Invalid params: invalid length 2"},
		{"missing param", req("getBalance"), -32602, "Invalid params: invalid length 0"},
		{"bad commitment", req("getSlot", map[string]any{"commitment": "soon"}), -32602, "Invalid params: unknown variant `soon`"},
		{"processed history", req("getTransaction", base58.Encode(dup[1:65]), map[string]any{"commitment": "processed"}), -32602, "Method does not support commitment below `confirmed`"},
		{"min context slot", req("getSlot", map[string]any{"minContextSlot": 1_000_000}), -32016, "Minimum context slot has not been reached"},
		{"too many statuses", req("getSignatureStatuses", make([]string, 257)), -32602, "Too many inputs provided; max 256"},
		{"too many accounts", req("getMultipleAccounts", make([]string, 101)), -32602, "Too many inputs provided; max 100"},
		{"blocks limit", req("getBlocksWithLimit", 0, 500_001), -32602, "Limit too large; max 500000"},
		{"signature limit", req("getSignaturesForAddress", pub(payer).String(), map[string]any{"limit": 1001}), -32602, "Invalid limit; max 1000"},
		{"not a token account", req("getTokenAccountBalance", pub(payer).String()), -32602, "Invalid param: not a Token account"},
		{"unknown account", req("getTokenAccountBalance", pub(newKey(t)).String()), -32602, "Invalid param: could not find account"},
		{"base58 account data too long", req("getAccountInfo", bigAcct.String(), map[string]any{"encoding": "base58", "commitment": "processed"}), -32600, "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding."},
		{"base58 account data", req("getAccountInfo", spl.SysvarClockID.String(), map[string]any{"encoding": "base58"}), 0, ""},
		{"future block", req("getBlock", 1_000_000, map[string]any{"commitment": "confirmed"}), -32004, "Block not available for slot 1000000"},
		{"object params", `{"jsonrpc":"2.0","id":1,"method":"getSlot","params":{"commitment":"processed"}}`, -32602, "Invalid params"},
		{"parse error", `{"jsonrpc":"2.0",`, -32700, "Parse error"},
		{"missing version", `{"id":1,"method":"getSlot"}`, -32600, "Invalid request"},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"getSlot"}`, -32600, "Invalid request"},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, -32600, "Invalid request"},
		{"empty batch", `[]`, -32600, "Invalid request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, v := rawCall(t, n.url, tc.body)
			if status != http.StatusOK {
				t.Fatalf("HTTP %d", status)
			}
			code, msg, _ := errCode(v)
			if code != tc.code || !strings.HasPrefix(msg, tc.message) {
				t.Fatalf("got %d %q, want %d %q (response %v)", code, msg, tc.code, tc.message, v)
			}
		})
	}

	// The duplicate is a real AlreadyProcessed once the blockhash is fresh.
	fresh := signed(t, bh.Blockhash, payer, transfer(1_000_007))
	_, v := rawCall(t, n.url, req("sendTransaction", b64(fresh), map[string]any{"encoding": "base64", "preflightCommitment": "processed"}))
	if code, _, _ := errCode(v); code != 0 {
		t.Fatalf("first send: %v", v)
	}
	_, v = rawCall(t, n.url, req("sendTransaction", b64(fresh), map[string]any{"encoding": "base64", "preflightCommitment": "processed"}))
	code, msg, data := errCode(v)
	if code != -32002 || msg != "Transaction simulation failed: This transaction has already been processed" {
		t.Fatalf("duplicate: %v", v)
	}
	if d, _ := json.Marshal(data); !strings.Contains(string(d), `"err":"AlreadyProcessed"`) {
		t.Fatalf("duplicate data %s", d)
	}
}

func TestEnvelope(t *testing.T) {
	n := manualNode(t)
	t.Run("ids of any type are echoed", func(t *testing.T) {
		for _, id := range []string{`1`, `"abc"`, `null`, `{"a":1}`, `[1,2]`, `1.5`, `true`} {
			_, v := rawCall(t, n.url, `{"jsonrpc":"2.0","id":`+id+`,"method":"getBlocksWithLimit","params":[0]}`)
			m := v.(map[string]any)
			got, _ := json.Marshal(m["id"])
			if string(got) != id || m["result"] == nil {
				t.Fatalf("id %s: %v", id, v)
			}
		}
	})
	t.Run("getBlocksWithLimit with only a start slot", func(t *testing.T) {
		if _, err := n.l.AdvanceSlots(ctxT(t), 3); err != nil {
			t.Fatal(err)
		}
		_, v := rawCall(t, n.url, req("getBlocksWithLimit", 1))
		got, _ := json.Marshal(v.(map[string]any)["result"])
		if string(got) != "[1,2,3]" {
			t.Fatalf("result %s", got)
		}
		_, v = rawCall(t, n.url, req("getBlocksWithLimit", 1, 2))
		got, _ = json.Marshal(v.(map[string]any)["result"])
		if string(got) != "[1,2]" {
			t.Fatalf("result %s", got)
		}
		_, v = rawCall(t, n.url, req("getBlocksWithLimit", 100, 2))
		got, _ = json.Marshal(v.(map[string]any)["result"])
		if string(got) != "[]" {
			t.Fatalf("result beyond tip %s", got)
		}
	})
	t.Run("batch with notifications and errors", func(t *testing.T) {
		body := `[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","method":"getSlot"},{"jsonrpc":"2.0","id":"x","method":"nope"},5]`
		_, v := rawCall(t, n.url, body)
		arr, ok := v.([]any)
		if !ok || len(arr) != 3 {
			t.Fatalf("batch response %v", v)
		}
		if code, _, _ := errCode(arr[1]); code != -32601 {
			t.Fatalf("second %v", arr[1])
		}
		if code, _, _ := errCode(arr[2]); code != -32600 {
			t.Fatalf("third %v", arr[2])
		}
	})
	t.Run("notifications get no response", func(t *testing.T) {
		status, v := rawCall(t, n.url, `{"jsonrpc":"2.0","method":"getSlot"}`)
		if status != 200 || v != nil {
			t.Fatalf("%d %v", status, v)
		}
		status, v = rawCall(t, n.url, `[{"jsonrpc":"2.0","method":"getSlot"},{"jsonrpc":"2.0","method":"nope"}]`)
		if status != 200 || v != nil {
			t.Fatalf("%d %v", status, v)
		}
	})
	t.Run("body limit", func(t *testing.T) {
		status, v := rawCall(t, n.url, `{"jsonrpc":"2.0","id":1,"method":"getSlot","params":["`+strings.Repeat("a", 5<<20)+`"]}`)
		if status != http.StatusRequestEntityTooLarge {
			t.Fatalf("%d %v", status, v)
		}
	})
	t.Run("u64 as integers", func(t *testing.T) {
		resp, err := http.Post(n.url, "application/json", strings.NewReader(req("getAccountInfo", n.l.Faucet().PublicKey().String(), map[string]any{"encoding": "base64"})))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var raw json.RawMessage
		json.NewDecoder(resp.Body).Decode(&raw)
		if !strings.Contains(string(raw), `"rentEpoch":18446744073709551615`) || !strings.Contains(string(raw), `"context":{"slot":`) || !strings.Contains(string(raw), `"apiVersion":"3.0.0"`) {
			t.Fatalf("response %s", raw)
		}
	})
	t.Run("handlers can be overridden and added", func(t *testing.T) {
		n.h.Handle("getIdentity", func(ctx context.Context, p Params) (any, error) {
			return map[string]string{"identity": "override"}, nil
		})
		_, v := rawCall(t, n.url, req("getIdentity"))
		if fmt.Sprint(v.(map[string]any)["result"]) != "map[identity:override]" {
			t.Fatalf("override: %v", v)
		}
	})
	t.Run("GET /health", func(t *testing.T) {
		resp, err := http.Get(n.url + "/health")
		if err != nil || resp.StatusCode != 200 {
			t.Fatal(resp, err)
		}
		resp.Body.Close()
	})
}

func TestVersionedTransactions(t *testing.T) {
	n := manualNode(t)
	ctx := ctxT(t)
	payer := newKey(t)
	if _, err := n.l.Faucet().Airdrop(ctx, pub(payer), 1_000_000_000); err != nil {
		t.Fatal(err)
	}
	bh, _ := n.l.LatestBlockhash(ledger.Processed)
	msg, err := txwire.Compile(pub(payer), []txwire.Instruction{spl.Memo("v0")}, bh.Blockhash)
	if err != nil {
		t.Fatal(err)
	}
	msg.Version = txwire.V0
	tx := txwire.NewUnsigned(msg)
	if err := tx.Sign(payer); err != nil {
		t.Fatal(err)
	}
	_, v := rawCall(t, n.url, req("sendTransaction", base64.StdEncoding.EncodeToString(tx.Bytes()), map[string]any{"encoding": "base64", "preflightCommitment": "processed"}))
	if code, _, _ := errCode(v); code != 0 {
		t.Fatalf("send v0: %v", v)
	}
	if _, err := n.l.AdvanceSlot(ctx); err != nil {
		t.Fatal(err)
	}
	sig := tx.ID().String()
	_, v = rawCall(t, n.url, req("getTransaction", sig, map[string]any{"commitment": "confirmed"}))
	if code, msg, _ := errCode(v); code != -32015 || !strings.Contains(msg, "maxSupportedTransactionVersion") {
		t.Fatalf("no max version: %v", v)
	}
	_, v = rawCall(t, n.url, req("getTransaction", sig, map[string]any{"commitment": "confirmed", "maxSupportedTransactionVersion": 0}))
	res := v.(map[string]any)["result"].(map[string]any)
	if res["version"] != float64(0) {
		t.Fatalf("version %v", res["version"])
	}
	_, v = rawCall(t, n.url, req("getTransaction", sig, map[string]any{"commitment": "confirmed", "maxSupportedTransactionVersion": 0, "encoding": "jsonParsed"}))
	js, _ := json.Marshal(v)
	if !strings.Contains(string(js), `"parsed":"v0"`) || !strings.Contains(string(js), `"program":"spl-memo"`) {
		t.Fatalf("jsonParsed %s", js)
	}
}

func TestMarshalResponseFastPath(t *testing.T) {
	sig := solana.Signature{1, 2, 3}
	for _, r := range []*response{
		{JSONRPC: "2.0", Result: sig, ID: json.RawMessage(`7`)},
		{JSONRPC: "2.0", Result: uint64(18446744073709551615), ID: json.RawMessage(`"x"`)},
		{JSONRPC: "2.0", Result: "ok", ID: json.RawMessage(`{"a":[1]}`)},
		{JSONRPC: "2.0", Result: "needs <escaping> & \"quotes\"", ID: json.RawMessage(`null`)},
		{JSONRPC: "2.0", Error: Errorf(-32601, "Method not found"), ID: json.RawMessage(`1`)},
	} {
		got, want := marshalResponse(r), mustMarshal(r)
		var a, b any
		if json.Unmarshal(got, &a) != nil || json.Unmarshal(want, &b) != nil || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("fast %s, want %s", got, want)
		}
	}
}
