package runtime

import (
	"encoding/binary"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// ComputeBudgetProgramID is the Compute Budget program.
var ComputeBudgetProgramID = solana.MustPublicKeyFromBase58("ComputeBudget111111111111111111111111111111")

// Budget is what a transaction's Compute Budget instructions request.
type Budget struct {
	UnitLimit       uint64 // effective compute unit limit
	UnitPrice       uint64 // micro-lamports per compute unit
	HeapFrame       uint32
	LoadedDataLimit uint32
	explicitLimit   bool
}

// PriorityFee is ceil(limit × price / 1e6) lamports.
func (b Budget) PriorityFee() uint64 {
	if b.UnitPrice == 0 {
		return 0
	}
	hi, lo := mul64(b.UnitLimit, b.UnitPrice)
	const d = 1_000_000
	if hi >= d { // would overflow u64 lamports
		return ^uint64(0)
	}
	q, r := div128(hi, lo, d)
	if r != 0 {
		q++
	}
	return q
}

func mul64(a, b uint64) (hi, lo uint64) {
	const mask32 = 1<<32 - 1
	a0, a1 := a&mask32, a>>32
	b0, b1 := b&mask32, b>>32
	w0 := a0 * b0
	t := a1*b0 + w0>>32
	w1 := t & mask32
	w2 := t >> 32
	w1 += a0 * b1
	hi = a1*b1 + w2 + w1>>32
	lo = a * b
	return
}

func div128(hi, lo, d uint64) (q, r uint64) {
	// hi < d, so a simple long division bit by bit is enough here.
	for i := 0; i < 64; i++ {
		carry := hi >> 63
		hi = hi<<1 | lo>>63
		lo <<= 1
		if carry != 0 || hi >= d {
			hi -= d
			lo |= 1
		}
	}
	return lo, hi
}

// Default compute-unit allocations (Agave compute-budget): without a
// SetComputeUnitLimit instruction a transaction may use
// BuiltinInstructionComputeUnits per instruction of a builtin program
// (Compute Budget instructions included) and
// DefaultInstructionComputeUnits per instruction of any other program.
const BuiltinInstructionComputeUnits = 3_000

// MaxLoadedAccountsDataSize is the largest SetLoadedAccountsDataSizeLimit
// Agave honours (64 MiB); larger requests are capped to it.
const MaxLoadedAccountsDataSize = 64 * 1024 * 1024

// ErrInvalidLoadedAccountsDataSizeLimit is a SetLoadedAccountsDataSizeLimit
// of zero; the transaction is rejected.
var ErrInvalidLoadedAccountsDataSizeLimit = &TxError{Kind: "InvalidLoadedAccountsDataSizeLimit"}

// ParseBudget reads the Compute Budget instructions of a message. Invalid
// data or a repeated instruction is reported as InstructionError at that
// instruction's index (Agave: InvalidInstructionData / DuplicateInstruction);
// the transaction is then rejected, as Agave rejects it before charging a
// fee. builtin tells which program ids are builtins, for the default limit;
// nil counts only the Compute Budget program as one.
func ParseBudget(m *txwire.Message, builtin func(solana.PublicKey) bool) (Budget, *TxError) {
	var b Budget
	var seen [5]bool
	heapIndex, loadedSet := -1, false
	var builtins, others uint64
	for i, ix := range m.Instructions {
		if int(ix.ProgramIDIndex) >= len(m.AccountKeys) {
			others++
			continue
		}
		pid := m.AccountKeys[ix.ProgramIDIndex]
		if pid != ComputeBudgetProgramID {
			if builtin != nil && builtin(pid) {
				builtins++
			} else {
				others++
			}
			continue
		}
		builtins++
		// Agave decodes with borsh's try_from_slice_unchecked: short data
		// fails, trailing bytes are ignored.
		d := ix.Data
		if len(d) == 0 || d[0] == 0 || d[0] > 4 || (d[0] == 3 && len(d) < 9) || (d[0] != 3 && len(d) < 5) {
			return b, InstructionFailed(i, ErrInvalidInstructionData)
		}
		if seen[d[0]] {
			return b, &TxError{Kind: "DuplicateInstruction", Index: uint8(i)}
		}
		seen[d[0]] = true
		switch d[0] {
		case 1:
			b.HeapFrame = binary.LittleEndian.Uint32(d[1:])
			heapIndex = i
		case 2:
			b.UnitLimit = uint64(binary.LittleEndian.Uint32(d[1:]))
			b.explicitLimit = true
		case 3:
			b.UnitPrice = binary.LittleEndian.Uint64(d[1:])
		case 4:
			b.LoadedDataLimit = binary.LittleEndian.Uint32(d[1:])
			loadedSet = true
		}
	}
	// Checked once every instruction decoded, in Agave's order.
	if heapIndex >= 0 && (b.HeapFrame%1024 != 0 || b.HeapFrame < 32*1024 || b.HeapFrame > 256*1024) {
		return b, InstructionFailed(heapIndex, ErrInvalidInstructionData)
	}
	if !b.explicitLimit {
		b.UnitLimit = builtins*BuiltinInstructionComputeUnits + others*DefaultInstructionComputeUnits
	}
	b.UnitLimit = min(b.UnitLimit, MaxComputeUnitLimit)
	if !loadedSet {
		b.LoadedDataLimit = MaxLoadedAccountsDataSize
	} else if b.LoadedDataLimit == 0 {
		return b, ErrInvalidLoadedAccountsDataSizeLimit
	}
	b.LoadedDataLimit = min(b.LoadedDataLimit, MaxLoadedAccountsDataSize)
	return b, nil
}

// ComputeBudgetProgram is the builtin Compute Budget program: its
// instructions are consumed by ParseBudget before execution, so executing
// one only charges its cost.
var ComputeBudgetProgram = &Registration{
	ID:       ComputeBudgetProgramID,
	Name:     "Compute Budget",
	Builtin:  true,
	BaseCost: 150,
	Program:  ProgramFunc(func(*Context) error { return nil }),
}
