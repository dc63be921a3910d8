package rpcserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
)

func faucetCall(t *testing.T, h *Handler, method, params string) (json.RawMessage, *Error) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *Error          `json:"error"`
	}
	if err := json.Unmarshal(h.HandleBody(t.Context(), []byte(body)), &resp); err != nil {
		t.Fatal(err)
	}
	return resp.Result, resp.Error
}

func TestFaucetMethods(t *testing.T) {
	l, err := ledger.Open(ledger.Config{Name: "faucet", SlotDuration: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	h := New(l, Options{})

	// Not enabled: a real cluster's answer.
	if _, e := faucetCall(t, h, MethodFaucetInfo, `[]`); e == nil || e.Code != CodeMethodNotFound {
		t.Fatalf("before EnableFaucet: %+v", e)
	}
	var demo solana.PublicKey
	h.EnableFaucet(FaucetOptions{DefaultMint: func() solana.PublicKey { return demo }})

	raw, e := faucetCall(t, h, MethodFaucetInfo, `[]`)
	if e != nil {
		t.Fatal(e)
	}
	if want := `{"faucet":"` + l.Faucet().PublicKey().String() + `","defaultMint":null}`; string(raw) != want {
		t.Fatalf("faucetInfo = %s, want %s", raw, want)
	}

	raw, e = faucetCall(t, h, MethodCreateMint, `[{"decimals":2}]`)
	if e != nil {
		t.Fatal(e)
	}
	var cm CreateMintResult
	if err := json.Unmarshal(raw, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Decimals != 2 || cm.TokenProgram != spl.TokenProgramID.String() || cm.Signature == "" {
		t.Fatalf("createMint = %+v", cm)
	}
	mint := solana.MustPublicKeyFromBase58(cm.Mint)
	demo = mint
	if raw, _ = faucetCall(t, h, MethodFaucetInfo, `[]`); !strings.Contains(string(raw), `"defaultMint":"`+cm.Mint+`"`) {
		t.Fatalf("faucetInfo after setting the default mint = %s", raw)
	}

	owner := solana.NewWallet().PublicKey()
	raw, e = faucetCall(t, h, MethodMintTo, `["`+cm.Mint+`","`+owner.String()+`",1234]`)
	if e != nil {
		t.Fatal(e)
	}
	var sig string
	if err := json.Unmarshal(raw, &sig); err != nil || len(sig) < 80 {
		t.Fatalf("mintTo = %s", raw)
	}
	ata := spl.AssociatedTokenAddress(owner, mint, spl.TokenProgramID)
	a, _ := l.Account(ata, ledger.Processed)
	if a == nil || spl.TokenAmountOf(a.Data) != 1234 {
		t.Fatalf("ATA after mintTo: %+v", a)
	}
	// Again: the ATA exists now, the amount adds up.
	if _, e = faucetCall(t, h, MethodMintTo, `["`+cm.Mint+`","`+owner.String()+`",1]`); e != nil {
		t.Fatal(e)
	}
	if a, _ = l.Account(ata, ledger.Processed); spl.TokenAmountOf(a.Data) != 1235 {
		t.Fatalf("amount %d, want 1235", spl.TokenAmountOf(a.Data))
	}

	// A mint whose authority is not the faucet.
	other := solana.NewWallet().PublicKey()
	foreign, _, err := l.Faucet().CreateMint(t.Context(), ledger.MintOptions{Decimals: 0, Authority: &other})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ method, params, want string }{
		{MethodMintTo, `["` + foreign.String() + `","` + owner.String() + `",1]`, "is not the mint authority"},
		{MethodMintTo, `["` + owner.String() + `","` + owner.String() + `",1]`, "is not a mint"},
		{MethodMintTo, `["` + cm.Mint + `","` + owner.String() + `",0]`, "amount must be positive"},
		{MethodMintTo, `["` + cm.Mint + `","` + owner.String() + `"]`, "expected at least 3"},
		{MethodMintTo, `["nope","` + owner.String() + `",1]`, "Invalid param"},
		{MethodCreateMint, `[{"decimals":19}]`, "decimals must be between 0 and 18"},
		{MethodCreateMint, `[7]`, "configuration object"},
		{MethodFaucetInfo, `[1]`, "fewer elements"},
	} {
		_, e := faucetCall(t, h, tc.method, tc.params)
		if e == nil || e.Code != CodeInvalidParams || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s %s: %+v, want -32602 containing %q", tc.method, tc.params, e, tc.want)
		}
	}
}
