package spl

import (
	"fmt"
	"unicode/utf8"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TokenOp is an SPL Token instruction discriminant (first data byte).
type TokenOp uint8

// SPL Token instructions; Token-2022 shares 0–24 and adds extensions above.
const (
	TokenInitializeMintOp TokenOp = iota
	TokenInitializeAccountOp
	TokenInitializeMultisigOp
	TokenTransferOp
	TokenApproveOp
	TokenRevokeOp
	TokenSetAuthorityOp
	TokenMintToOp
	TokenBurnOp
	TokenCloseAccountOp
	TokenFreezeAccountOp
	TokenThawAccountOp
	TokenTransferCheckedOp
	TokenApproveCheckedOp
	TokenMintToCheckedOp
	TokenBurnCheckedOp
	TokenInitializeAccount2Op
	TokenSyncNativeOp
	TokenInitializeAccount3Op
	TokenInitializeMultisig2Op
	TokenInitializeMint2Op
	TokenGetAccountDataSizeOp
	TokenInitializeImmutableOwnerOp
	TokenAmountToUiAmountOp
	TokenUiAmountToAmountOp
)

var tokenNames = [...]string{"InitializeMint", "InitializeAccount", "InitializeMultisig", "Transfer", "Approve",
	"Revoke", "SetAuthority", "MintTo", "Burn", "CloseAccount", "FreezeAccount", "ThawAccount", "TransferChecked",
	"ApproveChecked", "MintToChecked", "BurnChecked", "InitializeAccount2", "SyncNative", "InitializeAccount3",
	"InitializeMultisig2", "InitializeMint2", "GetAccountDataSize", "InitializeImmutableOwner",
	"AmountToUiAmount", "UiAmountToAmount"}

// token2022Names names the Token-2022 extension instructions (25..).
var token2022Names = [...]string{"InitializeMintCloseAuthority", "TransferFeeExtension",
	"ConfidentialTransferExtension", "DefaultAccountStateExtension", "Reallocate", "MemoTransferExtension",
	"CreateNativeMint", "InitializeNonTransferableMint", "InterestBearingMintExtension",
	"CpiGuardExtension", "InitializePermanentDelegate", "TransferHookExtension",
	"ConfidentialTransferFeeExtension", "WithdrawExcessLamports", "MetadataPointerExtension",
	"GroupPointerExtension", "GroupMemberPointerExtension", "ConfidentialMintBurnExtension",
	"ScaledUiAmountExtension", "PausableExtension", "UnwrapLamports", "PermissionedBurnExtension"}

// String is the instruction's name, e.g. "TransferChecked".
func (op TokenOp) String() string {
	if int(op) < len(tokenNames) {
		return tokenNames[op]
	}
	if i := int(op) - len(tokenNames); i < len(token2022Names) {
		return token2022Names[i]
	}
	return fmt.Sprintf("TokenInstruction(%d)", uint8(op))
}

// AuthorityType is the SetAuthority target.
type AuthorityType uint8

// Authority types of SetAuthority (core ones).
const (
	AuthorityMintTokens AuthorityType = iota
	AuthorityFreezeAccount
	AuthorityAccountOwner
	AuthorityCloseAccount
)

// TokenInstruction is a decoded SPL Token instruction; only the fields of
// its Op are set. Extension instructions (Op ≥ 25) decode to their Op only.
type TokenInstruction struct {
	Op       TokenOp
	Amount   uint64
	Decimals uint8
	// InitializeMint(2): authorities. SetAuthority: NewAuthority.
	MintAuthority   solana.PublicKey
	FreezeAuthority *solana.PublicKey
	AuthorityType   AuthorityType
	NewAuthority    *solana.PublicKey
	// InitializeAccount2/3: the owner. InitializeMultisig(2): M.
	Owner    solana.PublicKey
	M        uint8
	UiAmount string
}

// optionKey reads an instruction COption<Pubkey>: a 1-byte tag, then the key
// if the tag is 1. (Account state uses 4-byte tags; instructions do not.)
func (d *dec) optionKey() *solana.PublicKey {
	switch d.u8() {
	case 0:
		return nil
	case 1:
		k := d.key()
		return &k
	default:
		d.err = true
		return nil
	}
}

// DecodeToken decodes SPL Token / Token-2022 instruction data. Like the real
// program, it rejects short data but ignores trailing bytes.
func DecodeToken(data []byte) (TokenInstruction, error) {
	if len(data) == 0 {
		return TokenInstruction{}, fmt.Errorf("token: %w: empty data", ErrInvalidInstruction)
	}
	d := &dec{b: data[1:]}
	in := TokenInstruction{Op: TokenOp(data[0])}
	switch in.Op {
	case TokenInitializeMintOp, TokenInitializeMint2Op:
		in.Decimals, in.MintAuthority, in.FreezeAuthority = d.u8(), d.key(), d.optionKey()
	case TokenInitializeAccountOp, TokenRevokeOp, TokenCloseAccountOp, TokenFreezeAccountOp, TokenThawAccountOp,
		TokenSyncNativeOp, TokenGetAccountDataSizeOp, TokenInitializeImmutableOwnerOp:
	case TokenInitializeMultisigOp, TokenInitializeMultisig2Op:
		in.M = d.u8()
	case TokenTransferOp, TokenApproveOp, TokenMintToOp, TokenBurnOp, TokenAmountToUiAmountOp:
		in.Amount = d.u64()
	case TokenSetAuthorityOp:
		in.AuthorityType, in.NewAuthority = AuthorityType(d.u8()), d.optionKey()
	case TokenTransferCheckedOp, TokenApproveCheckedOp, TokenMintToCheckedOp, TokenBurnCheckedOp:
		in.Amount, in.Decimals = d.u64(), d.u8()
	case TokenInitializeAccount2Op, TokenInitializeAccount3Op:
		in.Owner = d.key()
	case TokenUiAmountToAmountOp:
		if !utf8.Valid(d.b) {
			return in, fmt.Errorf("token %s: %w: not UTF-8", in.Op, ErrInvalidInstruction)
		}
		in.UiAmount = string(d.b)
	default:
		if int(in.Op) >= len(tokenNames)+len(token2022Names) {
			return in, fmt.Errorf("token: %w: unknown instruction %d", ErrInvalidInstruction, data[0])
		}
	}
	if d.err {
		return in, fmt.Errorf("token %s: %w: short data", in.Op, ErrInvalidInstruction)
	}
	return in, nil
}

func tokenIx(program solana.PublicKey, data []byte, metas ...txwire.AccountMeta) txwire.Instruction {
	return txwire.Instruction{ProgramID: program, Accounts: metas, Data: data}
}

func opAmount(op TokenOp, amount uint64) []byte { return le64([]byte{byte(op)}, amount) }

// TokenTransfer is Transfer (opcode 3): source → destination, signed by the
// source's owner or delegate.
func TokenTransfer(program, source, destination, owner solana.PublicKey, amount uint64) txwire.Instruction {
	return tokenIx(program, opAmount(TokenTransferOp, amount),
		txwire.Writable(source), txwire.Writable(destination), txwire.Signer(owner))
}

// TokenTransferChecked is TransferChecked (opcode 12).
func TokenTransferChecked(program, source, mint, destination, owner solana.PublicKey, amount uint64, decimals uint8) txwire.Instruction {
	return tokenIx(program, append(opAmount(TokenTransferCheckedOp, amount), decimals),
		txwire.Writable(source), txwire.Readonly(mint), txwire.Writable(destination), txwire.Signer(owner))
}

// TokenMintTo mints amount to destination, signed by the mint authority.
func TokenMintTo(program, mint, destination, authority solana.PublicKey, amount uint64) txwire.Instruction {
	return tokenIx(program, opAmount(TokenMintToOp, amount),
		txwire.Writable(mint), txwire.Writable(destination), txwire.Signer(authority))
}

// TokenMintToChecked is MintToChecked (opcode 14).
func TokenMintToChecked(program, mint, destination, authority solana.PublicKey, amount uint64, decimals uint8) txwire.Instruction {
	return tokenIx(program, append(opAmount(TokenMintToCheckedOp, amount), decimals),
		txwire.Writable(mint), txwire.Writable(destination), txwire.Signer(authority))
}

// TokenBurn burns amount from account, signed by its owner or delegate.
func TokenBurn(program, account, mint, owner solana.PublicKey, amount uint64) txwire.Instruction {
	return tokenIx(program, opAmount(TokenBurnOp, amount),
		txwire.Writable(account), txwire.Writable(mint), txwire.Signer(owner))
}

// TokenApprove lets delegate move up to amount from source.
func TokenApprove(program, source, delegate, owner solana.PublicKey, amount uint64) txwire.Instruction {
	return tokenIx(program, opAmount(TokenApproveOp, amount),
		txwire.Writable(source), txwire.Readonly(delegate), txwire.Signer(owner))
}

// TokenRevoke clears source's delegate.
func TokenRevoke(program, source, owner solana.PublicKey) txwire.Instruction {
	return tokenIx(program, []byte{byte(TokenRevokeOp)}, txwire.Writable(source), txwire.Signer(owner))
}

// TokenSetAuthority changes an authority of a mint or account; a nil
// newAuthority removes it.
func TokenSetAuthority(program, target, current solana.PublicKey, kind AuthorityType, newAuthority *solana.PublicKey) txwire.Instruction {
	data := []byte{byte(TokenSetAuthorityOp), byte(kind), 0}
	if newAuthority != nil {
		data[2] = 1
		data = append(data, newAuthority[:]...)
	}
	return tokenIx(program, data, txwire.Writable(target), txwire.Signer(current))
}

// TokenCloseAccount closes account, sending its lamports to destination.
func TokenCloseAccount(program, account, destination, owner solana.PublicKey) txwire.Instruction {
	return tokenIx(program, []byte{byte(TokenCloseAccountOp)},
		txwire.Writable(account), txwire.Writable(destination), txwire.Signer(owner))
}

// TokenFreezeAccount freezes account; TokenThawAccount undoes it.
func TokenFreezeAccount(program, account, mint, freezeAuthority solana.PublicKey) txwire.Instruction {
	return tokenIx(program, []byte{byte(TokenFreezeAccountOp)},
		txwire.Writable(account), txwire.Readonly(mint), txwire.Signer(freezeAuthority))
}

// TokenThawAccount thaws a frozen account.
func TokenThawAccount(program, account, mint, freezeAuthority solana.PublicKey) txwire.Instruction {
	return tokenIx(program, []byte{byte(TokenThawAccountOp)},
		txwire.Writable(account), txwire.Readonly(mint), txwire.Signer(freezeAuthority))
}

// TokenSyncNative updates a wrapped-SOL account's amount from its lamports.
func TokenSyncNative(program, account solana.PublicKey) txwire.Instruction {
	return tokenIx(program, []byte{byte(TokenSyncNativeOp)}, txwire.Writable(account))
}

// TokenInitializeMint2 initializes a mint account (no rent sysvar needed).
func TokenInitializeMint2(program, mint solana.PublicKey, decimals uint8, mintAuthority solana.PublicKey, freezeAuthority *solana.PublicKey) txwire.Instruction {
	data := append([]byte{byte(TokenInitializeMint2Op), decimals}, mintAuthority[:]...)
	if freezeAuthority != nil {
		data = append(append(data, 1), freezeAuthority[:]...)
	} else {
		data = append(data, 0)
	}
	return tokenIx(program, data, txwire.Writable(mint))
}

// TokenInitializeAccount3 initializes a token account for mint and owner.
func TokenInitializeAccount3(program, account, mint, owner solana.PublicKey) txwire.Instruction {
	return tokenIx(program, append([]byte{byte(TokenInitializeAccount3Op)}, owner[:]...),
		txwire.Writable(account), txwire.Readonly(mint))
}

// TokenInitializeImmutableOwner marks an uninitialized account's owner as
// immutable (the ATA program does this before InitializeAccount3).
func TokenInitializeImmutableOwner(program, account solana.PublicKey) txwire.Instruction {
	return tokenIx(program, []byte{byte(TokenInitializeImmutableOwnerOp)}, txwire.Writable(account))
}

// TokenGetAccountDataSize asks the program for a token account's size (its
// return data is the size as u64 LE).
func TokenGetAccountDataSize(program, mint solana.PublicKey) txwire.Instruction {
	return tokenIx(program, []byte{byte(TokenGetAccountDataSizeOp)}, txwire.Readonly(mint))
}
