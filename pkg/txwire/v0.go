package txwire

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"
)

// AddressLookupTableProgramID owns address lookup tables.
var AddressLookupTableProgramID = solana.MustPublicKeyFromBase58("AddressLookupTab1e1111111111111111111111111")

// Layout of an address lookup table account (the program's
// ProgramState::LookupTable): a 56-byte header, then the addresses.
const (
	// LookupTableMetaSize is the size of the header.
	LookupTableMetaSize = 56
	// MaxLookupTableAddresses is how many addresses a table holds at most.
	MaxLookupTableAddresses = 256
	lookupTableTypeTable    = 1
)

// LookupTable is an address lookup table: its address and its addresses.
type LookupTable struct {
	Key       solana.PublicKey
	Addresses []solana.PublicKey
}

// ErrLookupTable wraps every failure to read a lookup table account.
var ErrLookupTable = errors.New("invalid address lookup table")

// DecodeLookupTable reads the addresses of a lookup table account's data:
// u32 type (1) ‖ u64 deactivation slot ‖ u64 last extended slot ‖ u8
// start index ‖ Option<Pubkey> authority ‖ u16 padding, then 32-byte
// addresses (at most MaxLookupTableAddresses).
func DecodeLookupTable(data []byte) ([]solana.PublicKey, error) {
	if len(data) < LookupTableMetaSize {
		return nil, fmt.Errorf("%w: %d bytes, shorter than its %d-byte header", ErrLookupTable, len(data), LookupTableMetaSize)
	}
	if t := binary.LittleEndian.Uint32(data); t != lookupTableTypeTable {
		return nil, fmt.Errorf("%w: account type %d, not a lookup table", ErrLookupTable, t)
	}
	rest := data[LookupTableMetaSize:]
	if len(rest)%32 != 0 {
		return nil, fmt.Errorf("%w: %d address bytes are not whole addresses", ErrLookupTable, len(rest))
	}
	if len(rest)/32 > MaxLookupTableAddresses {
		return nil, fmt.Errorf("%w: %d addresses, more than %d", ErrLookupTable, len(rest)/32, MaxLookupTableAddresses)
	}
	out := make([]solana.PublicKey, len(rest)/32)
	for i := range out {
		copy(out[i][:], rest[32*i:])
	}
	return out, nil
}

// ErrDecompile wraps every failure of Decompile.
var ErrDecompile = errors.New("decompile message")

// Decompile turns a legacy or v0 message back into its fee payer and
// instructions, resolving v0 lookups through tables (by table address):
// the accounts a lookup loads follow the static keys, every table's
// writable ones first, then every table's read-only ones. It fails for an
// index out of range, a table that is missing or too short, and a message
// whose header does not fit its keys.
func Decompile(m *Message, tables map[solana.PublicKey][]solana.PublicKey) (solana.PublicKey, []Instruction, error) {
	if err := m.Sanitize(); err != nil {
		return solana.PublicKey{}, nil, fmt.Errorf("%w: %v", ErrDecompile, err)
	}
	n := len(m.AccountKeys)
	if n == 0 || m.Header.NumRequiredSignatures == 0 {
		return solana.PublicKey{}, nil, fmt.Errorf("%w: no fee payer", ErrDecompile)
	}
	keys := append([]solana.PublicKey(nil), m.AccountKeys...)
	writable := make([]bool, n, n+m.NumLookupAccounts())
	for i := range writable {
		writable[i] = m.IsWritable(i)
	}
	load := func(rw bool) error {
		for _, l := range m.AddressTableLookups {
			addrs, ok := tables[l.AccountKey]
			if !ok {
				return fmt.Errorf("%w: lookup table %s not loaded", ErrDecompile, l.AccountKey)
			}
			idx := l.ReadonlyIndexes
			if rw {
				idx = l.WritableIndexes
			}
			for _, i := range idx {
				if int(i) >= len(addrs) {
					return fmt.Errorf("%w: index %d beyond the %d addresses of lookup table %s", ErrDecompile, i, len(addrs), l.AccountKey)
				}
				keys = append(keys, addrs[i])
				writable = append(writable, rw)
			}
		}
		return nil
	}
	if err := load(true); err != nil {
		return solana.PublicKey{}, nil, err
	}
	if err := load(false); err != nil {
		return solana.PublicKey{}, nil, err
	}
	ixs := make([]Instruction, len(m.Instructions))
	for i, ci := range m.Instructions {
		if int(ci.ProgramIDIndex) >= len(keys) {
			return solana.PublicKey{}, nil, fmt.Errorf("%w: instruction %d: program index %d out of range", ErrDecompile, i, ci.ProgramIDIndex)
		}
		ix := Instruction{ProgramID: keys[ci.ProgramIDIndex], Accounts: make([]AccountMeta, len(ci.Accounts)), Data: append([]byte(nil), ci.Data...)}
		for j, a := range ci.Accounts {
			if int(a) >= len(keys) {
				return solana.PublicKey{}, nil, fmt.Errorf("%w: instruction %d: account index %d out of range", ErrDecompile, i, a)
			}
			ix.Accounts[j] = AccountMeta{PublicKey: keys[a], IsSigner: m.IsSigner(int(a)), IsWritable: writable[a]}
		}
		ixs[i] = ix
	}
	return keys[0], ixs, nil
}

// CompileV0 builds a v0 message as @solana/web3.js 1.x
// TransactionMessage.compileToV0Message does:
//
//  1. collect every key in instruction order (the fee payer first, a
//     writable signer; each instruction's program id, marked invoked,
//     before its accounts), OR-ing the flags of repeated keys;
//  2. for each table in order, move the keys that are neither signers nor
//     invoked programs and that the table holds into its lookup (writable
//     and read-only indexes, in key order); a table that holds none is
//     left out;
//  3. order the static keys: writable signers (the fee payer first),
//     read-only signers, writable non-signers, read-only non-signers, each
//     in collection order.
//
// Account indexes count the static keys, then every lookup's writable
// accounts, then every lookup's read-only ones. It fails beyond 256
// accounts (static and looked up) or 255 entries of one list.
func CompileV0(feePayer solana.PublicKey, ixs []Instruction, recentBlockhash solana.Hash, tables []LookupTable) (*Message, error) {
	type flags struct{ signer, writable, invoked bool }
	var order []solana.PublicKey
	meta := map[solana.PublicKey]*flags{}
	add := func(k solana.PublicKey, f flags) {
		m, ok := meta[k]
		if !ok {
			m = &flags{}
			meta[k] = m
			order = append(order, k)
		}
		m.signer = m.signer || f.signer
		m.writable = m.writable || f.writable
		m.invoked = m.invoked || f.invoked
	}
	add(feePayer, flags{signer: true, writable: true})
	for _, ix := range ixs {
		add(ix.ProgramID, flags{invoked: true})
		for _, a := range ix.Accounts {
			add(a.PublicKey, flags{signer: a.IsSigner, writable: a.IsWritable})
		}
	}

	m := &Message{Version: V0, RecentBlockhash: recentBlockhash}
	looked := map[solana.PublicKey]bool{}
	var lookupW, lookupR []solana.PublicKey
	for _, t := range tables {
		pos := make(map[solana.PublicKey]int, len(t.Addresses))
		for i := len(t.Addresses) - 1; i >= 0; i-- { // the first occurrence wins
			pos[t.Addresses[i]] = i
		}
		l := AddressTableLookup{AccountKey: t.Key}
		for _, k := range order {
			f := meta[k]
			i, inTable := pos[k]
			if looked[k] || f.signer || f.invoked || !inTable || i > 255 {
				continue
			}
			looked[k] = true
			if f.writable {
				l.WritableIndexes = append(l.WritableIndexes, uint8(i))
				lookupW = append(lookupW, k)
			} else {
				l.ReadonlyIndexes = append(l.ReadonlyIndexes, uint8(i))
				lookupR = append(lookupR, k)
			}
		}
		if len(l.WritableIndexes)+len(l.ReadonlyIndexes) > 0 {
			m.AddressTableLookups = append(m.AddressTableLookups, l)
		}
	}
	var ws, rs, wn, rn []solana.PublicKey
	for _, k := range order {
		f := meta[k]
		switch {
		case looked[k]:
		case f.signer && f.writable:
			ws = append(ws, k)
		case f.signer:
			rs = append(rs, k)
		case f.writable:
			wn = append(wn, k)
		default:
			rn = append(rn, k)
		}
	}
	static := append(append(append(ws, rs...), wn...), rn...)
	all := append(append(append([]solana.PublicKey(nil), static...), lookupW...), lookupR...)
	if len(all) > 256 {
		return nil, fmt.Errorf("compile v0 message: %d accounts exceed the limit of 256", len(all))
	}
	if len(ws)+len(rs) > 255 || len(rn) > 255 || len(rs) > 255 {
		return nil, fmt.Errorf("compile v0 message: too many signers or read-only accounts")
	}
	m.AccountKeys = static
	m.Header = Header{NumRequiredSignatures: uint8(len(ws) + len(rs)), NumReadonlySignedAccounts: uint8(len(rs)), NumReadonlyUnsignedAccounts: uint8(len(rn))}
	index := make(map[solana.PublicKey]uint8, len(all))
	for i, k := range all {
		index[k] = uint8(i)
	}
	m.Instructions = make([]CompiledInstruction, len(ixs))
	for i, ix := range ixs {
		ci := CompiledInstruction{ProgramIDIndex: index[ix.ProgramID], Accounts: make([]uint8, len(ix.Accounts)), Data: ix.Data}
		for j, a := range ix.Accounts {
			ci.Accounts[j] = index[a.PublicKey]
		}
		m.Instructions[i] = ci
	}
	return m, nil
}
