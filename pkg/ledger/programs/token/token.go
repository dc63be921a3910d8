// Package token is a native implementation of the SPL Token program
// (TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA) and of the core
// instructions of Token-2022 (TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb)
// for the embedded ledger. One processor serves both, parameterised by the
// program id; it follows the on-chain processors' check order, error codes
// and log lines ("Program log: Instruction: Transfer", then
// "Program log: Error: insufficient funds" before a failure).
//
// Implemented: InitializeMint(2), InitializeAccount(2,3),
// InitializeMultisig(2) and multisig authorities, Transfer(Checked),
// Approve(Checked), Revoke, SetAuthority, MintTo(Checked), Burn(Checked),
// CloseAccount, FreezeAccount, ThawAccount, SyncNative, GetAccountDataSize,
// InitializeImmutableOwner, AmountToUiAmount and UiAmountToAmount.
//
// Wrapped SOL follows the processors: accounts of the program's native mint
// carry their rent-exempt reserve in is_native, Transfer moves their
// lamports with the amount, CloseAccount returns every lamport, MintTo,
// Burn and FreezeAccount refuse them (NativeNotSupported) and SyncNative
// recounts the amount from the lamports (Token-2022 as on its current
// main: reserve recomputed, optional Rent sysvar, no InvalidState). The
// native mints themselves are genesis accounts of the ledger
// (programs.GenesisAccounts).
//
// Token-2022 specifics: accounts and mints may be extended (account type at
// byte 165, TLV extensions from 166). ImmutableOwner is supported (the ATA
// program creates 170-byte accounts with it) and so are extensions that do
// not change the core semantics (metadata, groups, interest display, mint
// close authority). State carrying any other extension, and the extension
// instructions (opcode 25 and up), fail with a log line saying the ferry
// ledger does not support them.
package token

import (
	"encoding/binary"
	"errors"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// firstUnknownToken2022Op follows the last Token-2022 extension instruction
// (46, PermissionedBurnExtension).
const firstUnknownToken2022Op spl.TokenOp = 47

// Program is one of the two token programs.
type Program struct {
	id         solana.PublicKey
	t22        bool
	nativeMint solana.PublicKey
}

// Token is the SPL Token program.
var Token = &Program{id: spl.TokenProgramID, nativeMint: spl.NativeMintID}

// Token2022 is the Token-2022 program (core instructions).
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

// proc is one execution of the program.
type proc struct {
	*Program
	ctx *runtime.Context
}

// Execute runs one instruction.
func (p *Program) Execute(ctx *runtime.Context) error {
	pr := &proc{Program: p, ctx: ctx}
	in, exts, err := pr.decode(ctx.Data())
	if err != nil {
		if cerr := ctx.Consume(DecodeFailureCost); cerr != nil {
			return cerr
		}
		pr.logError(err)
		return err
	}
	if err := ctx.Consume(Cost(in.Op)); err != nil {
		return err
	}
	ctx.Log("Instruction: " + in.Op.String())
	if err := pr.process(in, exts); err != nil {
		pr.logError(err)
		return err
	}
	return nil
}

// logError logs what the program's entrypoint prints for err.
func (p *proc) logError(err error) {
	var ie *runtime.InstructionError
	if errors.As(err, &ie) {
		p.ctx.Log(ErrorLog(ie))
	}
}

// fixedSize2022 is the exact data length Token-2022 requires of its
// fixed-size instructions (it rejects trailing bytes; SPL Token ignores them).
var fixedSize2022 = map[spl.TokenOp]int{
	spl.TokenTransferOp: 9, spl.TokenApproveOp: 9, spl.TokenMintToOp: 9, spl.TokenBurnOp: 9,
	spl.TokenAmountToUiAmountOp: 9, spl.TokenTransferCheckedOp: 10, spl.TokenApproveCheckedOp: 10,
	spl.TokenMintToCheckedOp: 10, spl.TokenBurnCheckedOp: 10, spl.TokenInitializeAccount2Op: 33,
	spl.TokenInitializeAccount3Op: 33, spl.TokenInitializeMultisigOp: 2, spl.TokenInitializeMultisig2Op: 2,
}

// decode parses instruction data like the program's unpacker. SPL Token
// answers every malformed input with InvalidInstruction (Custom 12);
// Token-2022 answers short or mis-sized data with InvalidInstructionData.
// exts are GetAccountDataSize's requested extension types (Token-2022).
func (p *proc) decode(data []byte) (spl.TokenInstruction, []uint16, error) {
	if !p.t22 {
		in, err := spl.DecodeToken(data)
		if err != nil || in.Op > spl.TokenUiAmountToAmountOp || in.AuthorityType > spl.AuthorityCloseAccount {
			return in, nil, ErrInvalidInstruction
		}
		return in, nil, nil
	}
	if len(data) == 0 {
		return spl.TokenInstruction{}, nil, runtime.ErrInvalidInstructionData
	}
	op := spl.TokenOp(data[0])
	if op > spl.TokenUiAmountToAmountOp {
		if op >= firstUnknownToken2022Op {
			return spl.TokenInstruction{Op: op}, nil, ErrInvalidInstruction
		}
		p.ctx.Logf("Error: Token-2022 instruction %s is not supported by the ferry ledger", op)
		return spl.TokenInstruction{Op: op}, nil, runtime.ErrInvalidInstructionData
	}
	if want := fixedSize2022[op]; want != 0 && len(data) != want {
		return spl.TokenInstruction{Op: op}, nil, runtime.ErrInvalidInstructionData
	}
	if op == spl.TokenGetAccountDataSizeOp {
		rest := data[1:]
		if len(rest)%2 != 0 {
			return spl.TokenInstruction{Op: op}, nil, runtime.ErrInvalidInstructionData
		}
		exts := make([]uint16, 0, len(rest)/2)
		for i := 0; i < len(rest); i += 2 {
			exts = append(exts, binary.LittleEndian.Uint16(rest[i:]))
		}
		return spl.TokenInstruction{Op: op}, exts, nil
	}
	in, err := spl.DecodeToken(data)
	if err != nil {
		return in, nil, runtime.ErrInvalidInstructionData
	}
	return in, nil, nil
}

func (p *proc) process(in spl.TokenInstruction, exts []uint16) error {
	switch in.Op {
	case spl.TokenInitializeMintOp:
		return p.initializeMint(in, true)
	case spl.TokenInitializeMint2Op:
		return p.initializeMint(in, false)
	case spl.TokenInitializeAccountOp:
		return p.initializeAccount(nil, true)
	case spl.TokenInitializeAccount2Op:
		return p.initializeAccount(&in.Owner, true)
	case spl.TokenInitializeAccount3Op:
		return p.initializeAccount(&in.Owner, false)
	case spl.TokenInitializeMultisigOp:
		return p.initializeMultisig(in.M, true)
	case spl.TokenInitializeMultisig2Op:
		return p.initializeMultisig(in.M, false)
	case spl.TokenTransferOp:
		return p.transfer(in.Amount, nil)
	case spl.TokenTransferCheckedOp:
		return p.transfer(in.Amount, &in.Decimals)
	case spl.TokenApproveOp:
		return p.approve(in.Amount, nil)
	case spl.TokenApproveCheckedOp:
		return p.approve(in.Amount, &in.Decimals)
	case spl.TokenRevokeOp:
		return p.revoke()
	case spl.TokenSetAuthorityOp:
		return p.setAuthority(in.AuthorityType, in.NewAuthority)
	case spl.TokenMintToOp:
		return p.mintTo(in.Amount, nil)
	case spl.TokenMintToCheckedOp:
		return p.mintTo(in.Amount, &in.Decimals)
	case spl.TokenBurnOp:
		return p.burn(in.Amount, nil)
	case spl.TokenBurnCheckedOp:
		return p.burn(in.Amount, &in.Decimals)
	case spl.TokenCloseAccountOp:
		return p.closeAccount()
	case spl.TokenFreezeAccountOp:
		return p.toggleFreeze(true)
	case spl.TokenThawAccountOp:
		return p.toggleFreeze(false)
	case spl.TokenSyncNativeOp:
		return p.syncNative()
	case spl.TokenGetAccountDataSizeOp:
		return p.getAccountDataSize(exts)
	case spl.TokenInitializeImmutableOwnerOp:
		return p.initializeImmutableOwner()
	case spl.TokenAmountToUiAmountOp:
		return p.amountToUiAmount(in.Amount)
	case spl.TokenUiAmountToAmountOp:
		return p.uiAmountToAmount(in.UiAmount)
	}
	return ErrInvalidInstruction
}

// account returns instruction account i.
func (p *proc) account(i int) (*runtime.AccountRef, error) { return p.ctx.Account(i) }

// rest returns the instruction accounts from i on (multisig signers).
func (p *proc) rest(i int) []*runtime.AccountRef {
	var out []*runtime.AccountRef
	for ; i < p.ctx.NumAccounts(); i++ {
		a, _ := p.ctx.Account(i)
		out = append(out, a)
	}
	return out
}

// checkOwner is check_account_owner / check_program_account.
func (p *proc) checkOwner(a *runtime.AccountRef) error {
	if a.Owner != p.id {
		return runtime.ErrIncorrectProgramID
	}
	return nil
}

// rentFromAccount reads the Rent sysvar account (InitializeMint, InitializeAccount,
// InitializeAccount2, InitializeMultisig). The values come from the
// ledger's environment, which keeps the sysvar in sync.
func (p *proc) rentFromAccount(i int) (runtime.Rent, error) {
	a, err := p.account(i)
	if err != nil {
		return runtime.Rent{}, err
	}
	if a.Key != spl.SysvarRentID {
		return runtime.Rent{}, runtime.ErrInvalidArgument
	}
	return p.ctx.Env().Rent, nil
}

// validateOwner is the programs' validate_owner: authority must be
// expected and have signed, or be a multisig of this program with at least
// M of its signers among signers, all of them signing.
func (p *proc) validateOwner(expected solana.PublicKey, authority *runtime.AccountRef, signers []*runtime.AccountRef) error {
	if expected != authority.Key {
		return ErrOwnerMismatch
	}
	if authority.Owner == p.id && len(authority.Data) == spl.MultisigSize {
		ms, err := unpackMultisig(authority.Data)
		if err != nil {
			return err
		}
		if ms.N > spl.MaxSigners {
			return runtime.ErrInvalidAccountData
		}
		var matched [spl.MaxSigners]bool
		var n uint8
		for _, s := range signers {
			for pos, key := range ms.Signers[:ms.N] {
				if key == s.Key && !matched[pos] {
					if !s.IsSigner {
						return runtime.ErrMissingRequiredSignature
					}
					matched[pos] = true
					n++
				}
			}
		}
		if n < ms.M {
			return runtime.ErrMissingRequiredSignature
		}
		return nil
	}
	if !authority.IsSigner {
		return runtime.ErrMissingRequiredSignature
	}
	return nil
}

// ownedBySystemOrIncinerator marks token accounts anyone may burn from and
// that can be closed to the incinerator without a signature.
func ownedBySystemOrIncinerator(a spl.TokenAccount) bool {
	return a.Owner == runtime.SystemProgramID || a.Owner == spl.IncineratorID
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

func (p *proc) initializeMint(in spl.TokenInstruction, rentSysvar bool) error {
	mint, err := p.account(0)
	if err != nil {
		return err
	}
	rent := p.ctx.Env().Rent
	if rentSysvar {
		if rent, err = p.rentFromAccount(1); err != nil {
			return err
		}
	}
	exempt := mint.Lamports >= rent.MinimumBalance(len(mint.Data))
	if p.t22 && !exempt { // Token-2022 checks rent first
		return ErrNotRentExempt
	}
	m, err := p.decodeMint(mint.Data)
	if err != nil {
		return err
	}
	if m.IsInitialized {
		return ErrAlreadyInUse
	}
	if p.t22 && len(mint.Data) != spl.MintSize {
		// An extended mint needs its extensions initialized first, and the
		// extension instructions are not supported.
		return runtime.ErrInvalidAccountData
	}
	if !exempt {
		return ErrNotRentExempt
	}
	auth := in.MintAuthority
	m = spl.Mint{MintAuthority: &auth, Supply: m.Supply, Decimals: in.Decimals, IsInitialized: true, FreezeAuthority: in.FreezeAuthority}
	m.EncodeInto(mint.Data)
	return nil
}

func (p *proc) initializeAccount(owner *solana.PublicKey, rentSysvar bool) error {
	acct, err := p.account(0)
	if err != nil {
		return err
	}
	mint, err := p.account(1)
	if err != nil {
		return err
	}
	next := 2
	if owner == nil {
		o, err := p.account(2)
		if err != nil {
			return err
		}
		owner = &o.Key
		next = 3
	}
	rent := p.ctx.Env().Rent
	if rentSysvar {
		if rent, err = p.rentFromAccount(next); err != nil {
			return err
		}
	}
	if _, err := p.unpackUninitializedAccount(acct.Data); err != nil {
		return err
	}
	if acct.Lamports < rent.MinimumBalance(len(acct.Data)) {
		return ErrNotRentExempt
	}
	native := mint.Key == p.nativeMint
	if p.t22 {
		// Token-2022 unpacks every mint, the native one included, then
		// checks its owner while collecting required extensions.
		if _, err := p.unpackMint(mint.Data); err != nil {
			return ErrInvalidMint
		}
		if err := p.checkOwner(mint); err != nil {
			return err
		}
	} else if !native {
		if err := p.checkOwner(mint); err != nil {
			return err
		}
		if _, err := p.unpackMint(mint.Data); err != nil {
			return ErrInvalidMint
		}
	}
	a := spl.TokenAccount{Mint: mint.Key, Owner: *owner, State: spl.StateInitialized}
	if native {
		reserve := rent.MinimumBalance(len(acct.Data))
		amount, err := checkedSub(acct.Lamports, reserve)
		if err != nil {
			return err
		}
		a.IsNative, a.Amount = &reserve, amount
	}
	a.EncodeInto(acct.Data)
	if p.t22 && len(acct.Data) > spl.TokenAccountSize {
		acct.Data[accountTypeOffset] = spl.AccountTypeAccount
	}
	return nil
}

func (p *proc) initializeMultisig(m uint8, rentSysvar bool) error {
	ms, err := p.account(0)
	if err != nil {
		return err
	}
	rent := p.ctx.Env().Rent
	next := 1
	if rentSysvar {
		if rent, err = p.rentFromAccount(1); err != nil {
			return err
		}
		next = 2
	}
	cur, err := spl.DecodeMultisig(ms.Data)
	if err != nil {
		return runtime.ErrInvalidAccountData
	}
	if cur.IsInitialized {
		return ErrAlreadyInUse
	}
	if ms.Lamports < rent.MinimumBalance(len(ms.Data)) {
		return ErrNotRentExempt
	}
	signers := p.rest(next)
	if len(signers) < spl.MinSigners || len(signers) > spl.MaxSigners {
		return ErrInvalidNumberOfProvidedSigners
	}
	if m < spl.MinSigners || m > spl.MaxSigners {
		return ErrInvalidNumberOfRequiredSigners
	}
	// Like the real program, signer slots past N keep whatever they held.
	out := cur
	out.M, out.N, out.IsInitialized = m, uint8(len(signers)), true
	for i, s := range signers {
		out.Signers[i] = s.Key
	}
	out.EncodeInto(ms.Data)
	return nil
}

// transfer is process_transfer; decimals is set for TransferChecked.
func (p *proc) transfer(amount uint64, decimals *uint8) error {
	srcRef, err := p.account(0)
	if err != nil {
		return err
	}
	i := 1
	var mintRef *runtime.AccountRef
	if decimals != nil {
		if mintRef, err = p.account(1); err != nil {
			return err
		}
		i = 2
	}
	dstRef, err := p.account(i)
	if err != nil {
		return err
	}
	authRef, err := p.account(i + 1)
	if err != nil {
		return err
	}
	signers := p.rest(i + 2)

	src, err := p.unpackAccount(srcRef.Data)
	if err != nil {
		return err
	}
	var dst spl.TokenAccount
	if !p.t22 {
		if dst, err = p.unpackAccount(dstRef.Data); err != nil {
			return err
		}
		if src.State == spl.StateFrozen || dst.State == spl.StateFrozen {
			return ErrAccountFrozen
		}
	} else if src.State == spl.StateFrozen {
		return ErrAccountFrozen
	}
	if src.Amount < amount {
		return ErrInsufficientFunds
	}
	if !p.t22 && src.Mint != dst.Mint {
		return ErrMintMismatch
	}
	if decimals != nil {
		if mintRef.Key != src.Mint {
			return ErrMintMismatch
		}
		m, err := p.unpackMint(mintRef.Data)
		if err != nil {
			return err
		}
		if *decimals != m.Decimals {
			return ErrMintDecimalsMismatch
		}
	}
	self := srcRef.Key == dstRef.Key
	if src.Delegate != nil && authRef.Key == *src.Delegate {
		if err := p.validateOwner(*src.Delegate, authRef, signers); err != nil {
			return err
		}
		if src.DelegatedAmount < amount {
			return ErrInsufficientFunds
		}
		if !self {
			src.DelegatedAmount -= amount
			if src.DelegatedAmount == 0 {
				src.Delegate = nil
			}
		}
	} else if err := p.validateOwner(src.Owner, authRef, signers); err != nil {
		return err
	}
	if p.t22 || self || amount == 0 {
		if err := p.checkOwner(srcRef); err != nil {
			return err
		}
		if err := p.checkOwner(dstRef); err != nil {
			return err
		}
	}
	if self {
		return nil
	}
	if p.t22 {
		if dst, err = p.unpackAccount(dstRef.Data); err != nil {
			return err
		}
		if dst.State == spl.StateFrozen {
			return ErrAccountFrozen
		}
		if src.Mint != dst.Mint {
			return ErrMintMismatch
		}
	}
	if src.Amount, err = checkedSub(src.Amount, amount); err != nil {
		return err
	}
	if dst.Amount, err = checkedAdd(dst.Amount, amount); err != nil {
		return err
	}
	if src.IsNative != nil {
		if srcRef.Lamports, err = checkedSub(srcRef.Lamports, amount); err != nil {
			return err
		}
		if dstRef.Lamports, err = checkedAdd(dstRef.Lamports, amount); err != nil {
			return err
		}
	}
	src.EncodeInto(srcRef.Data)
	dst.EncodeInto(dstRef.Data)
	return nil
}

func (p *proc) approve(amount uint64, decimals *uint8) error {
	srcRef, err := p.account(0)
	if err != nil {
		return err
	}
	i := 1
	var mintRef *runtime.AccountRef
	if decimals != nil {
		if mintRef, err = p.account(1); err != nil {
			return err
		}
		i = 2
	}
	delegate, err := p.account(i)
	if err != nil {
		return err
	}
	owner, err := p.account(i + 1)
	if err != nil {
		return err
	}
	src, err := p.unpackAccount(srcRef.Data)
	if err != nil {
		return err
	}
	if src.State == spl.StateFrozen {
		return ErrAccountFrozen
	}
	if decimals != nil {
		if mintRef.Key != src.Mint {
			return ErrMintMismatch
		}
		m, err := p.unpackMint(mintRef.Data)
		if err != nil {
			return err
		}
		if *decimals != m.Decimals {
			return ErrMintDecimalsMismatch
		}
	}
	if err := p.validateOwner(src.Owner, owner, p.rest(i+2)); err != nil {
		return err
	}
	d := delegate.Key
	src.Delegate, src.DelegatedAmount = &d, amount
	src.EncodeInto(srcRef.Data)
	return nil
}

func (p *proc) revoke() error {
	srcRef, err := p.account(0)
	if err != nil {
		return err
	}
	src, err := p.unpackAccount(srcRef.Data)
	if err != nil {
		return err
	}
	auth, err := p.account(1)
	if err != nil {
		return err
	}
	if src.State == spl.StateFrozen {
		return ErrAccountFrozen
	}
	expected := src.Owner
	if p.t22 && src.Delegate != nil && auth.Key == *src.Delegate {
		expected = *src.Delegate // Token-2022 lets the delegate revoke itself
	}
	if err := p.validateOwner(expected, auth, p.rest(2)); err != nil {
		return err
	}
	src.Delegate, src.DelegatedAmount = nil, 0
	src.EncodeInto(srcRef.Data)
	return nil
}

func (p *proc) setAuthority(kind spl.AuthorityType, newAuth *solana.PublicKey) error {
	target, err := p.account(0)
	if err != nil {
		return err
	}
	auth, err := p.account(1)
	if err != nil {
		return err
	}
	signers := p.rest(2)

	var isAccount, isMint bool
	var acct spl.TokenAccount
	var mint spl.Mint
	if !p.t22 {
		switch len(target.Data) {
		case spl.TokenAccountSize:
			if acct, err = p.unpackAccount(target.Data); err != nil {
				return err
			}
			isAccount = true
		case spl.MintSize:
			if mint, err = p.unpackMint(target.Data); err != nil {
				return err
			}
			isMint = true
		default:
			return runtime.ErrInvalidArgument
		}
	} else if a, aerr := p.unpackAccount(target.Data); aerr == nil {
		acct, isAccount = a, true
	} else if m, merr := p.unpackMint(target.Data); merr == nil {
		mint, isMint = m, true
	} else {
		return runtime.ErrInvalidArgument
	}

	if isAccount {
		if acct.State == spl.StateFrozen {
			return ErrAccountFrozen
		}
		switch kind {
		case spl.AuthorityAccountOwner:
			if err := p.validateOwner(acct.Owner, auth, signers); err != nil {
				return err
			}
			if p.t22 && hasExtension(target.Data, extImmutableOwner) {
				return ErrImmutableOwner
			}
			if newAuth == nil {
				return ErrInvalidInstruction
			}
			acct.Owner = *newAuth
			acct.Delegate, acct.DelegatedAmount = nil, 0
			if acct.IsNative != nil {
				acct.CloseAuthority = nil
			}
		case spl.AuthorityCloseAccount:
			expected := acct.Owner
			if acct.CloseAuthority != nil {
				expected = *acct.CloseAuthority
			}
			if err := p.validateOwner(expected, auth, signers); err != nil {
				return err
			}
			acct.CloseAuthority = newAuth
		default:
			return ErrAuthorityTypeNotSupported
		}
		acct.EncodeInto(target.Data)
		return nil
	}
	if !isMint {
		return runtime.ErrInvalidArgument
	}
	switch kind {
	case spl.AuthorityMintTokens:
		if mint.MintAuthority == nil {
			return ErrFixedSupply
		}
		if err := p.validateOwner(*mint.MintAuthority, auth, signers); err != nil {
			return err
		}
		mint.MintAuthority = newAuth
	case spl.AuthorityFreezeAccount:
		if mint.FreezeAuthority == nil {
			return ErrMintCannotFreeze
		}
		if err := p.validateOwner(*mint.FreezeAuthority, auth, signers); err != nil {
			return err
		}
		mint.FreezeAuthority = newAuth
	default:
		return ErrAuthorityTypeNotSupported
	}
	mint.EncodeInto(target.Data)
	return nil
}

func (p *proc) mintTo(amount uint64, decimals *uint8) error {
	mintRef, err := p.account(0)
	if err != nil {
		return err
	}
	dstRef, err := p.account(1)
	if err != nil {
		return err
	}
	auth, err := p.account(2)
	if err != nil {
		return err
	}
	dst, err := p.unpackAccount(dstRef.Data)
	if err != nil {
		return err
	}
	if dst.State == spl.StateFrozen {
		return ErrAccountFrozen
	}
	if dst.IsNative != nil {
		return ErrNativeNotSupported
	}
	if mintRef.Key != dst.Mint {
		return ErrMintMismatch
	}
	mint, err := p.unpackMint(mintRef.Data)
	if err != nil {
		return err
	}
	if decimals != nil && *decimals != mint.Decimals {
		return ErrMintDecimalsMismatch
	}
	if mint.MintAuthority == nil {
		return ErrFixedSupply
	}
	if err := p.validateOwner(*mint.MintAuthority, auth, p.rest(3)); err != nil {
		return err
	}
	if p.t22 || amount == 0 { // Token-2022 checks ownership whatever the amount
		if err := p.checkOwner(mintRef); err != nil {
			return err
		}
		if err := p.checkOwner(dstRef); err != nil {
			return err
		}
	}
	if dst.Amount, err = checkedAdd(dst.Amount, amount); err != nil {
		return err
	}
	if mint.Supply, err = checkedAdd(mint.Supply, amount); err != nil {
		return err
	}
	dst.EncodeInto(dstRef.Data)
	mint.EncodeInto(mintRef.Data)
	return nil
}

func (p *proc) burn(amount uint64, decimals *uint8) error {
	srcRef, err := p.account(0)
	if err != nil {
		return err
	}
	mintRef, err := p.account(1)
	if err != nil {
		return err
	}
	auth, err := p.account(2)
	if err != nil {
		return err
	}
	signers := p.rest(3)
	src, err := p.unpackAccount(srcRef.Data)
	if err != nil {
		return err
	}
	mint, err := p.unpackMint(mintRef.Data)
	if err != nil {
		return err
	}
	if src.State == spl.StateFrozen {
		return ErrAccountFrozen
	}
	if src.IsNative != nil {
		return ErrNativeNotSupported
	}
	if src.Amount < amount {
		return ErrInsufficientFunds
	}
	if mintRef.Key != src.Mint {
		return ErrMintMismatch
	}
	if decimals != nil && *decimals != mint.Decimals {
		return ErrMintDecimalsMismatch
	}
	if !ownedBySystemOrIncinerator(src) {
		if src.Delegate != nil && auth.Key == *src.Delegate {
			if err := p.validateOwner(*src.Delegate, auth, signers); err != nil {
				return err
			}
			if src.DelegatedAmount < amount {
				return ErrInsufficientFunds
			}
			src.DelegatedAmount -= amount
			if src.DelegatedAmount == 0 {
				src.Delegate = nil
			}
		} else if err := p.validateOwner(src.Owner, auth, signers); err != nil {
			return err
		}
	}
	if p.t22 || amount == 0 { // Token-2022 checks ownership whatever the amount
		if err := p.checkOwner(srcRef); err != nil {
			return err
		}
		if err := p.checkOwner(mintRef); err != nil {
			return err
		}
	}
	if src.Amount, err = checkedSub(src.Amount, amount); err != nil {
		return err
	}
	if mint.Supply, err = checkedSub(mint.Supply, amount); err != nil {
		return err
	}
	src.EncodeInto(srcRef.Data)
	mint.EncodeInto(mintRef.Data)
	return nil
}

func (p *proc) closeAccount() error {
	srcRef, err := p.account(0)
	if err != nil {
		return err
	}
	dstRef, err := p.account(1)
	if err != nil {
		return err
	}
	auth, err := p.account(2)
	if err != nil {
		return err
	}
	if srcRef.Key == dstRef.Key {
		return runtime.ErrInvalidAccountData
	}
	src, err := p.unpackAccount(srcRef.Data)
	if err != nil {
		if p.t22 && errors.Is(err, runtime.ErrInvalidAccountData) {
			if _, merr := p.unpackMint(srcRef.Data); merr == nil {
				p.ctx.Log("Error: closing Token-2022 mints is not supported by the ferry ledger")
			}
		}
		return err
	}
	if src.IsNative == nil && src.Amount != 0 {
		return ErrNonNativeHasBalance
	}
	expected := src.Owner
	if src.CloseAuthority != nil {
		expected = *src.CloseAuthority
	}
	if !ownedBySystemOrIncinerator(src) {
		if err := p.validateOwner(expected, auth, p.rest(3)); err != nil {
			return err
		}
	} else if dstRef.Key != spl.IncineratorID {
		return runtime.ErrInvalidAccountData
	}
	if dstRef.Lamports, err = checkedAdd(dstRef.Lamports, srcRef.Lamports); err != nil {
		return err
	}
	srcRef.Lamports = 0
	// delete_account: hand the account back to the System program, empty.
	srcRef.Owner = runtime.SystemProgramID
	srcRef.Data = []byte{}
	return nil
}

func (p *proc) toggleFreeze(freeze bool) error {
	srcRef, err := p.account(0)
	if err != nil {
		return err
	}
	mintRef, err := p.account(1)
	if err != nil {
		return err
	}
	auth, err := p.account(2)
	if err != nil {
		return err
	}
	src, err := p.unpackAccount(srcRef.Data)
	if err != nil {
		return err
	}
	if freeze == (src.State == spl.StateFrozen) {
		return ErrInvalidState
	}
	if src.IsNative != nil {
		return ErrNativeNotSupported
	}
	if mintRef.Key != src.Mint {
		return ErrMintMismatch
	}
	mint, err := p.unpackMint(mintRef.Data)
	if err != nil {
		return err
	}
	if mint.FreezeAuthority == nil {
		return ErrMintCannotFreeze
	}
	if err := p.validateOwner(*mint.FreezeAuthority, auth, p.rest(3)); err != nil {
		return err
	}
	src.State = spl.StateInitialized
	if freeze {
		src.State = spl.StateFrozen
	}
	src.EncodeInto(srcRef.Data)
	return nil
}

// syncNative sets a wrapped-SOL account's amount to its lamports above
// the rent-exempt reserve. SPL Token keeps the reserve recorded at
// initialization and refuses to lower the amount (InvalidState).
// Token-2022 recomputes the reserve from the current rent (the Rent sysvar
// when passed as an optional second account, else the runtime's) and
// stores it, and takes the new amount whatever it is.
func (p *proc) syncNative() error {
	ref, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.checkOwner(ref); err != nil {
		return err
	}
	var reserve uint64
	if p.t22 {
		rent := p.ctx.Env().Rent
		if p.ctx.NumAccounts() > 1 {
			if rent, err = p.rentFromAccount(1); err != nil {
				return err
			}
		}
		reserve = rent.MinimumBalance(len(ref.Data))
	}
	a, err := p.unpackAccount(ref.Data)
	if err != nil {
		return err
	}
	if a.IsNative == nil {
		return ErrNonNativeNotSupported
	}
	if !p.t22 {
		reserve = *a.IsNative
	}
	amount, err := checkedSub(ref.Lamports, reserve)
	if err != nil {
		return err
	}
	if !p.t22 && amount < a.Amount {
		return ErrInvalidState
	}
	a.IsNative, a.Amount = &reserve, amount
	a.EncodeInto(ref.Data)
	return nil
}

func (p *proc) getAccountDataSize(exts []uint16) error {
	for _, t := range exts {
		if !accountExtensionTypes[t] {
			if int(t) < len(extensionNames) {
				return ErrExtensionTypeMismatch
			}
			return runtime.ErrInvalidInstructionData
		}
		if t != extImmutableOwner {
			p.ctx.Logf("Error: Token-2022 extension %s is not supported by the ferry ledger", extensionName(t))
			return runtime.ErrInvalidInstructionData
		}
	}
	mint, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.checkOwner(mint); err != nil {
		return err
	}
	if _, err := p.unpackMint(mint.Data); err != nil {
		return ErrInvalidMint
	}
	size := spl.TokenAccountSize
	if p.t22 {
		size = accountLen(exts)
	}
	return p.ctx.SetReturnData(binary.LittleEndian.AppendUint64(nil, uint64(size)))
}

func (p *proc) initializeImmutableOwner() error {
	ref, err := p.account(0)
	if err != nil {
		return err
	}
	if _, err := p.unpackUninitializedAccount(ref.Data); err != nil {
		return err
	}
	if !p.t22 {
		p.ctx.Log("Please upgrade to SPL Token 2022 for immutable owner support")
		return nil
	}
	// init_extension::<ImmutableOwner>: reuse an existing entry, else take
	// the first free TLV slot; there must be room for the 4-byte header.
	if len(ref.Data) <= tlvOffset {
		return runtime.ErrInvalidAccountData
	}
	tlv := ref.Data[tlvOffset:]
	off := 0
	for off < len(tlv) {
		if len(tlv) < off+tlvHeaderLen {
			return runtime.ErrInvalidAccountData
		}
		t := binary.LittleEndian.Uint16(tlv[off:])
		if t == extImmutableOwner {
			return nil
		}
		if t == extUninitialized {
			break
		}
		if !accountExtensionTypes[t] {
			return runtime.Custom(21) // ExtensionBaseMismatch
		}
		off += tlvHeaderLen + int(binary.LittleEndian.Uint16(tlv[off+2:]))
	}
	if len(tlv) < off+tlvHeaderLen {
		return runtime.ErrInvalidAccountData
	}
	binary.LittleEndian.PutUint16(tlv[off:], extImmutableOwner)
	binary.LittleEndian.PutUint16(tlv[off+2:], 0)
	return nil
}

func (p *proc) amountToUiAmount(amount uint64) error {
	mintRef, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.checkOwner(mintRef); err != nil {
		return err
	}
	mint, err := p.unpackMint(mintRef.Data)
	if err != nil {
		return ErrInvalidMint
	}
	return p.ctx.SetReturnData([]byte(spl.UIAmountString(amount, mint.Decimals)))
}

func (p *proc) uiAmountToAmount(ui string) error {
	mintRef, err := p.account(0)
	if err != nil {
		return err
	}
	if err := p.checkOwner(mintRef); err != nil {
		return err
	}
	mint, err := p.unpackMint(mintRef.Data)
	if err != nil {
		return ErrInvalidMint
	}
	amount, err := ParseUiAmount(ui, mint.Decimals)
	if err != nil {
		return err
	}
	return p.ctx.SetReturnData(binary.LittleEndian.AppendUint64(nil, amount))
}
