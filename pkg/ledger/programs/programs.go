// Package programs assembles the native programs of ferry's embedded
// ledger. Each program lives in its own package (system, token, ata, memo,
// alt); Builtins returns them, plus the runtime's Compute Budget program,
// ready for runtime.NewExecutor.
package programs

import (
	"github.com/ferry-sh/ferry/pkg/ledger/programs/alt"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/ata"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/memo"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/system"
	"github.com/ferry-sh/ferry/pkg/ledger/programs/token"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
)

// Builtins returns fresh registrations of the programs every ferry ledger
// runs: System, Compute Budget, SPL Token, Token-2022, Associated Token
// Account, Memo v2, Memo v1 and Address Lookup Table. (The Compute Budget
// registration is the runtime's shared runtime.ComputeBudgetProgram.)
func Builtins() []*runtime.Registration {
	return []*runtime.Registration{
		system.Registration(),
		runtime.ComputeBudgetProgram,
		token.Registration(),
		token.Registration2022(),
		ata.Registration(),
		memo.Registration(),
		memo.RegistrationV1(),
		alt.Registration(),
	}
}
