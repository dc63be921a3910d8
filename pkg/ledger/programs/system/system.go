// Package system is a native implementation of the Solana System program
// (11111111111111111111111111111111) for the embedded ledger: account
// creation, allocation, assignment and lamport transfers, including the
// *WithSeed variants, and the durable-nonce instructions
// (InitializeNonceAccount, AdvanceNonceAccount, WithdrawNonceAccount,
// AuthorizeNonceAccount, UpgradeNonceAccount), with Agave's checks, error
// codes and log lines. As a builtin it is held to Agave's account rules
// at each write, as BorrowedAccount applies them: writing the lamports of
// a read-only account fails even when the amount is zero. The rest of the
// durable-nonce rules (a transaction whose blockhash is a nonce, the nonce
// advancing when it fails) are the ledger pipeline's.
package system

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// ProgramID is the System program's id.
var ProgramID = runtime.SystemProgramID

// BaseCost is the compute units the builtin charges per instruction.
const BaseCost = 150

// MaxPermittedDataLength is the largest account the System program creates
// or allocates (10 MiB).
const MaxPermittedDataLength = 10 * 1024 * 1024

// maxInstructionDataLen mirrors limited_deserialize(PACKET_DATA_SIZE).
const maxInstructionDataLen = 1232

// SystemError custom codes (solana-system-interface SystemError).
var (
	ErrAccountAlreadyInUse           = runtime.Custom(0)
	ErrResultWithNegativeLamports    = runtime.Custom(1)
	ErrInvalidProgramID              = runtime.Custom(2)
	ErrInvalidAccountDataLength      = runtime.Custom(3)
	ErrMaxSeedLengthExceeded         = runtime.Custom(4)
	ErrAddressWithSeedMismatch       = runtime.Custom(5)
	ErrNonceNoRecentBlockhashes      = runtime.Custom(6)
	ErrNonceBlockhashNotExpired      = runtime.Custom(7)
	ErrNonceUnexpectedBlockhashValue = runtime.Custom(8)
)

// Registration returns the System program as a builtin (no "consumed" log
// line, BaseCost compute units per instruction).
func Registration() *runtime.Registration {
	return &runtime.Registration{
		ID:       ProgramID,
		Name:     "System Program",
		Program:  runtime.ProgramFunc(Execute),
		Builtin:  true,
		BaseCost: BaseCost,
	}
}

// address is Agave's system_processor Address: the account key and, for
// *WithSeed instructions, the base key that must sign instead. Its String
// form is the Rust Debug form used in log lines.
type address struct {
	key  solana.PublicKey
	base *solana.PublicKey
}

func (a address) String() string {
	base := "None"
	if a.base != nil {
		base = "Some(" + a.base.String() + ")"
	}
	return fmt.Sprintf("Address { address: %s, base: %s }", a.key, base)
}

// signers is the set of keys that signed the instruction.
type signers map[solana.PublicKey]bool

func (a address) signed(s signers) bool {
	if a.base != nil {
		return s[*a.base]
	}
	return s[a.key]
}

// newAddress checks a seed-derived address when withSeed is set.
func newAddress(ctx *runtime.Context, key solana.PublicKey, base *solana.PublicKey, seed string, owner solana.PublicKey) (address, error) {
	if base == nil {
		return address{key: key}, nil
	}
	derived, err := createWithSeed(*base, seed, owner)
	if err != nil {
		return address{}, err
	}
	if derived != key {
		ctx.LogRaw(fmt.Sprintf("Create: address %s does not match derived address %s", key, derived))
		return address{}, ErrAddressWithSeedMismatch
	}
	b := *base
	return address{key: key, base: &b}, nil
}

// createWithSeed is Address::create_with_seed as the System program maps
// its errors: the AddressError variant becomes a Custom code
// (MaxSeedLengthExceeded 0, InvalidSeeds 1, IllegalOwner 2).
func createWithSeed(base solana.PublicKey, seed string, owner solana.PublicKey) (solana.PublicKey, error) {
	k, err := solana.CreateWithSeed(base, seed, owner)
	switch {
	case errors.Is(err, solana.ErrMaxSeedLengthExceeded):
		return k, runtime.Custom(0)
	case errors.Is(err, solana.ErrIllegalOwner):
		return k, runtime.Custom(2)
	case err != nil:
		return k, runtime.Custom(1)
	}
	return k, nil
}

// Execute runs one System instruction.
func Execute(ctx *runtime.Context) error {
	data := ctx.Data()
	if len(data) > maxInstructionDataLen {
		return runtime.ErrInvalidInstructionData
	}
	in, err := spl.DecodeSystem(data)
	if err != nil {
		return runtime.ErrInvalidInstructionData
	}
	// bincode rejects seeds that are not UTF-8.
	if !utf8.ValidString(in.Seed) || !utf8.ValidString(in.FromSeed) {
		return runtime.ErrInvalidInstructionData
	}
	sig := signers{}
	for i := 0; i < ctx.NumAccounts(); i++ {
		a, _ := ctx.Account(i)
		if a.IsSigner {
			sig[a.Key] = true
		}
	}

	switch in.Op {
	case spl.SystemCreateAccountOp, spl.SystemCreateAccountWithSeedOp:
		accts, err := ctx.Accounts(2)
		if err != nil {
			return err
		}
		var base *solana.PublicKey
		if in.Op == spl.SystemCreateAccountWithSeedOp {
			base = &in.Base
		}
		to, err := newAddress(ctx, accts[1].Key, base, in.Seed, in.Owner)
		if err != nil {
			return err
		}
		return createAccount(ctx, accts[0], accts[1], to, in.Lamports, in.Space, in.Owner, sig)

	case spl.SystemAssignOp, spl.SystemAssignWithSeedOp:
		acct, err := ctx.Account(0)
		if err != nil {
			return err
		}
		var base *solana.PublicKey
		if in.Op == spl.SystemAssignWithSeedOp {
			base = &in.Base
		}
		addr, err := newAddress(ctx, acct.Key, base, in.Seed, in.Owner)
		if err != nil {
			return err
		}
		return assign(ctx, acct, addr, in.Owner, sig)

	case spl.SystemTransferOp:
		accts, err := ctx.Accounts(2)
		if err != nil {
			return err
		}
		if !accts[0].IsSigner {
			ctx.LogRaw(fmt.Sprintf("Transfer: `from` account %s must sign", accts[0].Key))
			return runtime.ErrMissingRequiredSignature
		}
		return transferVerified(ctx, accts[0], accts[1], in.Lamports)

	case spl.SystemTransferWithSeedOp:
		accts, err := ctx.Accounts(3)
		if err != nil {
			return err
		}
		from, base, to := accts[0], accts[1], accts[2]
		if !base.IsSigner {
			ctx.LogRaw(fmt.Sprintf("Transfer: 'from' account %s must sign", base.Key))
			return runtime.ErrMissingRequiredSignature
		}
		derived, err := createWithSeed(base.Key, in.FromSeed, in.FromOwner)
		if err != nil {
			return err
		}
		if derived != from.Key {
			ctx.LogRaw(fmt.Sprintf("Transfer: 'from' address %s does not match derived address %s", from.Key, derived))
			return ErrAddressWithSeedMismatch
		}
		return transferVerified(ctx, from, to, in.Lamports)

	case spl.SystemAllocateOp, spl.SystemAllocateWithSeedOp:
		acct, err := ctx.Account(0)
		if err != nil {
			return err
		}
		if in.Op == spl.SystemAllocateOp {
			return allocate(ctx, acct, address{key: acct.Key}, in.Space, sig)
		}
		addr, err := newAddress(ctx, acct.Key, &in.Base, in.Seed, in.Owner)
		if err != nil {
			return err
		}
		if err := allocate(ctx, acct, addr, in.Space, sig); err != nil {
			return err
		}
		return assign(ctx, acct, addr, in.Owner, sig)

	case spl.SystemAdvanceNonceAccountOp:
		return advanceNonce(ctx, sig)
	case spl.SystemWithdrawNonceAccountOp:
		return withdrawNonce(ctx, in.Lamports, sig)
	case spl.SystemInitializeNonceAccountOp:
		return initializeNonce(ctx, in.Authority)
	case spl.SystemAuthorizeNonceAccountOp:
		return authorizeNonce(ctx, in.Authority, sig)
	default: // UpgradeNonceAccount
		return upgradeNonce(ctx)
	}
}

func createAccount(ctx *runtime.Context, from, to *runtime.AccountRef, addr address, lamports, space uint64, owner solana.PublicKey, sig signers) error {
	if to.Lamports > 0 {
		ctx.LogRaw(fmt.Sprintf("Create Account: account %s already in use", addr))
		return ErrAccountAlreadyInUse
	}
	if err := allocate(ctx, to, addr, space, sig); err != nil {
		return err
	}
	if err := assign(ctx, to, addr, owner, sig); err != nil {
		return err
	}
	if !from.IsSigner {
		ctx.LogRaw(fmt.Sprintf("Transfer: `from` account %s must sign", from.Key))
		return runtime.ErrMissingRequiredSignature
	}
	return transferVerified(ctx, from, to, lamports)
}

func allocate(ctx *runtime.Context, acct *runtime.AccountRef, addr address, space uint64, sig signers) error {
	if !addr.signed(sig) {
		ctx.LogRaw(fmt.Sprintf("Allocate: 'to' account %s must sign", addr))
		return runtime.ErrMissingRequiredSignature
	}
	if len(acct.Data) != 0 || acct.Owner != ProgramID {
		ctx.LogRaw(fmt.Sprintf("Allocate: account %s already in use", addr))
		return ErrAccountAlreadyInUse
	}
	if space > MaxPermittedDataLength {
		ctx.LogRaw(fmt.Sprintf("Allocate: requested %d, max allowed %d", space, MaxPermittedDataLength))
		return ErrInvalidAccountDataLength
	}
	if err := canChangeData(acct); err != nil {
		return err
	}
	if space > 0 {
		acct.Data = make([]byte, space)
	}
	return nil
}

// canChangeData is BorrowedAccount::can_data_be_changed for an account the
// System program writes: it must be writable and its own.
func canChangeData(a *runtime.AccountRef) error {
	if !a.IsWritable {
		return runtime.ErrReadonlyDataModified
	}
	if a.Owner != ProgramID {
		return runtime.ErrExternalAccountDataModified
	}
	return nil
}

// subLamports and addLamports are BorrowedAccount's checked lamport writes:
// a read-only account fails even for zero, and only the owner may debit.
func subLamports(a *runtime.AccountRef, n uint64) error {
	if n > a.Lamports {
		return runtime.ErrArithmeticOverflow
	}
	if n > 0 && a.Owner != ProgramID {
		return runtime.ErrExternalAccountLamportSpend
	}
	if !a.IsWritable {
		return runtime.ErrReadonlyLamportChange
	}
	a.Lamports -= n
	return nil
}

func addLamports(a *runtime.AccountRef, n uint64) error {
	if a.Lamports+n < a.Lamports {
		return runtime.ErrArithmeticOverflow
	}
	if !a.IsWritable {
		return runtime.ErrReadonlyLamportChange
	}
	a.Lamports += n
	return nil
}

func assign(ctx *runtime.Context, acct *runtime.AccountRef, addr address, owner solana.PublicKey, sig signers) error {
	if acct.Owner == owner {
		return nil // nothing to do, no signature needed
	}
	if !addr.signed(sig) {
		ctx.LogRaw(fmt.Sprintf("Assign: account %s must sign", addr))
		return runtime.ErrMissingRequiredSignature
	}
	// BorrowedAccount::set_owner.
	if acct.Owner != ProgramID || !acct.IsWritable || !zeroed(acct.Data) {
		return runtime.ErrModifiedProgramID
	}
	acct.Owner = owner
	return nil
}

func zeroed(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func transferVerified(ctx *runtime.Context, from, to *runtime.AccountRef, lamports uint64) error {
	if len(from.Data) != 0 {
		ctx.LogRaw("Transfer: `from` must not carry data")
		return runtime.ErrInvalidArgument
	}
	if lamports > from.Lamports {
		ctx.LogRaw(fmt.Sprintf("Transfer: insufficient lamports %d, need %d", from.Lamports, lamports))
		return ErrResultWithNegativeLamports
	}
	if err := subLamports(from, lamports); err != nil {
		return err
	}
	return addLamports(to, lamports)
}
