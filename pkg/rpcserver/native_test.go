package rpcserver

import (
	"crypto/ed25519"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// process runs ixs paid by payer on a manual node and confirms the slot.
func (n *node) process(t *testing.T, payer ed25519.PrivateKey, ixs ...txwire.Instruction) solana.Signature {
	t.Helper()
	bh, _ := n.l.LatestBlockhash(ledger.Processed)
	rec, err := n.l.Process(ctxT(t), signed(t, bh.Blockhash, payer, ixs))
	if err != nil || rec.Err != nil {
		t.Fatalf("process: %v %v %q", err, rec.Err, rec.Meta.Logs)
	}
	if _, err := n.l.AdvanceSlot(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return rec.Signature
}

// result calls method and returns its result, failing on an RPC error.
func (n *node) result(t *testing.T, method string, params ...any) any {
	t.Helper()
	_, v := rawCall(t, n.url, req(method, params...))
	if code, msg, _ := errCode(v); code != 0 {
		t.Fatalf("%s: %d %s", method, code, msg)
	}
	return v.(map[string]any)["result"]
}

// requireJSON compares got with the JSON text want, as values.
func requireJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation for %s: %v", what, err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Errorf("%s:\n got %s\nwant %s", what, g, want)
	}
}

// TestWrappedSOLJSONParsed checks wSOL through the RPC surface: the
// jsonParsed forms of both native mints and of wrapped-SOL accounts under
// both token programs (Agave account-decoder's UiTokenAccount with
// isNative and rentExemptReserve), getParsedTokenAccountsByOwner
// (getTokenAccountsByOwner with jsonParsed), getTokenAccountBalance and
// the transaction's pre/postTokenBalances.
func TestWrappedSOLJSONParsed(t *testing.T) {
	n := manualNode(t)
	alice := newKey(t)
	if _, err := n.l.Faucet().Airdrop(ctxT(t), pub(alice), 10_000_000_000); err != nil {
		t.Fatal(err)
	}
	if _, err := n.l.AdvanceSlot(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	a := pub(alice).String()
	parsed := map[string]any{"encoding": "jsonParsed", "commitment": "confirmed"}
	data := func(v any) any { return v.(map[string]any)["value"].(map[string]any)["data"] }

	for _, tc := range []struct {
		mint, program solana.PublicKey
		name          string
		lamports      uint64
	}{
		{spl.NativeMintID, spl.TokenProgramID, "spl-token", 1_000_000_000},
		{spl.NativeMint2022ID, spl.Token2022ProgramID, "spl-token-2022", 1_461_600},
	} {
		v := n.result(t, "getAccountInfo", tc.mint.String(), parsed)
		acct := v.(map[string]any)["value"].(map[string]any)
		if acct["owner"] != tc.program.String() || acct["lamports"] != float64(tc.lamports) || acct["space"] != float64(82) {
			t.Errorf("native mint %s: %v", tc.mint, acct)
		}
		requireJSON(t, "native mint "+tc.name, data(v), `{"program":"`+tc.name+`","space":82,"parsed":{"type":"mint","info":{
			"mintAuthority":null,"supply":"0","decimals":9,"isInitialized":true,"freezeAuthority":null}}}`)
	}

	// Wrap 1.5 SOL in an ATA under each program.
	splATA := spl.AssociatedTokenAddress(pub(alice), spl.NativeMintID, spl.TokenProgramID)
	t22ATA := spl.AssociatedTokenAddress(pub(alice), spl.NativeMint2022ID, spl.Token2022ProgramID)
	sig := n.process(t, alice,
		spl.CreateAssociatedTokenAccount(pub(alice), pub(alice), spl.NativeMintID, spl.TokenProgramID, true),
		spl.SystemTransfer(pub(alice), splATA, 1_500_000_000),
		spl.TokenSyncNative(spl.TokenProgramID, splATA))
	n.process(t, alice,
		spl.CreateAssociatedTokenAccount(pub(alice), pub(alice), spl.NativeMint2022ID, spl.Token2022ProgramID, true),
		spl.SystemTransfer(pub(alice), t22ATA, 250_000_000),
		spl.TokenSyncNative(spl.Token2022ProgramID, t22ATA))

	wantSPL := `{"program":"spl-token","space":165,"parsed":{"type":"account","info":{
		"mint":"So11111111111111111111111111111111111111112","owner":"` + a + `",
		"tokenAmount":{"amount":"1500000000","decimals":9,"uiAmount":1.5,"uiAmountString":"1.5"},
		"state":"initialized","isNative":true,
		"rentExemptReserve":{"amount":"2039280","decimals":9,"uiAmount":0.00203928,"uiAmountString":"0.00203928"}}}}`
	want2022 := `{"program":"spl-token-2022","space":170,"parsed":{"type":"account","info":{
		"mint":"9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP","owner":"` + a + `",
		"tokenAmount":{"amount":"250000000","decimals":9,"uiAmount":0.25,"uiAmountString":"0.25"},
		"state":"initialized","isNative":true,
		"rentExemptReserve":{"amount":"2074080","decimals":9,"uiAmount":0.00207408,"uiAmountString":"0.00207408"},
		"extensions":[{"extension":"immutableOwner"}]}}}`
	requireJSON(t, "SPL wSOL account", data(n.result(t, "getAccountInfo", splATA.String(), parsed)), wantSPL)
	requireJSON(t, "Token-2022 wSOL account", data(n.result(t, "getAccountInfo", t22ATA.String(), parsed)), want2022)

	// getParsedTokenAccountsByOwner, by program and by mint.
	for _, tc := range []struct {
		filter map[string]any
		ata    solana.PublicKey
		want   string
	}{
		{map[string]any{"programId": spl.TokenProgramID.String()}, splATA, wantSPL},
		{map[string]any{"mint": spl.NativeMintID.String()}, splATA, wantSPL},
		{map[string]any{"programId": spl.Token2022ProgramID.String()}, t22ATA, want2022},
	} {
		v := n.result(t, "getTokenAccountsByOwner", a, tc.filter, parsed)
		list := v.(map[string]any)["value"].([]any)
		if len(list) != 1 {
			t.Fatalf("getTokenAccountsByOwner %v: %d accounts", tc.filter, len(list))
		}
		item := list[0].(map[string]any)
		if item["pubkey"] != tc.ata.String() {
			t.Errorf("pubkey %v", item["pubkey"])
		}
		requireJSON(t, "getTokenAccountsByOwner", item["account"].(map[string]any)["data"], tc.want)
	}

	requireJSON(t, "getTokenAccountBalance", n.result(t, "getTokenAccountBalance", splATA.String(), map[string]any{"commitment": "confirmed"}).(map[string]any)["value"],
		`{"amount":"1500000000","decimals":9,"uiAmount":1.5,"uiAmountString":"1.5"}`)
	requireJSON(t, "getTokenSupply", n.result(t, "getTokenSupply", spl.NativeMintID.String(), map[string]any{"commitment": "confirmed"}).(map[string]any)["value"],
		`{"amount":"0","decimals":9,"uiAmount":0,"uiAmountString":"0"}`)

	// The wrap transaction's token balances: none before (the ATA did not
	// exist), the wrapped amount after.
	v := n.result(t, "getTransaction", sig.String(), map[string]any{"commitment": "confirmed", "encoding": "json"})
	tx := v.(map[string]any)
	keys := tx["transaction"].(map[string]any)["message"].(map[string]any)["accountKeys"].([]any)
	idx := -1
	for i, k := range keys {
		if k == splATA.String() {
			idx = i
		}
	}
	meta := tx["meta"].(map[string]any)
	requireJSON(t, "preTokenBalances", meta["preTokenBalances"], `[]`)
	b, _ := json.Marshal(idx)
	requireJSON(t, "postTokenBalances", meta["postTokenBalances"], `[{"accountIndex":`+string(b)+`,
		"mint":"So11111111111111111111111111111111111111112","owner":"`+a+`",
		"programId":"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
		"uiTokenAmount":{"amount":"1500000000","decimals":9,"uiAmount":1.5,"uiAmountString":"1.5"}}]`)
}

// FuzzParseTokenAccountData feeds arbitrary data owned by each token
// program to the jsonParsed account parser (token accounts, mints and the
// Token-2022 extension area): it must never panic, and what it renders
// must marshal.
func FuzzParseTokenAccountData(f *testing.F) {
	reserve := uint64(2_039_280)
	owner := solana.PublicKey{1}
	f.Add(spl.TokenAccount{Mint: spl.NativeMintID, Owner: owner, State: spl.StateInitialized, IsNative: &reserve}.Encode())
	f.Add(append(spl.TokenAccount{Mint: spl.NativeMintID, Owner: owner, State: spl.StateInitialized}.Encode(), spl.AccountTypeAccount, 7, 0, 0, 0))
	f.Add(append(spl.TokenAccount{Mint: spl.NativeMintID, Owner: owner, State: spl.StateInitialized}.Encode(), spl.AccountTypeAccount, 3, 0, 0xff, 0xff, 7))
	f.Add(spl.Mint{Decimals: 9, IsInitialized: true}.Encode())
	mint := &ledger.Account{Owner: spl.TokenProgramID, Data: spl.Mint{Decimals: 9, IsInitialized: true}.Encode(), Lamports: 1}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, prog := range []solana.PublicKey{spl.TokenProgramID, spl.Token2022ProgramID} {
			v := parseAccountData(&ledger.Account{Owner: prog, Data: data, Lamports: 1}, func(solana.PublicKey) *ledger.Account { return mint })
			if v == nil {
				continue
			}
			if _, err := json.Marshal(v); err != nil {
				t.Fatalf("marshal %v: %v", v, err)
			}
		}
	})
}
