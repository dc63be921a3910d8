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

// ParseBudget reads the Compute Budget instructions of a message. Invalid
// data or a repeated instruction is reported as InstructionError at that
// instruction's index (Agave: InvalidInstructionData / DuplicateInstruction).
func ParseBudget(m *txwire.Message) (Budget, *TxError) {
	var b Budget
	seen := map[byte]bool{}
	other := 0
	for i, ix := range m.Instructions {
		if int(ix.ProgramIDIndex) >= len(m.AccountKeys) || m.AccountKeys[ix.ProgramIDIndex] != ComputeBudgetProgramID {
			other++
			continue
		}
		d := ix.Data
		if len(d) == 0 {
			return b, InstructionFailed(i, ErrInvalidInstructionData)
		}
		if seen[d[0]] {
			return b, &TxError{Kind: "DuplicateInstruction", Index: uint8(i)}
		}
		seen[d[0]] = true
		switch {
		case d[0] == 1 && len(d) == 5:
			b.HeapFrame = binary.LittleEndian.Uint32(d[1:])
			if b.HeapFrame%1024 != 0 || b.HeapFrame < 32*1024 || b.HeapFrame > 256*1024 {
				return b, InstructionFailed(i, ErrInvalidInstructionData)
			}
		case d[0] == 2 && len(d) == 5:
			b.UnitLimit = uint64(binary.LittleEndian.Uint32(d[1:]))
			b.explicitLimit = true
		case d[0] == 3 && len(d) == 9:
			b.UnitPrice = binary.LittleEndian.Uint64(d[1:])
		case d[0] == 4 && len(d) == 5:
			b.LoadedDataLimit = binary.LittleEndian.Uint32(d[1:])
		default:
			return b, InstructionFailed(i, ErrInvalidInstructionData)
		}
	}
	if !b.explicitLimit {
		b.UnitLimit = uint64(other) * DefaultInstructionComputeUnits
	}
	b.UnitLimit = min(b.UnitLimit, MaxComputeUnitLimit)
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
