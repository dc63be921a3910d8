package runtime

import (
	"encoding/json"
	"fmt"
)

// InstructionError is Agave's InstructionError: either a named variant or a
// program-specific Custom code. Its JSON form is the variant name as a string,
// or {"Custom":n}.
type InstructionError struct {
	Name string // variant name, e.g. "InvalidAccountData"; "Custom" for Custom
	Code uint32 // the custom code when Name == "Custom"
	// Detail, when set, replaces the display text in the program's
	// "failed:" log line (a panicking program's message, BorshIoError
	// text); it is not part of the error's identity.
	Detail string
}

// Custom returns the program-specific error Custom(code).
func Custom(code uint32) *InstructionError { return &InstructionError{Name: "Custom", Code: code} }

// Named instruction errors, with Agave's variant names.
var (
	ErrGenericError                   = named("GenericError")
	ErrInvalidArgument                = named("InvalidArgument")
	ErrInvalidInstructionData         = named("InvalidInstructionData")
	ErrInvalidAccountData             = named("InvalidAccountData")
	ErrAccountDataTooSmall            = named("AccountDataTooSmall")
	ErrInsufficientFunds              = named("InsufficientFunds")
	ErrIncorrectProgramID             = named("IncorrectProgramId")
	ErrMissingRequiredSignature       = named("MissingRequiredSignature")
	ErrAccountAlreadyInitialized      = named("AccountAlreadyInitialized")
	ErrUninitializedAccount           = named("UninitializedAccount")
	ErrUnbalancedInstruction          = named("UnbalancedInstruction")
	ErrModifiedProgramID              = named("ModifiedProgramId")
	ErrExternalAccountLamportSpend    = named("ExternalAccountLamportSpend")
	ErrExternalAccountDataModified    = named("ExternalAccountDataModified")
	ErrReadonlyLamportChange          = named("ReadonlyLamportChange")
	ErrReadonlyDataModified           = named("ReadonlyDataModified")
	ErrExecutableModified             = named("ExecutableModified")
	ErrNotEnoughAccountKeys           = named("NotEnoughAccountKeys")
	ErrAccountDataSizeChanged         = named("AccountDataSizeChanged")
	ErrAccountNotExecutable           = named("AccountNotExecutable")
	ErrUnsupportedProgramID           = named("UnsupportedProgramId")
	ErrCallDepth                      = named("CallDepth")
	ErrMissingAccount                 = named("MissingAccount")
	ErrReentrancyNotAllowed           = named("ReentrancyNotAllowed")
	ErrMaxSeedLengthExceeded          = named("MaxSeedLengthExceeded")
	ErrInvalidSeeds                   = named("InvalidSeeds")
	ErrInvalidRealloc                 = named("InvalidRealloc")
	ErrComputationalBudgetExceeded    = named("ComputationalBudgetExceeded")
	ErrPrivilegeEscalation            = named("PrivilegeEscalation")
	ErrImmutable                      = named("Immutable")
	ErrIncorrectAuthority             = named("IncorrectAuthority")
	ErrAccountNotRentExempt           = named("AccountNotRentExempt")
	ErrInvalidAccountOwner            = named("InvalidAccountOwner")
	ErrArithmeticOverflow             = named("ArithmeticOverflow")
	ErrUnsupportedSysvar              = named("UnsupportedSysvar")
	ErrIllegalOwner                   = named("IllegalOwner")
	ErrBuiltinMustConsumeComputeUnits = named("BuiltinProgramsMustConsumeComputeUnits")
	ErrBorshIoError                   = named("BorshIoError")
	ErrProgramFailedToComplete        = named("ProgramFailedToComplete")
	ErrExecutableLamportChange        = named("ExecutableLamportChange")
	ErrExecutableDataModified         = named("ExecutableDataModified")
)

func named(n string) *InstructionError { return &InstructionError{Name: n} }

var instructionErrorText = map[string]string{
	"GenericError":                           "generic instruction error",
	"InvalidArgument":                        "invalid program argument",
	"InvalidInstructionData":                 "invalid instruction data",
	"InvalidAccountData":                     "invalid account data for instruction",
	"AccountDataTooSmall":                    "account data too small for instruction",
	"InsufficientFunds":                      "insufficient funds for instruction",
	"IncorrectProgramId":                     "incorrect program id for instruction",
	"MissingRequiredSignature":               "missing required signature for instruction",
	"AccountAlreadyInitialized":              "instruction requires an uninitialized account",
	"UninitializedAccount":                   "instruction requires an initialized account",
	"UnbalancedInstruction":                  "sum of account balances before and after instruction do not match",
	"ModifiedProgramId":                      "instruction illegally modified the program id of an account",
	"ExternalAccountLamportSpend":            "instruction spent from the balance of an account it does not own",
	"ExternalAccountDataModified":            "instruction modified data of an account it does not own",
	"ReadonlyLamportChange":                  "instruction changed the balance of a read-only account",
	"ReadonlyDataModified":                   "instruction modified data of a read-only account",
	"ExecutableModified":                     "instruction changed executable bit of an account",
	"NotEnoughAccountKeys":                   "insufficient account keys for instruction",
	"AccountDataSizeChanged":                 "program other than the account's owner changed the size of the account data",
	"AccountNotExecutable":                   "instruction expected an executable account",
	"UnsupportedProgramId":                   "Unsupported program id",
	"CallDepth":                              "Cross-program invocation call depth too deep",
	"MissingAccount":                         "An account required by the instruction is missing",
	"ReentrancyNotAllowed":                   "Cross-program invocation reentrancy not allowed for this instruction",
	"MaxSeedLengthExceeded":                  "Length of the seed is too long for address generation",
	"InvalidSeeds":                           "Provided seeds do not result in a valid address",
	"InvalidRealloc":                         "Failed to reallocate account data",
	"ComputationalBudgetExceeded":            "Computational budget exceeded",
	"PrivilegeEscalation":                    "Cross-program invocation with unauthorized signer or writable account",
	"Immutable":                              "Account is immutable",
	"IncorrectAuthority":                     "Incorrect authority provided",
	"AccountNotRentExempt":                   "An account does not have enough lamports to be rent-exempt",
	"InvalidAccountOwner":                    "Invalid account owner",
	"ArithmeticOverflow":                     "Program arithmetic overflowed",
	"UnsupportedSysvar":                      "Unsupported sysvar",
	"IllegalOwner":                           "Provided owner is not allowed",
	"BuiltinProgramsMustConsumeComputeUnits": "Builtin programs must consume compute units",
	"BorshIoError":                           "Failed to serialize or deserialize account data",
	"ProgramFailedToComplete":                "Program failed to complete",
	"ExecutableLamportChange":                "instruction changed the balance of an executable account",
	"ExecutableDataModified":                 "instruction changed executable accounts data",
}

// Error returns Agave's display text, e.g. "custom program error: 0x1",
// or the Detail.
func (e *InstructionError) Error() string {
	if e.Detail != "" {
		return e.Detail
	}
	if e.Name == "Custom" {
		return fmt.Sprintf("custom program error: 0x%x", e.Code)
	}
	if t, ok := instructionErrorText[e.Name]; ok {
		return t
	}
	return e.Name
}

// Is compares variants, so errors.Is(err, ErrInvalidAccountData) works and
// Custom errors match by code.
func (e *InstructionError) Is(target error) bool {
	t, ok := target.(*InstructionError)
	return ok && t.Name == e.Name && t.Code == e.Code
}

// MarshalJSON writes "Name" or {"Custom":n}.
func (e *InstructionError) MarshalJSON() ([]byte, error) {
	if e.Name == "Custom" {
		return []byte(fmt.Sprintf(`{"Custom":%d}`, e.Code)), nil
	}
	return json.Marshal(e.Name)
}

// UnmarshalJSON reads the forms MarshalJSON writes.
func (e *InstructionError) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err == nil {
		*e = InstructionError{Name: name}
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return fmt.Errorf("instruction error: %w", err)
	}
	if c, ok := obj["Custom"]; ok {
		var code uint32
		if err := json.Unmarshal(c, &code); err != nil {
			return fmt.Errorf("instruction error: %w", err)
		}
		*e = InstructionError{Name: "Custom", Code: code}
		return nil
	}
	for k := range obj { // e.g. {"BorshIoError":"..."} from older nodes
		*e = InstructionError{Name: k}
		return nil
	}
	return fmt.Errorf("instruction error: empty object")
}

// TxError is Agave's TransactionError. Unit variants carry only Kind;
// "InstructionError" carries Index and Instruction; "InsufficientFundsForRent",
// "ProgramExecutionTemporarilyRestricted" carry AccountIndex; and
// "DuplicateInstruction" carries Index.
type TxError struct {
	Kind         string
	Index        uint8
	Instruction  *InstructionError
	AccountIndex uint8
}

// Transaction-level errors with Agave's variant names.
var (
	ErrAccountInUse               = &TxError{Kind: "AccountInUse"}
	ErrAccountLoadedTwice         = &TxError{Kind: "AccountLoadedTwice"}
	ErrAccountNotFound            = &TxError{Kind: "AccountNotFound"}
	ErrProgramAccountNotFound     = &TxError{Kind: "ProgramAccountNotFound"}
	ErrInsufficientFundsForFee    = &TxError{Kind: "InsufficientFundsForFee"}
	ErrInvalidAccountForFee       = &TxError{Kind: "InvalidAccountForFee"}
	ErrAlreadyProcessed           = &TxError{Kind: "AlreadyProcessed"}
	ErrBlockhashNotFound          = &TxError{Kind: "BlockhashNotFound"}
	ErrMissingSignatureForFee     = &TxError{Kind: "MissingSignatureForFee"}
	ErrInvalidAccountIndex        = &TxError{Kind: "InvalidAccountIndex"}
	ErrSignatureFailure           = &TxError{Kind: "SignatureFailure"}
	ErrInvalidProgramForExecution = &TxError{Kind: "InvalidProgramForExecution"}
	ErrSanitizeFailure            = &TxError{Kind: "SanitizeFailure"}
	ErrUnsupportedVersion         = &TxError{Kind: "UnsupportedVersion"}
	ErrInvalidWritableAccount     = &TxError{Kind: "InvalidWritableAccount"}
	ErrTooManyAccountLocks        = &TxError{Kind: "TooManyAccountLocks"}
	ErrCallChainTooDeep           = &TxError{Kind: "CallChainTooDeep"}

	// Address-table loading errors of v0 messages.
	ErrAddressLookupTableNotFound     = &TxError{Kind: "AddressLookupTableNotFound"}
	ErrInvalidAddressLookupTableOwner = &TxError{Kind: "InvalidAddressLookupTableOwner"}
	ErrInvalidAddressLookupTableData  = &TxError{Kind: "InvalidAddressLookupTableData"}
	ErrInvalidAddressLookupTableIndex = &TxError{Kind: "InvalidAddressLookupTableIndex"}
)

// InstructionFailed wraps an instruction error at top-level index i.
func InstructionFailed(i int, e *InstructionError) *TxError {
	return &TxError{Kind: "InstructionError", Index: uint8(i), Instruction: e}
}

// InsufficientFundsForRent reports account i left below the rent-exempt minimum.
func InsufficientFundsForRent(i int) *TxError {
	return &TxError{Kind: "InsufficientFundsForRent", AccountIndex: uint8(i)}
}

var txErrorText = map[string]string{
	"AccountInUse":                       "Account in use",
	"AccountLoadedTwice":                 "Account loaded twice",
	"AccountNotFound":                    "Attempt to debit an account but found no record of a prior credit.",
	"ProgramAccountNotFound":             "Attempt to load a program that does not exist",
	"InsufficientFundsForFee":            "Insufficient funds for fee",
	"InvalidAccountForFee":               "This account may not be used to pay transaction fees",
	"AlreadyProcessed":                   "This transaction has already been processed",
	"BlockhashNotFound":                  "Blockhash not found",
	"CallChainTooDeep":                   "Loader call chain is too deep",
	"MissingSignatureForFee":             "Transaction requires a fee but has no signature present",
	"InvalidAccountIndex":                "Transaction contains an invalid account reference",
	"SignatureFailure":                   "Transaction did not pass signature verification",
	"InvalidProgramForExecution":         "This program may not be used for executing instructions",
	"SanitizeFailure":                    "Transaction failed to sanitize accounts offsets correctly",
	"ClusterMaintenance":                 "Transactions are currently disabled due to cluster maintenance",
	"UnsupportedVersion":                 "Transaction version is unsupported",
	"InvalidWritableAccount":             "Transaction loads a writable account that cannot be written",
	"TooManyAccountLocks":                "Transaction locked too many accounts",
	"AddressLookupTableNotFound":         "Transaction loads an address table account that doesn't exist",
	"InvalidAddressLookupTableOwner":     "Transaction loads an address table account with an invalid owner",
	"InvalidAddressLookupTableData":      "Transaction loads an address table account with invalid data",
	"InvalidAddressLookupTableIndex":     "Transaction address table lookup uses an invalid index",
	"InvalidLoadedAccountsDataSizeLimit": "LoadedAccountsDataSizeLimit set for transaction must be greater than 0.",
	"MaxLoadedAccountsDataSizeExceeded":  "Transaction exceeded max loaded accounts data size cap",
	"InvalidRentPayingAccount":           "Transaction leaves an account with a lower balance than rent-exempt minimum",
}

// Error returns Agave's display text, as used in -32002 preflight messages.
func (e *TxError) Error() string {
	switch e.Kind {
	case "InstructionError":
		return fmt.Sprintf("Error processing Instruction %d: %s", e.Index, e.Instruction.Error())
	case "InsufficientFundsForRent":
		return fmt.Sprintf("Transaction results in an account (%d) with insufficient funds for rent", e.AccountIndex)
	case "DuplicateInstruction":
		return fmt.Sprintf("Transaction contains a duplicate instruction (%d) that is not allowed", e.Index)
	case "ProgramExecutionTemporarilyRestricted":
		return fmt.Sprintf("Execution of the program referenced by account at index %d is temporarily restricted.", e.AccountIndex)
	}
	if t, ok := txErrorText[e.Kind]; ok {
		return t
	}
	return e.Kind
}

// Is compares by variant and payload.
func (e *TxError) Is(target error) bool {
	t, ok := target.(*TxError)
	if !ok || t.Kind != e.Kind {
		return false
	}
	switch e.Kind {
	case "InstructionError":
		return t.Index == e.Index && (t.Instruction == nil || e.Instruction.Is(t.Instruction))
	case "InsufficientFundsForRent", "ProgramExecutionTemporarilyRestricted":
		return t.AccountIndex == e.AccountIndex
	case "DuplicateInstruction":
		return t.Index == e.Index
	}
	return true
}

// MarshalJSON writes Agave's serde shape.
func (e *TxError) MarshalJSON() ([]byte, error) {
	switch e.Kind {
	case "InstructionError":
		inner, err := e.Instruction.MarshalJSON()
		if err != nil {
			return nil, err
		}
		return []byte(fmt.Sprintf(`{"InstructionError":[%d,%s]}`, e.Index, inner)), nil
	case "InsufficientFundsForRent", "ProgramExecutionTemporarilyRestricted":
		return []byte(fmt.Sprintf(`{%q:{"account_index":%d}}`, e.Kind, e.AccountIndex)), nil
	case "DuplicateInstruction":
		return []byte(fmt.Sprintf(`{"DuplicateInstruction":%d}`, e.Index)), nil
	}
	return json.Marshal(e.Kind)
}

// UnmarshalJSON reads the shapes MarshalJSON writes.
func (e *TxError) UnmarshalJSON(b []byte) error {
	var kind string
	if err := json.Unmarshal(b, &kind); err == nil {
		*e = TxError{Kind: kind}
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || len(obj) != 1 {
		return fmt.Errorf("transaction error: unexpected JSON %s", b)
	}
	for k, v := range obj {
		*e = TxError{Kind: k}
		switch k {
		case "InstructionError":
			var pair []json.RawMessage
			if err := json.Unmarshal(v, &pair); err != nil || len(pair) != 2 {
				return fmt.Errorf("transaction error: bad InstructionError %s", v)
			}
			if err := json.Unmarshal(pair[0], &e.Index); err != nil {
				return fmt.Errorf("transaction error: %w", err)
			}
			e.Instruction = new(InstructionError)
			return e.Instruction.UnmarshalJSON(pair[1])
		case "InsufficientFundsForRent", "ProgramExecutionTemporarilyRestricted":
			var a struct {
				AccountIndex uint8 `json:"account_index"`
			}
			if err := json.Unmarshal(v, &a); err != nil {
				return fmt.Errorf("transaction error: %w", err)
			}
			e.AccountIndex = a.AccountIndex
		case "DuplicateInstruction":
			if err := json.Unmarshal(v, &e.Index); err != nil {
				return fmt.Errorf("transaction error: %w", err)
			}
		}
	}
	return nil
}
