package devchain_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// TestSetAccountRPC: surfnet_setAccount and ferry_setAccount create and
// update accounts field by field, answer surfpool's RpcResponse<()>, and
// the write moves the supply and the owner index like any other.
func TestSetAccountRPC(t *testing.T) {
	n := newNode(t, "set-account")
	key, _ := newKey()
	owner, _ := newKey()
	supply := func() uint64 { s, _ := n.l.Supply(ledger.Processed); return s }
	before := supply()

	var res struct {
		Context struct {
			Slot uint64 `json:"slot"`
		} `json:"context"`
		Value json.RawMessage `json:"value"`
	}
	n.ok(devchain.MethodSetAccount, `["`+key.String()+`",{"lamports":5000000,"owner":"`+owner.String()+`","data":"0a0b0c","executable":false,"rentEpoch":0}]`, &res)
	if string(res.Value) != "null" || res.Context.Slot != n.l.Slot(ledger.Processed) {
		t.Fatalf("result %+v (value %s)", res, res.Value)
	}
	a := n.account(key)
	if a == nil || a.Lamports != 5_000_000 || a.Owner != owner || !bytes.Equal(a.Data, []byte{10, 11, 12}) || a.Executable {
		t.Fatalf("account %+v", a)
	}
	if got := supply() - before; got != 5_000_000 {
		t.Fatalf("supply moved by %d, want 5000000", got)
	}
	// The owner index sees it: getProgramAccounts lists it.
	var gpa []struct {
		Pubkey string `json:"pubkey"`
	}
	n.ok("getProgramAccounts", `["`+owner.String()+`",{"commitment":"processed","encoding":"base64"}]`, &gpa)
	if len(gpa) != 1 || gpa[0].Pubkey != key.String() {
		t.Fatalf("getProgramAccounts %+v", gpa)
	}

	// An update keeps the fields it does not name; base64 data through
	// the ferry alias.
	n.ok(devchain.FerrySetAccount, `["`+key.String()+`",{"dataBase64":"AQID"}]`, nil)
	if a := n.account(key); a.Lamports != 5_000_000 || a.Owner != owner || !bytes.Equal(a.Data, []byte{1, 2, 3}) {
		t.Fatalf("after the data update %+v", a)
	}
	// The write is durable with its slot.
	n.advance()
	if a, _ := n.l.Account(key, ledger.Confirmed); a == nil || a.Lamports != 5_000_000 {
		t.Fatalf("confirmed %+v", a)
	}
	// lamports 0 deletes.
	n.ok(devchain.MethodSetAccount, `["`+key.String()+`",{"lamports":0}]`, nil)
	if n.account(key) != nil || supply() != before {
		t.Fatalf("not deleted: %+v, supply %d want %d", n.account(key), supply(), before)
	}
}

// TestSetAccountRefusals: bad input gets surfpool's (jsonrpc-core's)
// -32602 errors and changes nothing.
func TestSetAccountRefusals(t *testing.T) {
	n := newNode(t, "set-account-refusals")
	key, _ := newKey()
	k := key.String()
	for _, c := range []struct {
		params, msg string
	}{
		{`["n0pe",{"lamports":1}]`, "Invalid pubkey 'n0pe'"},
		{`["nope",{"lamports":1}]`, "Invalid pubkey 'nope'"},
		{`["` + k + `",{"lamports":1,"owner":"xyz0"}]`, "Invalid pubkey 'xyz0'"},
		{`["` + k + `",{"lamports":1,"data":"zz"}]`, "Invalid hex data provided"},
		{`["` + k + `",{"lamports":1,"dataBase64":"***"}]`, "Invalid base64 data provided"},
		{`["` + k + `",{"lamports":1,"data":"00","dataBase64":"AA=="}]`, "data and dataBase64 are exclusive"},
		{`["` + k + `",{"lamports":"1"}]`, "invalid type: string, expected u64"},
		{`["` + k + `",{"lamports":-1}]`, "invalid type"},
		{`["` + k + `",{"lamport":1}]`, "unknown field `lamport`, expected one of `lamports`, `data`, `dataBase64`, `owner`, `executable`, `rentEpoch`"},
		{`["` + k + `",[1]]`, "expected a map"},
		{`["` + k + `"]`, "invalid length 1"},
		{`["` + k + `",{"data":"00"}]`, "would have 0 lamports"},
		{`["` + spl.SysvarClockID.String() + `",{"lamports":1}]`, "is a sysvar"},
	} {
		e := n.fails(devchain.MethodSetAccount, c.params, devchain.CodeInvalidParams, c.msg)
		if want := map[string]string{"Invalid pubkey 'n0pe'": `"Invalid Base58 string"`, "Invalid pubkey 'nope'": `"String is the wrong size"`}[c.msg]; want != "" && string(e.Data) != want {
			t.Errorf("%s: data %s, want %s", c.msg, e.Data, want)
		}
	}
	if n.account(key) != nil {
		t.Fatal("a refused call wrote the account")
	}
}

// TestObserveSeesCheatcodes: PubSub's feed (ledger.Observe) reports a
// cheatcode write as a processed event with the account, as it does for
// the validator's writes.
func TestObserveSeesCheatcodes(t *testing.T) {
	n := newNode(t, "observe")
	obs := n.l.Observe(64)
	defer obs.Close()
	key, _ := newKey()
	n.ok(devchain.MethodSetAccount, `["`+key.String()+`",{"lamports":1000000}]`, nil)
	for {
		evs, err := obs.Next(n.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			for _, w := range ev.Applied {
				if w.Key == key && w.Account != nil && w.Account.Lamports == 1_000_000 && ev.Kind == ledger.EventProcessed {
					return
				}
			}
		}
	}
}

// TestResetAccount: an account genesis did not create is deleted, a
// genesis account gets its genesis value back, and includeOwnedAccounts
// resets what the account owns.
func TestResetAccount(t *testing.T) {
	n := newNode(t, "reset")
	key, _ := newKey()
	n.ok(devchain.MethodSetAccount, `["`+key.String()+`",{"lamports":1000000}]`, nil)
	n.ok(devchain.MethodResetAccount, `["`+key.String()+`"]`, nil)
	if n.account(key) != nil {
		t.Fatal("reset did not delete an account genesis never had")
	}

	// The native mint is a genesis account: change its supply, reset it.
	genesis := n.account(spl.NativeMintID).Clone()
	n.ok(devchain.MethodSetMint, `["`+spl.NativeMintID.String()+`",{"supply":42}]`, nil)
	if supplyOf(t, n.account(spl.NativeMintID)) != 42 {
		t.Fatal("setMint did not change the native mint")
	}
	n.ok(devchain.FerryResetAccount, `["`+spl.NativeMintID.String()+`"]`, nil)
	if got := n.account(spl.NativeMintID); got.Lamports != genesis.Lamports || !bytes.Equal(got.Data, genesis.Data) || got.Owner != genesis.Owner {
		t.Fatalf("native mint after reset %+v, genesis %+v", got, genesis)
	}

	// A "program" owning two accounts: includeOwnedAccounts resets both
	// (the older surfpool name, recursive, too).
	prog, _ := newKey()
	a1, _ := newKey()
	a2, _ := newKey()
	for _, k := range []solana.PublicKey{a1, a2} {
		n.ok(devchain.MethodSetAccount, `["`+k.String()+`",{"lamports":1000000,"owner":"`+prog.String()+`"}]`, nil)
	}
	n.ok(devchain.MethodResetAccount, `["`+prog.String()+`",{"includeOwnedAccounts":false}]`, nil)
	if n.account(a1) == nil {
		t.Fatal("reset without includeOwnedAccounts touched an owned account")
	}
	var res struct {
		Context struct{ Slot uint64 } `json:"context"`
	}
	n.ok(devchain.MethodResetAccount, `["`+prog.String()+`",{"recursive":true}]`, &res)
	if n.account(a1) != nil || n.account(a2) != nil {
		t.Fatal("includeOwnedAccounts left owned accounts")
	}
	n.fails(devchain.MethodResetAccount, `["`+prog.String()+`",{"bogus":true}]`, devchain.CodeInvalidParams, "unknown field `bogus`")
	n.fails(devchain.MethodResetAccount, `["`+spl.SysvarRentID.String()+`"]`, devchain.CodeInvalidParams, "is a sysvar")
}

// TestSetMint: a mint is created at any address, its fields change one by
// one, and "null" removes an authority.
func TestSetMint(t *testing.T) {
	n := newNode(t, "set-mint")
	mint, _ := newKey()
	auth, _ := newKey()
	m := mint.String()
	n.fails(devchain.MethodSetMint, `["`+m+`",{"supply":5}]`, devchain.CodeInvalidParams, "give decimals to create it")
	n.ok(devchain.MethodSetMint, `["`+m+`",{"decimals":9,"supply":1000,"mintAuthority":"`+auth.String()+`","tokenProgram":"`+spl.Token2022ProgramID.String()+`"}]`, nil)
	a := n.account(mint)
	if a.Owner != spl.Token2022ProgramID || a.Lamports != n.l.MinimumBalanceForRentExemption(spl.MintSize) {
		t.Fatalf("created mint %+v", a)
	}
	info := n.parsed(mint)
	if info["decimals"] != float64(9) || info["supply"] != "1000" || info["mintAuthority"] != auth.String() || info["isInitialized"] != true {
		t.Fatalf("jsonParsed %v", info)
	}
	n.ok(devchain.MethodSetMint, `["`+m+`",{"mintAuthority":"null","freezeAuthority":"`+auth.String()+`"}]`, nil)
	if info := n.parsed(mint); info["mintAuthority"] != nil || info["freezeAuthority"] != auth.String() || info["supply"] != "1000" {
		t.Fatalf("after removing the mint authority %v", info)
	}
	n.fails(devchain.MethodSetMint, `["`+m+`",{"tokenProgram":"`+spl.TokenProgramID.String()+`"}]`, devchain.CodeInvalidParams, "belongs to the token program")
	n.fails(devchain.MethodSetMint, `["`+m+`",{"decimals":256}]`, devchain.CodeInvalidParams, "exceeds 255")
	notMint, _ := newKey()
	n.ok(devchain.MethodSetAccount, `["`+notMint.String()+`",{"lamports":1000000}]`, nil)
	n.fails(devchain.MethodSetMint, `["`+notMint.String()+`",{"supply":1}]`, devchain.CodeInvalidParams, "is not a mint")
}

// TestHalt: ferry_haltLedger through the node's cheatcodes.
func TestHalt(t *testing.T) {
	n := newNode(t, "halt")
	var out devchain.HaltResult
	n.ok(devchain.MethodHaltLedger, `[]`, &out)
	if out.Halting != devchain.DefaultHaltReason {
		t.Fatalf("halting %q", out.Halting)
	}
	if _, err := n.l.AdvanceSlot(n.ctx); err == nil {
		t.Fatal("a slot committed after the halt")
	}
	// A halted ledger refuses cheat writes with -32603.
	key, _ := newKey()
	n.fails(devchain.MethodSetAccount, `["`+key.String()+`",{"lamports":1}]`, devchain.CodeInternalError, devchain.DefaultHaltReason)
}

func TestGenesisAccountOfLedger(t *testing.T) {
	n := newNode(t, "genesis")
	if g := n.l.GenesisAccount(spl.TokenProgramID); g == nil || !g.Executable {
		t.Fatalf("token program genesis %+v", g)
	}
	if g := n.l.GenesisAccount(n.l.Faucet().PublicKey()); g == nil || g.Lamports == 0 || g.RentEpoch != math.MaxUint64 {
		t.Fatalf("faucet genesis %+v", g)
	}
	key, _ := newKey()
	if n.l.GenesisAccount(key) != nil {
		t.Fatal("a random key has a genesis value")
	}
}

// TestAdvanceSlot: ferry_advanceSlot ends the working slot (or as many as
// its "slots" option says) and answers with the last one and the new
// latest blockhash once it is durable; bad counts are -32602.
func TestAdvanceSlot(t *testing.T) {
	n := newNode(t, "advance")
	for _, bad := range []struct{ params, msg string }{
		{`[{"slots":0}]`, "between 1 and 1024"},
		{`[{"slots":1025}]`, "between 1 and 1024"},
		{`[{"slots":-1}]`, "between 1 and 1024"},
		{`[{"slots":"2"}]`, "invalid type"},
		{`[{"slot":2}]`, "unknown field"},
		{`[1]`, "invalid type"},
		{`[{},{}]`, ""},
	} {
		n.fails(devchain.MethodAdvanceSlot, bad.params, devchain.CodeInvalidParams, bad.msg)
	}
	before := n.l.Slot(ledger.Processed)
	var out devchain.AdvanceSlotResult
	n.ok(devchain.MethodAdvanceSlot, `[]`, &out)
	bh, _ := n.l.LatestBlockhash(ledger.Processed)
	if out.Slot != before || out.Blockhash != bh.Blockhash.String() {
		t.Fatalf("answer %+v, want slot %d blockhash %s", out, before, bh.Blockhash)
	}
	if got := n.l.Slot(ledger.Processed); got != before+1 {
		t.Fatalf("working slot %d after advancing from %d", got, before)
	}
	if got := n.l.Slot(ledger.Confirmed); got != before {
		t.Fatalf("confirmed slot %d, want %d (the answer waits for durability)", got, before)
	}
	n.ok(devchain.MethodAdvanceSlot, `[{"slots":600}]`, &out)
	bh, _ = n.l.LatestBlockhash(ledger.Processed)
	if out.Slot != before+600 || out.Blockhash != bh.Blockhash.String() || n.l.Slot(ledger.Processed) != before+601 {
		t.Fatalf("600 slots: answer %+v, working slot %d, blockhash %s", out, n.l.Slot(ledger.Processed), bh.Blockhash)
	}
}
