package token

import (
	"encoding/binary"
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

// rustFloat formats like Rust's f64 Display.
func rustFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// uiAmountOf is AmountToUiAmount for a Token-2022 mint: interest-bearing
// and scaled mints scale the amount; others format it with the decimals.
func uiAmountOf(m *tstate, amount uint64, now int64) (string, bool) {
	dec := m.base[mintDecimals]
	if v, err := m.ext(extInterestBearingConfig, acctTypeMint); err == nil {
		scale, ok := interestScale(v, now)
		if !ok {
			return "", false
		}
		return rustFloat(float64(amount) * scale / math.Pow(10, float64(dec))), true
	}
	if v, err := m.ext(extScaledUiAmount, acctTypeMint); err == nil {
		scaled := math.Trunc(float64(amount) * scaledMultiplier(v, now))
		return rustFloat(scaled / math.Pow(10, float64(dec))), true
	}
	return spl.UIAmountString(amount, dec), true
}

// amountOfUi is UiAmountToAmount for a Token-2022 mint.
func amountOfUi(m *tstate, ui string, now int64) (uint64, error) {
	dec := m.base[mintDecimals]
	var scale float64
	if v, err := m.ext(extInterestBearingConfig, acctTypeMint); err == nil {
		s, ok := interestScale(v, now)
		if !ok {
			return 0, runtime.ErrInvalidArgument
		}
		scale = s / math.Pow(10, float64(dec))
	} else if v, err := m.ext(extScaledUiAmount, acctTypeMint); err == nil {
		scale = scaledMultiplier(v, now) / math.Pow(10, float64(dec))
	} else {
		return ParseUiAmount(ui, dec)
	}
	f, err := strconv.ParseFloat(ui, 64)
	if err != nil || strings.ContainsAny(ui, "xX_") {
		return 0, runtime.ErrInvalidArgument
	}
	amount := f / scale
	if math.IsNaN(amount) || amount > math.MaxUint64 || amount < 0 {
		return 0, runtime.ErrInvalidArgument
	}
	return uint64(math.Round(amount)), nil
}

// cutDot splits a UI amount at its first '.'.
func cutDot(s string) (string, string, bool) { return strings.Cut(s, ".") }
