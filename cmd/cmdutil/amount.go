package cmdutil

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ferry-sh/ferry/pkg/spl"
)

// MaxMintDecimals is the most decimals an SPL mint can have (a u8, but
// 10^19 overflows u64; Token-2022 and the local faucet allow 0..18).
const MaxMintDecimals = 18

// Amount parse errors, wrapped with the offending text.
var (
	errNotWhole    = errors.New("is not a whole number of base units: digits 0-9 only, no sign, prefix, separator or exponent")
	errNotDecimal  = errors.New("is not a decimal token amount: digits with at most one '.', no sign, prefix, separator or exponent")
	errTooLarge    = errors.New("is too large")
	errTooPrecise  = errors.New("has more decimals than the mint")
	errBadDecimals = errors.New("mint decimals out of range")
	errEmptyAmount = errors.New("is empty")
)

// ParseBaseUnits parses a plain decimal integer: ASCII digits only.
// Leading zeros are decimal ("010" is ten); signs, "0x"/"0o"/"0b"
// prefixes, "_" separators, exponents and fractions are refused, unlike
// strconv's base-0 parsing, because an amount that silently means
// something else moves the wrong number of tokens.
func ParseBaseUnits(s string) (uint64, error) {
	if s == "" {
		return 0, errEmptyAmount
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errNotWhole
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, errTooLarge
	}
	return v, nil
}

// ParseUIAmount converts a token amount written with a decimal point
// ("1.5", "0.000001", "2", ".5") into base units of a mint with decimals
// decimals. Trailing zeros past the mint's precision are fine ("1.50" for
// one decimal); any other digit there is refused rather than rounded.
func ParseUIAmount(s string, decimals uint8) (uint64, error) {
	if decimals > MaxMintDecimals {
		return 0, errBadDecimals
	}
	if s == "" {
		return 0, errEmptyAmount
	}
	whole, frac, _ := strings.Cut(s, ".")
	if (whole == "" && frac == "") || strings.Contains(frac, ".") {
		return 0, errNotDecimal
	}
	for _, part := range []string{whole, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return 0, errNotDecimal
			}
		}
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > int(decimals) {
		return 0, fmt.Errorf("%w (%d decimals)", errTooPrecise, decimals)
	}
	frac += strings.Repeat("0", int(decimals)-len(frac))
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return 0, nil
	}
	if len(digits) > 20 {
		return 0, errTooLarge
	}
	v, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, errTooLarge
	}
	return v, nil
}

// FormatUIAmount writes base units as a token amount with decimals
// decimals, without trailing zeros ("1.5", "2", "0.000001"): Agave's
// uiAmountString, which ParseUIAmount reads back.
func FormatUIAmount(v uint64, decimals uint8) string { return spl.UIAmountString(v, decimals) }

// flagAmountError is the usage error of a malformed amount flag.
func flagAmountError(flag, val string, err error) error {
	return UsageErrorf("--%s: %q %v", flag, val, err)
}

// ParseFlagInt parses the value of an integer flag with ParseBaseUnits and
// returns it as an int64 (JSON integers of the API are at most 2^63-1;
// the request's own rules check tighter limits). A malformed value is a
// usage error naming the flag.
func ParseFlagInt(flag, val string) (int64, error) {
	v, err := ParseBaseUnits(val)
	if err == nil && v > math.MaxInt64 {
		err = errTooLarge
	}
	if err != nil {
		return 0, flagAmountError(flag, val, err)
	}
	return int64(v), nil
}

// strictInt is a pflag.Value for integer flags: it keeps the text and
// leaves parsing to ParseFlagInt (or, with --ui, ParseUIAmount), so that
// "--amount 010" means ten and "--amount 0x10" is refused, never sixteen.
type strictInt struct {
	raw string
	def string
}

func (s *strictInt) String() string {
	if s.raw == "" {
		return s.def
	}
	return s.raw
}

func (s *strictInt) Set(v string) error {
	s.raw = strings.TrimSpace(v)
	return nil
}

func (s *strictInt) Type() string { return "int" }
