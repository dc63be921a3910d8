package ledger

import (
	"github.com/ferry-sh/ferry/pkg/ledger/programs"
	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
)

// builtinPrograms are the native programs every ledger runs unless
// Config.NoBuiltins is set: System, Compute Budget, SPL Token, Token-2022,
// Associated Token Account and Memo (v1 and v2).
func builtinPrograms() []*runtime.Registration { return programs.Builtins() }
