package devchain_test

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/token"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// TestSetTokenAccountRPC: surfnet_setTokenAccount creates the associated
// token account and sets each field; the mint's supply follows the
// balance; the owner index and the token program see a real account.
func TestSetTokenAccountRPC(t *testing.T) {
	n := newNode(t, "set-token")
	mint := n.mint(false)
	owner, ownerKey := newKey()
	n.fund(owner, 1_000_000_000)
	ata := spl.AssociatedTokenAddress(owner, mint, spl.TokenProgramID)
	o, m := owner.String(), mint.String()

	var res struct {
		Value json.RawMessage `json:"value"`
	}
	n.ok(devchain.MethodSetTokenAccount, `["`+o+`","`+m+`",{"amount":1000000000}]`, &res)
	if string(res.Value) != "null" {
		t.Fatalf("value %s", res.Value)
	}
	a := n.account(ata)
	if a == nil || a.Owner != spl.TokenProgramID || len(a.Data) != spl.TokenAccountSize || a.Lamports != n.l.MinimumBalanceForRentExemption(spl.TokenAccountSize) {
		t.Fatalf("ATA %+v", a)
	}
	if got := supplyOf(t, n.account(mint)); got != 1_000_000_000 {
		t.Fatalf("supply %d after setting 1000000000", got)
	}
	var byOwner struct {
		Value []struct {
			Pubkey string `json:"pubkey"`
		} `json:"value"`
	}
	n.ok("getTokenAccountsByOwner", `["`+o+`",{"mint":"`+m+`"},{"commitment":"processed","encoding":"base64"}]`, &byOwner)
	if len(byOwner.Value) != 1 || byOwner.Value[0].Pubkey != ata.String() {
		t.Fatalf("getTokenAccountsByOwner %+v", byOwner)
	}

	// Lower the balance (the supply follows), set a delegate, a close
	// authority, then clear the delegate with "null".
	del, _ := newKey()
	n.ok(devchain.FerrySetTokenAccount, `["`+o+`","`+m+`",{"amount":400,"delegate":"`+del.String()+`","delegatedAmount":50,"closeAuthority":"`+del.String()+`"}]`, nil)
	info := n.parsed(ata)
	if info["tokenAmount"].(map[string]any)["amount"] != "400" || info["delegate"] != del.String() || info["closeAuthority"] != del.String() ||
		info["delegatedAmount"].(map[string]any)["amount"] != "50" || info["state"] != "initialized" {
		t.Fatalf("jsonParsed %v", info)
	}
	if got := supplyOf(t, n.account(mint)); got != 400 {
		t.Fatalf("supply %d, want 400", got)
	}
	n.ok(devchain.MethodSetTokenAccount, `["`+o+`","`+m+`",{"delegate":"null"},"`+spl.TokenProgramID.String()+`"]`, nil)
	if info := n.parsed(ata); info["delegate"] != nil {
		t.Fatalf("delegate not cleared: %v", info)
	}

	// Frozen: the token program refuses a transfer from it; thawed again,
	// the same transfer goes through.
	dest, _ := newKey()
	n.ok(devchain.MethodSetTokenAccount, `["`+dest.String()+`","`+m+`",{"amount":0}]`, nil)
	destATA := spl.AssociatedTokenAddress(dest, mint, spl.TokenProgramID)
	n.ok(devchain.MethodSetTokenAccount, `["`+o+`","`+m+`",{"state":"frozen"}]`, nil)
	transfer := spl.TokenTransferChecked(spl.TokenProgramID, ata, mint, destATA, owner, 100, 6)
	if rec := n.send(ownerKey, transfer); rec.Err == nil || !rec.Err.Is(runtime.InstructionFailed(0, token.ErrAccountFrozen)) {
		t.Fatalf("transfer from a frozen account: %v", rec.Err)
	}
	n.ok(devchain.MethodSetTokenAccount, `["`+o+`","`+m+`",{"state":"initialized"}]`, nil)
	n.advance() // a new blockhash: the same transfer again is a new transaction
	if rec := n.send(ownerKey, transfer); rec.Err != nil {
		t.Fatalf("transfer: %v %v", rec.Err, rec.Meta.Logs)
	}
	if tokenAmount(n.account(ata)) != 300 || tokenAmount(n.account(destATA)) != 100 || supplyOf(t, n.account(mint)) != 400 {
		t.Fatalf("after the transfer: %d / %d, supply %d", tokenAmount(n.account(ata)), tokenAmount(n.account(destATA)), supplyOf(t, n.account(mint)))
	}
}

// TestSetTokenAccountToken2022: a Token-2022 ATA is laid out as the ATA
// program makes it (170 bytes, ImmutableOwner), so the token program
// moves tokens out of it.
func TestSetTokenAccountToken2022(t *testing.T) {
	n := newNode(t, "set-token-2022")
	mint := n.mint(true)
	owner, ownerKey := newKey()
	n.fund(owner, 1_000_000_000)
	dest, _ := newKey()
	for _, c := range []struct {
		who    solana.PublicKey
		amount uint64
	}{{owner, 5000}, {dest, 0}} {
		n.ok(devchain.MethodSetTokenAccount, `["`+c.who.String()+`","`+mint.String()+`",{"amount":`+strconv.FormatUint(c.amount, 10)+`}]`, nil)
	}
	ata := spl.AssociatedTokenAddress(owner, mint, spl.Token2022ProgramID)
	a := n.account(ata)
	if a == nil || a.Owner != spl.Token2022ProgramID || len(a.Data) != 170 || a.Lamports != n.l.MinimumBalanceForRentExemption(170) {
		t.Fatalf("Token-2022 ATA %+v", a)
	}
	info := n.parsed(ata)
	if exts, _ := info["extensions"].([]any); len(exts) != 1 || exts[0].(map[string]any)["extension"] != "immutableOwner" {
		t.Fatalf("extensions %v", info["extensions"])
	}
	destATA := spl.AssociatedTokenAddress(dest, mint, spl.Token2022ProgramID)
	if rec := n.send(ownerKey, spl.TokenTransferChecked(spl.Token2022ProgramID, ata, mint, destATA, owner, 1234, 6)); rec.Err != nil {
		t.Fatalf("Token-2022 transfer: %v %v", rec.Err, rec.Meta.Logs)
	}
	if tokenAmount(n.account(destATA)) != 1234 {
		t.Fatalf("destination holds %d", tokenAmount(n.account(destATA)))
	}
	// The program given must own the mint.
	n.fails(devchain.MethodSetTokenAccount, `["`+owner.String()+`","`+mint.String()+`",{"amount":1},"`+spl.TokenProgramID.String()+`"]`,
		devchain.CodeInvalidParams, "belongs to the token program")
}

// TestSetTokenAccountNative: wrapped SOL keeps amount = lamports −
// reserve, and the native mint's supply stays 0.
func TestSetTokenAccountNative(t *testing.T) {
	n := newNode(t, "set-token-native")
	owner, _ := newKey()
	n.ok(devchain.MethodSetTokenAccount, `["`+owner.String()+`","`+spl.NativeMintID.String()+`",{"amount":5000000}]`, nil)
	ata := spl.AssociatedTokenAddress(owner, spl.NativeMintID, spl.TokenProgramID)
	reserve := n.l.MinimumBalanceForRentExemption(spl.TokenAccountSize)
	if a := n.account(ata); a == nil || a.Lamports != reserve+5_000_000 {
		t.Fatalf("wSOL account %+v, want %d lamports", a, reserve+5_000_000)
	}
	info := n.parsed(ata)
	if info["isNative"] != true || info["tokenAmount"].(map[string]any)["amount"] != "5000000" {
		t.Fatalf("jsonParsed %v", info)
	}
	if supplyOf(t, n.account(spl.NativeMintID)) != 0 {
		t.Fatal("the native mint's supply moved")
	}
}

func TestSetTokenAccountRefusals(t *testing.T) {
	n := newNode(t, "set-token-refusals")
	mint := n.mint(false)
	owner, _ := newKey()
	o, m := owner.String(), mint.String()
	missing, _ := newKey()
	for _, c := range []struct{ params, msg string }{
		{`["` + o + `","` + missing.String() + `",{"amount":1}]`, "does not exist on the"},
		{`["` + o + `","` + m + `",{"state":"melted"}]`, "Invalid token account state melted"},
		{`["` + o + `","` + m + `",{"delegate":"0"}]`, "Invalid pubkey '0'"},
		{`["` + o + `","` + m + `",{"amount":1},"` + o + `"]`, "is not a token program"},
		{`["` + o + `","` + m + `",{"amount":1,"confidential":{}}]`, "unknown field `confidential`"},
		{`["` + o + `","` + m + `"]`, "invalid length 2"},
	} {
		n.fails(devchain.MethodSetTokenAccount, c.params, devchain.CodeInvalidParams, c.msg)
	}
	// A balance cut below what the supply accounts for is refused.
	n.ok(devchain.MethodSetTokenAccount, `["`+o+`","`+m+`",{"amount":100}]`, nil)
	n.ok(devchain.MethodSetMint, `["`+m+`",{"supply":10}]`, nil)
	n.fails(devchain.MethodSetTokenAccount, `["`+o+`","`+m+`",{"amount":0}]`, devchain.CodeInvalidParams, "is lower than the 100 this would remove")
	if tokenAmount(n.account(spl.AssociatedTokenAddress(owner, mint, spl.TokenProgramID))) != 100 {
		t.Fatal("a refused call changed the balance")
	}
}

// TestRollupBacking: on the ephemeral rollup a balance set by a cheatcode
// moves the base vault of the mint by the same amount (and the base mint's
// supply), so rollup balances stay backed; a mint without a vault, or a
// cut the vault cannot cover, is refused without writing either side.
func TestRollupBacking(t *testing.T) {
	base := newNode(t, "base")
	er := newNode(t, "ephemeral")
	er = newNodeOn(t, er.l, &devchain.VaultBacking{Base: base.l})
	mint := base.mint(false)
	owner, _ := newKey()
	m := mint.String()
	// The rollup's copy of the mint.
	a := base.account(mint)
	er.ok(devchain.MethodSetAccount, `["`+m+`",{"lamports":`+strconv.FormatUint(a.Lamports, 10)+`,"owner":"`+a.Owner.String()+`","dataBase64":"`+b64(a.Data)+`"}]`, nil)
	er.fails(devchain.MethodSetTokenAccount, `["`+owner.String()+`","`+m+`",{"amount":500}]`, devchain.CodeInvalidParams, "has no vault on base")
	if er.account(spl.AssociatedTokenAddress(owner, mint, spl.TokenProgramID)) != nil {
		t.Fatal("a refused rollup balance was written")
	}
	// Give the mint a vault on base holding 1000 (what a deposit leaves).
	vaultOwner, _ := espl.FindGlobalVault(mint)
	base.ok(devchain.MethodSetTokenAccount, `["`+vaultOwner.String()+`","`+m+`",{"amount":1000}]`, nil)
	vault, _ := espl.FindVaultATA(mint, spl.TokenProgramID)

	er.ok(devchain.MethodSetTokenAccount, `["`+owner.String()+`","`+m+`",{"amount":500}]`, nil)
	if got := tokenAmount(base.account(vault)); got != 1500 {
		t.Fatalf("base vault %d after a 500 rollup balance, want 1500", got)
	}
	if got := supplyOf(t, base.account(mint)); got != 1500 {
		t.Fatalf("base supply %d, want 1500", got)
	}
	er.ok(devchain.MethodSetTokenAccount, `["`+owner.String()+`","`+m+`",{"amount":200}]`, nil)
	if got := tokenAmount(base.account(vault)); got != 1200 {
		t.Fatalf("base vault %d after lowering the rollup balance to 200, want 1200", got)
	}
	// The vault cannot go below zero: with 1200 in it, a rollup balance
	// cut by more is refused (set the vault lower first to provoke it).
	base.ok(devchain.MethodSetTokenAccount, `["`+vaultOwner.String()+`","`+m+`",{"amount":100}]`, nil)
	er.fails(devchain.MethodSetTokenAccount, `["`+owner.String()+`","`+m+`",{"amount":0}]`, devchain.CodeInvalidParams, "the vault holds 100")
	if got := tokenAmount(er.account(spl.AssociatedTokenAddress(owner, mint, spl.TokenProgramID))); got != 200 {
		t.Fatalf("rollup balance %d after a refused cut, want 200", got)
	}
	// Wrapped SOL on the rollup comes from deposits only.
	er.fails(devchain.MethodSetTokenAccount, `["`+owner.String()+`","`+spl.NativeMintID.String()+`",{"amount":5}]`, devchain.CodeInvalidParams, "wrapped SOL")
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
