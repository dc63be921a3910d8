// Package alt is a native implementation of the Address Lookup Table
// program (AddressLookupTab1e1111111111111111111111111) for the embedded
// ledger: CreateLookupTable, FreezeLookupTable, ExtendLookupTable,
// DeactivateLookupTable and CloseLookupTable with the checks, errors and
// logs of the deployed (Core BPF) program.
//
// Tables live at a PDA of [authority, recent slot, bump]; the slot must be
// one the SlotHashes sysvar still holds, so a table address can never be
// created twice. A deactivated table can be closed only once its
// deactivation slot has left SlotHashes, by when no transaction can still
// be using it.
package alt

import (
	"encoding/binary"
	"errors"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// ProgramID is the Address Lookup Table program's id.
var ProgramID = spl.AddressLookupTableProgramID

// Program errors (AddressLookupTableError): the PubkeyError variants the
// table derivation can hit, and the read-only checks the program makes
// itself.
var (
	ErrInvalidSeeds         = runtime.Custom(1)
	ErrReadonlyDataModified = runtime.Custom(10)
)

// Instruction limits of the deployed program.
const (
	// MaxInputLen caps the bytes an instruction may decode (the packet
	// size).
	MaxInputLen = 1232
	// MaxNewKeys is the most addresses one ExtendLookupTable may carry:
	// what fits in MaxInputLen after the discriminator and vector length.
	MaxNewKeys = (MaxInputLen - 4 - 8) / 32
)

// Compute units. The program is a BPF program on the real chain; these
// approximate what it consumes so budgets behave alike, not exactly.
const (
	BaseUnits   = 750
	DeriveUnits = 1_500
	PerKeyUnits = 40
	CreateUnits = 1_200
	CloseUnits  = 300
	ExtendUnits = 600
)

// Registration returns the program's registration. It is not a builtin:
// the real chain runs it as a BPF program, so a transaction reserves the
// default 200 000 compute units per instruction for it and it logs its
// consumption.
func Registration() *runtime.Registration {
	return &runtime.Registration{
		ID:       ProgramID,
		Name:     "Address Lookup Table Program",
		Program:  runtime.ProgramFunc(Execute),
		BaseCost: BaseUnits,
	}
}

var errDecode = errors.New("malformed instruction")

// instruction is a decoded instruction.
type instruction struct {
	op         uint32
	recentSlot uint64
	bump       uint8
	newKeys    []solana.PublicKey
}

// decode reads bincode as the program does: a u32 variant, its fields,
// and trailing bytes ignored; ExtendLookupTable may carry at most
// MaxNewKeys addresses.
func decode(data []byte) (instruction, error) {
	var ix instruction
	if len(data) < 4 {
		return ix, errDecode
	}
	ix.op = binary.LittleEndian.Uint32(data)
	rest := data[4:]
	switch ix.op {
	case spl.ALTCreateOp:
		if len(rest) < 9 {
			return ix, errDecode
		}
		ix.recentSlot = binary.LittleEndian.Uint64(rest)
		ix.bump = rest[8]
	case spl.ALTExtendOp:
		if len(rest) < 8 {
			return ix, errDecode
		}
		n := binary.LittleEndian.Uint64(rest)
		if n > MaxNewKeys || uint64(len(rest)-8) < 32*n {
			return ix, errDecode
		}
		ix.newKeys = make([]solana.PublicKey, n)
		for i := range ix.newKeys {
			copy(ix.newKeys[i][:], rest[8+32*i:])
		}
	case spl.ALTFreezeOp, spl.ALTDeactivateOp, spl.ALTCloseOp:
	default:
		return ix, errDecode
	}
	return ix, nil
}

// Execute runs one instruction.
func Execute(ctx *runtime.Context) error {
	if err := ctx.Consume(BaseUnits); err != nil {
		return err
	}
	ix, err := decode(ctx.Data())
	if err != nil {
		return runtime.ErrInvalidInstructionData
	}
	switch ix.op {
	case spl.ALTCreateOp:
		ctx.Log("Instruction: CreateLookupTable")
		return create(ctx, ix.recentSlot, ix.bump)
	case spl.ALTFreezeOp:
		ctx.Log("Instruction: FreezeLookupTable")
		return freeze(ctx)
	case spl.ALTExtendOp:
		ctx.Log("Instruction: ExtendLookupTable")
		return extend(ctx, ix.newKeys)
	case spl.ALTDeactivateOp:
		ctx.Log("Instruction: DeactivateLookupTable")
		return deactivate(ctx)
	default:
		ctx.Log("Instruction: CloseLookupTable")
		return closeTable(ctx)
	}
}

func create(ctx *runtime.Context, recentSlot uint64, bump uint8) error {
	accts, err := ctx.Accounts(3)
	if err != nil {
		return err
	}
	table, authority, payer := accts[0], accts[1], accts[2]
	if !payer.IsSigner {
		ctx.Log("Payer account must be a signer")
		return runtime.ErrMissingRequiredSignature
	}
	env := ctx.Env()
	if !spl.RecentSlot(recentSlot, env.Slot) {
		ctx.Logf("%d is not a recent slot", recentSlot)
		return runtime.ErrInvalidInstructionData
	}
	if err := ctx.Consume(DeriveUnits); err != nil {
		return err
	}
	seeds := [][]byte{authority.Key[:], binary.LittleEndian.AppendUint64(nil, recentSlot), {bump}}
	derived, err := solana.CreateProgramAddress(seeds, ProgramID)
	if err != nil {
		return ErrInvalidSeeds
	}
	if table.Key != derived {
		ctx.Logf("Table address must match derived address: %s", derived)
		return runtime.ErrInvalidArgument
	}
	if table.Owner == ProgramID {
		return nil
	}
	if err := ctx.Consume(CreateUnits); err != nil {
		return err
	}
	need := max(env.Rent.MinimumBalance(spl.LookupTableMetaSize), 1)
	if table.Lamports < need {
		if err := ctx.Invoke(spl.SystemTransfer(payer.Key, table.Key, need-table.Lamports)); err != nil {
			return err
		}
	}
	if ctx.NumAccounts() < 4 {
		return runtime.ErrNotEnoughAccountKeys
	}
	if err := ctx.Invoke(spl.SystemAllocate(table.Key, spl.LookupTableMetaSize), seeds); err != nil {
		return err
	}
	if err := ctx.Invoke(spl.SystemAssign(table.Key, ProgramID), seeds); err != nil {
		return err
	}
	// The table's data is at least the 56 bytes just allocated.
	auth := authority.Key
	meta := spl.LookupTable{DeactivationSlot: spl.LookupTableActive, Authority: &auth}
	meta.EncodeMeta(table.Data)
	return nil
}

// open runs the checks every instruction but Create starts with: the
// table is the program's and the authority signed.
func open(ctx *runtime.Context) (table, authority *runtime.AccountRef, err error) {
	if table, err = ctx.Account(0); err != nil {
		return
	}
	if table.Owner != ProgramID {
		ctx.Log("Lookup table owner should be the Address Lookup Table program")
		err = runtime.ErrInvalidAccountOwner
		return
	}
	if authority, err = ctx.Account(1); err != nil {
		return
	}
	if !authority.IsSigner {
		ctx.Log("Authority account must be a signer")
		err = runtime.ErrMissingRequiredSignature
		return
	}
	return table, authority, nil
}

// load decodes the table and checks its authority.
func load(ctx *runtime.Context, table, authority *runtime.AccountRef, frozenMsg string) (spl.LookupTable, error) {
	t, err := spl.DecodeLookupTable(table.Data)
	switch {
	case errors.Is(err, spl.ErrUninitializedTable):
		return t, runtime.ErrUninitializedAccount
	case err != nil:
		return t, runtime.ErrInvalidAccountData
	case t.Authority == nil:
		ctx.Log(frozenMsg)
		return t, runtime.ErrImmutable
	case *t.Authority != authority.Key:
		ctx.Log("Incorrect lookup table authority")
		return t, runtime.ErrIncorrectAuthority
	}
	return t, nil
}

func freeze(ctx *runtime.Context) error {
	table, authority, err := open(ctx)
	if err != nil {
		return err
	}
	t, err := load(ctx, table, authority, "Lookup table is already frozen")
	if err != nil {
		return err
	}
	if t.DeactivationSlot != spl.LookupTableActive {
		ctx.Log("Deactivated tables cannot be frozen")
		return runtime.ErrInvalidArgument
	}
	if len(t.Addresses) == 0 {
		ctx.Log("Empty lookup tables cannot be frozen")
		return runtime.ErrInvalidInstructionData
	}
	t.Authority = nil
	t.EncodeMeta(table.Data)
	return nil
}

func extend(ctx *runtime.Context, newKeys []solana.PublicKey) error {
	table, authority, err := open(ctx)
	if err != nil {
		return err
	}
	t, err := load(ctx, table, authority, "Lookup table is frozen")
	if err != nil {
		return err
	}
	if t.DeactivationSlot != spl.LookupTableActive {
		ctx.Log("Deactivated tables cannot be extended")
		return runtime.ErrInvalidArgument
	}
	if len(t.Addresses) >= spl.LookupTableMaxAddresses {
		ctx.Log("Lookup table is full and cannot contain more addresses")
		return runtime.ErrInvalidArgument
	}
	if len(newKeys) == 0 {
		ctx.Log("Must extend with at least one address")
		return runtime.ErrInvalidInstructionData
	}
	total := len(t.Addresses) + len(newKeys)
	if total > spl.LookupTableMaxAddresses {
		ctx.Logf("Extended lookup table length %d would exceed max capacity of %d", total, spl.LookupTableMaxAddresses)
		return runtime.ErrInvalidInstructionData
	}
	if err := ctx.Consume(ExtendUnits + PerKeyUnits*uint64(len(newKeys))); err != nil {
		return err
	}
	slot := ctx.Env().Slot
	if slot != t.LastExtendedSlot {
		t.LastExtendedSlot = slot
		t.LastExtendedSlotStartIndex = uint8(len(t.Addresses))
	}
	if !table.IsWritable {
		return ErrReadonlyDataModified
	}
	// The table's data is at least LookupTableMetaSize: it decoded.
	start := spl.LookupTableMetaSize + 32*len(t.Addresses)
	size := spl.LookupTableMetaSize + 32*total
	data := make([]byte, size)
	copy(data, table.Data[:start])
	t.EncodeMeta(data)
	for i, k := range newKeys {
		copy(data[start+32*i:], k[:])
	}
	table.Data = data
	need := max(ctx.Env().Rent.MinimumBalance(size), 1)
	if table.Lamports >= need {
		return nil
	}
	payer, err := ctx.Account(2)
	if err != nil {
		return err
	}
	if !payer.IsSigner {
		ctx.Log("Payer account must be a signer")
		return runtime.ErrMissingRequiredSignature
	}
	if ctx.NumAccounts() < 4 {
		return runtime.ErrNotEnoughAccountKeys
	}
	return ctx.Invoke(spl.SystemTransfer(payer.Key, table.Key, need-table.Lamports))
}

func deactivate(ctx *runtime.Context) error {
	table, authority, err := open(ctx)
	if err != nil {
		return err
	}
	t, err := load(ctx, table, authority, "Lookup table is frozen")
	if err != nil {
		return err
	}
	if t.DeactivationSlot != spl.LookupTableActive {
		ctx.Log("Lookup table is already deactivated")
		return runtime.ErrInvalidArgument
	}
	t.DeactivationSlot = ctx.Env().Slot
	t.EncodeMeta(table.Data)
	return nil
}

func closeTable(ctx *runtime.Context) error {
	table, authority, err := open(ctx)
	if err != nil {
		return err
	}
	recipient, err := ctx.Account(2)
	if err != nil {
		return err
	}
	if table.Key == recipient.Key {
		ctx.Log("Lookup table cannot be the recipient of reclaimed lamports")
		return runtime.ErrInvalidArgument
	}
	t, err := load(ctx, table, authority, "Lookup table is frozen")
	if err != nil {
		return err
	}
	current := ctx.Env().Slot
	switch t.Status(current) {
	case spl.TableActivated:
		ctx.Log("Lookup table is not deactivated")
		return runtime.ErrInvalidArgument
	case spl.TableDeactivating:
		remaining := spl.SlotHashesMaxEntries + 1
		if t.DeactivationSlot != current {
			// SlotHashes lists slots newest first: the deactivation
			// slot's position is how many slots ago it was, minus one.
			remaining = spl.SlotHashesMaxEntries - int(current-t.DeactivationSlot-1)
		}
		ctx.Logf("Table cannot be closed until it's fully deactivated in %d blocks", remaining)
		return runtime.ErrInvalidArgument
	}
	if err := ctx.Consume(CloseUnits); err != nil {
		return err
	}
	sum := table.Lamports + recipient.Lamports
	if sum < table.Lamports {
		return runtime.ErrArithmeticOverflow
	}
	recipient.Lamports = sum
	if !table.IsWritable {
		return ErrReadonlyDataModified
	}
	// Tables are not reassigned when closed: the account keeps its owner
	// and, without lamports, disappears when the transaction commits.
	table.Data = nil
	table.Lamports = 0
	return nil
}
