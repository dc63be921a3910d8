// Package txerror explains a Solana TransactionError (the "err" of a
// failed transaction or preflight simulation, e.g.
// {"InstructionError":[0,{"Custom":1}]}) in words: which instruction,
// which program, the error's name and what it means.
package txerror

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/espl"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// Explained is a decoded TransactionError.
type Explained struct {
	// Instruction is the failing instruction's index, -1 for
	// transaction-level errors (fees, blockhash, accounts).
	Instruction int `json:"instruction"`
	// Program is the failing instruction's program (zero when unknown).
	Program solana.PublicKey `json:"program"`
	// ProgramName names it ("SPL Token program").
	ProgramName string `json:"programName,omitempty"`
	// Custom is the custom error code, when the program returned one.
	Custom *uint32 `json:"custom,omitempty"`
	// Name is the error's name: "InsufficientFunds", "BlockhashNotFound".
	Name string `json:"name"`
	// Description says what it means.
	Description string `json:"description,omitempty"`
}

// Text is a one-line explanation: "SPL Token program error
// InsufficientFunds (custom program error 0x1) in instruction 0: the
// account has fewer tokens than the instruction moves".
func (e *Explained) Text() string {
	var b bytes.Buffer
	if e.Instruction < 0 {
		b.WriteString(e.Name)
	} else {
		prog := e.ProgramName
		if prog == "" {
			prog = e.Program.String()
		}
		fmt.Fprintf(&b, "%s error %s", prog, e.Name)
		if e.Custom != nil {
			fmt.Fprintf(&b, " (custom program error 0x%x)", *e.Custom)
		}
		fmt.Fprintf(&b, " in instruction %d", e.Instruction)
	}
	if e.Description != "" {
		b.WriteString(": " + e.Description)
	}
	return b.String()
}

// Explain decodes errJSON (a TransactionError as JSON) of a transaction
// whose instructions call programs (by instruction index; nil when
// unknown). ok is false when errJSON is not a TransactionError.
func Explain(errJSON []byte, programs []solana.PublicKey) (*Explained, bool) {
	var s string
	if json.Unmarshal(errJSON, &s) == nil {
		if s == "" {
			return nil, false // null
		}
		return &Explained{Instruction: -1, Name: s, Description: txErrors[s]}, true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(errJSON, &obj) != nil || len(obj) != 1 {
		return nil, false
	}
	for k, v := range obj {
		if k != "InstructionError" {
			return &Explained{Instruction: -1, Name: k, Description: txErrors[k]}, true
		}
		var pair []json.RawMessage
		if json.Unmarshal(v, &pair) != nil || len(pair) != 2 {
			return nil, false
		}
		var idx int
		if json.Unmarshal(pair[0], &idx) != nil || idx < 0 {
			return nil, false
		}
		e := &Explained{Instruction: idx}
		known := idx < len(programs)
		if known {
			e.Program = programs[idx]
			e.ProgramName = programNames[e.Program]
		} else {
			e.ProgramName = "unknown program"
		}
		var name string
		var custom struct {
			Custom *uint32 `json:"Custom"`
		}
		switch {
		case json.Unmarshal(pair[1], &name) == nil:
			e.Name, e.Description = name, instructionErrors[name]
		case json.Unmarshal(pair[1], &custom) == nil && custom.Custom != nil:
			e.Custom = custom.Custom
			if known {
				e.Name, e.Description = customName(e.Program, *custom.Custom)
			} else {
				e.Name = fmt.Sprintf("Custom(%d)", *custom.Custom)
			}
		default:
			e.Name = string(pair[1])
		}
		return e, true
	}
	return nil, false
}

// Custom errors are named per program.
type customError struct{ name, desc string }

func customName(program solana.PublicKey, code uint32) (string, string) {
	if t, ok := customErrors[program]; ok {
		if c, ok := t[code]; ok {
			return c.name, c.desc
		}
	}
	return fmt.Sprintf("Custom(%d)", code), ""
}

var programNames = map[solana.PublicKey]string{
	spl.SystemProgramID:          "System program",
	spl.TokenProgramID:           "SPL Token program",
	spl.Token2022ProgramID:       "Token-2022 program",
	spl.AssociatedTokenProgramID: "Associated Token Account program",
	espl.ProgramID:               "Ephemeral SPL Token program",
	espl.DelegationProgramID:     "Delegation program",
	spl.ComputeBudgetProgramID:   "Compute Budget program",
}

// tokenErrors are spl-token's TokenError codes (shared by Token-2022).
var tokenErrors = map[uint32]customError{
	0:  {"NotRentExempt", "the account would not be rent exempt"},
	1:  {"InsufficientFunds", "the source account holds fewer tokens than the instruction moves"},
	2:  {"InvalidMint", "not a valid mint"},
	3:  {"MintMismatch", "the account belongs to another mint"},
	4:  {"OwnerMismatch", "the signer does not own the account"},
	5:  {"FixedSupply", "the mint's supply is fixed"},
	6:  {"AlreadyInUse", "the account is already initialized"},
	7:  {"InvalidNumberOfProvidedSigners", "wrong number of signers"},
	8:  {"InvalidNumberOfRequiredSigners", "wrong number of required signers"},
	9:  {"UninitializedState", "the token account does not exist or is not initialized (create the ATA first)"},
	10: {"NativeNotSupported", "not supported for wrapped SOL"},
	11: {"NonNativeHasBalance", "the account still holds tokens"},
	12: {"InvalidInstruction", "invalid instruction"},
	13: {"InvalidState", "the account is in an invalid state"},
	14: {"Overflow", "the amount overflows"},
	15: {"AuthorityTypeNotSupported", "authority type not supported"},
	16: {"MintCannotFreeze", "the mint has no freeze authority"},
	17: {"AccountFrozen", "the account is frozen"},
	18: {"MintDecimalsMismatch", "the decimals given do not match the mint's"},
	19: {"NonNativeNotSupported", "only supported for wrapped SOL"},
}

var customErrors = map[solana.PublicKey]map[uint32]customError{
	spl.TokenProgramID:     tokenErrors,
	spl.Token2022ProgramID: tokenErrors,
	spl.SystemProgramID: {
		0: {"AccountAlreadyInUse", "the account already exists"},
		1: {"ResultWithNegativeLamports", "the account has fewer lamports (SOL) than the instruction moves"},
		2: {"InvalidProgramId", "invalid program id"},
		3: {"InvalidAccountDataLength", "invalid account data length"},
		4: {"MaxSeedLengthExceeded", "seed too long"},
		5: {"AddressWithSeedMismatch", "the address does not match the seed"},
	},
	spl.AssociatedTokenProgramID: {
		0: {"InvalidOwner", "the associated token account's owner does not match"},
	},
	// ferry's local eSPL program (docs/localnet.md; the real program's
	// codes are not published).
	espl.ProgramID: {
		100: {"WrongLayer", "the instruction runs on the other layer (send it where the build's sendTo says)"},
		101: {"InvalidMint", "not an initialized mint of the token program"},
		102: {"InvalidEphemeralAta", "the ephemeral ATA is missing, malformed or not the owner's"},
		103: {"EphemeralAtaDelegated", "the ephemeral ATA is delegated"},
		104: {"InsufficientBalance", "the ephemeral balance is below the amount"},
		105: {"InvalidVault", "global vault mismatch (init-mint sets it up)"},
		106: {"InvalidQueue", "the transfer queue is missing or not delegated (run ferry init-mint for this mint)"},
		107: {"InvalidShuttle", "shuttle accounts mismatch"},
		108: {"InvalidArguments", "amount, split, delays or group id rejected"},
		109: {"NotValidator", "internal instruction not signed by the validator"},
		110: {"InvalidStealthPool", "stealth pool mismatch"},
		111: {"NothingReady", "no queued transfer is ready"},
		112: {"StillDelegated", "the account has not been undelegated yet"},
		113: {"AmountOverflow", "the amount overflows"},
		114: {"InvalidTokenAccount", "token account of another mint or owner"},
	},
}

var instructionErrors = map[string]string{
	"InsufficientFunds":           "an account has too few lamports for the instruction",
	"InvalidAccountData":          "an account's data is not what the program expects",
	"AccountNotRentExempt":        "an account would not be rent exempt",
	"MissingRequiredSignature":    "a required signature is missing",
	"AccountAlreadyInitialized":   "the account is already initialized",
	"UninitializedAccount":        "an account is not initialized",
	"IncorrectProgramId":          "an account is owned by another program",
	"InvalidArgument":             "an argument is invalid",
	"InvalidInstructionData":      "the instruction's data is invalid",
	"ExternalAccountDataModified": "a program changed an account it does not own",
}

var txErrors = map[string]string{
	"AccountNotFound":                "the fee payer has no SOL (fund it: ferry airdrop)",
	"InsufficientFundsForFee":        "the fee payer has too few lamports for the fee",
	"InsufficientFundsForRent":       "an account would be left below rent exemption",
	"BlockhashNotFound":              "the blockhash expired or belongs to the other layer: rebuild and send again",
	"AlreadyProcessed":               "this transaction already landed",
	"SignatureFailure":               "a signature does not verify",
	"InvalidAccountForFee":           "the fee payer cannot pay fees",
	"ProgramAccountNotFound":         "a program the transaction calls does not exist on this layer",
	"InvalidProgramForExecution":     "a program the transaction calls cannot be executed",
	"AccountInUse":                   "an account is locked by another transaction",
	"WouldExceedMaxBlockCostLimit":   "the block is full: send again",
	"WouldExceedMaxAccountCostLimit": "an account is too busy: send again",
}
