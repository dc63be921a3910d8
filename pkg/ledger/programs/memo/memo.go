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
	"strconv"
	"strings"
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

// utf8ErrorText is Rust's Utf8Error display for data, invalid from byte
// n, followed by the bytes, as the Memo program reports it.
func utf8ErrorText(data []byte, n int) string {
	var b strings.Builder
	if k, complete := invalidSequenceLen(data[n:]); complete {
		fmt.Fprintf(&b, "invalid utf-8 sequence of %d bytes from index %d: [", k, n)
	} else {
		fmt.Fprintf(&b, "incomplete utf-8 byte sequence from index %d: [", n)
	}
	for i, c := range data {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(int(c)))
	}
	b.WriteByte(']')
	return b.String()
}

// invalidSequenceLen is Utf8Error::error_len for b, which starts with an
// invalid sequence: how many bytes form the invalid sequence, or complete
// false when the input ends inside a sequence that could still be valid.
func invalidSequenceLen(b []byte) (int, bool) {
	lead := b[0]
	var width int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case lead >= 0xC2 && lead <= 0xDF:
		width = 2
	case lead >= 0xE0 && lead <= 0xEF:
		width = 3
		if lead == 0xE0 {
			lo = 0xA0
		} else if lead == 0xED {
			hi = 0x9F
		}
	case lead >= 0xF0 && lead <= 0xF4:
		width = 4
		if lead == 0xF0 {
			lo = 0x90
		} else if lead == 0xF4 {
			hi = 0x8F
		}
	default:
		return 1, true
	}
	for k := 1; k < width; k++ {
		if k >= len(b) {
			return 0, false
		}
		if b[k] < lo || b[k] > hi {
			return k, true
		}
		lo, hi = 0x80, 0xBF
	}
	return width, true // unreachable for an invalid sequence
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
	ctx.Log(fmt.Sprintf("Memo (len %d)", len(data)))
	if n := validUpTo(data); n != len(data) {
		// The deployed program aborts with the decoding error, which the
		// runtime reports as ProgramFailedToComplete.
		return &runtime.InstructionError{Name: "ProgramFailedToComplete", Detail: utf8ErrorText(data, n)}
	}
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
