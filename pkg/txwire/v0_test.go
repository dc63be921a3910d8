package txwire

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/gagliardetto/solana-go"
)

func v0Key(label string) solana.PublicKey {
	return solana.PublicKeyFromBytes(func() []byte { s := sha256.Sum256([]byte("v0:" + label)); return s[:] }())
}

// lookupTableData is the account data of a table holding addrs.
func lookupTableData(addrs ...solana.PublicKey) []byte {
	b := make([]byte, LookupTableMetaSize, LookupTableMetaSize+32*len(addrs))
	binary.LittleEndian.PutUint32(b, 1)
	binary.LittleEndian.PutUint64(b[4:], ^uint64(0)) // never deactivated
	for _, a := range addrs {
		b = append(b, a[:]...)
	}
	return b
}

func TestCompileV0RoundTrip(t *testing.T) {
	payer, user := v0Key("payer"), v0Key("user")
	prog, prog2 := v0Key("program"), v0Key("program2")
	w1, w2, r1, r2, static := v0Key("w1"), v0Key("w2"), v0Key("r1"), v0Key("r2"), v0Key("static")
	tableA := LookupTable{Key: v0Key("table A"), Addresses: []solana.PublicKey{r1, w1, prog, user}}
	tableB := LookupTable{Key: v0Key("table B"), Addresses: []solana.PublicKey{w2, r2, w1}}
	unused := LookupTable{Key: v0Key("unused"), Addresses: []solana.PublicKey{v0Key("nobody")}}
	ixs := []Instruction{
		{ProgramID: prog, Accounts: []AccountMeta{WritableSigner(user), Writable(w1), Readonly(r1), Readonly(static)}, Data: []byte{1, 2}},
		{ProgramID: prog2, Accounts: []AccountMeta{Writable(w2), Readonly(r2), Readonly(prog), Writable(w1)}, Data: []byte{3}},
	}
	bh := solana.Hash{7}
	m, err := CompileV0(payer, ixs, bh, []LookupTable{tableA, unused, tableB})
	if err != nil {
		t.Fatal(err)
	}
	// Signers, invoked programs and keys no table holds stay static, in
	// web3.js's order; w1 goes to the first table that holds it.
	wantStatic := []solana.PublicKey{payer, user, prog, static, prog2}
	if !slices.Equal(m.AccountKeys, wantStatic) {
		t.Fatalf("static keys %v", m.AccountKeys)
	}
	if m.Header != (Header{NumRequiredSignatures: 2, NumReadonlyUnsignedAccounts: 3}) {
		t.Fatalf("header %+v", m.Header)
	}
	if len(m.AddressTableLookups) != 2 || m.AddressTableLookups[0].AccountKey != tableA.Key || m.AddressTableLookups[1].AccountKey != tableB.Key ||
		!bytes.Equal(m.AddressTableLookups[0].WritableIndexes, []byte{1}) || !bytes.Equal(m.AddressTableLookups[0].ReadonlyIndexes, []byte{0}) ||
		!bytes.Equal(m.AddressTableLookups[1].WritableIndexes, []byte{0}) || !bytes.Equal(m.AddressTableLookups[1].ReadonlyIndexes, []byte{1}) {
		t.Fatalf("lookups %+v", m.AddressTableLookups)
	}
	// The wire round trip gives back the same instructions and flags.
	tx := NewUnsigned(m)
	back, err := Decode(tx.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if back.Message.Version != V0 || back.Message.RecentBlockhash != bh || len(back.Signatures) != 2 {
		t.Fatalf("%+v", back.Message)
	}
	tables := map[solana.PublicKey][]solana.PublicKey{tableA.Key: tableA.Addresses, tableB.Key: tableB.Addresses}
	gotPayer, got, err := Decompile(&back.Message, tables)
	if err != nil {
		t.Fatal(err)
	}
	if gotPayer != payer || len(got) != len(ixs) {
		t.Fatalf("payer %s, %d instructions", gotPayer, len(got))
	}
	for i := range ixs {
		if got[i].ProgramID != ixs[i].ProgramID || !bytes.Equal(got[i].Data, ixs[i].Data) || !slices.Equal(got[i].Accounts, ixs[i].Accounts) {
			t.Fatalf("instruction %d:\n got  %+v\n want %+v", i, got[i], ixs[i])
		}
	}
	// Recompiling the decompiled instructions is stable.
	again, err := CompileV0(gotPayer, got, bh, []LookupTable{tableA, unused, tableB})
	if err != nil || !bytes.Equal(again.Bytes(), m.Bytes()) {
		t.Fatalf("recompiled message differs: %v", err)
	}
	// A legacy message decompiles too.
	legacy, err := Compile(payer, ixs, bh)
	if err != nil {
		t.Fatal(err)
	}
	_, lixs, err := Decompile(legacy, nil)
	if err != nil || len(lixs) != 2 || lixs[0].Accounts[0] != WritableSigner(user) {
		t.Fatalf("%+v %v", lixs, err)
	}
}

func TestDecompileErrors(t *testing.T) {
	payer, prog, a := v0Key("payer"), v0Key("program"), v0Key("a")
	table := LookupTable{Key: v0Key("table"), Addresses: []solana.PublicKey{a}}
	m, err := CompileV0(payer, []Instruction{{ProgramID: prog, Accounts: []AccountMeta{Writable(a)}}}, solana.Hash{}, []LookupTable{table})
	if err != nil {
		t.Fatal(err)
	}
	for name, tables := range map[string]map[solana.PublicKey][]solana.PublicKey{
		"missing table": nil,
		"short table":   {table.Key: {}},
	} {
		if _, _, err := Decompile(m, tables); !errors.Is(err, ErrDecompile) {
			t.Errorf("%s: %v", name, err)
		}
	}
	bad := *m
	bad.Instructions = []CompiledInstruction{{ProgramIDIndex: 9}}
	if _, _, err := Decompile(&bad, map[solana.PublicKey][]solana.PublicKey{table.Key: table.Addresses}); !errors.Is(err, ErrDecompile) {
		t.Error(err)
	}
	// Too many accounts.
	var ixs []Instruction
	for i := range 300 {
		ixs = append(ixs, Instruction{ProgramID: prog, Accounts: []AccountMeta{Readonly(v0Key(string(rune('a'+i%26)) + string(rune(i))))}})
	}
	if _, err := CompileV0(payer, ixs, solana.Hash{}, nil); err == nil {
		t.Fatal("300 accounts compiled")
	}
}

func TestDecodeLookupTable(t *testing.T) {
	a, b := v0Key("a"), v0Key("b")
	got, err := DecodeLookupTable(lookupTableData(a, b))
	if err != nil || !slices.Equal(got, []solana.PublicKey{a, b}) {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := DecodeLookupTable(lookupTableData()); err != nil || len(got) != 0 {
		t.Fatalf("empty table: %v %v", got, err)
	}
	uninitialized := lookupTableData(a)
	binary.LittleEndian.PutUint32(uninitialized, 0)
	many := lookupTableData()
	for range MaxLookupTableAddresses + 1 {
		many = append(many, a[:]...)
	}
	for name, data := range map[string][]byte{
		"short header":  make([]byte, 55),
		"uninitialized": uninitialized,
		"partial key":   append(lookupTableData(a), 1, 2, 3),
		"too many":      many,
	} {
		if _, err := DecodeLookupTable(data); !errors.Is(err, ErrLookupTable) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzDecompile: any wire bytes, with any table contents, either fail
// with ErrMalformed / ErrDecompile or decompile into instructions that
// recompile to a message decompiling to the same instructions.
func FuzzDecompile(f *testing.F) {
	payer, prog, a, b := v0Key("payer"), v0Key("program"), v0Key("a"), v0Key("b")
	table := LookupTable{Key: v0Key("table"), Addresses: []solana.PublicKey{a, b}}
	m, _ := CompileV0(payer, []Instruction{{ProgramID: prog, Accounts: []AccountMeta{Writable(a), Readonly(b), WritableSigner(payer)}, Data: []byte{9}}},
		solana.Hash{1}, []LookupTable{table})
	f.Add(NewUnsigned(m).Bytes(), lookupTableData(a, b))
	lm, _ := Compile(payer, []Instruction{{ProgramID: prog, Accounts: []AccountMeta{Writable(a)}}}, solana.Hash{2})
	f.Add(NewUnsigned(lm).Bytes(), []byte{})
	f.Add([]byte{1, 0x80}, lookupTableData())
	f.Fuzz(func(t *testing.T, wire, tableData []byte) {
		tx, err := Decode(wire)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("decode: %v", err)
			}
			return
		}
		tables := map[solana.PublicKey][]solana.PublicKey{}
		addrs, err := DecodeLookupTable(tableData)
		if err != nil && !errors.Is(err, ErrLookupTable) {
			t.Fatalf("table: %v", err)
		}
		var lts []LookupTable
		for _, l := range tx.Message.AddressTableLookups {
			tables[l.AccountKey] = addrs
			lts = append(lts, LookupTable{Key: l.AccountKey, Addresses: addrs})
		}
		p, ixs, err := Decompile(&tx.Message, tables)
		if err != nil {
			if !errors.Is(err, ErrDecompile) {
				t.Fatalf("decompile: %v", err)
			}
			return
		}
		m, err := CompileV0(p, ixs, tx.Message.RecentBlockhash, lts)
		if err != nil {
			return // more accounts than a message holds once flags merged
		}
		back, err := Decode(NewUnsigned(m).Bytes())
		if err != nil {
			t.Fatalf("recompiled message does not decode: %v", err)
		}
		p2, ixs2, err := Decompile(&back.Message, tables)
		if err != nil || p2 != p || len(ixs2) != len(ixs) {
			t.Fatalf("recompiled message does not decompile: %v", err)
		}
		for i := range ixs {
			if ixs2[i].ProgramID != ixs[i].ProgramID || !bytes.Equal(ixs2[i].Data, ixs[i].Data) || len(ixs2[i].Accounts) != len(ixs[i].Accounts) {
				t.Fatalf("instruction %d changed", i)
			}
			for j := range ixs[i].Accounts {
				g, w := ixs2[i].Accounts[j], ixs[i].Accounts[j]
				// A key listed twice with different flags keeps the
				// union: never fewer rights than before.
				if g.PublicKey != w.PublicKey || w.IsSigner && !g.IsSigner || w.IsWritable && !g.IsWritable {
					t.Fatalf("instruction %d account %d: %+v, was %+v", i, j, g, w)
				}
			}
		}
	})
}
