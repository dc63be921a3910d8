package runtime

import (
	"errors"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/txwire"
)

// A panicking program fails its instruction instead of crashing the
// ledger, also when it is reached through a CPI.
func TestProgramPanicBecomesInstructionError(t *testing.T) {
	boom := ProgramFunc(func(c *Context) error {
		var m map[string]int
		m["x"] = 1 // nil map write: a runtime panic
		return nil
	})
	caller := ProgramFunc(func(c *Context) error {
		return c.Invoke(txwire.Instruction{ProgramID: progB})
	})
	for _, tc := range []struct {
		name string
		regs []*Registration
		prog int
	}{
		{"direct", []*Registration{{ID: progA, Program: boom}}, 2},
		{"cpi", []*Registration{{ID: progA, Program: caller}, {ID: progB, Program: boom}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exec := NewExecutor(tc.regs...)
			tx := testTx(solana.NewWallet().PublicKey(), solana.NewWallet().PublicKey(), progA, progB)
			err := exec.Run(tx, []txwire.CompiledInstruction{{ProgramIDIndex: uint8(tc.prog)}})
			if !errors.Is(err, InstructionFailed(0, ErrGenericError)) {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(strings.Join(tx.Logs, "\n"), "program panicked") {
				t.Fatalf("logs %q", tx.Logs)
			}
		})
	}
}
