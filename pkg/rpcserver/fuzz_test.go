package rpcserver

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/inputlimit"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// checkEnvelope asserts out is nothing (notifications only), a response
// object, or a non-empty array of response objects.
func checkEnvelope(t *testing.T, out []byte) {
	t.Helper()
	if out == nil {
		return
	}
	one := func(raw json.RawMessage) {
		var r map[string]json.RawMessage
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("response is not an object: %s", raw)
		}
		if string(r["jsonrpc"]) != `"2.0"` {
			t.Fatalf("jsonrpc field: %s", raw)
		}
		if _, ok := r["id"]; !ok {
			t.Fatalf("no id: %s", raw)
		}
		_, hasResult := r["result"]
		e, hasError := r["error"]
		if hasResult == hasError {
			t.Fatalf("want exactly one of result and error: %s", raw)
		}
		if hasError {
			var eo struct {
				Code    *int    `json:"code"`
				Message *string `json:"message"`
			}
			if err := json.Unmarshal(e, &eo); err != nil || eo.Code == nil || eo.Message == nil {
				t.Fatalf("bad error object: %s", e)
			}
			if len(*eo.Message) > maxErrorMessage+len("…") {
				t.Fatalf("error message of %d bytes: %.200s…", len(*eo.Message), *eo.Message)
			}
		}
	}
	if t0 := bytes.TrimSpace(out); len(t0) > 0 && t0[0] == '[' {
		var arr []json.RawMessage
		if err := json.Unmarshal(out, &arr); err != nil || len(arr) == 0 {
			t.Fatalf("bad batch response: %s", out)
		}
		for _, r := range arr {
			one(r)
		}
		return
	}
	one(out)
}

func fuzzLedger(f *testing.F) *ledger.Ledger {
	l, err := ledger.Open(ledger.Config{Name: "fuzz", ManualSlots: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { l.Close() })
	return l
}

func FuzzHandleBody(f *testing.F) {
	l := fuzzLedger(f)
	h := New(l, Options{MaxBatch: 16, MaxJSONDepth: testDepth, MaxResponseBytes: 4 << 10})
	key := l.Faucet().PublicKey().String()
	for _, s := range []string{
		req("getSlot"),
		req("getBalance", key, map[string]any{"commitment": "processed"}),
		req("getAccountInfo", key, map[string]any{"encoding": "jsonParsed", "dataSlice": map[string]any{"offset": 1, "length": 2}}),
		req("getMultipleAccounts", []string{key, spl.SysvarClockID.String()}, map[string]any{"encoding": "base64+zstd"}),
		req("getBlocksWithLimit", 0),
		req("getBlocks", 0, 10),
		req("getBlock", 0, map[string]any{"transactionDetails": "signatures"}),
		req("getSignatureStatuses", []string{"1111111111111111111111111111111111111111111111111111111111111111"}),
		req("getTransaction", "1111111111111111111111111111111111111111111111111111111111111111", "json"),
		req("getTokenAccountsByOwner", key, map[string]any{"programId": spl.TokenProgramID.String()}, map[string]any{"encoding": "jsonParsed"}),
		req("sendTransaction", "AQID", map[string]any{"encoding": "base64"}),
		req("simulateTransaction", "AQID", map[string]any{"encoding": "base64", "replaceRecentBlockhash": true}),
		req("getFeeForMessage", "AQID"),
		req("requestAirdrop", key, 5),
		`[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","method":"getHealth"}]`,
		`{"jsonrpc":"2.0","id":{"x":[1]},"method":"getVersion","params":null}`,
		`{"jsonrpc":"2.0","method":"getSlot"}`,
		`[1,"a",null,{}]`,
		`{"jsonrpc":"2.0","id":1,"method":"getSlot","params":{"a":1}}`,
		``, `[`, `{}`, `null`, `"x"`,
		// Depth and size: at, over and far over the limits.
		req("getBalance", [][][]string{{{key}}}),
		req("getBalance", [][][][][]string{{{{{key}}}}}),
		string(nested(testDepth + 1)),
		strings.Repeat("[", 1<<16),
		req("getBalance", strings.Repeat("1", 80_000)),
		req("getSignatureStatuses", []string{strings.Repeat("z", 1000)}),
		req("getLatestBlockhash", map[string]any{"commitment": strings.Repeat("x", 10_000)}),
		req("getMultipleAccounts", []string{key, key, key, key, key, key, key, key, key, key, key, key, key, key, key, key, key, key, key, key}, map[string]any{"encoding": "base64"}),
		"[" + strings.Repeat(req("getAccountInfo", key)+",", 15) + req("getAccountInfo", key) + "]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkEnvelope(t, h.HandleBody(context.Background(), body))
		if n := h.inFlight.used.Load(); n != 0 {
			t.Fatalf("%d response bytes still counted in flight after %q", n, body)
		}
	})
}

// FuzzTransactionPipeline feeds mutated transactions to sendTransaction
// and simulateTransaction, and, re-signed with the keys the fuzzer knows
// so they get past signature verification, to the ledger's pipeline. No
// input may panic, every answer must be a JSON-RPC envelope, and the
// ledger must stay healthy.
func FuzzTransactionPipeline(f *testing.F) {
	l := fuzzLedger(f)
	h := New(l, Options{})
	ctx := context.Background()
	_, payer, _ := ed25519.GenerateKey(nil)
	_, other, _ := ed25519.GenerateKey(nil)
	keys := map[solana.PublicKey]ed25519.PrivateKey{pub(payer): payer, pub(other): other}
	if _, err := l.Faucet().Airdrop(ctx, pub(payer), 1_000_000_000_000); err != nil {
		f.Fatal(err)
	}
	mint, _, err := l.Faucet().CreateMint(ctx, ledger.MintOptions{Decimals: 6, Authority: func() *solana.PublicKey { k := pub(payer); return &k }()})
	if err != nil {
		f.Fatal(err)
	}
	bh, _ := l.LatestBlockhash(ledger.Processed)
	ata := spl.AssociatedTokenAddress(pub(payer), mint, spl.TokenProgramID)
	for _, ixs := range [][]txwire.Instruction{
		{spl.SystemTransfer(pub(payer), pub(other), 1_000_000)},
		{spl.CreateAssociatedTokenAccount(pub(payer), pub(payer), mint, spl.TokenProgramID, true), spl.TokenMintTo(spl.TokenProgramID, mint, ata, pub(payer), 10)},
		{spl.TokenTransferChecked(spl.TokenProgramID, ata, mint, ata, pub(payer), 1, 6), spl.Memo("fuzz", pub(other))},
		{spl.SystemCreateAccount(pub(payer), pub(other), 2_000_000, 10, spl.TokenProgramID)},
		{{ProgramID: spl.ComputeBudgetProgramID, Data: []byte{2, 0, 0, 1, 0}}, spl.TokenBurn(spl.TokenProgramID, ata, mint, pub(payer), 1)},
	} {
		f.Add(signed(f, bh.Blockhash, payer, ixs, func() []ed25519.PrivateKey {
			for _, ix := range ixs {
				for _, m := range ix.Accounts {
					if m.IsSigner && m.PublicKey == pub(other) {
						return []ed25519.PrivateKey{other}
					}
				}
			}
			return nil
		}()...))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		b64 := base64.StdEncoding.EncodeToString(raw)
		for _, body := range []string{
			req("sendTransaction", b64, map[string]any{"encoding": "base64", "preflightCommitment": "processed"}),
			req("sendTransaction", b64, map[string]any{"encoding": "base64", "skipPreflight": true}),
			req("simulateTransaction", b64, map[string]any{"encoding": "base64", "commitment": "processed", "replaceRecentBlockhash": true, "innerInstructions": true, "accounts": map[string]any{"addresses": []string{pub(payer).String()}, "encoding": "jsonParsed"}}),
		} {
			checkEnvelope(t, h.HandleBody(ctx, []byte(body)))
		}
		// Re-sign what decodes, with a fresh blockhash, so the mutated
		// instructions actually execute.
		tx, err := txwire.Decode(raw)
		if err != nil || tx.Message.Sanitize() != nil {
			return
		}
		fresh, _ := l.LatestBlockhash(ledger.Processed)
		tx.Message.RecentBlockhash = fresh.Blockhash
		re := txwire.NewUnsigned(&tx.Message)
		for _, s := range tx.Message.Signers() {
			if k, ok := keys[s]; ok {
				re.Sign(k)
			}
		}
		rec, err := l.Process(ctx, re.Bytes())
		if err == nil {
			if _, merr := json.Marshal(rec.Err); merr != nil {
				t.Fatal(merr)
			}
			out := h.HandleBody(ctx, []byte(req("getSignatureStatuses", []string{rec.Signature.String()})))
			checkEnvelope(t, out)
		}
		if err := l.Health(); err != nil {
			t.Fatal(err)
		}
	})
}

// testDepth is the depth limit the fuzz targets use: small, so that the
// fuzzer reaches it.
const testDepth = 6

// nested is n '[' then n ']'.
func nested(n int) []byte {
	return append(bytes.Repeat([]byte("["), n), bytes.Repeat([]byte("]"), n)...)
}

// FuzzSplitArray checks the fast parameter splitter against
// encoding/json on every valid JSON array (of valid UTF-8; see
// FuzzScanValue).
func FuzzSplitArray(f *testing.F) {
	for _, s := range []string{`[]`, ` [ 1 , "a,]" , {"x":[1,{"y":"]"}]} , null ] `, `["\"\\",[[]],{}]`, `[1]`, `[[],[[]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want []json.RawMessage
		if !utf8.Valid(b) || json.Unmarshal(b, &want) != nil {
			return
		}
		got, ok := splitArray(b)
		if !ok || len(got) != len(want) {
			t.Fatalf("split %q: %d elements (ok %v), want %d", b, len(got), ok, len(want))
		}
		for i := range got {
			if !bytes.Equal(bytes.TrimSpace(got[i]), bytes.TrimSpace(want[i])) {
				t.Fatalf("element %d: %q, want %q", i, got[i], want[i])
			}
		}
	})
}

// FuzzScanValue checks the one-pass validator against json.Valid, and its
// depth limit against inputlimit.CheckJSON (exact on valid JSON). The
// scanner also rejects invalid UTF-8 inside strings (as Agave's serde
// does), where json.Valid is lenient, so such inputs are left out.
func FuzzScanValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e+3,true,false,null,"\u00e9\n"]}`, `[]`, `{}`, ` 0 `, `-0.1E-2`, `"\ud800"`, `{"a" 1}`, `[1,]`, `01`, `1.`, `"\x"`, `tru`,
		`[[[[]]]]`, `{"a":{"b":[{"c":[]}]}}`, `[[[[`, `["[[[[",{"{":"}"}]`, `[[[[]]]]]]`} {
		f.Add([]byte(s))
	}
	for _, n := range []int{testDepth - 1, testDepth, testDepth + 1} {
		f.Add(nested(n))
		f.Add(nested(n)[:n]) // unclosed
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !utf8.Valid(b) {
			return
		}
		err := checkJSON(b, testDepth)
		_, deep := inputlimit.CheckJSON(b, testDepth)
		switch want := json.Valid(b); {
		case want && deep == nil && err != nil:
			t.Fatalf("checkJSON(%q) = %v, want nil", b, err)
		case want && deep != nil && err != errTooDeep:
			t.Fatalf("checkJSON(%q) = %v, want errTooDeep", b, err)
		case !want && err == nil:
			t.Fatalf("checkJSON(%q) accepted invalid JSON", b)
		}
		if env, ok := scanEnvelope(b); ok && json.Valid(b) {
			var std map[string]json.RawMessage
			if json.Unmarshal(b, &std) == nil {
				for k, got := range map[string]json.RawMessage{"jsonrpc": env.jsonrpc, "id": env.id, "method": env.method, "params": env.params} {
					if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(std[k])) {
						t.Fatalf("field %s of %q: %q, want %q", k, b, got, std[k])
					}
				}
			}
		}
	})
}

// scanStringBytewise is scanString as it was before it skipped words: a
// byte at a time. The reference for TestScanStringWords and
// FuzzScanString.
func scanStringBytewise(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 {
					return -1
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		case c < 0x20:
			return -1
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return -1
			}
			i += n
		}
	}
	return -1
}

// TestScanStringWords puts each kind of byte the word skip must stop at
// (or may pass) at every position of runs of plain bytes across word
// boundaries, with and without a closing quote, and compares scanString
// with the bytewise reference.
func TestScanStringWords(t *testing.T) {
	specials := []string{`"`, `\`, `\"`, `\u00e9`, `\x`, "\x00", "\x1f", " ", "\x7f", "\x80", "\xff", "é", "\xe2\x82", "€"}
	checked := 0
	for n := 0; n <= 26; n++ {
		for at := 0; at <= n; at++ {
			for _, sp := range specials {
				for _, closing := range []string{`"`, ``, `"x`} {
					body := strings.Repeat("A", at) + sp + strings.Repeat("b", n-at)
					in := []byte(`"` + body + closing)
					if got, want := scanString(in, 0), scanStringBytewise(in, 0); got != want {
						t.Fatalf("scanString(%q) = %d, the bytewise scan %d", in, got, want)
					}
					checked++
				}
			}
		}
	}
	// Each byte value inside a word of plain bytes.
	for c := range 256 {
		for at := range 8 {
			w := []byte("AAAAAAAA")
			w[at] = byte(c)
			in := append(append([]byte(`"`), w...), `AAAAAAAA"`...)
			if got, want := scanString(in, 0), scanStringBytewise(in, 0); got != want {
				t.Fatalf("byte %#x at %d: scanString = %d, the bytewise scan %d", c, at, got, want)
			}
			checked++
		}
	}
	t.Logf("%d strings", checked)
}

// FuzzScanString compares scanString with the bytewise reference on any
// input, from any start.
func FuzzScanString(f *testing.F) {
	for _, s := range []string{`"abcdefghijklmnopq"`, `"abcdefgh\"ijklmnop"`, "\"abcdefg\x01hijk\"", `"é€abcdefghij"`, `"abcdefghi\u00e9"`} {
		f.Add([]byte(s), 0)
	}
	f.Fuzz(func(t *testing.T, b []byte, i int) {
		if i < 0 || i > len(b) {
			return
		}
		if got, want := scanString(b, i), scanStringBytewise(b, i); got != want {
			t.Fatalf("scanString(%q, %d) = %d, the bytewise scan %d", b, i, got, want)
		}
	})
}

// BenchmarkScanString scans a sendTransaction's base64 transaction
// string (a TransferChecked is ~300 bytes, ~400 characters; this is 600).
func BenchmarkScanString(b *testing.B) {
	raw := make([]byte, 450)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	s := []byte(`"` + base64.StdEncoding.EncodeToString(raw) + `"`)
	for _, bc := range []struct {
		name string
		scan func([]byte, int) int
	}{{"words", scanString}, {"bytewise", scanStringBytewise}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				if bc.scan(s, 0) != len(s) {
					b.Fatal("not scanned")
				}
			}
		})
	}
}
