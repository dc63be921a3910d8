package spl

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// SystemOp is a System program instruction discriminant (u32 LE).
type SystemOp uint32

// System program instructions.
const (
	SystemCreateAccountOp SystemOp = iota
	SystemAssignOp
	SystemTransferOp
	SystemCreateAccountWithSeedOp
	SystemAdvanceNonceAccountOp
	SystemWithdrawNonceAccountOp
	SystemInitializeNonceAccountOp
	SystemAuthorizeNonceAccountOp
	SystemAllocateOp
	SystemAllocateWithSeedOp
	SystemAssignWithSeedOp
	SystemTransferWithSeedOp
	SystemUpgradeNonceAccountOp
)

var systemNames = [...]string{"CreateAccount", "Assign", "Transfer", "CreateAccountWithSeed", "AdvanceNonceAccount",
	"WithdrawNonceAccount", "InitializeNonceAccount", "AuthorizeNonceAccount", "Allocate", "AllocateWithSeed",
	"AssignWithSeed", "TransferWithSeed", "UpgradeNonceAccount"}

// String is the instruction's name, e.g. "Transfer".
func (op SystemOp) String() string {
	if int(op) < len(systemNames) {
		return systemNames[op]
	}
	return fmt.Sprintf("SystemInstruction(%d)", uint32(op))
}

// SystemInstruction is a decoded System instruction; only the fields of
// its Op are set.
type SystemInstruction struct {
	Op        SystemOp
	Lamports  uint64
	Space     uint64
	Owner     solana.PublicKey // new owner / program
	Base      solana.PublicKey // *WithSeed
	Seed      string           // *WithSeed
	Authority solana.PublicKey // nonce authority
	FromSeed  string           // TransferWithSeed
	FromOwner solana.PublicKey // TransferWithSeed
}

// ErrInvalidInstruction is returned for instruction data that does not
// decode.
var ErrInvalidInstruction = errors.New("invalid instruction data")

type dec struct {
	b   []byte
	err bool
}

func (d *dec) u8() uint8 {
	if len(d.b) < 1 {
		d.err = true
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *dec) u32() uint32 {
	if len(d.b) < 4 {
		d.err = true
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

func (d *dec) u64() uint64 {
	if len(d.b) < 8 {
		d.err = true
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *dec) key() solana.PublicKey {
	var k solana.PublicKey
	if len(d.b) < 32 {
		d.err = true
		return k
	}
	copy(k[:], d.b)
	d.b = d.b[32:]
	return k
}

// rustString reads a bincode String (u64 length + UTF-8 bytes).
func (d *dec) rustString() string {
	n := d.u64()
	if d.err || n > uint64(len(d.b)) {
		d.err = true
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// DecodeSystem decodes System program instruction data. Trailing bytes are
// tolerated, as bincode in the real program does.
func DecodeSystem(data []byte) (SystemInstruction, error) {
	d := &dec{b: data}
	in := SystemInstruction{Op: SystemOp(d.u32())}
	switch in.Op {
	case SystemCreateAccountOp:
		in.Lamports, in.Space, in.Owner = d.u64(), d.u64(), d.key()
	case SystemAssignOp:
		in.Owner = d.key()
	case SystemTransferOp, SystemWithdrawNonceAccountOp:
		in.Lamports = d.u64()
	case SystemCreateAccountWithSeedOp:
		in.Base, in.Seed = d.key(), d.rustString()
		in.Lamports, in.Space, in.Owner = d.u64(), d.u64(), d.key()
	case SystemAdvanceNonceAccountOp, SystemUpgradeNonceAccountOp:
	case SystemInitializeNonceAccountOp, SystemAuthorizeNonceAccountOp:
		in.Authority = d.key()
	case SystemAllocateOp:
		in.Space = d.u64()
	case SystemAllocateWithSeedOp:
		in.Base, in.Seed, in.Space, in.Owner = d.key(), d.rustString(), d.u64(), d.key()
	case SystemAssignWithSeedOp:
		in.Base, in.Seed, in.Owner = d.key(), d.rustString(), d.key()
	case SystemTransferWithSeedOp:
		in.Lamports, in.FromSeed, in.FromOwner = d.u64(), d.rustString(), d.key()
	default:
		return in, fmt.Errorf("system: %w: unknown instruction %d", ErrInvalidInstruction, uint32(in.Op))
	}
	if d.err {
		return in, fmt.Errorf("system %s: %w: short data", in.Op, ErrInvalidInstruction)
	}
	return in, nil
}

func le32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func le64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

// SystemTransfer moves lamports: from (signer, writable) → to (writable).
func SystemTransfer(from, to solana.PublicKey, lamports uint64) txwire.Instruction {
	return txwire.Instruction{
		ProgramID: SystemProgramID,
		Accounts:  []txwire.AccountMeta{txwire.WritableSigner(from), txwire.Writable(to)},
		Data:      le64(le32(make([]byte, 0, 12), uint32(SystemTransferOp)), lamports),
	}
}

// SystemCreateAccount creates newAccount (which must sign) with space bytes
// owned by owner, funded by from.
func SystemCreateAccount(from, newAccount solana.PublicKey, lamports, space uint64, owner solana.PublicKey) txwire.Instruction {
	d := le32(make([]byte, 0, 52), uint32(SystemCreateAccountOp))
	d = le64(le64(d, lamports), space)
	return txwire.Instruction{
		ProgramID: SystemProgramID,
		Accounts:  []txwire.AccountMeta{txwire.WritableSigner(from), txwire.WritableSigner(newAccount)},
		Data:      append(d, owner[:]...),
	}
}

// SystemAllocate sets the data size of a system-owned signer account.
func SystemAllocate(account solana.PublicKey, space uint64) txwire.Instruction {
	return txwire.Instruction{
		ProgramID: SystemProgramID,
		Accounts:  []txwire.AccountMeta{txwire.WritableSigner(account)},
		Data:      le64(le32(make([]byte, 0, 12), uint32(SystemAllocateOp)), space),
	}
}

// SystemAssign hands a system-owned signer account to owner.
func SystemAssign(account, owner solana.PublicKey) txwire.Instruction {
	return txwire.Instruction{
		ProgramID: SystemProgramID,
		Accounts:  []txwire.AccountMeta{txwire.WritableSigner(account)},
		Data:      append(le32(make([]byte, 0, 36), uint32(SystemAssignOp)), owner[:]...),
	}
}

func rustString(b []byte, s string) []byte { return append(le64(b, uint64(len(s))), s...) }

// SystemCreateAccountWithSeed creates the account at
// CreateWithSeed(base, seed, owner), funded by from; base must sign.
func SystemCreateAccountWithSeed(from, to, base solana.PublicKey, seed string, lamports, space uint64, owner solana.PublicKey) txwire.Instruction {
	d := append(le32(nil, uint32(SystemCreateAccountWithSeedOp)), base[:]...)
	d = le64(le64(rustString(d, seed), lamports), space)
	metas := []txwire.AccountMeta{txwire.WritableSigner(from), txwire.Writable(to)}
	if base != from {
		metas = append(metas, txwire.Signer(base))
	}
	return txwire.Instruction{ProgramID: SystemProgramID, Accounts: metas, Data: append(d, owner[:]...)}
}

// SystemAllocateWithSeed allocates space bytes in the seed-derived account
// and assigns it to owner; base must sign.
func SystemAllocateWithSeed(account, base solana.PublicKey, seed string, space uint64, owner solana.PublicKey) txwire.Instruction {
	d := append(le32(nil, uint32(SystemAllocateWithSeedOp)), base[:]...)
	d = le64(rustString(d, seed), space)
	return txwire.Instruction{ProgramID: SystemProgramID,
		Accounts: []txwire.AccountMeta{txwire.Writable(account), txwire.Signer(base)},
		Data:     append(d, owner[:]...)}
}

// SystemAssignWithSeed assigns the seed-derived account to owner; base must
// sign.
func SystemAssignWithSeed(account, base solana.PublicKey, seed string, owner solana.PublicKey) txwire.Instruction {
	d := append(le32(nil, uint32(SystemAssignWithSeedOp)), base[:]...)
	d = rustString(d, seed)
	return txwire.Instruction{ProgramID: SystemProgramID,
		Accounts: []txwire.AccountMeta{txwire.Writable(account), txwire.Signer(base)},
		Data:     append(d, owner[:]...)}
}

// SystemTransferWithSeed moves lamports from the account derived from
// (base, seed, fromOwner) to to; base must sign.
func SystemTransferWithSeed(from, base solana.PublicKey, seed string, fromOwner, to solana.PublicKey, lamports uint64) txwire.Instruction {
	d := le64(le32(nil, uint32(SystemTransferWithSeedOp)), lamports)
	d = rustString(d, seed)
	return txwire.Instruction{ProgramID: SystemProgramID,
		Accounts: []txwire.AccountMeta{txwire.Writable(from), txwire.Signer(base), txwire.Writable(to)},
		Data:     append(d, fromOwner[:]...)}
}
