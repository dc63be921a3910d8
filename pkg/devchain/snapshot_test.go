package devchain_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// TestExportImportSnapshot: chosen accounts exported from one node in
// surfpool's format land identically in another through
// ferry_importSnapshot; parsedData shows a mint; whole-node exports leave
// programs out unless asked.
func TestExportImportSnapshot(t *testing.T) {
	src := newNode(t, "src")
	dst := newNode(t, "dst")
	mint := src.mint(false)
	owner, _ := newKey()
	src.ok(devchain.MethodSetTokenAccount, `["`+owner.String()+`","`+mint.String()+`",{"amount":777}]`, nil)
	ata := spl.AssociatedTokenAddress(owner, mint, spl.TokenProgramID)
	missing, _ := newKey()

	var res struct {
		Context struct{ Slot uint64 } `json:"context"`
		Value   devchain.Snapshot     `json:"value"`
	}
	src.ok(devchain.MethodExportSnapshot, `[{"includeParsedAccounts":true,"filter":{"includeAccounts":["`+mint.String()+`","`+ata.String()+`","`+missing.String()+`"]}}]`, &res)
	snap := res.Value
	if len(snap) != 2 || snap[missing.String()] != nil {
		t.Fatalf("snapshot keys %v", keys(snap))
	}
	m := snap[mint.String()]
	if m.Owner != spl.TokenProgramID.String() || m.Lamports == 0 || !strings.Contains(string(m.ParsedData), `"type":"mint"`) {
		t.Fatalf("mint entry %+v parsed %s", m, m.ParsedData)
	}

	// Import into another node: the accounts are there, byte for byte,
	// and the ATA shows its balance through the token RPCs.
	b, _ := json.Marshal(snap)
	var imp struct {
		Value struct {
			Accounts []string `json:"accounts"`
			Skipped  []string `json:"skipped"`
		} `json:"value"`
	}
	dst.ok(devchain.MethodImportSnapshot, `[`+string(b)+`]`, &imp)
	if len(imp.Value.Accounts) != 2 || len(imp.Value.Skipped) != 0 {
		t.Fatalf("import %+v", imp.Value)
	}
	for _, k := range []solana.PublicKey{mint, ata} {
		x, y := src.account(k), dst.account(k)
		if y == nil || x.Lamports != y.Lamports || x.Owner != y.Owner || !bytes.Equal(x.Data, y.Data) {
			t.Fatalf("%s: %+v vs %+v", k, x, y)
		}
	}
	var bal struct {
		Value struct {
			Amount string `json:"amount"`
		} `json:"value"`
	}
	dst.ok("getTokenAccountBalance", `["`+ata.String()+`",{"commitment":"processed"}]`, &bal)
	if bal.Value.Amount != "777" {
		t.Fatalf("imported balance %+v", bal.Value)
	}

	// A whole-node export has the faucet, no programs by default, and the
	// programs with includeProgramAccounts; sysvars can be left out.
	whole := func(cfg string) devchain.Snapshot {
		var r struct {
			Value devchain.Snapshot `json:"value"`
		}
		src.ok(devchain.FerryExportSnapshot, `[`+cfg+`]`, &r)
		return r.Value
	}
	all := whole(`{}`)
	if all[src.l.Faucet().PublicKey().String()] == nil || all[spl.TokenProgramID.String()] != nil || all[spl.SysvarClockID.String()] == nil {
		t.Fatalf("whole export: %d accounts", len(all))
	}
	if w := whole(`{"filter":{"includeProgramAccounts":true,"excludeSysvars":true,"excludeAccounts":["` + mint.String() + `"]}}`); w[spl.TokenProgramID.String()] == nil ||
		w[spl.SysvarClockID.String()] != nil || w[mint.String()] != nil {
		t.Fatalf("filtered export: %d accounts", len(w))
	}

	// preTransaction: the accounts a transaction names, before it runs.
	payer, payerKey := newKey()
	src.fund(payer, 1_000_000_000)
	to, _ := newKey()
	tx := src.build(payerKey, spl.SystemTransfer(payer, to, 5_000_000))
	pre := whole(`{"scope":{"preTransaction":"` + tx.Base64() + `"}}`)
	if len(pre) != 2 || pre[payer.String()] == nil || pre[solana.SystemProgramID.String()] == nil {
		t.Fatalf("preTransaction export %v", keys(pre))
	}
	whole(`{"scope":"network"}`)
	src.fails(devchain.MethodExportSnapshot, `[{"scope":"everything"}]`, devchain.CodeInvalidParams, "unknown variant of scope")
}

// TestImportRefusals: null entries, bad data and bad keys are refused
// before anything is written; sysvars are skipped.
func TestImportRefusals(t *testing.T) {
	n := newNode(t, "import")
	k, _ := newKey()
	ok := `{"lamports":1000000,"owner":"11111111111111111111111111111111","executable":false,"rentEpoch":0,"data":""}`
	for _, c := range []struct{ params, msg string }{
		{`[{"` + k.String() + `":null}]`, "is null"},
		{`[{"` + k.String() + `":{"lamports":1,"owner":"11111111111111111111111111111111","executable":false,"rentEpoch":0,"data":"!!"}}]`, "data is not base64"},
		{`[{"x0":` + ok + `}]`, "Invalid pubkey 'x0'"},
		{`[{}]`, "no accounts"},
		{`[{"` + k.String() + `":{"lamports":1,"owner":"11111111111111111111111111111111","data":"","surprise":1}}]`, "unknown field `surprise`"},
	} {
		n.fails(devchain.MethodImportSnapshot, c.params, devchain.CodeInvalidParams, c.msg)
	}
	if n.account(k) != nil {
		t.Fatal("a refused import wrote")
	}
	clock := n.account(spl.SysvarClockID)
	var imp struct {
		Value struct {
			Accounts []string `json:"accounts"`
			Skipped  []string `json:"skipped"`
		} `json:"value"`
	}
	n.ok(devchain.MethodImportSnapshot, `[{"`+k.String()+`":`+ok+`,"`+spl.SysvarClockID.String()+`":`+ok+`}]`, &imp)
	if len(imp.Value.Accounts) != 1 || len(imp.Value.Skipped) != 1 || imp.Value.Skipped[0] != spl.SysvarClockID.String() {
		t.Fatalf("import %+v", imp.Value)
	}
	if a := n.account(spl.SysvarClockID); a.Owner != clock.Owner || n.account(k) == nil {
		t.Fatal("sysvar overwritten or account missing")
	}
}

// TestParseSnapshot: the file formats `ferry dev import` reads.
func TestParseSnapshot(t *testing.T) {
	k := "So11111111111111111111111111111111111111112"
	entry := `{"lamports":5,"owner":"11111111111111111111111111111111","executable":false,"rentEpoch":0,"data":"AQI=","parsedData":null}`
	cli := `{"pubkey":"` + k + `","account":{"lamports":5,"data":["AQI=","base64"],"owner":"11111111111111111111111111111111","executable":false,"rentEpoch":0,"space":2}}`
	cli58 := `{"pubkey":"` + k + `","account":{"lamports":5,"data":["5T","base58"],"owner":"11111111111111111111111111111111","executable":false,"rentEpoch":0,"space":2}}`
	for name, in := range map[string]string{
		"surfpool map":          `{"` + k + `":` + entry + `}`,
		"rpc result":            `{"context":{"slot":3,"apiVersion":"3.0.0"},"value":{"` + k + `":` + entry + `}}`,
		"ferry result":          `{"node":"base","slot":3,"accounts":{"` + k + `":` + entry + `}}`,
		"solana account":        cli,
		"solana accounts":       `[` + cli + `]`,
		"base58 solana account": cli58,
	} {
		s, err := devchain.ParseSnapshot([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if e := s[k]; len(s) != 1 || e == nil || e.Lamports != 5 || e.Data != "AQI=" || e.Owner != "11111111111111111111111111111111" {
			t.Fatalf("%s: %+v", name, s)
		}
	}
	for _, bad := range []string{``, `[`, `{"` + k + `":{"lamports":"x"}}`, `{"pubkey":"x","account":{"data":["",""]}}`, `[1]`} {
		if _, err := devchain.ParseSnapshot([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func keys(s devchain.Snapshot) []string {
	var out []string
	for k := range s {
		out = append(out, k)
	}
	return out
}
