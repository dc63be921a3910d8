package memo_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs/memo"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

var (
	payer = solana.MustPublicKeyFromBase58("3rXKwQ1kpjBd5tdcco32qsvqUh1BnZjcYnS5kYrP7AYE")
	alice = solana.MustPublicKeyFromBase58("HrVRhFn8zUawCGSHHnn5N4mEaaLHFWt2jQMceJXaQz7B")
	bob   = solana.MustPublicKeyFromBase58("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
)

func TestMemoV2(t *testing.T) {
	v2 := "Program MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr "
	cases := []struct {
		name string
		ix   txwire.Instruction
		err  *runtime.InstructionError
		logs []string // the program's complete log output
	}{
		{name: "no-signers", ix: spl.Memo("invoice 42"),
			logs: []string{v2 + "invoke [1]", "Program log: Memo (len 10)", "Program log: invoice 42",
				v2 + "consumed 187 of 200000 compute units", v2 + "success"}},
		{name: "one-signer", ix: spl.Memo("invoice 42", alice),
			logs: []string{v2 + "invoke [1]", "Program log: Signed by:", "Program log: " + alice.String(),
				"Program log: Memo (len 10)", "Program log: invoice 42",
				v2 + "consumed 287 of 200000 compute units", v2 + "success"}},
		{name: "two-signers", ix: spl.Memo("héllo", alice, bob),
			logs: []string{v2 + "invoke [1]", "Program log: Signed by:", "Program log: " + alice.String(),
				"Program log: " + bob.String(), "Program log: Memo (len 6)", "Program log: héllo",
				v2 + "consumed 367 of 200000 compute units", v2 + "success"}},
		{name: "empty", ix: spl.Memo(""),
			logs: []string{v2 + "invoke [1]", "Program log: Memo (len 0)", "Program log: ",
				v2 + "consumed 137 of 200000 compute units", v2 + "success"}},
		{name: "non-signer",
			ix: txwire.Instruction{ProgramID: spl.MemoProgramID, Data: []byte("x"),
				Accounts: []txwire.AccountMeta{txwire.Signer(alice), txwire.Readonly(bob)}},
			err: runtime.ErrMissingRequiredSignature,
			logs: []string{v2 + "invoke [1]", "Program log: Signed by:", "Program log: " + alice.String(),
				v2 + "consumed 342 of 200000 compute units", v2 + "failed: missing required signature for instruction"}},
		{name: "invalid-utf8",
			ix:  txwire.Instruction{ProgramID: spl.MemoProgramID, Data: []byte{'o', 'k', 0xF0, 0x9F, 0x90, 0xFF}},
			err: runtime.ErrProgramFailedToComplete,
			logs: []string{v2 + "invoke [1]", "Program log: Memo (len 6)", v2 + "consumed 167 of 200000 compute units",
				v2 + "failed: invalid utf-8 sequence of 3 bytes from index 2: [111, 107, 240, 159, 144, 255]"}},
		{name: "truncated-utf8",
			ix:  txwire.Instruction{ProgramID: spl.MemoProgramID, Data: []byte{'a', 0xE2, 0x82}},
			err: runtime.ErrProgramFailedToComplete,
			logs: []string{v2 + "invoke [1]", "Program log: Memo (len 3)", v2 + "consumed 152 of 200000 compute units",
				v2 + "failed: incomplete utf-8 byte sequence from index 1: [97, 226, 130]"}},
		{name: "stray-continuation",
			ix:  txwire.Instruction{ProgramID: spl.MemoProgramID, Data: []byte{0x80}},
			err: runtime.ErrProgramFailedToComplete,
			logs: []string{v2 + "invoke [1]", "Program log: Memo (len 1)", v2 + "consumed 142 of 200000 compute units",
				v2 + "failed: invalid utf-8 sequence of 1 bytes from index 0: [128]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := programtest.New(t, memo.Registration(), memo.RegistrationV1())
			h.Fund(payer, programtest.SOL)
			res := h.Run(payer, tc.ix)
			if tc.err != nil {
				res.RequireError(t, 0, tc.err)
			} else {
				res.RequireSuccess(t)
			}
			if strings.Join(res.Logs, "\n") != strings.Join(tc.logs, "\n") {
				t.Errorf("logs:\n%s\nwant:\n%s", strings.Join(res.Logs, "\n"), strings.Join(tc.logs, "\n"))
			}
		})
	}
}

func TestMemoV1(t *testing.T) {
	h := programtest.New(t, memo.Registration(), memo.RegistrationV1())
	h.Fund(payer, programtest.SOL)
	// v1 ignores its accounts (no signer check) and logs nothing.
	ok := txwire.Instruction{ProgramID: spl.MemoV1ProgramID, Data: []byte("legacy memo"),
		Accounts: []txwire.AccountMeta{txwire.Readonly(alice)}}
	res := h.Run(payer, ok)
	res.RequireSuccess(t)
	want := []string{
		"Program Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo invoke [1]",
		"Program Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo consumed 333 of 200000 compute units",
		"Program Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo success",
	}
	if strings.Join(res.Logs, "\n") != strings.Join(want, "\n") {
		t.Errorf("logs %q", res.Logs)
	}
	bad := txwire.Instruction{ProgramID: spl.MemoV1ProgramID, Data: []byte{0xC3, 0x28}}
	h.Run(payer, bad).RequireError(t, 0, runtime.ErrInvalidInstructionData)
}

func validUTF8(b []byte) bool { return utf8.Valid(b) }
