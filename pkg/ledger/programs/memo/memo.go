// Package memo is a native implementation of the SPL Memo programs for the
// embedded ledger.
//
// Memo v2 (MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr) logs like the
// deployed program as observed on LiteSVM (chain-rpc.md §5.1):
//
//	Program log: Signed by:            (only when accounts are passed)
//	Program log: <signer key>          (one line per account)
//	Program log: Memo (len 10)
//	Program log: invoice 42
//
// Every account passed must be a signer (MissingRequiredSignature
// otherwise), and the memo must be UTF-8 (InvalidInstructionData, after the
// log line "Invalid UTF-8, from byte N").
//
// Memo v1 (Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo) behaves like the
// original deployment: it only validates UTF-8, ignores its accounts and
// logs nothing.
package memo

import (
	"fmt"
	"unicode/utf8"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

// Compute units. Memo v2 is priced like the pinocchio memo program whose logs
// it reproduces (287 CU for a 10-byte memo with one signer); v1 like the
// original program, which only validates UTF-8.
const (
	V2BaseUnits    = 137
	V2SignerUnits  = 100
	V2PerByteUnits = 5
	V1BaseUnits    = 300
	V1PerByteUnits = 3
)

// Registration returns Memo v2's registration.
func Registration() *runtime.Registration {
	return &runtime.Registration{
		ID:       spl.MemoProgramID,
		Name:     "Memo Program",
		Program:  runtime.ProgramFunc(ExecuteV2),
		BaseCost: V2BaseUnits,
	}
}

// RegistrationV1 returns Memo v1's registration.
func RegistrationV1() *runtime.Registration {
	return &runtime.Registration{
		ID:       spl.MemoV1ProgramID,
		Name:     "Memo Program v1",
		Program:  runtime.ProgramFunc(ExecuteV1),
		BaseCost: V1BaseUnits,
	}
}

// validUpTo is the length of the longest valid UTF-8 prefix of b (Rust's
// Utf8Error::valid_up_to); it equals len(b) for valid input.
func validUpTo(b []byte) int {
	n := 0
	for n < len(b) {
		r, size := utf8.DecodeRune(b[n:])
		if r == utf8.RuneError && size <= 1 {
			return n
		}
		n += size
	}
	return n
}

// ExecuteV2 runs a Memo v2 instruction.
func ExecuteV2(ctx *runtime.Context) error {
	data := ctx.Data()
	units := V2BaseUnits + V2SignerUnits*uint64(ctx.NumAccounts()) + V2PerByteUnits*uint64(len(data))
	if err := ctx.Consume(units); err != nil {
		return err
	}
	if n := ctx.NumAccounts(); n > 0 {
		ctx.Log("Signed by:")
		missing := false
		for i := 0; i < n; i++ {
			a, err := ctx.Account(i)
			if err != nil {
				return err
			}
			if a.IsSigner {
				ctx.Log(a.Key.String())
			} else {
				missing = true
			}
		}
		if missing {
			return runtime.ErrMissingRequiredSignature
		}
	}
	if n := validUpTo(data); n != len(data) {
		ctx.Logf("Invalid UTF-8, from byte %d", n)
		return runtime.ErrInvalidInstructionData
	}
	ctx.Log(fmt.Sprintf("Memo (len %d)", len(data)))
	ctx.Log(string(data))
	return nil
}

// ExecuteV1 runs a Memo v1 instruction.
func ExecuteV1(ctx *runtime.Context) error {
	data := ctx.Data()
	if err := ctx.Consume(V1BaseUnits + V1PerByteUnits*uint64(len(data))); err != nil {
		return err
	}
	if !utf8.Valid(data) {
		return runtime.ErrInvalidInstructionData
	}
	return nil
}
