package alt_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs/alt"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/memo"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/system"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

var (
	payer     = solana.PublicKey{0xa1}
	authority = solana.PublicKey{0xa2}
	stranger  = solana.PublicKey{0xa3}
	addrA     = solana.PublicKey{0xb1}
	addrB     = solana.PublicKey{0xb2}
)

const current = 1_000 // the harness's slot

func newHarness(t *testing.T) *programtest.Harness {
	h := programtest.New(t, system.Registration(), alt.Registration(), memo.Registration())
	h.Env.Slot = current
	h.Fund(payer, programtest.SOL)
	return h
}

// table stores a lookup table at key.
func table(h *programtest.Harness, key solana.PublicKey, t spl.LookupTable) {
	data := make([]byte, spl.LookupTableMetaSize+32*len(t.Addresses))
	t.EncodeMeta(data)
	for i, a := range t.Addresses {
		copy(data[spl.LookupTableMetaSize+32*i:], a[:])
	}
	h.SetAccount(key, runtime.Account{Lamports: h.Env.Rent.MinimumBalance(len(data)), Owner: alt.ProgramID, Data: data})
}

func decoded(t *testing.T, h *programtest.Harness, key solana.PublicKey) spl.LookupTable {
	t.Helper()
	a := h.Account(key)
	if a == nil {
		t.Fatalf("table %s does not exist", key)
	}
	lt, err := spl.DecodeLookupTable(a.Data)
	if err != nil {
		t.Fatal(err)
	}
	return lt
}

func TestCreate(t *testing.T) {
	h := newHarness(t)
	ix, key := spl.ALTCreate(authority, payer, current-1)
	res := h.Run(payer, ix)
	res.RequireSuccess(t)
	res.RequireLogs(t, "Program log: Instruction: CreateLookupTable")
	a := h.Account(key)
	want := make([]byte, spl.LookupTableMetaSize)
	binary.LittleEndian.PutUint32(want, 1)
	binary.LittleEndian.PutUint64(want[4:], spl.LookupTableActive)
	want[21] = 1
	copy(want[22:], authority[:])
	if a.Owner != alt.ProgramID || !bytes.Equal(a.Data, want) || a.Lamports != h.Env.Rent.MinimumBalance(spl.LookupTableMetaSize) {
		t.Fatalf("table %+v, data %x", a, a.Data)
	}
	// Creating it again is a no-op (the table already belongs to the program).
	h.Run(payer, ix, spl.Memo("again")).RequireSuccess(t)
	if !bytes.Equal(h.Account(key).Data, want) {
		t.Fatal("second create changed the table")
	}
}

func TestCreateErrors(t *testing.T) {
	good := func(slot uint64) txwire.Instruction { ix, _ := spl.ALTCreate(authority, payer, slot); return ix }
	for _, tc := range []struct {
		name string
		ix   func() txwire.Instruction
		want *runtime.InstructionError
		log  string
	}{
		{"current slot is not recent", func() txwire.Instruction { return good(current) }, runtime.ErrInvalidInstructionData,
			"Program log: 1000 is not a recent slot"},
		{"future slot", func() txwire.Instruction { return good(current + 5) }, runtime.ErrInvalidInstructionData, ""},
		{"slot past SlotHashes", func() txwire.Instruction { return good(current - spl.SlotHashesMaxEntries - 1) }, runtime.ErrInvalidInstructionData, ""},
		{"payer does not sign", func() txwire.Instruction {
			ix := good(current - 1)
			ix.Accounts[2] = txwire.Writable(stranger)
			return ix
		}, runtime.ErrMissingRequiredSignature, "Program log: Payer account must be a signer"},
		{"wrong bump", func() txwire.Instruction {
			ix := good(current - 1)
			ix.Data[12]--
			return ix
		}, nil, ""},
		{"other address", func() txwire.Instruction {
			ix := good(current - 1)
			ix.Accounts[0] = txwire.Writable(addrA)
			return ix
		}, runtime.ErrInvalidArgument, ""},
		{"too few accounts", func() txwire.Instruction {
			ix := good(current - 1)
			ix.Accounts = ix.Accounts[:2]
			return ix
		}, runtime.ErrNotEnoughAccountKeys, ""},
		{"short data", func() txwire.Instruction {
			ix := good(current - 1)
			ix.Data = ix.Data[:12]
			return ix
		}, runtime.ErrInvalidInstructionData, ""},
		{"unknown instruction", func() txwire.Instruction {
			ix := good(current - 1)
			ix.Data = []byte{5, 0, 0, 0}
			return ix
		}, runtime.ErrInvalidInstructionData, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.Fund(stranger, programtest.SOL)
			res := h.Run(payer, tc.ix())
			if tc.want == nil {
				// A bump that does not derive the address: either the seeds
				// land on the curve (Custom 1) or on another address.
				if e := res.InstructionError(); e == nil || !(e.Is(alt.ErrInvalidSeeds) || e.Is(runtime.ErrInvalidArgument)) {
					t.Fatalf("got %s", res)
				}
				return
			}
			res.RequireError(t, 0, tc.want)
			if tc.log != "" {
				res.RequireLogs(t, tc.log)
			}
		})
	}
}

func TestExtend(t *testing.T) {
	h := newHarness(t)
	key := solana.PublicKey{0xc1}
	auth := authority
	table(h, key, spl.LookupTable{DeactivationSlot: spl.LookupTableActive, LastExtendedSlot: 7, Authority: &auth, Addresses: []solana.PublicKey{addrA}})
	h.Run(payer, spl.ALTExtend(key, authority, payer, []solana.PublicKey{addrB, addrA})).RequireSuccess(t)
	lt := decoded(t, h, key)
	if lt.LastExtendedSlot != current || lt.LastExtendedSlotStartIndex != 1 || len(lt.Addresses) != 3 || lt.Addresses[1] != addrB || lt.Addresses[2] != addrA {
		t.Fatalf("after extend: %+v", lt)
	}
	if h.Lamports(key) != h.Env.Rent.MinimumBalance(spl.LookupTableMetaSize+3*32) {
		t.Fatalf("table not topped up: %d", h.Lamports(key))
	}
	// A second extension in the same slot keeps the slot's start index.
	h.Run(payer, spl.ALTExtend(key, authority, payer, []solana.PublicKey{addrB})).RequireSuccess(t)
	if lt := decoded(t, h, key); lt.LastExtendedSlotStartIndex != 1 || len(lt.Addresses) != 4 {
		t.Fatalf("second extend: %+v", lt)
	}
	if lt := decoded(t, h, key); lt.ActiveAddresses(current) != 1 || lt.ActiveAddresses(current+1) != 4 {
		t.Fatalf("active addresses %d now, %d next slot", lt.ActiveAddresses(current), lt.ActiveAddresses(current+1))
	}
}

func TestTableErrors(t *testing.T) {
	key := solana.PublicKey{0xc1}
	auth := authority
	active := spl.LookupTable{DeactivationSlot: spl.LookupTableActive, Authority: &auth, Addresses: []solana.PublicKey{addrA}}
	frozen := spl.LookupTable{DeactivationSlot: spl.LookupTableActive, Addresses: []solana.PublicKey{addrA}}
	deactivated := spl.LookupTable{DeactivationSlot: current - 1, Authority: &auth, Addresses: []solana.PublicKey{addrA}}
	cooled := spl.LookupTable{DeactivationSlot: current - spl.SlotHashesMaxEntries - 1, Authority: &auth}
	empty := spl.LookupTable{DeactivationSlot: spl.LookupTableActive, Authority: &auth}
	full := spl.LookupTable{DeactivationSlot: spl.LookupTableActive, Authority: &auth, Addresses: make([]solana.PublicKey, spl.LookupTableMaxAddresses)}
	many := make([]solana.PublicKey, alt.MaxNewKeys)
	for _, tc := range []struct {
		name  string
		state *spl.LookupTable
		ix    txwire.Instruction
		want  *runtime.InstructionError
		log   string
	}{
		{"freeze frozen", &frozen, spl.ALTFreeze(key, authority), runtime.ErrImmutable, "Program log: Lookup table is already frozen"},
		{"freeze by stranger", &active, spl.ALTFreeze(key, stranger), runtime.ErrIncorrectAuthority, "Program log: Incorrect lookup table authority"},
		{"freeze deactivated", &deactivated, spl.ALTFreeze(key, authority), runtime.ErrInvalidArgument, "Program log: Deactivated tables cannot be frozen"},
		{"freeze empty", &empty, spl.ALTFreeze(key, authority), runtime.ErrInvalidInstructionData, "Program log: Empty lookup tables cannot be frozen"},
		{"freeze unsigned", &active, txwire.Instruction{ProgramID: alt.ProgramID,
			Accounts: []txwire.AccountMeta{txwire.Writable(key), txwire.Readonly(authority)}, Data: []byte{1, 0, 0, 0}},
			runtime.ErrMissingRequiredSignature, "Program log: Authority account must be a signer"},
		{"extend frozen", &frozen, spl.ALTExtend(key, authority, payer, []solana.PublicKey{addrB}), runtime.ErrImmutable, "Program log: Lookup table is frozen"},
		{"extend deactivated", &deactivated, spl.ALTExtend(key, authority, payer, []solana.PublicKey{addrB}), runtime.ErrInvalidArgument, ""},
		{"extend full", &full, spl.ALTExtend(key, authority, payer, []solana.PublicKey{addrB}), runtime.ErrInvalidArgument, ""},
		{"extend nothing", &active, spl.ALTExtend(key, authority, payer, nil), runtime.ErrInvalidInstructionData, "Program log: Must extend with at least one address"},
		{"extend past 256", &spl.LookupTable{DeactivationSlot: spl.LookupTableActive, Authority: &auth, Addresses: make([]solana.PublicKey, 250)},
			spl.ALTExtend(key, authority, payer, many[:7]), runtime.ErrInvalidInstructionData,
			"Program log: Extended lookup table length 257 would exceed max capacity of 256"},
		{"extend more than 38", &active, spl.ALTExtend(key, authority, payer, append(many, addrB)), runtime.ErrInvalidInstructionData, ""},
		{"extend without payer", &active, spl.ALTExtend(key, authority, payer, []solana.PublicKey{addrB}), nil, ""},
		{"deactivate twice", &deactivated, spl.ALTDeactivate(key, authority), runtime.ErrInvalidArgument, "Program log: Lookup table is already deactivated"},
		{"close active", &active, spl.ALTClose(key, authority, payer), runtime.ErrInvalidArgument, "Program log: Lookup table is not deactivated"},
		{"close deactivating", &deactivated, spl.ALTClose(key, authority, payer), runtime.ErrInvalidArgument,
			"Program log: Table cannot be closed until it's fully deactivated in 512 blocks"},
		{"close into itself", &cooled, spl.ALTClose(key, authority, key), runtime.ErrInvalidArgument,
			"Program log: Lookup table cannot be the recipient of reclaimed lamports"},
		{"close by stranger", &cooled, spl.ALTClose(key, stranger, payer), runtime.ErrIncorrectAuthority, ""},
		{"not a table", nil, spl.ALTFreeze(key, authority), runtime.ErrInvalidAccountOwner,
			"Program log: Lookup table owner should be the Address Lookup Table program"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.Fund(authority, programtest.SOL)
			h.Fund(stranger, programtest.SOL)
			if tc.state != nil {
				table(h, key, *tc.state)
			} else {
				h.Fund(key, programtest.SOL)
			}
			ix := tc.ix
			if tc.name == "extend without payer" {
				ix.Accounts = ix.Accounts[:2]
				tc.want = runtime.ErrNotEnoughAccountKeys
			}
			res := h.Run(payer, ix)
			res.RequireError(t, 0, tc.want)
			if tc.log != "" {
				res.RequireLogs(t, tc.log)
			}
		})
	}
}

func TestDeactivateAndClose(t *testing.T) {
	h := newHarness(t)
	key := solana.PublicKey{0xc1}
	auth := authority
	table(h, key, spl.LookupTable{DeactivationSlot: spl.LookupTableActive, Authority: &auth, Addresses: []solana.PublicKey{addrA}})
	h.Run(payer, spl.ALTDeactivate(key, authority)).RequireSuccess(t)
	if lt := decoded(t, h, key); lt.DeactivationSlot != current || lt.Status(current) != spl.TableDeactivating {
		t.Fatalf("after deactivate: %+v", lt)
	}
	// Until the deactivation slot leaves SlotHashes the table stays.
	h.Env.Slot = current + 10
	h.Run(payer, spl.ALTClose(key, authority, payer)).RequireLogs(t,
		"Program log: Table cannot be closed until it's fully deactivated in 503 blocks")
	h.Env.Slot = current + spl.SlotHashesMaxEntries + 1
	lamports, before := h.Lamports(key), h.Lamports(stranger)
	h.Run(payer, spl.ALTClose(key, authority, stranger)).RequireSuccess(t)
	if h.Account(key) != nil || h.Lamports(stranger) != before+lamports {
		t.Fatalf("after close: table %+v, recipient %d", h.Account(key), h.Lamports(stranger))
	}
}

// TestReadonlyTable: the program refuses to change a table passed
// read-only (Custom 10, as the BPF program checks itself) for Extend and
// Close; Freeze and Deactivate are caught by the runtime.
func TestReadonlyTable(t *testing.T) {
	key := solana.PublicKey{0xc1}
	auth := authority
	readonly := func(ix txwire.Instruction) txwire.Instruction {
		ix.Accounts[0] = txwire.Readonly(key)
		return ix
	}
	for _, tc := range []struct {
		name  string
		state spl.LookupTable
		ix    txwire.Instruction
		want  *runtime.InstructionError
	}{
		{"extend", spl.LookupTable{DeactivationSlot: spl.LookupTableActive, Authority: &auth}, readonly(spl.ALTExtend(key, authority, payer, []solana.PublicKey{addrA})), alt.ErrReadonlyDataModified},
		{"close", spl.LookupTable{DeactivationSlot: 1, Authority: &auth}, readonly(spl.ALTClose(key, authority, payer)), alt.ErrReadonlyDataModified},
		{"freeze", spl.LookupTable{DeactivationSlot: spl.LookupTableActive, Authority: &auth, Addresses: []solana.PublicKey{addrA}}, readonly(spl.ALTFreeze(key, authority)), runtime.ErrReadonlyDataModified},
		{"deactivate", spl.LookupTable{DeactivationSlot: spl.LookupTableActive, Authority: &auth}, readonly(spl.ALTDeactivate(key, authority)), runtime.ErrReadonlyDataModified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			table(h, key, tc.state)
			h.Run(payer, tc.ix).RequireError(t, 0, tc.want)
		})
	}
}
