// Package progutil holds the account checks and account-creation helpers
// that ferry's native MagicBlock programs (delegation, permission, magic,
// espl) share. Every helper logs why it failed, as on-chain programs do,
// so a failed transaction's logs explain the error.
package progutil

import (
	"bytes"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// Signer fails with MissingRequiredSignature unless a signed.
func Signer(ctx *runtime.Context, a *runtime.AccountRef, role string) error {
	if !a.IsSigner {
		ctx.Logf("%s %s must sign", role, a.Key)
		return runtime.ErrMissingRequiredSignature
	}
	return nil
}

// Writable fails with InvalidArgument unless a is writable.
func Writable(ctx *runtime.Context, a *runtime.AccountRef, role string) error {
	if !a.IsWritable {
		ctx.Logf("%s %s must be writable", role, a.Key)
		return runtime.ErrInvalidArgument
	}
	return nil
}

// SignerWritable checks both.
func SignerWritable(ctx *runtime.Context, a *runtime.AccountRef, role string) error {
	if err := Signer(ctx, a, role); err != nil {
		return err
	}
	return Writable(ctx, a, role)
}

// Key fails with InvalidSeeds unless a is at want (a derived address).
func Key(ctx *runtime.Context, a *runtime.AccountRef, want solana.PublicKey, role string) error {
	if a.Key != want {
		ctx.Logf("%s is %s, expected %s", role, a.Key, want)
		return runtime.ErrInvalidSeeds
	}
	return nil
}

// ProgramKey fails with IncorrectProgramId unless a is the program want.
func ProgramKey(ctx *runtime.Context, a *runtime.AccountRef, want solana.PublicKey, role string) error {
	if a.Key != want {
		ctx.Logf("%s is %s, expected %s", role, a.Key, want)
		return runtime.ErrIncorrectProgramID
	}
	return nil
}

// Owner fails with InvalidAccountOwner unless a is owned by want.
func Owner(ctx *runtime.Context, a *runtime.AccountRef, want solana.PublicKey, role string) error {
	if a.Owner != want {
		ctx.Logf("%s %s is owned by %s, expected %s", role, a.Key, a.Owner, want)
		return runtime.ErrInvalidAccountOwner
	}
	return nil
}

// Empty reports whether a holds nothing: no lamports, no data, owned by
// the System program (an address nothing was created at).
func Empty(a *runtime.AccountRef) bool {
	return a.Lamports == 0 && len(a.Data) == 0 && a.Owner == spl.SystemProgramID
}

// Find derives a PDA, charging compute like find_program_address (one
// attempt per bump tried), and returns it with its bump.
func Find(ctx *runtime.Context, program solana.PublicKey, seeds ...[]byte) (solana.PublicKey, uint8, error) {
	k, bump, err := solana.FindProgramAddress(seeds, program)
	if err != nil {
		return k, 0, runtime.ErrInvalidSeeds
	}
	if err := ctx.Consume(1500 * uint64(256-int(bump))); err != nil {
		return k, 0, err
	}
	return k, bump, nil
}

// WithBump returns seeds followed by the one-byte bump seed.
func WithBump(seeds [][]byte, bump uint8) [][]byte {
	out := make([][]byte, 0, len(seeds)+1)
	out = append(out, seeds...)
	return append(out, []byte{bump})
}

// CreatePDA creates account (a PDA of the calling program whose seeds,
// bump included, are signerSeeds) with size zeroed bytes, owned by owner
// and funded rent-exempt by payer, through the System program. An address
// someone already sent lamports to is topped up, allocated and assigned
// instead, as the ATA program does, so pre-funding cannot block it. The
// System program must be an account of the transaction.
func CreatePDA(ctx *runtime.Context, payer, account *runtime.AccountRef, signerSeeds [][]byte, size int, owner solana.PublicKey) error {
	rent := ctx.Env().Rent.MinimumBalance(size)
	if account.Owner != spl.SystemProgramID || len(account.Data) != 0 {
		ctx.Logf("account %s is already in use", account.Key)
		return runtime.ErrAccountAlreadyInitialized
	}
	if account.Lamports == 0 {
		return ctx.Invoke(spl.SystemCreateAccount(payer.Key, account.Key, rent, uint64(size), owner), signerSeeds)
	}
	if account.Lamports < rent {
		if err := ctx.Invoke(spl.SystemTransfer(payer.Key, account.Key, rent-account.Lamports)); err != nil {
			return err
		}
	}
	if err := ctx.Invoke(spl.SystemAllocate(account.Key, uint64(size)), signerSeeds); err != nil {
		return err
	}
	return ctx.Invoke(spl.SystemAssign(account.Key, owner), signerSeeds)
}

// Close empties an account the executing program owns: its lamports go to
// dest and its data is cleared, so the ledger deletes it.
func Close(account, dest *runtime.AccountRef) {
	if account.Key == dest.Key {
		return
	}
	dest.Lamports += account.Lamports
	account.Lamports = 0
	account.Data = nil
}

// Zeroed reports whether every byte of b is zero.
func Zeroed(b []byte) bool { return len(bytes.Trim(b, "\x00")) == 0 }

// Executable fails with IncorrectProgramId unless a is an executable
// account (a program).
func Executable(ctx *runtime.Context, a *runtime.AccountRef, role string) error {
	if !a.Executable {
		ctx.Logf("%s %s is not a program", role, a.Key)
		return runtime.ErrIncorrectProgramID
	}
	return nil
}
