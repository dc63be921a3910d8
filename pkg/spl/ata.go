package spl

import (
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// ATAOp is an Associated Token Account program instruction.
type ATAOp uint8

// ATA program instructions. An empty data field also means Create.
const (
	ATACreate ATAOp = iota
	ATACreateIdempotent
	ATARecoverNested
)

// String is the instruction's name.
func (op ATAOp) String() string {
	switch op {
	case ATACreate:
		return "Create"
	case ATACreateIdempotent:
		return "CreateIdempotent"
	case ATARecoverNested:
		return "RecoverNested"
	}
	return fmt.Sprintf("AssociatedTokenInstruction(%d)", uint8(op))
}

// DecodeATA decodes ATA program instruction data.
func DecodeATA(data []byte) (ATAOp, error) {
	if len(data) == 0 {
		return ATACreate, nil
	}
	if len(data) != 1 || data[0] > 2 {
		return 0, fmt.Errorf("associated token account: %w", ErrInvalidInstruction)
	}
	return ATAOp(data[0]), nil
}

// CreateAssociatedTokenAccount creates owner's ATA for mint, paid by payer.
// With idempotent it succeeds when the account already exists
// (CreateIdempotent), which is what every payment flow uses.
func CreateAssociatedTokenAccount(payer, owner, mint, tokenProgram solana.PublicKey, idempotent bool) txwire.Instruction {
	// @solana/spl-token sends empty data for Create and [1] for
	// CreateIdempotent; match it byte for byte.
	var data []byte
	if idempotent {
		data = []byte{byte(ATACreateIdempotent)}
	}
	return txwire.Instruction{
		ProgramID: AssociatedTokenProgramID,
		Accounts: []txwire.AccountMeta{
			txwire.WritableSigner(payer),
			txwire.Writable(AssociatedTokenAddress(owner, mint, tokenProgram)),
			txwire.Readonly(owner),
			txwire.Readonly(mint),
			txwire.Readonly(SystemProgramID),
			txwire.Readonly(tokenProgram),
		},
		Data: data,
	}
}
