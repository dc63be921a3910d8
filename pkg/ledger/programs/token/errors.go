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
	CodeExtensionTypeMismatch                  = 20
	CodeExtensionBaseMismatch                  = 21
	CodeExtensionAlreadyInitialized            = 22
	CodeMintHasSupply                          = 28
	CodeNoAuthorityExists                      = 29
	CodeTransferFeeExceedsMaximum              = 30
	CodeMintRequiredForTransfer                = 31
	CodeFeeMismatch                            = 32
	CodeImmutableOwner                         = 34
	CodeAccountHasWithheldTransferFees         = 35
	CodeNoMemo                                 = 36
	CodeNonTransferable                        = 37
	CodeNonTransferableNeedsImmutableOwnership = 38
	CodeCpiGuardSettingsLocked                 = 41
	CodeCpiGuardTransferBlocked                = 42
	CodeCpiGuardBurnBlocked                    = 43
	CodeCpiGuardCloseAccountBlocked            = 44
	CodeCpiGuardApproveBlocked                 = 45
	CodeCpiGuardSetAuthorityBlocked            = 46
	CodeCpiGuardOwnerChangeBlocked             = 47
	CodeExtensionNotFound                      = 48
	CodeInvalidExtensionCombination            = 51
	CodeInvalidLengthForAlloc                  = 52
	CodeInvalidScale                           = 66
	CodeMintPaused                             = 67
)

// Token-metadata and token-group interface errors (their custom codes
// start at fixed hash-derived bases).
const (
	CodeMetadataIncorrectAccount         = 901_952_957
	CodeMetadataMintHasNoMintAuthority   = 901_952_958
	CodeMetadataIncorrectMintAuthority   = 901_952_959
	CodeMetadataIncorrectUpdateAuthority = 901_952_960
	CodeMetadataImmutable                = 901_952_961
	CodeMetadataKeyNotFound              = 901_952_962

	CodeGroupSizeExceedsNewMaxSize       = 3_406_457_176
	CodeGroupSizeExceedsMaxSize          = 3_406_457_177
	CodeGroupImmutable                   = 3_406_457_178
	CodeGroupIncorrectMintAuthority      = 3_406_457_179
	CodeGroupIncorrectUpdateAuthority    = 3_406_457_180
	CodeGroupMemberAccountIsGroupAccount = 3_406_457_181
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

	ErrExtensionBaseMismatch                  = runtime.Custom(CodeExtensionBaseMismatch)
	ErrExtensionAlreadyInitialized            = runtime.Custom(CodeExtensionAlreadyInitialized)
	ErrMintHasSupply                          = runtime.Custom(CodeMintHasSupply)
	ErrNoAuthorityExists                      = runtime.Custom(CodeNoAuthorityExists)
	ErrTransferFeeExceedsMaximum              = runtime.Custom(CodeTransferFeeExceedsMaximum)
	ErrMintRequiredForTransfer                = runtime.Custom(CodeMintRequiredForTransfer)
	ErrFeeMismatch                            = runtime.Custom(CodeFeeMismatch)
	ErrAccountHasWithheldTransferFees         = runtime.Custom(CodeAccountHasWithheldTransferFees)
	ErrNoMemo                                 = runtime.Custom(CodeNoMemo)
	ErrNonTransferable                        = runtime.Custom(CodeNonTransferable)
	ErrNonTransferableNeedsImmutableOwnership = runtime.Custom(CodeNonTransferableNeedsImmutableOwnership)
	ErrCpiGuardSettingsLocked                 = runtime.Custom(CodeCpiGuardSettingsLocked)
	ErrCpiGuardTransferBlocked                = runtime.Custom(CodeCpiGuardTransferBlocked)
	ErrCpiGuardBurnBlocked                    = runtime.Custom(CodeCpiGuardBurnBlocked)
	ErrCpiGuardCloseAccountBlocked            = runtime.Custom(CodeCpiGuardCloseAccountBlocked)
	ErrCpiGuardApproveBlocked                 = runtime.Custom(CodeCpiGuardApproveBlocked)
	ErrCpiGuardSetAuthorityBlocked            = runtime.Custom(CodeCpiGuardSetAuthorityBlocked)
	ErrCpiGuardOwnerChangeBlocked             = runtime.Custom(CodeCpiGuardOwnerChangeBlocked)
	ErrExtensionNotFound                      = runtime.Custom(CodeExtensionNotFound)
	ErrInvalidExtensionCombination            = runtime.Custom(CodeInvalidExtensionCombination)
	ErrInvalidLengthForAlloc                  = runtime.Custom(CodeInvalidLengthForAlloc)
	ErrInvalidScale                           = runtime.Custom(CodeInvalidScale)
	ErrMintPaused                             = runtime.Custom(CodeMintPaused)
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

	CodeExtensionBaseMismatch:                  "Error: Extension does not match the base type provided",
	CodeExtensionAlreadyInitialized:            "Error: Extension already initialized on this account",
	CodeMintHasSupply:                          "Error: Mint has non-zero supply. Burn all tokens before closing the mint",
	CodeNoAuthorityExists:                      "Error: No authority exists to perform the desired operation",
	CodeTransferFeeExceedsMaximum:              "Error: Transfer fee exceeds maximum of 10,000 basis points",
	CodeMintRequiredForTransfer:                "Mint required for this account to transfer tokens, use `transfer_checked` or `transfer_checked_with_fee`",
	CodeFeeMismatch:                            "Calculated fee does not match expected fee",
	CodeAccountHasWithheldTransferFees:         "Error: An account can only be closed if its withheld fee balance is zero, harvest fees to the mint and try again",
	CodeNoMemo:                                 "Error: No memo in previous instruction; required for recipient to receive a transfer",
	CodeNonTransferable:                        "Error: Transfer is disabled for this mint",
	CodeNonTransferableNeedsImmutableOwnership: "Error: Non-transferable tokens can't be minted to an account without immutable ownership",
	CodeCpiGuardSettingsLocked:                 "Error: CPI Guard cannot be enabled or disabled in CPI",
	CodeCpiGuardTransferBlocked:                "Error: CPI Guard is enabled, and a program attempted to transfer user funds without using a delegate",
	CodeCpiGuardBurnBlocked:                    "Error: CPI Guard is enabled, and a program attempted to burn user funds without using a delegate",
	CodeCpiGuardCloseAccountBlocked:            "Error: CPI Guard is enabled, and a program attempted to close an account without returning lamports to owner",
	CodeCpiGuardApproveBlocked:                 "Error: CPI Guard is enabled, and a program attempted to approve a delegate",
	CodeCpiGuardSetAuthorityBlocked:            "Error: CPI Guard is enabled, and a program attempted to add or change an authority",
	CodeCpiGuardOwnerChangeBlocked:             "Error: Account ownership cannot be changed while CPI Guard is enabled",
	CodeExtensionNotFound:                      "Error: Extension not found in account data",
	CodeInvalidExtensionCombination:            "Error: Mint or account is initialized to an invalid combination of extensions",
	CodeInvalidLengthForAlloc:                  "Error: Extension allocation with overwrite must use the same length",
	CodeInvalidScale:                           "Error: Invalid scale for scaled ui amount",
	CodeMintPaused:                             "Error: Transferring, minting, and burning is paused on this mint",
	CodeMetadataIncorrectAccount:               "Incorrect account provided",
	CodeMetadataMintHasNoMintAuthority:         "Mint has no mint authority",
	CodeMetadataIncorrectMintAuthority:         "Incorrect mint authority has signed the instruction",
	CodeMetadataIncorrectUpdateAuthority:       "Incorrect metadata update authority has signed the instruction",
	CodeMetadataImmutable:                      "Token metadata has no update authority",
	CodeMetadataKeyNotFound:                    "Key not found in metadata account",
	CodeGroupSizeExceedsNewMaxSize:             "Size is greater than proposed max size",
	CodeGroupSizeExceedsMaxSize:                "Size is greater than max size",
	CodeGroupImmutable:                         "Group is immutable",
	CodeGroupIncorrectMintAuthority:            "Incorrect mint authority has signed the instruction",
	CodeGroupIncorrectUpdateAuthority:          "Incorrect update authority has signed the instruction",
	CodeGroupMemberAccountIsGroupAccount:       "Member account should not be the same as the group account",
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
