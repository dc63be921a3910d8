// Package ata is a native implementation of the Associated Token Account
// program (ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL) for the embedded
// ledger: Create, CreateIdempotent and RecoverNested, with the on-chain
// program's checks, logs and cross-program invocations (Token
// GetAccountDataSize, System CreateAccount — or Transfer + Allocate + Assign
// for a pre-funded address — then Token InitializeImmutableOwner and
// InitializeAccount3), signed for the account by its PDA seeds
// [owner, token program, mint, bump].
package ata

import (
	"encoding/binary"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// ProgramID is the Associated Token Account program's id.
var ProgramID = spl.AssociatedTokenProgramID

// ErrInvalidOwner is AssociatedTokenAccountError::InvalidOwner (Custom 0).
var ErrInvalidOwner = runtime.Custom(0)

// invalidOwnerText is InvalidOwner's Display text, which the program logs.
const invalidOwnerText = "Associated token account owner does not match address derivation"

// Compute units the program itself charges (CPIs are charged on top by the
// runtime and the callees). Address derivation is priced like
// find_program_address: one create_program_address syscall per bump tried.
const (
	// BaseUnits covers decoding, logging and account checks.
	BaseUnits = 3_400
	// DerivationAttemptUnits is charged per bump seed tried.
	DerivationAttemptUnits = 1_500
	// CreateUnits is the extra work of the creating path (rent, seeds,
	// instruction building, reading return data).
	CreateUnits = 2_100
)

// extImmutableOwner is Token-2022's ImmutableOwner extension type, which the
// program asks GetAccountDataSize to make room for.
const extImmutableOwner = 7

// Registration returns the ATA program's registration.
func Registration() *runtime.Registration {
	return &runtime.Registration{
		ID:       ProgramID,
		Name:     "Associated Token Account Program",
		Program:  runtime.ProgramFunc(Execute),
		BaseCost: BaseUnits,
	}
}

// Execute runs one instruction.
func Execute(ctx *runtime.Context) error {
	if err := ctx.Consume(BaseUnits); err != nil {
		return err
	}
	op, err := spl.DecodeATA(ctx.Data())
	if err != nil {
		return runtime.ErrInvalidInstructionData
	}
	ctx.Log(op.String())
	switch op {
	case spl.ATACreate:
		return create(ctx, false)
	case spl.ATACreateIdempotent:
		return create(ctx, true)
	default:
		return recoverNested(ctx)
	}
}

// derive finds the associated token address of (wallet, tokenProgram,
// mint) and charges the derivation's compute units.
func derive(ctx *runtime.Context, wallet, mint, tokenProgram solana.PublicKey) (solana.PublicKey, uint8, error) {
	key, bump, err := solana.FindProgramAddress([][]byte{wallet[:], tokenProgram[:], mint[:]}, ctx.ProgramID())
	if err != nil {
		return key, 0, runtime.ErrInvalidSeeds
	}
	if err := ctx.Consume(DerivationAttemptUnits * uint64(256-int(bump))); err != nil {
		return key, 0, err
	}
	return key, bump, nil
}

func create(ctx *runtime.Context, idempotent bool) error {
	accts, err := ctx.Accounts(6)
	if err != nil {
		return err
	}
	payer, ata, wallet, mint, tokenProgram := accts[0], accts[1], accts[2], accts[3], accts[5]

	want, bump, err := derive(ctx, wallet.Key, mint.Key, tokenProgram.Key)
	if err != nil {
		return err
	}
	if want != ata.Key {
		ctx.Log("Error: Associated address does not match seed derivation")
		return runtime.ErrInvalidSeeds
	}

	if idempotent && ata.Owner == tokenProgram.Key {
		if existing, err := spl.DecodeTokenAccount(ata.Data); err == nil && existing.State != spl.StateUninitialized {
			if existing.Owner != wallet.Key {
				ctx.Log(invalidOwnerText)
				return ErrInvalidOwner
			}
			if existing.Mint != mint.Key {
				return runtime.ErrInvalidAccountData
			}
			return nil
		}
	}
	if ata.Owner != runtime.SystemProgramID {
		return runtime.ErrIllegalOwner
	}
	if !spl.IsTokenProgram(tokenProgram.Key) {
		return runtime.ErrIncorrectProgramID
	}
	if err := ctx.Consume(CreateUnits); err != nil {
		return err
	}
	seeds := [][]byte{wallet.Key[:], tokenProgram.Key[:], mint.Key[:], {bump}}

	// get_account_len: ask the token program how big the account must be.
	sizeIx := txwire.Instruction{
		ProgramID: tokenProgram.Key,
		Accounts:  []txwire.AccountMeta{txwire.Readonly(mint.Key)},
		Data:      []byte{byte(spl.TokenGetAccountDataSizeOp), extImmutableOwner, 0},
	}
	if err := ctx.Invoke(sizeIx); err != nil {
		return err
	}
	rd := ctx.ReturnData()
	if rd == nil {
		return runtime.ErrInvalidInstructionData
	}
	if rd.ProgramID != tokenProgram.Key {
		return runtime.ErrIncorrectProgramID
	}
	if len(rd.Data) != 8 {
		return runtime.ErrInvalidInstructionData
	}
	space := binary.LittleEndian.Uint64(rd.Data)

	// create_pda_account
	rentMin := max(ctx.Env().Rent.MinimumBalance(int(min(space, uint64(1<<40)))), 1)
	if ata.Lamports > 0 {
		if rentMin > ata.Lamports {
			if err := ctx.Invoke(spl.SystemTransfer(payer.Key, ata.Key, rentMin-ata.Lamports)); err != nil {
				return err
			}
		}
		if err := ctx.Invoke(spl.SystemAllocate(ata.Key, space), seeds); err != nil {
			return err
		}
		if err := ctx.Invoke(spl.SystemAssign(ata.Key, tokenProgram.Key), seeds); err != nil {
			return err
		}
	} else if err := ctx.Invoke(spl.SystemCreateAccount(payer.Key, ata.Key, rentMin, space, tokenProgram.Key), seeds); err != nil {
		return err
	}

	ctx.Log("Initialize the associated token account")
	if err := ctx.Invoke(spl.TokenInitializeImmutableOwner(tokenProgram.Key, ata.Key)); err != nil {
		return err
	}
	return ctx.Invoke(spl.TokenInitializeAccount3(tokenProgram.Key, ata.Key, mint.Key, wallet.Key))
}

// recoverNested moves the tokens of an ATA owned by another ATA (a "nested"
// ATA) to the wallet's own ATA for that mint and closes the nested one,
// signing as the owner ATA.
func recoverNested(ctx *runtime.Context) error {
	accts, err := ctx.Accounts(7)
	if err != nil {
		return err
	}
	nested, nestedMint, dest, ownerATA, ownerMint, wallet, tokenProgram :=
		accts[0], accts[1], accts[2], accts[3], accts[4], accts[5], accts[6]

	ownerKey, bump, err := derive(ctx, wallet.Key, ownerMint.Key, tokenProgram.Key)
	if err != nil {
		return err
	}
	if ownerKey != ownerATA.Key {
		ctx.Log("Error: Owner associated address does not match seed derivation")
		return runtime.ErrInvalidSeeds
	}
	nestedKey, _, err := derive(ctx, ownerATA.Key, nestedMint.Key, tokenProgram.Key)
	if err != nil {
		return err
	}
	if nestedKey != nested.Key {
		ctx.Log("Error: Nested associated address does not match seed derivation")
		return runtime.ErrInvalidSeeds
	}
	destKey, _, err := derive(ctx, wallet.Key, nestedMint.Key, tokenProgram.Key)
	if err != nil {
		return err
	}
	if destKey != dest.Key {
		ctx.Log("Error: Destination associated address does not match seed derivation")
		return runtime.ErrInvalidSeeds
	}
	if !wallet.IsSigner {
		ctx.Log("Wallet of the owner associated token account must sign")
		return runtime.ErrMissingRequiredSignature
	}
	if ownerMint.Owner != tokenProgram.Key {
		ctx.Log("Owner mint not owned by provided token program")
		return runtime.ErrIllegalOwner
	}
	if ownerATA.Owner != tokenProgram.Key {
		ctx.Log("Owner associated token account not owned by provided token program, recreate the owner associated token account first")
		return runtime.ErrIllegalOwner
	}
	ownerAcct, err := unpackAccount(ownerATA.Data)
	if err != nil {
		return err
	}
	if ownerAcct.Owner != wallet.Key {
		ctx.Log("Owner associated token account not owned by provided wallet")
		return ErrInvalidOwner
	}
	if nested.Owner != tokenProgram.Key {
		ctx.Log("Nested associated token account not owned by provided token program")
		return runtime.ErrIllegalOwner
	}
	nestedAcct, err := unpackAccount(nested.Data)
	if err != nil {
		return err
	}
	if nestedAcct.Owner != ownerATA.Key {
		ctx.Log("Nested associated token account not owned by provided associated token account")
		return ErrInvalidOwner
	}
	if nestedMint.Owner != tokenProgram.Key {
		ctx.Log("Nested mint account not owned by provided token program")
		return runtime.ErrIllegalOwner
	}
	m, err := spl.DecodeMint(nestedMint.Data)
	if err != nil {
		return runtime.ErrInvalidAccountData
	}
	if !m.IsInitialized {
		return runtime.ErrUninitializedAccount
	}
	if !spl.IsTokenProgram(tokenProgram.Key) {
		return runtime.ErrIncorrectProgramID
	}
	if err := ctx.Consume(CreateUnits); err != nil {
		return err
	}
	seeds := [][]byte{wallet.Key[:], tokenProgram.Key[:], ownerMint.Key[:], {bump}}
	transfer := spl.TokenTransferChecked(tokenProgram.Key, nested.Key, nestedMint.Key, dest.Key, ownerATA.Key, nestedAcct.Amount, m.Decimals)
	if err := ctx.Invoke(transfer, seeds); err != nil {
		return err
	}
	return ctx.Invoke(spl.TokenCloseAccount(tokenProgram.Key, nested.Key, wallet.Key, ownerATA.Key), seeds)
}

// unpackAccount is StateWithExtensions::<Account>::unpack for either token
// program's layout.
func unpackAccount(data []byte) (spl.TokenAccount, error) {
	a, err := spl.DecodeTokenAccount(data)
	if err != nil {
		return a, runtime.ErrInvalidAccountData
	}
	if a.State == spl.StateUninitialized {
		return a, runtime.ErrUninitializedAccount
	}
	return a, nil
}
