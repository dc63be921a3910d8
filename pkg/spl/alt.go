package spl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// AddressLookupTableProgramID is the Address Lookup Table program.
var AddressLookupTableProgramID = solana.MustPublicKeyFromBase58("AddressLookupTab1e1111111111111111111111111")

// SysvarSlotHashesID is the SlotHashes sysvar: the (slot, hash) of the
// most recent SlotHashesMaxEntries slots, newest first.
var SysvarSlotHashesID = solana.MustPublicKeyFromBase58("SysvarS1otHashes111111111111111111111111111")

// Address lookup table limits and layout (address_lookup_table::state).
const (
	// LookupTableMetaSize is the size of the metadata that precedes a
	// table's addresses.
	LookupTableMetaSize = 56
	// LookupTableMaxAddresses is how many addresses a table holds at most.
	LookupTableMaxAddresses = 256
	// SlotHashesMaxEntries is how many slots the SlotHashes sysvar
	// remembers; a deactivated table can be closed once its deactivation
	// slot has left it.
	SlotHashesMaxEntries = 512
	// LookupTableActive is the deactivation slot of a table that was never
	// deactivated.
	LookupTableActive = math.MaxUint64
)

// ErrUninitializedTable is a lookup-table account whose state is
// Uninitialized (ProgramError::UninitializedAccount).
var ErrUninitializedTable = errors.New("uninitialized lookup table")

// Address Lookup Table instruction discriminators (bincode u32).
const (
	ALTCreateOp     = 0
	ALTFreezeOp     = 1
	ALTExtendOp     = 2
	ALTDeactivateOp = 3
	ALTCloseOp      = 4
)

// LookupTable is a decoded address lookup table account: bincode
// ProgramState::LookupTable(meta) — u32 tag 1, deactivation slot,
// last-extended slot, the address count at the start of that slot, an
// optional authority and two padding bytes — padded to
// LookupTableMetaSize, then the addresses.
type LookupTable struct {
	DeactivationSlot           uint64
	LastExtendedSlot           uint64
	LastExtendedSlotStartIndex uint8
	// Authority is nil for a frozen table.
	Authority *solana.PublicKey
	Addresses []solana.PublicKey
}

// DecodeLookupTable decodes table account data the way the program and the
// runtime do: bincode (trailing bytes allowed) for the metadata, then
// every 32-byte address after LookupTableMetaSize. An Uninitialized state
// is ErrUninitializedTable; anything else malformed is ErrInvalidAccount.
func DecodeLookupTable(data []byte) (LookupTable, error) {
	var t LookupTable
	if len(data) < 4 {
		return t, fmt.Errorf("lookup table: %w: %d bytes", ErrInvalidAccount, len(data))
	}
	switch tag := binary.LittleEndian.Uint32(data); tag {
	case 0:
		return t, ErrUninitializedTable
	case 1:
	default:
		return t, fmt.Errorf("lookup table: %w: state %d", ErrInvalidAccount, tag)
	}
	// bincode reads the Option's tag, then its key only if present, then
	// the padding: a frozen table's metadata is 24 bytes long.
	if len(data) < 22 {
		return t, fmt.Errorf("lookup table: %w: %d bytes", ErrInvalidAccount, len(data))
	}
	t.DeactivationSlot = binary.LittleEndian.Uint64(data[4:])
	t.LastExtendedSlot = binary.LittleEndian.Uint64(data[12:])
	t.LastExtendedSlotStartIndex = data[20]
	end := 22
	switch data[21] {
	case 0:
	case 1:
		if len(data) < 54 {
			return t, fmt.Errorf("lookup table: %w: %d bytes", ErrInvalidAccount, len(data))
		}
		var k solana.PublicKey
		copy(k[:], data[22:54])
		t.Authority = &k
		end = 54
	default:
		return t, fmt.Errorf("lookup table: %w: authority tag %d", ErrInvalidAccount, data[21])
	}
	if len(data) < end+2 || len(data) < LookupTableMetaSize || (len(data)-LookupTableMetaSize)%32 != 0 {
		return t, fmt.Errorf("lookup table: %w: %d bytes", ErrInvalidAccount, len(data))
	}
	raw := data[LookupTableMetaSize:]
	t.Addresses = make([]solana.PublicKey, len(raw)/32)
	for i := range t.Addresses {
		copy(t.Addresses[i][:], raw[32*i:])
	}
	return t, nil
}

// EncodeMeta writes the table's metadata over data[:LookupTableMetaSize],
// zeroing what the encoding leaves unused (overwrite_meta_data). data
// must hold at least LookupTableMetaSize bytes.
func (t *LookupTable) EncodeMeta(data []byte) {
	m := data[:LookupTableMetaSize]
	clear(m)
	binary.LittleEndian.PutUint32(m, 1)
	binary.LittleEndian.PutUint64(m[4:], t.DeactivationSlot)
	binary.LittleEndian.PutUint64(m[12:], t.LastExtendedSlot)
	m[20] = t.LastExtendedSlotStartIndex
	if t.Authority != nil {
		m[21] = 1
		copy(m[22:54], t.Authority[:])
	}
}

// LookupTableStatus is a table's activation status at a slot.
type LookupTableStatus int

// Lookup table statuses.
const (
	TableActivated LookupTableStatus = iota
	TableDeactivating
	TableDeactivated
)

// Status is the table's status at slot current on a chain where every
// slot produced a block, so the SlotHashes sysvar holds exactly the
// SlotHashesMaxEntries slots before current: a table stays usable (and
// cannot be closed) until its deactivation slot has left that list.
func (t *LookupTable) Status(current uint64) LookupTableStatus {
	switch {
	case t.DeactivationSlot == LookupTableActive:
		return TableActivated
	case t.DeactivationSlot == current || RecentSlot(t.DeactivationSlot, current):
		return TableDeactivating
	default:
		return TableDeactivated
	}
}

// RecentSlot reports whether slot is in the SlotHashes sysvar of slot
// current (one of the SlotHashesMaxEntries slots before it).
func RecentSlot(slot, current uint64) bool {
	return slot < current && current-slot <= SlotHashesMaxEntries
}

// ActiveAddresses is how many of the table's addresses a transaction in
// slot current may load: addresses added in the current slot are not
// usable until the next one.
func (t *LookupTable) ActiveAddresses(current uint64) int {
	if current > t.LastExtendedSlot {
		return len(t.Addresses)
	}
	return min(int(t.LastExtendedSlotStartIndex), len(t.Addresses))
}

// LookupTableAddress derives the table address an authority creates at a
// recent slot, with its bump seed.
func LookupTableAddress(authority solana.PublicKey, recentSlot uint64) (solana.PublicKey, uint8) {
	k, bump, err := solana.FindProgramAddress([][]byte{authority[:], binary.LittleEndian.AppendUint64(nil, recentSlot)}, AddressLookupTableProgramID)
	if err != nil {
		// Unreachable in practice, as for associated token addresses.
		panic("spl: no lookup table address bump: " + err.Error())
	}
	return k, bump
}

// ALTCreate creates the lookup table of authority at recentSlot (which
// must be in the SlotHashes sysvar), paid by payer; it returns the
// instruction and the table's address.
func ALTCreate(authority, payer solana.PublicKey, recentSlot uint64) (txwire.Instruction, solana.PublicKey) {
	table, bump := LookupTableAddress(authority, recentSlot)
	data := binary.LittleEndian.AppendUint64(le32(nil, ALTCreateOp), recentSlot)
	return txwire.Instruction{ProgramID: AddressLookupTableProgramID,
		Accounts: []txwire.AccountMeta{txwire.Writable(table), txwire.Readonly(authority), txwire.WritableSigner(payer), txwire.Readonly(SystemProgramID)},
		Data:     append(data, bump)}, table
}

// ALTExtend appends addresses to a table; payer funds the larger rent
// reserve.
func ALTExtend(table, authority, payer solana.PublicKey, addresses []solana.PublicKey) txwire.Instruction {
	data := binary.LittleEndian.AppendUint64(le32(nil, ALTExtendOp), uint64(len(addresses)))
	for _, a := range addresses {
		data = append(data, a[:]...)
	}
	return txwire.Instruction{ProgramID: AddressLookupTableProgramID,
		Accounts: []txwire.AccountMeta{txwire.Writable(table), txwire.Signer(authority), txwire.WritableSigner(payer), txwire.Readonly(SystemProgramID)},
		Data:     data}
}

// ALTFreeze makes a table immutable (it drops the authority).
func ALTFreeze(table, authority solana.PublicKey) txwire.Instruction {
	return altSimple(ALTFreezeOp, table, authority)
}

// ALTDeactivate starts a table's cool-down before it can be closed.
func ALTDeactivate(table, authority solana.PublicKey) txwire.Instruction {
	return altSimple(ALTDeactivateOp, table, authority)
}

// ALTClose closes a deactivated table, sending its lamports to recipient.
func ALTClose(table, authority, recipient solana.PublicKey) txwire.Instruction {
	ix := altSimple(ALTCloseOp, table, authority)
	ix.Accounts = append(ix.Accounts, txwire.Writable(recipient))
	return ix
}

func altSimple(op uint32, table, authority solana.PublicKey) txwire.Instruction {
	return txwire.Instruction{ProgramID: AddressLookupTableProgramID,
		Accounts: []txwire.AccountMeta{txwire.Writable(table), txwire.Signer(authority)},
		Data:     le32(nil, op)}
}
