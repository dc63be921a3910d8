package devchain_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/devchain"
	"github.com/ferry-sh/ferry/pkg/ledger"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// profile mirrors surfpool's UiKeyedProfileResult as JSON.
type profile struct {
	Slot                  uint64                     `json:"slot"`
	Key                   string                     `json:"key"`
	InstructionProfiles   []profileStep              `json:"instructionProfiles"`
	TransactionProfile    profileStep                `json:"transactionProfile"`
	ReadonlyAccountStates map[string]json.RawMessage `json:"readonlyAccountStates"`
}

type profileStep struct {
	AccountStates        map[string]accountState `json:"accountStates"`
	ComputeUnitsConsumed uint64                  `json:"computeUnitsConsumed"`
	LogMessages          []string                `json:"logMessages"`
	ErrorMessage         *string                 `json:"errorMessage"`
}

type accountState struct {
	Type          string `json:"type"`
	AccountChange *struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	} `json:"accountChange"`
}

// change returns the change type and the lamports before and after (an
// absent side reads 0).
func (s accountState) change(t *testing.T) (string, uint64, uint64) {
	t.Helper()
	if s.Type != "writable" || s.AccountChange == nil {
		t.Fatalf("state %+v is not writable", s)
	}
	type ui struct {
		Lamports uint64 `json:"lamports"`
	}
	var pre, post ui
	switch c := s.AccountChange; c.Type {
	case "update":
		var pair [2]ui
		if err := json.Unmarshal(c.Data, &pair); err != nil {
			t.Fatal(err)
		}
		pre, post = pair[0], pair[1]
	case "create":
		json.Unmarshal(c.Data, &post)
	case "delete", "unchanged":
		json.Unmarshal(c.Data, &pre)
		if c.Type == "unchanged" {
			post = pre
		}
	}
	return s.AccountChange.Type, pre.Lamports, post.Lamports
}

// TestProfileTransaction: surfnet_profileTransaction reports compute
// units, logs and account changes per instruction and in total, commits
// nothing, and keeps the profile for lookup by key and tag.
func TestProfileTransaction(t *testing.T) {
	n := newNode(t, "profile")
	payer, payerKey := newKey()
	n.fund(payer, 1_000_000_000)
	a, _ := newKey()
	b, _ := newKey()
	tx := n.build(payerKey, spl.SystemTransfer(payer, a, 1_000_000), spl.SystemTransfer(payer, b, 2_000_000))
	start, _ := n.l.Balance(payer, ledger.Processed)

	var res struct {
		Context struct{ Slot uint64 } `json:"context"`
		Value   profile               `json:"value"`
	}
	n.ok(devchain.MethodProfileTransaction, `["`+tx.Base64()+`","suite-1"]`, &res)
	p := res.Value
	if p.Key == "" || p.Slot != res.Context.Slot || len(p.InstructionProfiles) != 2 {
		t.Fatalf("profile %+v", p)
	}
	// Nothing was committed.
	if n.account(a) != nil || n.account(b) != nil {
		t.Fatal("profiling committed the transaction")
	}
	if bal, _ := n.l.Balance(payer, ledger.Processed); bal != start {
		t.Fatalf("payer balance %d, want %d", bal, start)
	}
	total := p.TransactionProfile
	if total.ErrorMessage != nil || total.ComputeUnitsConsumed == 0 ||
		total.ComputeUnitsConsumed != p.InstructionProfiles[0].ComputeUnitsConsumed+p.InstructionProfiles[1].ComputeUnitsConsumed {
		t.Fatalf("compute units: total %d, instructions %d + %d", total.ComputeUnitsConsumed,
			p.InstructionProfiles[0].ComputeUnitsConsumed, p.InstructionProfiles[1].ComputeUnitsConsumed)
	}
	fee := uint64(5000)
	kind, pre, post := total.AccountStates[payer.String()].change(t)
	if kind != "update" || pre != start || post != start-fee-3_000_000 {
		t.Fatalf("payer in total: %s %d → %d", kind, pre, post)
	}
	if kind, _, post := total.AccountStates[a.String()].change(t); kind != "create" || post != 1_000_000 {
		t.Fatalf("a in total: %s %d", kind, post)
	}
	if s := total.AccountStates[solana.SystemProgramID.String()]; s.Type != "readonly" || s.AccountChange != nil {
		t.Fatalf("system program state %+v", s)
	}
	if _, ok := p.ReadonlyAccountStates[solana.SystemProgramID.String()]; !ok {
		t.Fatalf("readonlyAccountStates %v", p.ReadonlyAccountStates)
	}
	// Instruction 1 starts where instruction 0 ended and names only its
	// own accounts; its logs are its own.
	ix0, ix1 := p.InstructionProfiles[0], p.InstructionProfiles[1]
	if _, ok := ix0.AccountStates[b.String()]; ok || len(ix0.AccountStates) != 2 {
		t.Fatalf("instruction 0 accounts %v", ix0.AccountStates)
	}
	if _, pre, post := ix1.AccountStates[payer.String()].change(t); pre != start-fee-1_000_000 || post != start-fee-3_000_000 {
		t.Fatalf("payer in instruction 1: %d → %d", pre, post)
	}
	if kind, _, post := ix1.AccountStates[b.String()].change(t); kind != "create" || post != 2_000_000 {
		t.Fatalf("b in instruction 1: %s %d", kind, post)
	}
	if len(ix0.LogMessages) == 0 || len(ix1.LogMessages) == 0 || len(ix0.LogMessages)+len(ix1.LogMessages) != len(total.LogMessages) {
		t.Fatalf("logs %q / %q / total %q", ix0.LogMessages, ix1.LogMessages, total.LogMessages)
	}

	// Stored under its key and tag; unknown ones are null.
	var byKey struct {
		Value *profile `json:"value"`
	}
	n.ok(devchain.MethodGetTransactionProfile, `["`+p.Key+`",{"depth":"transaction"}]`, &byKey)
	if byKey.Value == nil || byKey.Value.Key != p.Key || byKey.Value.InstructionProfiles != nil || byKey.Value.TransactionProfile.ComputeUnitsConsumed != total.ComputeUnitsConsumed {
		t.Fatalf("by key %+v", byKey.Value)
	}
	n.ok(devchain.FerryGetTransactionProfile, `["00000000-0000-4000-8000-000000000000"]`, &byKey)
	if byKey.Value != nil {
		t.Fatal("an unknown key has a profile")
	}
	var byTag struct {
		Value []profile `json:"value"`
	}
	raw := n.ok(devchain.MethodGetProfileResultsByTag, `["suite-1"]`, &byTag)
	if len(byTag.Value) != 1 || byTag.Value[0].Key != p.Key {
		t.Fatalf("by tag %s", raw)
	}
	raw = n.ok(devchain.MethodGetProfileResultsByTag, `["nope"]`, nil)
	if !strings.Contains(string(raw), `"value":null`) {
		t.Fatalf("unknown tag %s", raw)
	}
}

// TestProfileFailure: a failing instruction ends the instruction profiles
// with its error; only the fee leaves the payer; a stale blockhash does
// not matter.
func TestProfileFailure(t *testing.T) {
	n := newNode(t, "profile-fail")
	payer, payerKey := newKey()
	n.fund(payer, 10_000_000)
	a, _ := newKey()
	b, _ := newKey()
	msg, err := txwire.Compile(payer, []txwire.Instruction{
		spl.SystemTransfer(payer, a, 1_000_000), spl.SystemTransfer(payer, b, 100_000_000_000), spl.SystemTransfer(payer, a, 1),
	}, solana.Hash{7}) // a blockhash this ledger never had
	if err != nil {
		t.Fatal(err)
	}
	_ = payerKey
	tx := txwire.NewUnsigned(msg)
	var res struct {
		Value profile `json:"value"`
	}
	n.ok(devchain.FerryProfileTransaction, `["`+tx.Base64()+`",null,{"encoding":"base64"}]`, &res)
	p := res.Value
	if len(p.InstructionProfiles) != 2 {
		t.Fatalf("%d instruction profiles, want 2 (the third never runs)", len(p.InstructionProfiles))
	}
	if e := p.InstructionProfiles[1].ErrorMessage; e == nil || !strings.Contains(*e, "Error processing Instruction 1") {
		t.Fatalf("instruction 1 error %v", e)
	}
	if p.InstructionProfiles[0].ErrorMessage != nil || p.TransactionProfile.ErrorMessage == nil {
		t.Fatalf("errors %v / %v", p.InstructionProfiles[0].ErrorMessage, p.TransactionProfile.ErrorMessage)
	}
	start, _ := n.l.Balance(payer, ledger.Processed)
	if _, pre, post := p.TransactionProfile.AccountStates[payer.String()].change(t); pre != start || post != start-5000 {
		t.Fatalf("failed transaction moved the payer %d → %d", pre, post)
	}
	if kind, _, _ := p.TransactionProfile.AccountStates[a.String()].change(t); kind != "unchanged" {
		t.Fatalf("a in a failed transaction: %s", kind)
	}
}

func TestProfileRefusals(t *testing.T) {
	n := newNode(t, "profile-refusals")
	n.fails(devchain.MethodProfileTransaction, `["***"]`, devchain.CodeInvalidParams, "Invalid base64 transaction")
	n.fails(devchain.MethodProfileTransaction, `["AAAA"]`, devchain.CodeInvalidParams, "Failed to deserialize transaction")
	n.fails(devchain.MethodProfileTransaction, `["AAAA",null,{"depth":"deep"}]`, devchain.CodeInvalidParams, "unknown variant `deep`")
	n.fails(devchain.MethodProfileTransaction, `["AAAA",null,{"encoding":"hex"}]`, devchain.CodeInvalidParams, "unknown variant `hex`")
	n.fails(devchain.MethodProfileTransaction, `["`+strings.Repeat("A", 2000)+`"]`, devchain.CodeInvalidParams, "Invalid base64 transaction")
	n.fails(devchain.MethodProfileTransaction, `[]`, devchain.CodeInvalidParams, "invalid length 0")

	// A v0 transaction whose instruction names a lookup-table account.
	payer, _ := newKey()
	table, _ := newKey()
	msg, err := txwire.Compile(payer, []txwire.Instruction{spl.SystemTransfer(payer, table, 1)}, solana.Hash{1})
	if err != nil {
		t.Fatal(err)
	}
	msg.Version = txwire.V0
	msg.AddressTableLookups = []txwire.AddressTableLookup{{AccountKey: table, WritableIndexes: []uint8{0}}}
	msg.Instructions[0].Accounts = append(msg.Instructions[0].Accounts, uint8(len(msg.AccountKeys)))
	n.fails(devchain.MethodProfileTransaction, `["`+txwire.NewUnsigned(msg).Base64()+`"]`, devchain.CodeInvalidParams, "address lookup table "+table.String()+" not found")
}

// lookupTableData is an active lookup table account's data (no authority)
// holding addrs, all usable now.
func lookupTableData(addrs ...solana.PublicKey) []byte {
	d := make([]byte, spl.LookupTableMetaSize, spl.LookupTableMetaSize+32*len(addrs))
	binary.LittleEndian.PutUint32(d, 1)                  // ProgramState::LookupTable
	binary.LittleEndian.PutUint64(d[4:], math.MaxUint64) // not deactivated
	d[20] = uint8(len(addrs))                            // every address usable from the start
	for _, a := range addrs {
		d = append(d, a[:]...)
	}
	return d
}

// TestProfileLookupTable: a v0 transaction that loads its accounts through
// a lookup table is profiled over its static and loaded accounts; a table
// index past the table's addresses is refused.
func TestProfileLookupTable(t *testing.T) {
	n := newNode(t, "profile-lookup")
	payer, payerKey := newKey()
	n.fund(payer, 1_000_000_000)
	a, _ := newKey()
	b, _ := newKey()
	table, _ := newKey()
	n.ok(devchain.MethodSetAccount, fmt.Sprintf(`["%s",{"lamports":10000000,"owner":"%s","dataBase64":"%s"}]`,
		table, spl.AddressLookupTableProgramID, base64.StdEncoding.EncodeToString(lookupTableData(a, b))), nil)
	bh, _ := n.l.LatestBlockhash(ledger.Processed)
	msg, err := txwire.CompileV0(payer, []txwire.Instruction{spl.SystemTransfer(payer, a, 1_000_000), spl.SystemTransfer(payer, b, 2_000_000)},
		bh.Blockhash, []txwire.LookupTable{{Key: table, Addresses: []solana.PublicKey{a, b}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.AddressTableLookups) != 1 || len(msg.AddressTableLookups[0].WritableIndexes) != 2 {
		t.Fatalf("lookups %+v", msg.AddressTableLookups)
	}
	tx := txwire.NewUnsigned(msg)
	if err := tx.Sign(payerKey); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Value profile `json:"value"`
	}
	n.ok(devchain.MethodProfileTransaction, `["`+tx.Base64()+`"]`, &res)
	p := res.Value
	if p.TransactionProfile.ErrorMessage != nil || len(p.InstructionProfiles) != 2 {
		t.Fatalf("profile %+v", p)
	}
	if kind, _, post := p.TransactionProfile.AccountStates[a.String()].change(t); kind != "create" || post != 1_000_000 {
		t.Fatalf("a (loaded) in total: %s %d", kind, post)
	}
	if kind, _, post := p.InstructionProfiles[1].AccountStates[b.String()].change(t); kind != "create" || post != 2_000_000 {
		t.Fatalf("b (loaded) in instruction 1: %s %d", kind, post)
	}
	if n.account(a) != nil {
		t.Fatal("profiling committed the transaction")
	}

	msg.AddressTableLookups[0].WritableIndexes[1] = 7
	n.fails(devchain.MethodProfileTransaction, `["`+txwire.NewUnsigned(msg).Base64()+`"]`, devchain.CodeInvalidParams, "has no index 7")
}
