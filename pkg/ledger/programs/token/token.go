// Package token is a native implementation of the SPL Token program
// (TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA) and of Token-2022
// (TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb) for the embedded ledger.
//
// SPL Token follows mainnet's p-token (ptoken.go): the account bytes are
// read and written in place, a cleared authority keeps its old key bytes,
// a delegate may revoke its own approval, SyncNative recomputes the
// wrapped-SOL reserve, and WithdrawExcessLamports, UnwrapLamports and
// Batch are supported.
//
// Token-2022 (t22*.go) follows the deployed program: accounts are checked
// to be owned by Token-2022 first, states carry TLV extensions, and the
// extensions wallets and launchpads use are implemented: TransferFeeConfig
// (with harvest and withdrawal of withheld fees), MintCloseAuthority,
// DefaultAccountState, ImmutableOwner, MemoTransfer, NonTransferable,
// InterestBearingConfig, CpiGuard, PermanentDelegate, TransferHook (layout
// and configuration; executing a hook program needs SBF and fails with a
// log line saying so), MetadataPointer and the TokenMetadata interface,
// GroupPointer / GroupMemberPointer and the TokenGroup interface,
// ScaledUiAmount, Pausable, PermissionedBurn, Reallocate,
// CreateNativeMint, WithdrawExcessLamports and UnwrapLamports. Confidential
// transfers (which need zero-knowledge proof verification) are refused
// with a log line.
package token

import (
	"errors"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// Program is one of the two token programs.
type Program struct {
	id         solana.PublicKey
	t22        bool
	nativeMint solana.PublicKey
}

// Token is the SPL Token program.
var Token = &Program{id: spl.TokenProgramID, nativeMint: spl.NativeMintID}

// Token2022 is the Token-2022 program.
var Token2022 = &Program{id: spl.Token2022ProgramID, t22: true, nativeMint: spl.NativeMint2022ID}

// ID is the program's id.
func (p *Program) ID() solana.PublicKey { return p.id }

// NativeMint is the program's wrapped-SOL mint.
func (p *Program) NativeMint() solana.PublicKey { return p.nativeMint }

// Registration returns the SPL Token program's registration.
func Registration() *runtime.Registration {
	return &runtime.Registration{ID: Token.id, Name: "Token Program", Program: Token, BaseCost: BaseCost}
}

// Registration2022 returns the Token-2022 program's registration.
func Registration2022() *runtime.Registration {
	return &runtime.Registration{ID: Token2022.id, Name: "Token-2022 Program", Program: Token2022, BaseCost: BaseCost}
}

// Execute runs one instruction.
func (p *Program) Execute(ctx *runtime.Context) error {
	data := ctx.Data()
	cost := uint64(DecodeFailureCost)
	if len(data) > 0 {
		if c := Cost(spl.TokenOp(data[0])); c > 0 {
			cost = c
		}
	}
	if err := ctx.Consume(cost); err != nil {
		return err
	}
	var err error
	if p.t22 {
		err = (&t22{Program: p, ctx: ctx}).process(data)
	} else {
		err = (&ptoken{Program: p, ctx: ctx}).process(data, true)
	}
	if err != nil {
		var ie *runtime.InstructionError
		if errors.As(err, &ie) {
			ctx.Log(ErrorLog(ie))
		}
	}
	return err
}

func checkedAdd(a, b uint64) (uint64, error) {
	if a+b < a {
		return 0, ErrOverflow
	}
	return a + b, nil
}

func checkedSub(a, b uint64) (uint64, error) {
	if b > a {
		return 0, ErrOverflow
	}
	return a - b, nil
}
