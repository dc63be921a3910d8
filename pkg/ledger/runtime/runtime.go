// Package runtime executes instructions of native (Go) programs the way the
// Solana runtime does: per-instruction account views, signer and writable
// privileges, cross-program invocation with PDA signers, owner and balance
// rules checked after every instruction, compute-unit metering, and program
// logs in Agave's format.
//
// It knows nothing about blocks, fees or storage; the ledger loads the
// accounts a transaction references, calls Executor.Run, and commits or
// discards the working copies.
package runtime

import (
	"github.com/gagliardetto/solana-go"
)

// Well-known ids the runtime itself depends on.
var (
	SystemProgramID        = solana.SystemProgramID
	NativeLoaderID         = solana.MustPublicKeyFromBase58("NativeLoader1111111111111111111111111111111")
	BPFLoaderUpgradeableID = solana.MustPublicKeyFromBase58("BPFLoaderUpgradeab1e11111111111111111111111")
)

// Account is the state of one account.
type Account struct {
	Lamports   uint64
	Owner      solana.PublicKey
	Data       []byte
	Executable bool
	RentEpoch  uint64
}

// Clone returns a deep copy.
func (a *Account) Clone() *Account {
	c := *a
	if a.Data != nil {
		c.Data = append([]byte(nil), a.Data...)
	}
	return &c
}

// Rent holds the rent parameters. The minimum balance for n bytes is
// (128 + n) × LamportsPerByte; Agave's legacy value is 3480 × 2 = 6960.
type Rent struct {
	LamportsPerByte uint64
}

// DefaultRent is the legacy rent used by test validators and LiteSVM.
var DefaultRent = Rent{LamportsPerByte: 6960}

// AccountStorageOverhead is the per-account byte overhead rent is charged for.
const AccountStorageOverhead = 128

// MinimumBalance is the rent-exempt minimum for an account with n data bytes.
func (r Rent) MinimumBalance(n int) uint64 {
	return uint64(AccountStorageOverhead+n) * r.LamportsPerByte
}

// Env is the cluster state programs can observe (the Clock and Rent
// sysvars, and what the System program's durable nonces read).
type Env struct {
	Slot          uint64
	Epoch         uint64
	UnixTimestamp int64
	Rent          Rent
	// Blockhash is the bank's latest blockhash (the parent block's) and
	// LamportsPerSignature its fee rate: a nonce advanced now stores
	// DurableNonce(Blockhash) and this fee rate.
	Blockhash            solana.Hash
	LamportsPerSignature uint64
}

// Program is a native program. Execute reads and mutates the instruction's
// accounts through ctx and returns nil or an *InstructionError (any other
// error becomes GenericError).
type Program interface {
	Execute(ctx *Context) error
}

// ProgramFunc adapts a function to Program.
type ProgramFunc func(ctx *Context) error

// Execute calls f(ctx).
func (f ProgramFunc) Execute(ctx *Context) error { return f(ctx) }

// Registration describes how a program is run and logged.
type Registration struct {
	ID      solana.PublicKey
	Name    string
	Program Program
	// Builtin programs (System, Compute Budget, ...) log no "consumed" line
	// and are charged BaseCost compute units. Other programs log like BPF
	// programs and are charged what they Consume, at least BaseCost.
	Builtin  bool
	BaseCost uint64
	// Privileged programs are exempt from the ownership rules for the
	// changes they make themselves: they may change the owner, data and
	// size of accounts they do not own and spend their lamports, and
	// grant signer privilege to any account they pass in a CPI. The
	// balance rule, read-only flags and the executable bit still apply.
	// This models validator builtins such as the ephemeral rollup's Magic
	// program (ephemeral accounts, post-delegation action signers); no
	// ordinary program should set it.
	Privileged bool
}

// Compute budget constants (Agave).
const (
	DefaultInstructionComputeUnits = 200_000
	MaxComputeUnitLimit            = 1_400_000
	MaxInvokeStackHeight           = 5
	MaxReturnData                  = 1024
	maxLogBytes                    = 10_000
)
