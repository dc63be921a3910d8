package token

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"github.com/ferry-sh/ferry/pkg/ledger/runtime"
	"github.com/ferry-sh/ferry/pkg/spl"
)

func mulWide(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }

func divWide(hi, lo, d uint64) (q, r uint64) { return bits.Div64(hi, lo, d) }

// Interest-bearing mints accrue continuously: the UI amount is amount ×
// e^(rate × time) at the rate before and after the last update.
const (
	secondsPerYear   = 60 * 60 * 24 * 365.24
	oneInBasisPoints = 10_000.0
)

// interestScale is InterestBearingConfig::total_scale without the decimals:
// e^(rate × time) for the time before and after the last update, false if
// a timespan overflows i64 (timestamps may go backwards).
func interestScale(v []byte, now int64) (float64, bool) {
	init, last := int64(u64At(v, 32)), int64(u64At(v, 42))
	preRate, curRate := int16(binary.LittleEndian.Uint16(v[40:])), int16(binary.LittleEndian.Uint16(v[50:]))
	pre, ok1 := subI64(last, init)
	post, ok2 := subI64(now, last)
	if !ok1 || !ok2 {
		return 0, false
	}
	return interestExp(preRate, pre) * interestExp(curRate, post), true
}

// interestExp is e^(rate × span / year / 10 000), with rate × span taken
// exactly (as the program's i128 product) before it becomes a float.
func interestExp(rate int16, span int64) float64 {
	n := new(big.Int).Mul(big.NewInt(int64(rate)), big.NewInt(span))
	f, _ := new(big.Float).SetInt(n).Float64()
	return math.Exp(f / secondsPerYear / oneInBasisPoints)
}

// timeWeightedAverageRate is InterestBearingConfig's average of the rate
// since initialization, which UpdateRate stores, in the program's i128
// arithmetic: the current rate when no time has passed, false when the
// average does not fit an i16 (timestamps that went backwards).
func timeWeightedAverageRate(v []byte, now int64) (int16, bool) {
	init, last := big.NewInt(int64(u64At(v, 32))), big.NewInt(int64(u64At(v, 42)))
	r1 := big.NewInt(int64(int16(binary.LittleEndian.Uint16(v[40:]))))
	r2 := big.NewInt(int64(int16(binary.LittleEndian.Uint16(v[50:]))))
	t1 := new(big.Int).Sub(last, init)
	t2 := new(big.Int).Sub(big.NewInt(now), last)
	total := new(big.Int).Add(t1, t2)
	avg := r2
	if total.Sign() != 0 {
		num := new(big.Int).Add(new(big.Int).Mul(r1, t1), new(big.Int).Mul(r2, t2))
		avg = num.Quo(num, total) // truncates toward zero, as Rust does
	}
	if !avg.IsInt64() || avg.Int64() < math.MinInt16 || avg.Int64() > math.MaxInt16 {
		return 0, false
	}
	return int16(avg.Int64()), true
}

func subI64(a, b int64) (int64, bool) {
	c := a - b
	return c, (c < a) == (b > 0)
}

// validMultiplier is ScaledUiAmount's check: positive and normal.
func validMultiplier(b []byte) bool {
	f := math.Float64frombits(binary.LittleEndian.Uint64(b))
	return !math.Signbit(f) && f != 0 && !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) >= 0x1p-1022
}

// scaledMultiplier is the multiplier in force at now.
func scaledMultiplier(v []byte, now int64) float64 {
	if now >= int64(u64At(v, 40)) {
		return math.Float64frombits(u64At(v, 48))
	}
	return math.Float64frombits(u64At(v, 32))
}

// RustFloat formats f as Rust does: format!("{:.*}", prec, f), or its
// Display (to_string: the shortest digits that round-trip, never in
// exponent form) for prec -1. Agave's account decoder prints the
// ScaledUiAmount multipliers with Display.
func RustFloat(f float64, prec int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', prec, 64)
}

// trimUIAmount is trim_ui_amount_string: trailing fractional zeros and a
// bare '.' go.
func trimUIAmount(s string, decimals uint8) string {
	if decimals > 0 {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// powi is f64::powi as the SBF target computes it (compiler-builtins:
// square-and-multiply over the exponent's bits).
func powi(a float64, b int) float64 {
	r := 1.0
	for {
		if b&1 != 0 {
			r *= a
		}
		b >>= 1
		if b == 0 {
			return r
		}
		a *= a
	}
}

// powNum is num_traits::pow for f64 (exponentiation by squaring that
// starts from the lowest set bit).
func powNum(base float64, exp int) float64 {
	if exp == 0 {
		return 1
	}
	for exp&1 == 0 {
		base *= base
		exp >>= 1
	}
	if exp == 1 {
		return base
	}
	acc := base
	for exp > 1 {
		exp >>= 1
		base *= base
		if exp&1 == 1 {
			acc *= base
		}
	}
	return acc
}

// UIAmount is the UI amount of a token amount of a mint (SPL Token or
// Token-2022, given its account data) at unix time now, as Token-2022's
// AmountToUiAmount and Agave's account decoder compute it. scaled reports
// a mint whose extensions scale amounts (interest-bearing or scaled UI
// amount): ui is then the scaled amount, or "" when the interest cannot be
// computed (a timestamp overflow). For other mints ui just places the
// decimal point.
func UIAmount(mint []byte, amount uint64, now int64) (ui string, scaled bool) {
	if len(mint) < spl.MintSize {
		return "", false
	}
	m, err := unpackState(mint, acctTypeMint)
	if err != nil {
		return spl.UIAmountString(amount, mint[mintDecimals]), false
	}
	_, interest := m.ext(extInterestBearingConfig, acctTypeMint)
	_, multiplier := m.ext(extScaledUiAmount, acctTypeMint)
	if interest != nil && multiplier != nil {
		return spl.UIAmountString(amount, mint[mintDecimals]), false
	}
	s, ok := uiAmountOf(m, amount, now)
	if !ok {
		return "", true
	}
	return s, true
}

// uiAmountOf is AmountToUiAmount for a Token-2022 mint.
func uiAmountOf(m *tstate, amount uint64, now int64) (string, bool) {
	dec := m.base[mintDecimals]
	if v, err := m.ext(extInterestBearingConfig, acctTypeMint); err == nil {
		scale, ok := interestScale(v, now)
		if !ok {
			return "", false
		}
		total := scale / powi(10, int(dec))
		return trimUIAmount(RustFloat(float64(amount)*total, int(dec)), dec), true
	}
	if v, err := m.ext(extScaledUiAmount, acctTypeMint); err == nil {
		truncated := math.Trunc(float64(amount)*scaledMultiplier(v, now)) / powNum(10, int(dec))
		return trimUIAmount(RustFloat(truncated, int(dec)), dec), true
	}
	return spl.UIAmountString(amount, dec), true
}

// amountOfUi is UiAmountToAmount for a Token-2022 mint: interest-bearing
// mints round to the nearest amount, scaled mints truncate.
func amountOfUi(m *tstate, ui string, now int64) (uint64, error) {
	dec := m.base[mintDecimals]
	var total float64
	round := math.Round
	if v, err := m.ext(extInterestBearingConfig, acctTypeMint); err == nil {
		s, ok := interestScale(v, now)
		if !ok {
			return 0, runtime.ErrInvalidArgument
		}
		total = s / powi(10, int(dec))
	} else if v, err := m.ext(extScaledUiAmount, acctTypeMint); err == nil {
		total = scaledMultiplier(v, now) / powNum(10, int(dec))
		round = math.Trunc
	} else {
		return ParseUiAmount(ui, dec)
	}
	f, ok := parseRustFloat(ui)
	if !ok {
		return 0, runtime.ErrInvalidArgument
	}
	amount := f / total
	if math.IsNaN(amount) || amount > math.MaxUint64 || amount < 0 {
		return 0, runtime.ErrInvalidArgument
	}
	// Rust's `as u64` saturates.
	if r := round(amount); r < math.MaxUint64 {
		return uint64(r), nil
	}
	return math.MaxUint64, nil
}

// parseRustFloat is str::parse::<f64>: an optional sign, then decimal
// digits with an optional point and exponent, or inf / infinity / nan
// (any case). Go's extra forms (hex, underscores) are refused; values out
// of range become ±inf or 0 as in Rust.
func parseRustFloat(s string) (float64, bool) {
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false
	}
	switch strings.ToLower(body) {
	case "inf", "infinity", "nan":
	default:
		for _, c := range body {
			if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
				return 0, false
			}
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return f, true
		}
		return 0, false
	}
	return f, true
}

// cutDot splits a UI amount at its first '.'.
func cutDot(s string) (string, string, bool) { return strings.Cut(s, ".") }
