package delegation

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// Instruction discriminators (u64 little-endian, the first 8 data bytes).
// Delegate, CommitState and CommitAndUndelegate follow the real program's
// numbering (0, 1, 3 — the real program splits commit and finalize
// further); IntentGuard is ferry-local.
const (
	DiscDelegate            uint64 = 0
	DiscCommitState         uint64 = 1
	DiscCommitAndUndelegate uint64 = 3
	DiscIntentGuard         uint64 = 0xF0
)

// UndelegateCallbackDiscriminator starts the data of the owner program's
// undelegation callback (eSPL routes instructions whose first byte is 196
// to it, espl-program.md §2). These are the real program's eight bytes.
var UndelegateCallbackDiscriminator = [8]byte{196, 28, 41, 206, 48, 37, 51, 167}

// MaxSeeds is the most seeds a delegated PDA may have (bump excluded).
const MaxSeeds = 15

// MaxCommitData bounds committed account data (10 MiB, Solana's account
// size limit).
const MaxCommitData = 10 << 20

// ErrInvalidInstruction wraps every decoding failure.
var ErrInvalidInstruction = errors.New("invalid delegation instruction")

// Instruction is a decoded delegation program instruction: *DelegateIx,
// *CommitStateIx, *CommitAndUndelegateIx or *IntentGuardIx.
type Instruction interface{ discriminator() uint64 }

// DelegateIx delegates a PDA of the calling owner program. Data:
// disc ‖ commit_frequency_ms u32 ‖ validator option (u8 tag ‖ [32]) ‖
// seed count u8 ‖ (len u8 ‖ seed)*.
type DelegateIx struct {
	CommitFrequencyMs uint32
	Validator         *solana.PublicKey // nil: Config.DefaultValidator
	Seeds             [][]byte          // the account's PDA seeds, bump excluded
}

// CommitStateIx writes ephemeral state to a delegated account. Data:
// disc ‖ len u32 ‖ data.
type CommitStateIx struct{ Data []byte }

// CommitAndUndelegateIx writes the final state and returns the account to
// its owner program. Data: disc ‖ len u32 ‖ data.
type CommitAndUndelegateIx struct{ Data []byte }

// IntentGuardIx records that intent IntentID is executing. Data:
// disc ‖ intent id u64.
type IntentGuardIx struct{ IntentID uint64 }

func (*DelegateIx) discriminator() uint64            { return DiscDelegate }
func (*CommitStateIx) discriminator() uint64         { return DiscCommitState }
func (*CommitAndUndelegateIx) discriminator() uint64 { return DiscCommitAndUndelegate }
func (*IntentGuardIx) discriminator() uint64         { return DiscIntentGuard }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidInstruction, fmt.Sprintf(format, args...))
}

// Decode parses delegation program instruction data.
func Decode(data []byte) (Instruction, error) {
	if len(data) < 8 {
		return nil, invalid("%d bytes, want at least 8", len(data))
	}
	body := data[8:]
	switch d := binary.LittleEndian.Uint64(data); d {
	case DiscDelegate:
		return decodeDelegate(body)
	case DiscCommitState:
		b, err := lenPrefixed(body)
		return &CommitStateIx{Data: b}, err
	case DiscCommitAndUndelegate:
		b, err := lenPrefixed(body)
		return &CommitAndUndelegateIx{Data: b}, err
	case DiscIntentGuard:
		if len(body) != 8 {
			return nil, invalid("intent guard takes 8 argument bytes, got %d", len(body))
		}
		return &IntentGuardIx{IntentID: binary.LittleEndian.Uint64(body)}, nil
	default:
		return nil, invalid("unknown discriminator %d", d)
	}
}

func lenPrefixed(b []byte) ([]byte, error) {
	if len(b) < 4 {
		return nil, invalid("missing data length")
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(n) != uint64(len(b)-4) || n > MaxCommitData {
		return nil, invalid("data length %d does not match %d bytes", n, len(b)-4)
	}
	return append([]byte(nil), b[4:]...), nil
}

func decodeDelegate(b []byte) (*DelegateIx, error) {
	if len(b) < 6 {
		return nil, invalid("delegate arguments too short")
	}
	ix := &DelegateIx{CommitFrequencyMs: binary.LittleEndian.Uint32(b)}
	b = b[4:]
	switch b[0] {
	case 0:
		b = b[1:]
	case 1:
		if len(b) < 34 {
			return nil, invalid("truncated validator")
		}
		v := solana.PublicKeyFromBytes(b[1:33])
		ix.Validator = &v
		b = b[33:]
	default:
		return nil, invalid("validator option tag %d", b[0])
	}
	if len(b) < 1 {
		return nil, invalid("missing seed count")
	}
	n := int(b[0])
	if n > MaxSeeds {
		return nil, invalid("%d seeds", n)
	}
	b = b[1:]
	for i := 0; i < n; i++ {
		if len(b) < 1 || int(b[0]) > 32 || len(b) < 1+int(b[0]) {
			return nil, invalid("bad seed %d", i)
		}
		ix.Seeds = append(ix.Seeds, append([]byte(nil), b[1:1+b[0]]...))
		b = b[1+b[0]:]
	}
	if len(b) != 0 {
		return nil, invalid("%d trailing bytes", len(b))
	}
	return ix, nil
}

func disc(d uint64) []byte { return binary.LittleEndian.AppendUint64(nil, d) }

// DelegateArgs are the arguments of Delegate.
type DelegateArgs struct {
	Payer        solana.PublicKey // pays the record and metadata rent; signs
	Account      solana.PublicKey // the delegated PDA; signs (invoke_signed)
	OwnerProgram solana.PublicKey
	Seeds        [][]byte          // Account's seeds under OwnerProgram, bump excluded
	Validator    *solana.PublicKey // nil: the program's default validator
	// CommitFrequencyMs is recorded in the delegation record.
	CommitFrequencyMs uint32
}

// Delegate builds the Delegate instruction an owner program invokes after
// copying the account to its ["buffer", account] PDA, zeroing it and
// assigning it to DLP. Accounts: 0 payer S W · 1 account S W · 2 owner
// program · 3 buffer · 4 delegation record W · 5 delegation metadata W ·
// 6 System program.
func Delegate(a DelegateArgs) (txwire.Instruction, error) {
	if len(a.Seeds) > MaxSeeds {
		return txwire.Instruction{}, invalid("%d seeds", len(a.Seeds))
	}
	data := binary.LittleEndian.AppendUint32(disc(DiscDelegate), a.CommitFrequencyMs)
	if a.Validator != nil {
		data = append(append(data, 1), a.Validator[:]...)
	} else {
		data = append(data, 0)
	}
	data = append(data, byte(len(a.Seeds)))
	for _, s := range a.Seeds {
		if len(s) > 32 {
			return txwire.Instruction{}, invalid("%d-byte seed", len(s))
		}
		data = append(append(data, byte(len(s))), s...)
	}
	buf, _ := espl.FindDelegateBuffer(a.Account, a.OwnerProgram)
	rec, _ := espl.FindDelegationRecord(a.Account)
	meta, _ := espl.FindDelegationMetadata(a.Account)
	return txwire.Instruction{ProgramID: ProgramID, Data: data, Accounts: []txwire.AccountMeta{
		txwire.WritableSigner(a.Payer), txwire.WritableSigner(a.Account), txwire.Readonly(a.OwnerProgram),
		txwire.Readonly(buf), txwire.Writable(rec), txwire.Writable(meta), txwire.Readonly(spl.SystemProgramID),
	}}, nil
}

// CommitState builds CommitState: validator (the record's authority)
// writes data to the delegated account. Accounts: 0 validator S ·
// 1 account W · 2 delegation record · 3 delegation metadata W.
func CommitState(validator, account solana.PublicKey, data []byte) txwire.Instruction {
	rec, _ := espl.FindDelegationRecord(account)
	meta, _ := espl.FindDelegationMetadata(account)
	d := binary.LittleEndian.AppendUint32(disc(DiscCommitState), uint32(len(data)))
	return txwire.Instruction{ProgramID: ProgramID, Data: append(d, data...), Accounts: []txwire.AccountMeta{
		txwire.Signer(validator), txwire.Writable(account), txwire.Readonly(rec), txwire.Writable(meta),
	}}
}

// CommitAndUndelegateArgs are the arguments of CommitAndUndelegate.
type CommitAndUndelegateArgs struct {
	Validator    solana.PublicKey // the record's authority; signs and pays
	Account      solana.PublicKey
	OwnerProgram solana.PublicKey // the record's owner
	RentPayer    solana.PublicKey // the metadata's rent payer (refunded)
	Data         []byte           // the final account data
}

// CommitAndUndelegate builds CommitAndUndelegate. Accounts: 0 validator
// S W · 1 account W · 2 owner program · 3 undelegate buffer · 4 record W ·
// 5 metadata W · 6 rent payer W · 7 System program.
func CommitAndUndelegate(a CommitAndUndelegateArgs) txwire.Instruction {
	rec, _ := espl.FindDelegationRecord(a.Account)
	meta, _ := espl.FindDelegationMetadata(a.Account)
	buf, _ := espl.FindUndelegateBuffer(a.Account)
	d := binary.LittleEndian.AppendUint32(disc(DiscCommitAndUndelegate), uint32(len(a.Data)))
	return txwire.Instruction{ProgramID: ProgramID, Data: append(d, a.Data...), Accounts: []txwire.AccountMeta{
		txwire.WritableSigner(a.Validator), txwire.Writable(a.Account), txwire.Readonly(a.OwnerProgram),
		txwire.Readonly(buf), txwire.Writable(rec), txwire.Writable(meta), txwire.Writable(a.RentPayer),
		txwire.Readonly(spl.SystemProgramID),
	}}
}

// IntentGuard builds IntentGuard: the validator records that intent id is
// executing in this transaction; it fails with ErrIntentAlreadyExecuted
// when it already did. Accounts: 0 validator S W · 1 guard W · 2 System.
func IntentGuard(validator solana.PublicKey, id uint64) txwire.Instruction {
	return txwire.Instruction{ProgramID: ProgramID, Data: binary.LittleEndian.AppendUint64(disc(DiscIntentGuard), id),
		Accounts: []txwire.AccountMeta{
			txwire.WritableSigner(validator), txwire.Writable(GuardAddress(validator)), txwire.Readonly(spl.SystemProgramID),
		}}
}

// UndelegateCallback is the instruction DLP invokes on the owner program
// while undelegating: data = UndelegateCallbackDiscriminator ‖ the
// account's final data. Accounts: 0 account W · 1 undelegate buffer S
// (DLP's PDA: its signature proves DLP is calling) · 2 payer S W ·
// 3 System program.
func UndelegateCallback(ownerProgram, account, payer solana.PublicKey, data []byte) txwire.Instruction {
	buf, _ := espl.FindUndelegateBuffer(account)
	d := append(UndelegateCallbackDiscriminator[:0:0], UndelegateCallbackDiscriminator[:]...)
	return txwire.Instruction{ProgramID: ownerProgram, Data: append(d, data...), Accounts: []txwire.AccountMeta{
		txwire.Writable(account), txwire.Signer(buf), txwire.WritableSigner(payer), txwire.Readonly(spl.SystemProgramID),
	}}
}

// ParseUndelegateCallback splits an owner program's callback data into
// the committed account data; ok is false if data is not a callback.
func ParseUndelegateCallback(data []byte) (state []byte, ok bool) {
	if len(data) < 8 || [8]byte(data[:8]) != UndelegateCallbackDiscriminator {
		return nil, false
	}
	return data[8:], true
}
