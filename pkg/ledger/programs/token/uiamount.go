package token

import (
	"strconv"
	"strings"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
)

// ParseUiAmount converts a decimal UI amount ("1.5") into base units for a
// mint with the given decimals, like the token programs'
// try_ui_amount_into_amount: at most one '.', trailing fractional zeros
// ignored, no more fractional digits than decimals, and the result must fit
// a u64. Anything else is InvalidArgument.
func ParseUiAmount(ui string, decimals uint8) (uint64, error) {
	whole, frac, dot := strings.Cut(ui, ".")
	if dot && strings.Contains(frac, ".") {
		return 0, runtime.ErrInvalidArgument
	}
	frac = strings.TrimRight(frac, "0")
	if (whole == "" && frac == "") || len(frac) > int(decimals) {
		return 0, runtime.ErrInvalidArgument
	}
	digits := whole + frac + strings.Repeat("0", int(decimals)-len(frac))
	// Rust's u64::from_str accepts one leading '+'.
	digits = strings.TrimPrefix(digits, "+")
	if digits == "" || strings.ContainsAny(digits, "+-") {
		return 0, runtime.ErrInvalidArgument
	}
	v, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, runtime.ErrInvalidArgument
	}
	return v, nil
}
