package chainclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
)

var (
	keyA    = solana.MustPublicKeyFromBase58("MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57")
	keyB    = solana.MustPublicKeyFromBase58("MEUGGrYPxKk17hCr7wpT6s8dtNokZj5U2L57vjYMS8e")
	hash1   = solana.MustHashFromBase58("EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N")
	hash2   = solana.MustHashFromBase58("GHtXQBsoZHVnNFa9YevAzFr17DJjgHXk3ycTKD5xD3Zi")
	sigFoo  = solana.SignatureFromBytes(bytes.Repeat([]byte{7}, 64))
	sigBar  = solana.SignatureFromBytes(bytes.Repeat([]byte{9}, 64))
	testCtx = context.Background()
)

func TestCallEnvelopeAndHeaders(t *testing.T) {
	f := newFake(t)
	f.raw("getHealth", `"ok"`)
	c := f.client(t, WithUserAgent("ferry-test"))
	var s string
	if err := c.Call(testCtx, "getHealth", nil, &s); err != nil || s != "ok" {
		t.Fatalf("Call = %q, %v", s, err)
	}
	if err := c.Call(testCtx, "getHealth", nil, &s); err != nil {
		t.Fatal(err)
	}
	rs := f.requests()
	var env map[string]json.RawMessage
	if err := json.Unmarshal(rs[0].Body, &env); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, env["jsonrpc"], `"2.0"`)
	jsonEq(t, env["method"], `"getHealth"`)
	jsonEq(t, env["params"], `[]`)
	if string(rs[0].ID) == string(rs[1].ID) {
		t.Errorf("request ids repeat: %s", rs[0].ID)
	}
	if ct := rs[0].Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if ua := rs[0].Header.Get("User-Agent"); ua != "ferry-test" {
		t.Errorf("User-Agent = %q", ua)
	}
}

func TestCallRawVerbatimParams(t *testing.T) {
	f := newFake(t)
	f.raw("getBlocksWithLimit", `[5,6,7]`)
	c := f.client(t)
	raw, err := c.CallRaw(testCtx, "getBlocksWithLimit", json.RawMessage(`[5, 3]`))
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, raw, `[5,6,7]`)
	jsonEq(t, f.last("getBlocksWithLimit").Params, `[5,3]`)
}

func TestCallNilParams(t *testing.T) {
	f := newFake(t)
	f.raw("getSlot", `1`)
	c := f.client(t)
	var nilSlice []any
	for _, p := range []any{nil, nilSlice, json.RawMessage(nil)} {
		if err := c.Call(testCtx, "getSlot", p, nil); err != nil {
			t.Fatal(err)
		}
		jsonEq(t, f.last("getSlot").Params, `[]`)
	}
}

func TestCallNullResult(t *testing.T) {
	f := newFake(t)
	f.on("getTransaction", func(json.RawMessage) (any, *RPCError) { return nil, nil })
	c := f.client(t)
	raw, err := c.CallRaw(testCtx, "getTransaction", []any{"x"})
	if err != nil || string(raw) != "null" {
		t.Fatalf("CallRaw = %s, %v; want null", raw, err)
	}
}

func TestGetLatestBlockhash(t *testing.T) {
	f := newFake(t)
	f.raw("getLatestBlockhash", `{"context":{"slot":2792,"apiVersion":"3.0.1"},"value":{"blockhash":"EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N","lastValidBlockHeight":3090}}`)
	c := f.client(t)
	bh, err := c.GetLatestBlockhash(testCtx, Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	if bh.Hash != hash1 || bh.LastValidBlockHeight != 3090 {
		t.Errorf("got %+v", bh)
	}
	jsonEq(t, f.last("getLatestBlockhash").Params, `[{"commitment":"confirmed"}]`)

	if _, err := c.GetLatestBlockhash(testCtx, ""); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, f.last("getLatestBlockhash").Params, `[]`)
}

func TestGetAccountInfo(t *testing.T) {
	f := newFake(t)
	f.on("getAccountInfo", func(p json.RawMessage) (any, *RPCError) {
		var args []json.RawMessage
		json.Unmarshal(p, &args)
		var key string
		json.Unmarshal(args[0], &key)
		switch key {
		case keyA.String():
			// Agave shape, rentEpoch above 2^53, plus a field the client does not know.
			return json.RawMessage(`{"context":{"slot":1},"value":{"data":["AQID","base64"],"executable":false,"lamports":1461600,"owner":"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA","rentEpoch":18446744073709551615,"space":3,"newField":{"x":1}}}`), nil
		default:
			return json.RawMessage(`{"context":{"slot":1},"value":null}`), nil
		}
	})
	c := f.client(t)
	a, err := c.GetAccountInfo(testCtx, keyA, Finalized)
	if err != nil {
		t.Fatal(err)
	}
	if a == nil || a.Lamports != 1461600 || a.Owner != solana.TokenProgramID || !bytes.Equal(a.Data, []byte{1, 2, 3}) || a.RentEpoch != math.MaxUint64 {
		t.Errorf("account = %+v", a)
	}
	jsonEq(t, f.last("getAccountInfo").Params, `["`+keyA.String()+`",{"encoding":"base64","commitment":"finalized"}]`)

	missing, err := c.GetAccountInfo(testCtx, keyB, "")
	if err != nil || missing != nil {
		t.Errorf("missing account = %+v, %v; want nil, nil", missing, err)
	}
}

func TestAccountDataShapes(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		data       []byte
		rentEpoch  uint64
	}{
		{"base64", `{"lamports":1,"owner":"11111111111111111111111111111111","data":["AAE=","base64"],"executable":false,"rentEpoch":0}`, []byte{0, 1}, 0},
		{"bare base58", `{"lamports":1,"owner":"11111111111111111111111111111111","data":"2VfUX","executable":false,"rentEpoch":5}`, []byte{1, 2, 3, 4}, 5},
		{"base58 pair", `{"lamports":1,"owner":"11111111111111111111111111111111","data":["2VfUX","base58"],"executable":false,"rentEpoch":5}`, []byte{1, 2, 3, 4}, 5},
		{"float rentEpoch from a JS server", `{"lamports":1,"owner":"11111111111111111111111111111111","data":["","base64"],"executable":true,"rentEpoch":18446744073709552000}`, []byte{}, math.MaxUint64},
		{"empty bare string", `{"lamports":1,"owner":"11111111111111111111111111111111","data":"","executable":false,"rentEpoch":0}`, []byte{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Account
			if err := json.Unmarshal([]byte(tc.json), &a); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Data, tc.data) || a.RentEpoch != tc.rentEpoch {
				t.Errorf("got data %v rentEpoch %d", a.Data, a.RentEpoch)
			}
		})
	}
	var a Account
	if err := json.Unmarshal([]byte(`{"lamports":1,"owner":"11111111111111111111111111111111","data":["KLUv","base64+zstd"]}`), &a); err == nil {
		t.Error("zstd data decoded without error; want an unsupported-encoding error")
	}

	// Round trip through the RPC form.
	in := Account{Lamports: 9, Owner: keyA, Data: []byte("hello"), Executable: true, RentEpoch: math.MaxUint64}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, b, `{"lamports":9,"owner":"`+keyA.String()+`","data":["aGVsbG8=","base64"],"executable":true,"rentEpoch":18446744073709551615,"space":5}`)
	var out Account
	if err := json.Unmarshal(b, &out); err != nil || out.Lamports != 9 || string(out.Data) != "hello" || out.RentEpoch != math.MaxUint64 || !out.Executable {
		t.Errorf("round trip = %+v, %v", out, err)
	}
}

func TestGetMultipleAccountsChunks(t *testing.T) {
	f := newFake(t)
	f.on("getMultipleAccounts", func(p json.RawMessage) (any, *RPCError) {
		var args []json.RawMessage
		json.Unmarshal(p, &args)
		var keys []string
		json.Unmarshal(args[0], &keys)
		vals := make([]json.RawMessage, len(keys))
		for i, k := range keys {
			if k == keyA.String() {
				vals[i] = json.RawMessage(`{"lamports":5,"owner":"11111111111111111111111111111111","data":["","base64"],"executable":false,"rentEpoch":0}`)
			} else {
				vals[i] = json.RawMessage(`null`)
			}
		}
		return map[string]any{"context": map[string]any{"slot": 3}, "value": vals}, nil
	})
	c := f.client(t)
	keys := make([]solana.PublicKey, 250)
	keys[0], keys[120], keys[249] = keyA, keyA, keyA
	for i := range keys {
		if keys[i].IsZero() {
			keys[i] = keyB
		}
	}
	accts, err := c.GetMultipleAccounts(testCtx, keys, Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	if len(accts) != 250 {
		t.Fatalf("got %d accounts", len(accts))
	}
	for i, a := range accts {
		want := i == 0 || i == 120 || i == 249
		if (a != nil) != want {
			t.Errorf("account %d present = %v, want %v", i, a != nil, want)
		}
	}
	if n := f.count("getMultipleAccounts"); n != 3 {
		t.Errorf("%d requests, want 3 (100 keys each)", n)
	}
}

func TestSimpleMethods(t *testing.T) {
	f := newFake(t)
	f.raw("getBalance", `{"context":{"slot":1},"value":2039280}`)
	f.raw("getTokenAccountBalance", `{"context":{"slot":1},"value":{"amount":"1500000","decimals":6,"uiAmount":1.5,"uiAmountString":"1.5"}}`)
	f.raw("getBlockHeight", `4242`)
	f.raw("getSlot", `5000`)
	f.raw("getEpochInfo", `{"absoluteSlot":166598,"blockHeight":166500,"epoch":27,"slotIndex":2790,"slotsInEpoch":8192,"transactionCount":22661093}`)
	f.raw("getMinimumBalanceForRentExemption", `2039280`)
	f.raw("requestAirdrop", `"`+sigFoo.String()+`"`)
	c := f.client(t)

	if v, err := c.GetBalance(testCtx, keyA, Processed); err != nil || v != 2039280 {
		t.Errorf("GetBalance = %d, %v", v, err)
	}
	jsonEq(t, f.last("getBalance").Params, `["`+keyA.String()+`",{"commitment":"processed"}]`)

	ta, err := c.GetTokenAccountBalance(testCtx, keyA, "")
	if err != nil || ta.Amount != 1500000 || ta.Decimals != 6 || ta.UIAmountString != "1.5" || ta.UIAmount == nil || *ta.UIAmount != 1.5 {
		t.Errorf("GetTokenAccountBalance = %+v, %v", ta, err)
	}
	if v, err := c.GetBlockHeight(testCtx, Confirmed); err != nil || v != 4242 {
		t.Errorf("GetBlockHeight = %d, %v", v, err)
	}
	jsonEq(t, f.last("getBlockHeight").Params, `[{"commitment":"confirmed"}]`)
	if v, err := c.GetSlot(testCtx, ""); err != nil || v != 5000 {
		t.Errorf("GetSlot = %d, %v", v, err)
	}
	ei, err := c.GetEpochInfo(testCtx, "")
	if err != nil || ei.Epoch != 27 || ei.SlotsInEpoch != 8192 || ei.TransactionCount == nil || *ei.TransactionCount != 22661093 {
		t.Errorf("GetEpochInfo = %+v, %v", ei, err)
	}
	if v, err := c.GetMinimumBalanceForRentExemption(testCtx, 165, ""); err != nil || v != 2039280 {
		t.Errorf("GetMinimumBalanceForRentExemption = %d, %v", v, err)
	}
	jsonEq(t, f.last("getMinimumBalanceForRentExemption").Params, `[165]`)
	if s, err := c.RequestAirdrop(testCtx, keyA, 1e9, Confirmed); err != nil || s != sigFoo {
		t.Errorf("RequestAirdrop = %s, %v", s, err)
	}
	jsonEq(t, f.last("requestAirdrop").Params, `["`+keyA.String()+`",1000000000,{"commitment":"confirmed"}]`)
}

func TestGetIdentity(t *testing.T) {
	f := newFake(t)
	f.raw("getIdentity", `{"identity":"MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57"}`)
	c := f.client(t)
	id, err := c.GetIdentity(testCtx)
	if err != nil || id.Identity != keyA || id.FQDN != "" {
		t.Errorf("validator identity = %+v, %v", id, err)
	}
	f.raw("getIdentity", `{"identity":"MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57","fqdn":"https://devnet-as.magicblock.app"}`)
	id, err = c.GetIdentity(testCtx)
	if err != nil || id.FQDN != "https://devnet-as.magicblock.app" {
		t.Errorf("router identity = %+v, %v", id, err)
	}
	f.raw("getIdentity", `{}`)
	if _, err := c.GetIdentity(testCtx); err == nil || !strings.Contains(err.Error(), "no identity") {
		t.Errorf("empty identity: err = %v", err)
	}
}

func TestSendTransaction(t *testing.T) {
	f := newFake(t)
	f.raw("sendTransaction", `"`+sigFoo.String()+`"`)
	c := f.client(t)
	tx := []byte{1, 2, 3, 250}

	sig, err := c.SendTransaction(testCtx, tx, SendOptions{})
	if err != nil || sig != sigFoo {
		t.Fatalf("SendTransaction = %s, %v", sig, err)
	}
	jsonEq(t, f.last("sendTransaction").Params, `["AQID+g==",{"encoding":"base64"}]`)

	zero := uint(0)
	slot := uint64(77)
	if _, err := c.SendTransaction(testCtx, tx, SendOptions{SkipPreflight: true, PreflightCommitment: Confirmed, MaxRetries: &zero, MinContextSlot: &slot}); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, f.last("sendTransaction").Params, `["AQID+g==",{"encoding":"base64","skipPreflight":true,"preflightCommitment":"confirmed","maxRetries":0,"minContextSlot":77}]`)

	// Preflight failure: -32002 with the simulation result in data.
	f.on("sendTransaction", func(json.RawMessage) (any, *RPCError) {
		return nil, &RPCError{Code: -32002, Message: "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1",
			Data: json.RawMessage(`{"err":{"InstructionError":[0,{"Custom":1}]},"logs":["Program log: Error: insufficient funds"],"accounts":null,"unitsConsumed":181}`)}
	})
	_, err = c.SendTransaction(testCtx, tx, SendOptions{})
	var re *RPCError
	if !errors.As(err, &re) || re.Code != -32002 || !strings.Contains(re.Message, "custom program error: 0x1") {
		t.Fatalf("preflight failure err = %v", err)
	}
	var sim SimulateResult
	if err := json.Unmarshal(re.Data, &sim); err != nil || string(sim.Err) != `{"InstructionError":[0,{"Custom":1}]}` || len(sim.Logs) != 1 {
		t.Errorf("preflight data = %+v, %v", sim, err)
	}
	if !strings.Contains(err.Error(), "sendTransaction at "+f.srv.URL) {
		t.Errorf("error %q does not say what was being done", err)
	}
}

func TestSimulateTransaction(t *testing.T) {
	f := newFake(t)
	f.raw("simulateTransaction", `{"context":{"slot":9},"value":{"err":null,"logs":["Program 11111111111111111111111111111111 invoke [1]","Program 11111111111111111111111111111111 success"],"accounts":null,"unitsConsumed":150,"returnData":null,"innerInstructions":null,"replacementBlockhash":{"blockhash":"EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N","lastValidBlockHeight":300},"loadedAccountsDataSize":1234,"fee":5000}}`)
	c := f.client(t)
	res, err := c.SimulateTransaction(testCtx, []byte{1}, SimulateOptions{ReplaceRecentBlockhash: true, Commitment: Processed})
	if err != nil {
		t.Fatal(err)
	}
	if res.Err != nil || len(res.Logs) != 2 || res.UnitsConsumed == nil || *res.UnitsConsumed != 150 || res.ReturnData != nil {
		t.Errorf("result = %+v", res)
	}
	if res.ReplacementBlockhash == nil || res.ReplacementBlockhash.Hash != hash1 {
		t.Errorf("replacement blockhash = %+v", res.ReplacementBlockhash)
	}
	jsonEq(t, f.last("simulateTransaction").Params, `["AQ==",{"encoding":"base64","commitment":"processed","replaceRecentBlockhash":true}]`)

	f.raw("simulateTransaction", `{"context":{"slot":9},"value":{"err":{"InsufficientFundsForRent":{"account_index":1}},"logs":[],"accounts":null,"unitsConsumed":0}}`)
	res, err = c.SimulateTransaction(testCtx, []byte{1}, SimulateOptions{})
	if err != nil || string(res.Err) != `{"InsufficientFundsForRent":{"account_index":1}}` {
		t.Errorf("failed simulation = %+v, %v", res, err)
	}
}

func TestGetSignatureStatuses(t *testing.T) {
	f := newFake(t)
	f.raw("getSignatureStatuses", `{"context":{"slot":82},"value":[{"slot":48,"confirmations":null,"err":null,"status":{"Ok":null},"confirmationStatus":"finalized"},null]}`)
	c := f.client(t)
	sts, err := c.GetSignatureStatuses(testCtx, []solana.Signature{sigFoo, sigBar}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 2 || sts[0] == nil || sts[0].Slot != 48 || sts[0].Err != nil || sts[0].ConfirmationStatus != Finalized || sts[1] != nil {
		t.Errorf("statuses = %+v", sts)
	}
	jsonEq(t, f.last("getSignatureStatuses").Params, `[["`+sigFoo.String()+`","`+sigBar.String()+`"],{"searchTransactionHistory":true}]`)

	// Failed transaction.
	f.raw("getSignatureStatuses", `{"context":{"slot":82},"value":[{"slot":50,"confirmations":1,"err":{"InstructionError":[0,{"Custom":1}]},"status":{"Err":{"InstructionError":[0,{"Custom":1}]}},"confirmationStatus":"confirmed"}]}`)
	sts, err = c.GetSignatureStatuses(testCtx, []solana.Signature{sigFoo}, false)
	if err != nil || string(sts[0].Err) != `{"InstructionError":[0,{"Custom":1}]}` || *sts[0].Confirmations != 1 {
		t.Errorf("failed status = %+v, %v", sts[0], err)
	}
	jsonEq(t, f.last("getSignatureStatuses").Params, `[["`+sigFoo.String()+`"]]`)

	// The MagicBlock router answers value: [] for transactions it did not forward.
	f.raw("getSignatureStatuses", `{"context":{"slot":0},"value":[]}`)
	sts, err = c.GetSignatureStatuses(testCtx, []solana.Signature{sigFoo, sigBar}, false)
	if err != nil || len(sts) != 2 || sts[0] != nil || sts[1] != nil {
		t.Errorf("router quirk: %+v, %v", sts, err)
	}

	// An old node without confirmationStatus.
	f.raw("getSignatureStatuses", `{"context":{"slot":82},"value":[{"slot":48,"confirmations":null,"err":null},{"slot":49,"confirmations":3,"err":null}]}`)
	sts, err = c.GetSignatureStatuses(testCtx, []solana.Signature{sigFoo, sigBar}, false)
	if err != nil || sts[0].ConfirmationStatus != Finalized || sts[1].ConfirmationStatus != Confirmed {
		t.Errorf("inferred statuses = %+v %+v, %v", sts[0], sts[1], err)
	}

	// More than 256 signatures are split.
	f.on("getSignatureStatuses", func(p json.RawMessage) (any, *RPCError) {
		var args [][]string
		json.Unmarshal(p, &args)
		return map[string]any{"context": map[string]int{"slot": 1}, "value": make([]any, len(args[0]))}, nil
	})
	before := f.count("getSignatureStatuses")
	sts, err = c.GetSignatureStatuses(testCtx, make([]solana.Signature, 300), false)
	if err != nil || len(sts) != 300 || f.count("getSignatureStatuses")-before != 2 {
		t.Errorf("chunked: %d statuses, %d requests, %v", len(sts), f.count("getSignatureStatuses")-before, err)
	}
}

func TestGetTransaction(t *testing.T) {
	f := newFake(t)
	f.raw("getTransaction", `{"slot":5,"blockTime":null,"transaction":{"signatures":[]},"meta":{"err":null,"fee":5000},"version":"legacy"}`)
	c := f.client(t)
	raw, err := c.GetTransaction(testCtx, sigFoo, TransactionOptions{Commitment: Confirmed})
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, raw, `{"slot":5,"blockTime":null,"transaction":{"signatures":[]},"meta":{"err":null,"fee":5000},"version":"legacy"}`)
	jsonEq(t, f.last("getTransaction").Params, `["`+sigFoo.String()+`",{"encoding":"json","maxSupportedTransactionVersion":0,"commitment":"confirmed"}]`)

	f.raw("getTransaction", `null`)
	raw, err = c.GetTransaction(testCtx, sigFoo, TransactionOptions{Encoding: "base64"})
	if err != nil || raw != nil {
		t.Errorf("unknown transaction = %s, %v; want nil", raw, err)
	}
	jsonEq(t, f.last("getTransaction").Params, `["`+sigFoo.String()+`",{"encoding":"base64","maxSupportedTransactionVersion":0}]`)
}

func TestGetTransactionWire(t *testing.T) {
	f := newFake(t)
	c := f.client(t)
	tests := []struct {
		name, answer string
		wire         []byte
		wantErr      bool
	}{
		{"landed", `{"slot":5,"transaction":["AQID","base64"],"meta":null}`, []byte{1, 2, 3}, false},
		{"unknown", `null`, nil, false},
		{"not base64 data", `{"slot":5,"transaction":["!!","base64"]}`, nil, true},
		{"another encoding", `{"slot":5,"transaction":["Ldp","base58"]}`, nil, true},
		{"no transaction", `{"slot":5}`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.raw("getTransaction", tt.answer)
			wire, raw, err := c.GetTransactionWire(testCtx, sigFoo, Confirmed)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !bytes.Equal(wire, tt.wire) {
				t.Errorf("wire = %v, want %v", wire, tt.wire)
			}
			if !tt.wantErr && tt.wire != nil {
				jsonEq(t, raw, tt.answer)
			}
			if !tt.wantErr && tt.wire == nil && raw != nil {
				t.Errorf("raw = %s for an unknown transaction, want nil", raw)
			}
		})
	}
	jsonEq(t, f.last("getTransaction").Params, `["`+sigFoo.String()+`",{"encoding":"base64","maxSupportedTransactionVersion":0,"commitment":"confirmed"}]`)
}

func TestGetSignaturesForAddress(t *testing.T) {
	f := newFake(t)
	f.raw("getSignaturesForAddress", `[{"signature":"`+sigFoo.String()+`","slot":114,"err":null,"memo":"[10] invoice 42","blockTime":1700000000,"confirmationStatus":"finalized"},{"signature":"`+sigBar.String()+`","slot":113,"err":{"InstructionError":[0,{"Custom":1}]},"memo":null,"blockTime":null,"confirmationStatus":"confirmed"}]`)
	c := f.client(t)
	infos, err := c.GetSignaturesForAddress(testCtx, keyA, SignaturesOptions{Limit: 5, Before: sigBar, Commitment: Confirmed})
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].Signature != sigFoo || infos[0].Memo == nil || *infos[0].Memo != "[10] invoice 42" || infos[0].Err != nil ||
		*infos[0].BlockTime != 1700000000 || infos[1].Err == nil || infos[1].BlockTime != nil {
		t.Errorf("infos = %+v", infos)
	}
	jsonEq(t, f.last("getSignaturesForAddress").Params, `["`+keyA.String()+`",{"limit":5,"before":"`+sigBar.String()+`","commitment":"confirmed"}]`)
	if _, err := c.GetSignaturesForAddress(testCtx, keyA, SignaturesOptions{Limit: 1001}); err == nil {
		t.Error("limit 1001 accepted")
	}
}

func TestRouterMethods(t *testing.T) {
	f := newFake(t)
	f.raw("getRoutes", `[{"identity":"MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57","fqdn":"https://devnet-as.magicblock.app","baseFee":0,"blockTimeMs":50,"countryCode":"SGP"},
		{"identity":"MEUGGrYPxKk17hCr7wpT6s8dtNokZj5U2L57vjYMS8e","fqdn":"devnet-eu.magicblock.app/","baseFee":0,"blockTimeMs":50,"countryCode":"EU","extra":true}]`)
	f.raw("getDelegationStatus", `{"isDelegated":true,"fqdn":"https://devnet-as.magicblock.app","delegationRecord":{"authority":"MAS1Dt9qreoRMQ14YQuhg8UTZMMzDdKhmkZMECCzk57","owner":"SPLxh1LVZzEkX99H6rqYizhytLWPZVV296zyYDPagv2","delegationSlot":412,"lamports":1447680}}`)
	f.raw("getBlockhashForAccounts", `{"blockhash":"EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N","lastValidBlockHeight":912}`)
	c := f.client(t)

	routes, err := c.GetRoutes(testCtx)
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 2 || routes[0].Identity != keyA || routes[0].BlockTimeMs != 50 || routes[0].CountryCode != "SGP" {
		t.Errorf("routes = %+v", routes)
	}
	if routes[1].FQDN != "https://devnet-eu.magicblock.app" {
		t.Errorf("bare host fqdn normalised to %q", routes[1].FQDN)
	}

	ds, err := c.GetDelegationStatus(testCtx, keyB)
	if err != nil || !ds.IsDelegated || ds.FQDN != "https://devnet-as.magicblock.app" || ds.DelegationRecord == nil ||
		ds.DelegationRecord.Authority != keyA || ds.DelegationRecord.DelegationSlot != 412 || ds.DelegationRecord.Lamports != 1447680 {
		t.Errorf("delegation status = %+v, %v", ds, err)
	}
	jsonEq(t, f.last("getDelegationStatus").Params, `["`+keyB.String()+`"]`)
	// An ER validator answers with isDelegated only.
	f.raw("getDelegationStatus", `{"isDelegated":false}`)
	ds, err = c.GetDelegationStatus(testCtx, keyB)
	if err != nil || ds.IsDelegated || ds.FQDN != "" || ds.DelegationRecord != nil {
		t.Errorf("ER delegation status = %+v, %v", ds, err)
	}
	b, _ := json.Marshal(ds)
	jsonEq(t, b, `{"isDelegated":false}`)

	// The router's bare shape...
	bh, err := c.GetBlockhashForAccounts(testCtx, []solana.PublicKey{keyA, keyB})
	if err != nil || bh.Hash != hash1 || bh.LastValidBlockHeight != 912 {
		t.Errorf("bare blockhash = %+v, %v", bh, err)
	}
	jsonEq(t, f.last("getBlockhashForAccounts").Params, `[["`+keyA.String()+`","`+keyB.String()+`"]]`)
	// ...and an ER validator's context-wrapped alias of getLatestBlockhash.
	f.raw("getBlockhashForAccounts", `{"context":{"slot":77},"value":{"blockhash":"GHtXQBsoZHVnNFa9YevAzFr17DJjgHXk3ycTKD5xD3Zi","lastValidBlockHeight":227}}`)
	bh, err = c.GetBlockhashForAccounts(testCtx, nil)
	if err != nil || bh.Hash != hash2 || bh.LastValidBlockHeight != 227 {
		t.Errorf("wrapped blockhash = %+v, %v", bh, err)
	}
	jsonEq(t, f.last("getBlockhashForAccounts").Params, `[[]]`)

	// An ER validator's getRoutes is a mock [].
	f.raw("getRoutes", `[]`)
	if routes, err := c.GetRoutes(testCtx); err != nil || routes == nil || len(routes) != 0 {
		t.Errorf("empty routes = %#v, %v", routes, err)
	}
}

func TestErrorMapping(t *testing.T) {
	const secret = "s3cr3t-t0ken"
	t.Run("rpc error", func(t *testing.T) {
		f := newFake(t)
		f.on("getBalance", func(json.RawMessage) (any, *RPCError) {
			return nil, &RPCError{Code: -32602, Message: "Invalid param: WrongSize", Data: json.RawMessage(`{"x":1}`)}
		})
		c := f.client(t).WithToken(secret)
		_, err := c.GetBalance(testCtx, keyA, "")
		var re *RPCError
		if !errors.As(err, &re) || re.Code != -32602 || re.Message != "Invalid param: WrongSize" || string(re.Data) != `{"x":1}` {
			t.Fatalf("err = %#v", err)
		}
		if re.Error() != "RPC -32602: Invalid param: WrongSize" {
			t.Errorf("RPCError text = %q", re.Error())
		}
		if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "token=REDACTED") || !strings.HasPrefix(err.Error(), "getBalance at ") {
			t.Errorf("error text = %q", err)
		}
	})
	t.Run("http error without envelope", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "upstream overloaded\nretry later", http.StatusServiceUnavailable)
		}))
		defer srv.Close()
		c, _ := New(srv.URL + "/?token=" + secret)
		_, err := c.GetSlot(testCtx, "")
		var he *HTTPError
		if !errors.As(err, &he) || he.StatusCode != 503 || !strings.Contains(he.Body, "upstream overloaded retry later") {
			t.Fatalf("err = %#v", err)
		}
		if strings.Contains(err.Error(), "overloaded") || !strings.HasSuffix(err.Error(), ": upstream answered HTTP 503 Service Unavailable") {
			t.Errorf("the body is in the message: %q", err)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("token leaked: %q", err)
		}
	})
	t.Run("http error with envelope", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"Node is unhealthy"}}`))
		}))
		defer srv.Close()
		c, _ := New(srv.URL)
		_, err := c.GetSlot(testCtx, "")
		var re *RPCError
		if !errors.As(err, &re) || re.Code != -32005 {
			t.Fatalf("err = %#v", err)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		c, _ := New("http://" + addr + "/rpc?token=" + secret)
		_, err = c.GetSlot(testCtx, "")
		var te *TransportError
		if !errors.As(err, &te) {
			t.Fatalf("err = %#v, want a TransportError", err)
		}
		if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "getSlot at http://"+addr+"/rpc?token=REDACTED") {
			t.Errorf("error text = %q", err)
		}
	})
	t.Run("not JSON", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>hi</html>")) }))
		defer srv.Close()
		c, _ := New(srv.URL)
		_, err := c.GetSlot(testCtx, "")
		var re *ResponseError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "decode response") || re.Body != "<html>hi</html>" {
			t.Errorf("err = %v", err)
		}
		if strings.Contains(err.Error(), "html") {
			t.Errorf("the body is in the message: %v", err)
		}
	})
	t.Run("wrong result type", func(t *testing.T) {
		f := newFake(t)
		f.raw("getSlot", `"many"`)
		_, err := f.client(t).GetSlot(testCtx, "")
		if err == nil || !strings.Contains(err.Error(), "getSlot at") || !strings.Contains(err.Error(), "decode result") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("response too large", func(t *testing.T) {
		f := newFake(t)
		f.raw("getSlot", `"`+strings.Repeat("x", 2000)+`"`)
		_, err := f.client(t, WithMaxResponseBytes(1000)).GetSlot(testCtx, "")
		if err == nil || !strings.Contains(err.Error(), "larger than 1000 bytes") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("context cancelled", func(t *testing.T) {
		f := newFake(t)
		f.raw("getSlot", `1`)
		ctx, cancel := context.WithCancel(testCtx)
		cancel()
		_, err := f.client(t).GetSlot(ctx, "")
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}

func TestToken(t *testing.T) {
	f := newFake(t)
	f.raw("getSlot", `1`)
	c := f.client(t)
	if _, err := c.GetSlot(testCtx, ""); err != nil {
		t.Fatal(err)
	}
	if q := f.last("getSlot").Query; q.Has("token") {
		t.Errorf("token sent without WithToken: %v", q)
	}
	tc := c.WithToken("jwt.a+b/c")
	if _, err := tc.GetSlot(testCtx, ""); err != nil {
		t.Fatal(err)
	}
	if got := f.last("getSlot").Query.Get("token"); got != "jwt.a+b/c" {
		t.Errorf("token = %q", got)
	}
	if tc.URL() != f.srv.URL || !tc.HasToken() || c.HasToken() {
		t.Errorf("URL() = %q, HasToken %v/%v", tc.URL(), tc.HasToken(), c.HasToken())
	}
	if strings.Contains(tc.String(), "jwt") {
		t.Errorf("String() leaks the token: %q", tc.String())
	}
	if tc.WithToken("").HasToken() {
		t.Error("WithToken(\"\") kept the token")
	}

	// A token already in the URL is kept, and other parameters survive.
	c2, err := New(f.srv.URL + "/?cluster=x&token=abc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.GetSlot(testCtx, ""); err != nil {
		t.Fatal(err)
	}
	q := f.last("getSlot").Query
	if q.Get("token") != "abc" || q.Get("cluster") != "x" {
		t.Errorf("query = %v", q)
	}
	if c2.URL() != f.srv.URL+"/?cluster=x" {
		t.Errorf("URL() = %q", c2.URL())
	}
}

func TestNewRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "localhost:8899", "ftp://x", "http://", "::"} {
		if _, err := New(u); err == nil {
			t.Errorf("New(%q) succeeded", u)
		}
	}
	_, err := New("ws://host/?token=secret")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("New error = %v", err)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://devnet-tee.magicblock.app?token=abc":           "https://devnet-tee.magicblock.app?token=REDACTED",
		"https://mainnet.helius-rpc.com/?api-key=f3417b56":      "https://mainnet.helius-rpc.com/?api-key=REDACTED",
		"http://127.0.0.1:8899":                                 "http://127.0.0.1:8899",
		"https://x/?a=1&b=2":                                    "https://x/?a=1&b=2",
		"https://user:pass@x/rpc":                               "https://user:xxxxx@x/rpc",
		"https://x/?Token=abc&z=1":                              "https://x/?Token=REDACTED&z=1",
		"::bad url?token=abc":                                   "::bad url",
		"https://devnet-tee.magicblock.app/?token=a&token=b&x=": "https://devnet-tee.magicblock.app/?token=REDACTED&x=",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormalizeFQDN(t *testing.T) {
	for in, want := range map[string]string{
		"https://devnet-as.magicblock.app":    "https://devnet-as.magicblock.app",
		" https://devnet-as.magicblock.app/ ": "https://devnet-as.magicblock.app",
		"devnet-as.magicblock.app":            "https://devnet-as.magicblock.app",
		"HTTP://LOCALHOST:7799/":              "http://localhost:7799",
		"https://x.app/rpc/":                  "https://x.app/rpc/",
		"https://x.app/?token=a":              "https://x.app/?token=a",
	} {
		got, err := NormalizeFQDN(in)
		if err != nil || got != want {
			t.Errorf("NormalizeFQDN(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ftp://x", "https://", "wss://devnet-router.magicblock.app"} {
		if got, err := NormalizeFQDN(in); err == nil {
			t.Errorf("NormalizeFQDN(%q) = %q, want an error", in, got)
		}
	}
}

func TestCommitmentRank(t *testing.T) {
	if !Finalized.AtLeast(Confirmed) || !Confirmed.AtLeast(Confirmed) || Processed.AtLeast(Confirmed) || Commitment("").AtLeast(Processed) {
		t.Error("commitment ordering is wrong")
	}
}
