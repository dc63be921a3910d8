package token

import (
	"encoding/binary"
	"math"
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

// interestScale is InterestBearingConfig::total_scale without the decimals.
func interestScale(v []byte, now int64) (float64, bool) {
	init, last := int64(u64At(v, 32)), int64(u64At(v, 42))
	preRate, curRate := int16(binary.LittleEndian.Uint16(v[40:])), int16(binary.LittleEndian.Uint16(v[50:]))
	pre, ok1 := subI64(last, init)
	post, ok2 := subI64(now, last)
	if !ok1 || !ok2 {
		return 0, false
	}
	preExp := math.Exp(float64(preRate) * float64(pre) / secondsPerYear / oneInBasisPoints)
	postExp := math.Exp(float64(curRate) * float64(post) / secondsPerYear / oneInBasisPoints)
	return preExp * postExp, true
}

// timeWeightedAverageRate is InterestBearingConfig's average of the rate
// since initialization (UpdateRate stores it); false on overflow or a zero
// timespan, as the program's checked arithmetic fails then.
func timeWeightedAverageRate(v []byte, now int64) (int16, bool) {
	init, last := int64(u64At(v, 32)), int64(u64At(v, 42))
	preRate, curRate := int64(int16(binary.LittleEndian.Uint16(v[40:]))), int64(int16(binary.LittleEndian.Uint16(v[50:])))
	pre, ok1 := subI64(last, init)
	post, ok2 := subI64(now, last)
	if !ok1 || !ok2 {
		return 0, false
	}
	total, ok := addI64(pre, post)
	if !ok || total == 0 {
		return 0, false
	}
	// |rate| < 2^15 and |span| < 2^63: the products and their sum fit 128
	// bits; do the arithmetic in float-free 128-bit steps.
	num := addI128(mulI128(preRate, pre), mulI128(curRate, post))
	return int16(divI128(num, total)), true
}

func subI64(a, b int64) (int64, bool) {
	c := a - b
	return c, (c < a) == (b > 0)
}

func addI64(a, b int64) (int64, bool) {
	c := a + b
	return c, (c > a) == (b > 0)
}

// i128 is a two's-complement 128-bit integer.
type i128 struct{ hi, lo uint64 }

func mulI128(a, b int64) i128 {
	neg := (a < 0) != (b < 0)
	ua, ub := uint64(a), uint64(b)
	if a < 0 {
		ua = uint64(-a)
	}
	if b < 0 {
		ub = uint64(-b)
	}
	hi, lo := bits.Mul64(ua, ub)
	v := i128{hi, lo}
	if neg {
		v = negI128(v)
	}
	return v
}

func negI128(v i128) i128 {
	lo, c := bits.Add64(^v.lo, 1, 0)
	return i128{^v.hi + c, lo}
}

func addI128(a, b i128) i128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return i128{hi, lo}
}

// divI128 divides truncating toward zero and returns the low 64 bits (the
// program casts the quotient with `as i16`, which keeps the low bits).
func divI128(a i128, d int64) int64 {
	neg := (int64(a.hi) < 0) != (d < 0)
	if int64(a.hi) < 0 {
		a = negI128(a)
	}
	ud := uint64(d)
	if d < 0 {
		ud = uint64(-d)
	}
	qhi := a.hi / ud
	qlo, _ := bits.Div64(a.hi%ud, a.lo, ud)
	q := i128{qhi, qlo}
	if neg {
		q = negI128(q)
	}
	return int64(q.lo)
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
