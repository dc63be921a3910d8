package programtest_test

import (
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/ledger/programs/programtest"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/system"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

var (
	payer = solana.MustPublicKeyFromBase58("3rXKwQ1kpjBd5tdcco32qsvqUh1BnZjcYnS5kYrP7AYE")
	alice = solana.MustPublicKeyFromBase58("HrVRhFn8zUawCGSHHnn5N4mEaaLHFWt2jQMceJXaQz7B")
)

func TestHarnessCommitsOnlySuccess(t *testing.T) {
	h := programtest.New(t, system.Registration())
	h.Fund(payer, programtest.SOL)
	if a := h.Account(system.ProgramID); a == nil || !a.Executable {
		t.Fatalf("program account %+v", a)
	}

	// The second instruction fails, so the first one's transfer is undone.
	res := h.Run(payer, spl.SystemTransfer(payer, alice, 1_000_000), spl.SystemTransfer(payer, alice, 2*programtest.SOL))
	res.RequireError(t, 1, system.ErrResultWithNegativeLamports)
	if h.Lamports(alice) != 0 || h.Lamports(payer) != programtest.SOL {
		t.Fatalf("failed transaction committed: alice %d payer %d", h.Lamports(alice), h.Lamports(payer))
	}

	res = h.Run(payer, spl.SystemTransfer(payer, alice, 1_000_000))
	res.RequireSuccess(t)
	if h.Lamports(alice) != 1_000_000 || res.Message == nil || res.Keys[0] != payer {
		t.Fatalf("alice %d, keys %v", h.Lamports(alice), res.Keys)
	}
	res.RequireLogs(t, "Program 11111111111111111111111111111111 invoke [1]", "Program 11111111111111111111111111111111 success")
	if !res.HasLog("Program 11111111111111111111111111111111 success") || res.HasLog("success") {
		t.Error("HasLog must match whole lines")
	}

	// Emptying an account removes it.
	h.Run(payer, spl.SystemTransfer(alice, payer, 1_000_000)).RequireSuccess(t)
	if h.Account(alice) != nil {
		t.Error("zero-lamport account kept")
	}
}

func TestHarnessRentState(t *testing.T) {
	h := programtest.New(t, system.Registration())
	h.Fund(payer, programtest.SOL)
	res := h.Run(payer, spl.SystemTransfer(payer, alice, 1_000))
	res.RequireTxError(t, runtime.InsufficientFundsForRent(1))
	if res.InstructionError() != nil {
		t.Error("rent failure is not an instruction error")
	}
	if h.Account(alice) != nil {
		t.Error("rent failure committed")
	}
	h.CheckRent = false
	h.Run(payer, spl.SystemTransfer(payer, alice, 1_000)).RequireSuccess(t)
}

func TestHarnessComputeBudgetAndInner(t *testing.T) {
	calls := 0
	prog := solana.MustPublicKeyFromBase58("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	h := programtest.New(t, system.Registration(), runtime.ComputeBudgetProgram, &runtime.Registration{
		ID: prog, Name: "cpi", Program: runtime.ProgramFunc(func(c *runtime.Context) error {
			calls++
			return c.Invoke(spl.SystemTransfer(payer, alice, programtest.SOL/2))
		}),
	})
	h.Fund(payer, programtest.SOL)
	limit := txwire.Instruction{ProgramID: runtime.ComputeBudgetProgramID, Data: []byte{2, 0x10, 0x27, 0, 0}} // 10_000 CU
	res := h.Run(payer, limit, txwire.Instruction{ProgramID: prog, Accounts: []txwire.AccountMeta{
		txwire.WritableSigner(payer), txwire.Writable(alice), txwire.Readonly(system.ProgramID)}})
	res.RequireSuccess(t)
	res.RequireLogs(t, "Program AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA consumed 1150 of 9850 compute units")
	if got := res.InnerPrograms(1); len(got) != 1 || got[0] != system.ProgramID || len(res.InnerPrograms(0)) != 0 {
		t.Errorf("inner programs %v", got)
	}
	if in := res.InnerInstructions(1); len(in) != 1 || in[0].Accounts[1] != alice || in[0].StackHeight != 2 {
		t.Errorf("inner %+v", in)
	}
	if calls != 1 {
		t.Errorf("%d calls", calls)
	}
}

func TestFuzzInstruction(t *testing.T) {
	h := programtest.New(t, system.Registration())
	h.Fund(payer, programtest.SOL)
	h.CheckRent = false
	pool := []solana.PublicKey{payer, alice}
	res := h.FuzzInstruction(system.ProgramID, pool, spl.SystemTransfer(payer, alice, 7).Data, []byte{0x30, 0x21})
	res.RequireSuccess(t)
	if h.Lamports(alice) != 7 {
		t.Fatalf("alice %d", h.Lamports(alice))
	}
	// Without the signer bit the transfer fails.
	h.FuzzInstruction(system.ProgramID, pool, spl.SystemTransfer(payer, alice, 7).Data, []byte{0x20, 0x21}).
		RequireError(t, 0, runtime.ErrMissingRequiredSignature)
}

// TestPanicFailsTheTest checks that a program panic is reported even though
// the runtime may recover it.
func TestPanicFailsTheTest(t *testing.T) {
	prog := solana.MustPublicKeyFromBase58("BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB")
	rec := &recorder{TB: t}
	h := programtest.New(rec, &runtime.Registration{ID: prog, Name: "boom",
		Program: runtime.ProgramFunc(func(*runtime.Context) error { panic("boom") })})
	h.Fund(payer, programtest.SOL)
	func() {
		defer func() { _ = recover() }() // recorder.Fatalf panics to stop the run
		h.Run(payer, txwire.Instruction{ProgramID: prog})
	}()
	if !rec.failed {
		t.Fatal("a program panic did not fail the test")
	}
}

// recorder is a testing.TB whose Fatalf records instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic("fatal") }
func (r *recorder) Helper()               {}
