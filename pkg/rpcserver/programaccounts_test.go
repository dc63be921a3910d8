package rpcserver

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/klauspost/compress/zstd"
	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// call runs one request through the handler: the raw result, or the
// error object.
func call(t testing.TB, h *Handler, method string, params ...any) (json.RawMessage, *Error) {
	t.Helper()
	if params == nil {
		params = []any{}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *Error          `json:"error"`
	}
	if err := json.Unmarshal(h.HandleBody(t.Context(), body), &resp); err != nil {
		t.Fatal(err)
	}
	return resp.Result, resp.Error
}

// mustCall is call for a request that must succeed, decoded into out.
func mustCall(t testing.TB, h *Handler, out any, method string, params ...any) {
	t.Helper()
	res, e := call(t, h, method, params...)
	if e != nil {
		t.Fatalf("%s %v: %d %s", method, params, e.Code, e.Message)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			t.Fatalf("%s: %v in %s", method, err, res)
		}
	}
}

// accountWorld is a ledger with token accounts of both token programs, a
// delegation, and a program owning accounts with chosen data.
type accountWorld struct {
	n                        *node
	mint, mint22             solana.PublicKey
	alice, bob, spender      ed25519.PrivateKey
	aliceAta, bobAta, bob22  solana.PublicKey
	program                  solana.PublicKey
	hello, counter, big, new solana.PublicKey // program accounts
}

func newAccountWorld(t *testing.T) *accountWorld {
	t.Helper()
	n := startNode(t, ledger.Config{Name: "accounts", ManualSlots: true, FinalityDepth: 2})
	ctx := ctxT(t)
	f := n.l.Faucet()
	w := &accountWorld{n: n, alice: newKey(t), bob: newKey(t), spender: newKey(t), program: solana.PublicKey{0x70, 0x72, 0x6f}}
	for _, k := range []ed25519.PrivateKey{w.alice, w.bob, w.spender} {
		if _, err := f.Airdrop(ctx, pub(k), 10_000_000_000); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if w.mint, _, err = f.CreateMint(ctx, ledger.MintOptions{Decimals: 6}); err != nil {
		t.Fatal(err)
	}
	if w.mint22, _, err = f.CreateMint(ctx, ledger.MintOptions{Decimals: 2, Token2022: true}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		mint  solana.PublicKey
		owner ed25519.PrivateKey
	}{{w.mint, w.alice}, {w.mint, w.bob}, {w.mint22, w.bob}} {
		if _, err := f.MintTo(ctx, m.mint, pub(m.owner), 5_000); err != nil {
			t.Fatal(err)
		}
	}
	w.aliceAta = spl.AssociatedTokenAddress(pub(w.alice), w.mint, spl.TokenProgramID)
	w.bobAta = spl.AssociatedTokenAddress(pub(w.bob), w.mint, spl.TokenProgramID)
	w.bob22 = spl.AssociatedTokenAddress(pub(w.bob), w.mint22, spl.Token2022ProgramID)
	bh, _ := n.l.LatestBlockhash(ledger.Processed)
	if _, err := n.l.Process(ctx, signed(t, bh.Blockhash, w.alice, []txwire.Instruction{
		spl.TokenApprove(spl.TokenProgramID, w.aliceAta, pub(w.spender), pub(w.alice), 100),
	})); err != nil {
		t.Fatal(err)
	}
	w.hello, w.counter, w.big = solana.PublicKey{0x70, 1}, solana.PublicKey{0x70, 2}, solana.PublicKey{0x70, 3}
	if _, err := n.l.Apply(ctx, func(aw ledger.AccountWriter) error {
		aw.Set(w.hello, &ledger.Account{Lamports: 1_000_000, Owner: w.program, Data: []byte("hello world")})
		aw.Set(w.counter, &ledger.Account{Lamports: 2_000_000, Owner: w.program, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}})
		aw.Set(w.big, &ledger.Account{Lamports: 3_000_000, Owner: w.program, Data: bytes.Repeat([]byte{0xab}, 200)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.l.AdvanceSlots(ctx, 4); err != nil { // everything finalized
		t.Fatal(err)
	}
	// One more account, processed only.
	w.new = solana.PublicKey{0x70, 4}
	if _, err := n.l.Apply(ctx, func(aw ledger.AccountWriter) error {
		aw.Set(w.new, &ledger.Account{Lamports: 4_000_000, Owner: w.program, Data: []byte("new")})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return w
}

type keyed struct {
	Pubkey  solana.PublicKey `json:"pubkey"`
	Account struct {
		Data     json.RawMessage  `json:"data"`
		Owner    solana.PublicKey `json:"owner"`
		Lamports uint64           `json:"lamports"`
		Space    uint64           `json:"space"`
	} `json:"account"`
}

func pubkeys(ks []keyed) []solana.PublicKey {
	out := make([]solana.PublicKey, len(ks))
	for i, k := range ks {
		out[i] = k.Pubkey
	}
	return out
}

func sortedKeys(ks ...solana.PublicKey) []solana.PublicKey {
	out := slices.Clone(ks)
	slices.SortFunc(out, func(a, b solana.PublicKey) int { return bytes.Compare(a[:], b[:]) })
	return out
}

// decodeData decodes a [data, encoding] pair or a legacy base58 string.
func decodeData(t testing.TB, raw json.RawMessage) []byte {
	t.Helper()
	var legacy string
	if json.Unmarshal(raw, &legacy) == nil {
		b, err := base58.Decode(legacy)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var pair [2]string
	if err := json.Unmarshal(raw, &pair); err != nil {
		t.Fatalf("data %s: %v", raw, err)
	}
	switch pair[1] {
	case "base58":
		b, err := base58.Decode(pair[0])
		if err != nil {
			t.Fatal(err)
		}
		return b
	case "base64+zstd":
		z, _ := base64.StdEncoding.DecodeString(pair[0])
		d, _ := zstd.NewReader(nil)
		defer d.Close()
		b, err := d.DecodeAll(z, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b, err := base64.StdEncoding.DecodeString(pair[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGetProgramAccounts(t *testing.T) {
	w := newAccountWorld(t)
	h := w.n.h
	p := w.program.String()
	b64 := func(extra map[string]any) map[string]any {
		cfg := map[string]any{"encoding": "base64"}
		for k, v := range extra {
			cfg[k] = v
		}
		return cfg
	}
	memcmp := func(offset int, bytes any, enc string) map[string]any {
		m := map[string]any{"offset": offset, "bytes": bytes}
		if enc != "" {
			m["encoding"] = enc
		}
		return map[string]any{"memcmp": m}
	}
	ownerFilter := memcmp(32, pub(w.bob).String(), "")
	for _, tc := range []struct {
		name    string
		program string
		cfg     map[string]any
		want    []solana.PublicKey
		data    map[solana.PublicKey][]byte // expected decoded data, when checked
	}{
		{name: "all, base64", program: p, cfg: b64(nil), want: sortedKeys(w.hello, w.counter, w.big),
			data: map[solana.PublicKey][]byte{w.hello: []byte("hello world"), w.big: bytes.Repeat([]byte{0xab}, 200)}},
		{name: "processed sees the new account", program: p, cfg: b64(map[string]any{"commitment": "processed"}), want: sortedKeys(w.hello, w.counter, w.big, w.new)},
		{name: "base58 with a data slice under 128 bytes", program: p, cfg: map[string]any{"encoding": "base58", "dataSlice": map[string]any{"offset": 6, "length": 5}},
			want: sortedKeys(w.hello, w.counter, w.big), data: map[solana.PublicKey][]byte{w.hello: []byte("world"), w.counter: {7, 8}, w.big: bytes.Repeat([]byte{0xab}, 5)}},
		{name: "base64+zstd", program: p, cfg: map[string]any{"encoding": "base64+zstd"}, want: sortedKeys(w.hello, w.counter, w.big),
			data: map[solana.PublicKey][]byte{w.big: bytes.Repeat([]byte{0xab}, 200)}},
		{name: "legacy binary default, filtered under 128 bytes", program: p, cfg: map[string]any{"filters": []any{map[string]any{"dataSize": 11}}},
			want: []solana.PublicKey{w.hello}, data: map[solana.PublicKey][]byte{w.hello: []byte("hello world")}},
		{name: "dataSize", program: p, cfg: b64(map[string]any{"filters": []any{map[string]any{"dataSize": 8}}}), want: []solana.PublicKey{w.counter}},
		{name: "memcmp base58 (default)", program: p, cfg: b64(map[string]any{"filters": []any{memcmp(0, base58.Encode([]byte("hello")), "")}}), want: []solana.PublicKey{w.hello}},
		{name: "memcmp base58 at an offset", program: p, cfg: b64(map[string]any{"filters": []any{memcmp(6, base58.Encode([]byte("world")), "base58")}}), want: []solana.PublicKey{w.hello}},
		{name: "memcmp base64", program: p, cfg: b64(map[string]any{"filters": []any{memcmp(2, base64.StdEncoding.EncodeToString([]byte{3, 4}), "base64")}}), want: []solana.PublicKey{w.counter}},
		{name: "memcmp raw bytes", program: p, cfg: b64(map[string]any{"filters": []any{memcmp(199, []int{0xab}, "")}}), want: []solana.PublicKey{w.big}},
		{name: "memcmp past the end matches nothing", program: p, cfg: b64(map[string]any{"filters": []any{memcmp(7, []int{8, 9}, "")}}), want: []solana.PublicKey{}},
		{name: "memcmp empty bytes at the end matches", program: p, cfg: b64(map[string]any{"filters": []any{memcmp(8, []int{}, ""), map[string]any{"dataSize": 8}}}), want: []solana.PublicKey{w.counter}},
		{name: "filters combine", program: p, cfg: b64(map[string]any{"filters": []any{map[string]any{"dataSize": 200}, memcmp(0, []int{1}, "")}}), want: []solana.PublicKey{}},
		{name: "unsorted", program: p, cfg: b64(map[string]any{"sortResults": false}), want: sortedKeys(w.hello, w.counter, w.big)},
		{name: "token program", program: spl.TokenProgramID.String(), cfg: b64(nil), want: sortedKeys(spl.NativeMintID, w.mint, w.aliceAta, w.bobAta)},
		{name: "tokenAccountState (string)", program: spl.TokenProgramID.String(), cfg: b64(map[string]any{"filters": []any{"tokenAccountState"}}), want: sortedKeys(w.aliceAta, w.bobAta)},
		{name: "tokenAccountState (object)", program: spl.TokenProgramID.String(), cfg: b64(map[string]any{"filters": []any{map[string]any{"tokenAccountState": nil}}}), want: sortedKeys(w.aliceAta, w.bobAta)},
		{name: "token accounts of an owner, through the owner index", program: spl.TokenProgramID.String(),
			cfg: b64(map[string]any{"filters": []any{map[string]any{"dataSize": 165}, ownerFilter}}), want: []solana.PublicKey{w.bobAta}},
		{name: "same without an index hint", program: spl.TokenProgramID.String(), cfg: b64(map[string]any{"filters": []any{ownerFilter}}), want: []solana.PublicKey{w.bobAta}},
		{name: "token accounts of a mint, through the mint index", program: spl.TokenProgramID.String(),
			cfg: b64(map[string]any{"filters": []any{"tokenAccountState", memcmp(0, w.mint.String(), "")}}), want: sortedKeys(w.aliceAta, w.bobAta)},
		{name: "token-2022 account type byte", program: spl.Token2022ProgramID.String(),
			cfg: b64(map[string]any{"filters": []any{memcmp(165, []int{2}, ""), ownerFilter}}), want: []solana.PublicKey{w.bob22}},
		{name: "token-2022 by owner with dataSize 165 excludes extended accounts", program: spl.Token2022ProgramID.String(),
			cfg: b64(map[string]any{"filters": []any{map[string]any{"dataSize": 165}, ownerFilter}}), want: wantIf(w.n.l, w.bob22, 165)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []keyed
			mustCall(t, h, &got, "getProgramAccounts", tc.program, tc.cfg)
			keys := pubkeys(got)
			if tc.cfg["sortResults"] == false {
				keys = sortedKeys(keys...)
			}
			if !slices.Equal(keys, tc.want) {
				t.Fatalf("got %v, want %v", keys, tc.want)
			}
			for _, k := range got {
				if want, ok := tc.data[k.Pubkey]; ok {
					if d := decodeData(t, k.Account.Data); !bytes.Equal(d, want) {
						t.Errorf("%s data %x, want %x", k.Pubkey, d, want)
					}
				}
				if k.Account.Owner.String() != tc.program {
					t.Errorf("%s owner %s", k.Pubkey, k.Account.Owner)
				}
			}
		})
	}

	t.Run("withContext", func(t *testing.T) {
		var got struct {
			Context struct{ Slot uint64 } `json:"context"`
			Value   []keyed               `json:"value"`
		}
		mustCall(t, h, &got, "getProgramAccounts", p, map[string]any{"encoding": "base64", "withContext": true, "commitment": "confirmed"})
		if got.Context.Slot != w.n.l.Slot(ledger.Confirmed) || len(got.Value) != 3 {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("jsonParsed token accounts", func(t *testing.T) {
		var got []struct {
			Pubkey  solana.PublicKey `json:"pubkey"`
			Account struct {
				Data struct {
					Program string `json:"program"`
					Parsed  struct {
						Type string         `json:"type"`
						Info map[string]any `json:"info"`
					} `json:"parsed"`
				} `json:"data"`
			} `json:"account"`
		}
		mustCall(t, h, &got, "getProgramAccounts", spl.TokenProgramID.String(),
			map[string]any{"encoding": "jsonParsed", "filters": []any{"tokenAccountState", memcmp(32, pub(w.alice).String(), "")}})
		if len(got) != 1 || got[0].Account.Data.Program != "spl-token" || got[0].Account.Data.Parsed.Info["delegate"] != pub(w.spender).String() {
			t.Fatalf("%+v", got)
		}
	})
}

// wantIf is key when its account's data has size n, else nothing.
func wantIf(l *ledger.Ledger, key solana.PublicKey, n int) []solana.PublicKey {
	if a, _ := l.Account(key, ledger.Finalized); a != nil && len(a.Data) == n {
		return []solana.PublicKey{key}
	}
	return []solana.PublicKey{}
}

func TestGetProgramAccountsErrors(t *testing.T) {
	w := newAccountWorld(t)
	p := w.program.String()
	memcmp := func(m map[string]any) map[string]any { return map[string]any{"memcmp": m} }
	filters := func(f ...any) map[string]any { return map[string]any{"encoding": "base64", "filters": f} }
	small := New(w.n.l, Options{MaxProgramAccounts: 2})
	for _, tc := range []struct {
		name   string
		h      *Handler
		params []any
		code   int
		msg    string
	}{
		{"no params", nil, []any{}, -32602, "Invalid params: invalid length 0, expected at least one parameter."},
		{"too many params", nil, []any{p, map[string]any{}, 1}, -32602, "Invalid params: invalid length 3, expected fewer elements in array."},
		{"bad program id", nil, []any{"not-base58!"}, -32602, "Invalid param: Invalid"},
		{"config not an object", nil, []any{p, "base64"}, -32602, "Invalid params: invalid type: string, expected a configuration object."},
		{"base58 over 128 bytes", nil, []any{p}, -32600, "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding."},
		{"base58 slice over 128 bytes", nil, []any{p, map[string]any{"encoding": "base58", "dataSlice": map[string]any{"offset": 0, "length": 129}}}, -32600,
			"Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding."},
		{"unknown encoding", nil, []any{p, map[string]any{"encoding": "hex"}}, -32602,
			"Invalid params: unknown variant `hex`, expected one of `binary`, `base58`, `base64`, `jsonParsed`, `base64+zstd`."},
		{"unknown commitment", nil, []any{p, map[string]any{"commitment": "soon"}}, -32602,
			"Invalid params: unknown variant `soon`, expected one of `processed`, `confirmed`, `finalized`."},
		{"five filters", nil, []any{p, filters(map[string]any{"dataSize": 1}, map[string]any{"dataSize": 1}, map[string]any{"dataSize": 1}, map[string]any{"dataSize": 1}, map[string]any{"dataSize": 1})},
			-32602, "Too many filters provided; max 4"},
		{"memcmp base58 over 128 bytes", nil, []any{p, filters(memcmp(map[string]any{"offset": 0, "bytes": base58.Encode(bytes.Repeat([]byte{0xff}, 129))}))},
			-32602, "Invalid param: DataTooLarge"},
		{"memcmp base58 string over 175 characters", nil, []any{p, filters(memcmp(map[string]any{"offset": 0, "bytes": strings.Repeat("1", 176)}))},
			-32602, "Invalid param: DataTooLarge"},
		{"memcmp base58 of 128 ones is fine", nil, []any{p, filters(memcmp(map[string]any{"offset": 0, "bytes": strings.Repeat("1", 128)}))}, 0, ""},
		{"memcmp invalid base58", nil, []any{p, filters(memcmp(map[string]any{"offset": 0, "bytes": "abc0"}))},
			-32602, "Invalid param: Base58DecodeError(InvalidCharacter { character: '0', index: 3 })"},
		{"memcmp non-ASCII base58", nil, []any{p, filters(memcmp(map[string]any{"offset": 0, "bytes": "ab\u00e9"}))},
			-32602, "Invalid param: Base58DecodeError(NonAsciiCharacter { index: 2 })"},
		{"memcmp invalid base64", nil, []any{p, filters(memcmp(map[string]any{"offset": 0, "bytes": "ab!d", "encoding": "base64"}))},
			-32602, "Invalid param: Base64DecodeError(InvalidByte(2, 33))"},
		{"memcmp base64 bad length", nil, []any{p, filters(memcmp(map[string]any{"offset": 0, "bytes": "abcde", "encoding": "base64"}))},
			-32602, "Invalid param: Base64DecodeError(InvalidLength(5))"},
		{"memcmp base64 over 128 bytes", nil, []any{p, filters(memcmp(map[string]any{"offset": 0, "bytes": base64.StdEncoding.EncodeToString(make([]byte, 129)), "encoding": "base64"}))},
			-32602, "Invalid param: DataTooLarge"},
		{"memcmp raw bytes over 128", nil, []any{p, filters(memcmp(map[string]any{"offset": 0, "bytes": make([]int, 129)}))},
			-32602, "Invalid param: DataTooLarge"},
		{"memcmp without offset", nil, []any{p, filters(memcmp(map[string]any{"bytes": "abc"}))}, -32602, "Invalid params: missing field `offset`."},
		{"memcmp without bytes", nil, []any{p, filters(memcmp(map[string]any{"offset": 1}))}, -32602, "Invalid params: missing field `bytes`."},
		{"memcmp unknown encoding", nil, []any{p, filters(memcmp(map[string]any{"offset": 1, "bytes": "abc", "encoding": "hex"}))}, -32602,
			"Invalid params: unknown variant `hex`, expected one of `base58`, `base64`, `bytes`."},
		{"unknown filter", nil, []any{p, filters(map[string]any{"ownerIs": "x"})}, -32602,
			"Invalid params: unknown variant `ownerIs`, expected one of `dataSize`, `memcmp`, `tokenAccountState`."},
		{"unknown filter name", nil, []any{p, filters("everything")}, -32602,
			"Invalid params: unknown variant `everything`, expected one of `dataSize`, `memcmp`, `tokenAccountState`."},
		{"dataSize not a number", nil, []any{p, filters(map[string]any{"dataSize": "8"})}, -32602, "Invalid params: invalid type: string, expected u64."},
		{"minContextSlot not reached", nil, []any{p, map[string]any{"encoding": "base64", "minContextSlot": 1_000_000}}, -32016, "Minimum context slot has not been reached"},
		{"over MaxProgramAccounts", small, []any{p, map[string]any{"encoding": "base64"}}, CodeScanError, "scan aborted: The accumulated scan results exceeded the limit"},
		{"at MaxProgramAccounts", small, []any{p, filters(map[string]any{"dataSize": 11})}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.h
			if h == nil {
				h = w.n.h
			}
			_, e := call(t, h, "getProgramAccounts", tc.params...)
			switch {
			case tc.code == 0 && e != nil:
				t.Fatalf("unexpected error %d %s", e.Code, e.Message)
			case tc.code != 0 && (e == nil || e.Code != tc.code || e.Message != tc.msg):
				t.Fatalf("error %+v, want %d %q", e, tc.code, tc.msg)
			}
		})
	}
}

func TestGetTokenAccountsByDelegate(t *testing.T) {
	w := newAccountWorld(t)
	h := w.n.h
	spender := pub(w.spender).String()
	b64 := map[string]any{"encoding": "base64"}
	for _, tc := range []struct {
		name   string
		params []any
		want   []solana.PublicKey
		code   int
		msg    string
	}{
		{"by mint", []any{spender, map[string]any{"mint": w.mint.String()}, b64}, []solana.PublicKey{w.aliceAta}, 0, ""},
		{"by program", []any{spender, map[string]any{"programId": spl.TokenProgramID.String()}, b64}, []solana.PublicKey{w.aliceAta}, 0, ""},
		{"other program", []any{spender, map[string]any{"programId": spl.Token2022ProgramID.String()}, b64}, []solana.PublicKey{}, 0, ""},
		{"other mint", []any{spender, map[string]any{"mint": w.mint22.String()}, b64}, []solana.PublicKey{}, 0, ""},
		{"not a delegate", []any{pub(w.bob).String(), map[string]any{"mint": w.mint.String()}, b64}, []solana.PublicKey{}, 0, ""},
		{"the owner is not its delegate", []any{pub(w.alice).String(), map[string]any{"mint": w.mint.String()}, b64}, []solana.PublicKey{}, 0, ""},
		{"unknown mint", []any{spender, map[string]any{"mint": solana.PublicKey{9}.String()}}, nil, -32602, "Invalid param: could not find mint"},
		{"a wallet is not a mint", []any{spender, map[string]any{"mint": pub(w.bob).String()}}, nil, -32602, "Invalid param: mint could not be unpacked"},
		{"not a token program", []any{spender, map[string]any{"programId": w.program.String()}}, nil, -32602, "Invalid param: unrecognized Token program id"},
		{"both filters", []any{spender, map[string]any{"mint": w.mint.String(), "programId": spl.TokenProgramID.String()}}, nil, -32602,
			"Invalid params: data did not match any variant of untagged enum RpcTokenAccountsFilter."},
		{"bad delegate", []any{"x", map[string]any{"mint": w.mint.String()}}, nil, -32602, "Invalid param: Invalid"},
		{"missing filter", []any{spender}, nil, -32602, "Invalid params: invalid length 1, expected at least 2 parameters."},
		{"minContextSlot", []any{spender, map[string]any{"mint": w.mint.String()}, map[string]any{"minContextSlot": 1 << 40}}, nil, -32016,
			"Minimum context slot has not been reached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, e := call(t, h, "getTokenAccountsByDelegate", tc.params...)
			if tc.code != 0 {
				if e == nil || e.Code != tc.code || e.Message != tc.msg {
					t.Fatalf("error %+v, want %d %q", e, tc.code, tc.msg)
				}
				return
			}
			if e != nil {
				t.Fatalf("%d %s", e.Code, e.Message)
			}
			var got struct {
				Context struct{ Slot uint64 } `json:"context"`
				Value   []keyed               `json:"value"`
			}
			if err := json.Unmarshal(res, &got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pubkeys(got.Value), tc.want) || got.Context.Slot != w.n.l.Slot(ledger.Finalized) {
				t.Fatalf("got %v at %d, want %v", pubkeys(got.Value), got.Context.Slot, tc.want)
			}
			for _, k := range got.Value {
				if ta, err := spl.DecodeTokenAccount(decodeData(t, k.Account.Data)); err != nil || ta.Delegate == nil || *ta.Delegate != pub(w.spender) {
					t.Fatalf("%s: %+v %v", k.Pubkey, ta, err)
				}
			}
		})
	}

	// Revoking takes the account out of the delegate's list, at processed
	// first and at finalized once the slot is.
	bh, _ := w.n.l.LatestBlockhash(ledger.Processed)
	if _, err := w.n.l.Process(ctxT(t), signed(t, bh.Blockhash, w.alice, []txwire.Instruction{
		spl.TokenRevoke(spl.TokenProgramID, w.aliceAta, pub(w.alice)),
	})); err != nil {
		t.Fatal(err)
	}
	count := func(c string) int {
		var got struct{ Value []keyed }
		mustCall(t, h, &got, "getTokenAccountsByDelegate", spender, map[string]any{"mint": w.mint.String()}, map[string]any{"encoding": "base64", "commitment": c})
		return len(got.Value)
	}
	if count("processed") != 0 || count("finalized") != 1 {
		t.Fatalf("after revoke: processed %d finalized %d", count("processed"), count("finalized"))
	}
	if _, err := w.n.l.AdvanceSlots(ctxT(t), 4); err != nil {
		t.Fatal(err)
	}
	if count("finalized") != 0 {
		t.Fatal("revoked delegation still listed at finalized")
	}
}
