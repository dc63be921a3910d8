package token

import "github.com/ferry-sh/ferry/pkg/ledger/runtime"

// TokenError custom codes (spl-token interface error.rs; Token-2022 shares
// 0–19 and adds more).
const (
	CodeNotRentExempt                  = 0
	CodeInsufficientFunds              = 1
	CodeInvalidMint                    = 2
	CodeMintMismatch                   = 3
	CodeOwnerMismatch                  = 4
	CodeFixedSupply                    = 5
	CodeAlreadyInUse                   = 6
	CodeInvalidNumberOfProvidedSigners = 7
	CodeInvalidNumberOfRequiredSigners = 8
	CodeUninitializedState             = 9
	CodeNativeNotSupported             = 10
	CodeNonNativeHasBalance            = 11
	CodeInvalidInstruction             = 12
	CodeInvalidState                   = 13
	CodeOverflow                       = 14
	CodeAuthorityTypeNotSupported      = 15
	CodeMintCannotFreeze               = 16
	CodeAccountFrozen                  = 17
	CodeMintDecimalsMismatch           = 18
	CodeNonNativeNotSupported          = 19
	// Token-2022 only.
	CodeExtensionTypeMismatch = 20
	CodeImmutableOwner        = 34
)

// Token program errors as runtime instruction errors.
var (
	ErrNotRentExempt                  = runtime.Custom(CodeNotRentExempt)
	ErrInsufficientFunds              = runtime.Custom(CodeInsufficientFunds)
	ErrInvalidMint                    = runtime.Custom(CodeInvalidMint)
	ErrMintMismatch                   = runtime.Custom(CodeMintMismatch)
	ErrOwnerMismatch                  = runtime.Custom(CodeOwnerMismatch)
	ErrFixedSupply                    = runtime.Custom(CodeFixedSupply)
	ErrAlreadyInUse                   = runtime.Custom(CodeAlreadyInUse)
	ErrInvalidNumberOfProvidedSigners = runtime.Custom(CodeInvalidNumberOfProvidedSigners)
	ErrInvalidNumberOfRequiredSigners = runtime.Custom(CodeInvalidNumberOfRequiredSigners)
	ErrUninitializedState             = runtime.Custom(CodeUninitializedState)
	ErrNativeNotSupported             = runtime.Custom(CodeNativeNotSupported)
	ErrNonNativeHasBalance            = runtime.Custom(CodeNonNativeHasBalance)
	ErrInvalidInstruction             = runtime.Custom(CodeInvalidInstruction)
	ErrInvalidState                   = runtime.Custom(CodeInvalidState)
	ErrOverflow                       = runtime.Custom(CodeOverflow)
	ErrAuthorityTypeNotSupported      = runtime.Custom(CodeAuthorityTypeNotSupported)
	ErrMintCannotFreeze               = runtime.Custom(CodeMintCannotFreeze)
	ErrAccountFrozen                  = runtime.Custom(CodeAccountFrozen)
	ErrMintDecimalsMismatch           = runtime.Custom(CodeMintDecimalsMismatch)
	ErrNonNativeNotSupported          = runtime.Custom(CodeNonNativeNotSupported)
	ErrExtensionTypeMismatch          = runtime.Custom(CodeExtensionTypeMismatch)
	ErrImmutableOwner                 = runtime.Custom(CodeImmutableOwner)
)

// errorText is what the programs' entrypoints log for each TokenError
// (ToStr), e.g. "Error: insufficient funds".
var errorText = map[uint32]string{
	CodeNotRentExempt:                  "Error: Lamport balance below rent-exempt threshold",
	CodeInsufficientFunds:              "Error: insufficient funds",
	CodeInvalidMint:                    "Error: Invalid Mint",
	CodeMintMismatch:                   "Error: Account not associated with this Mint",
	CodeOwnerMismatch:                  "Error: owner does not match",
	CodeFixedSupply:                    "Error: the total supply of this token is fixed",
	CodeAlreadyInUse:                   "Error: account or token already in use",
	CodeInvalidNumberOfProvidedSigners: "Error: Invalid number of provided signers",
	CodeInvalidNumberOfRequiredSigners: "Error: Invalid number of required signers",
	CodeUninitializedState:             "Error: State is uninitialized",
	CodeNativeNotSupported:             "Error: Instruction does not support native tokens",
	CodeNonNativeHasBalance:            "Error: Non-native account can only be closed if its balance is zero",
	CodeInvalidInstruction:             "Error: Invalid instruction",
	CodeInvalidState:                   "Error: Invalid account state for operation",
	CodeOverflow:                       "Error: Operation overflowed",
	CodeAuthorityTypeNotSupported:      "Error: Account does not support specified authority type",
	CodeMintCannotFreeze:               "Error: This token mint cannot freeze accounts",
	CodeAccountFrozen:                  "Error: Account is frozen",
	CodeMintDecimalsMismatch:           "Error: decimals different from the Mint decimals",
	CodeNonNativeNotSupported:          "Error: Instruction does not support non-native tokens",
	CodeExtensionTypeMismatch:          "Error: New extension type does not match already existing extensions",
	CodeImmutableOwner:                 "The owner authority cannot be changed",
}

// ErrorLog is the line the token programs log before failing with err:
// the TokenError text for custom codes, "Error: <Variant>" for the
// generic program errors (solana-program-error ToStr).
func ErrorLog(err *runtime.InstructionError) string {
	if err.Name == "Custom" {
		if t, ok := errorText[err.Code]; ok {
			return t
		}
		return "Error: Unknown"
	}
	return "Error: " + err.Name
}
