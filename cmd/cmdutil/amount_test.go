package cmdutil

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseBaseUnits(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		err  error
	}{
		{"0", 0, nil},
		{"10", 10, nil},
		{"010", 10, nil}, // leading zeros are decimal, never octal
		{"0008", 8, nil},
		{"18446744073709551615", 18446744073709551615, nil},
		{"18446744073709551616", 0, errTooLarge},
		{"", 0, errEmptyAmount},
		{"0x10", 0, errNotWhole},
		{"0b11", 0, errNotWhole},
		{"0o17", 0, errNotWhole},
		{"1_0", 0, errNotWhole},
		{"1e3", 0, errNotWhole},
		{"+5", 0, errNotWhole},
		{"-5", 0, errNotWhole},
		{"1.5", 0, errNotWhole},
		{" 5", 0, errNotWhole},
		{"５", 0, errNotWhole}, // a full-width digit
	} {
		got, err := ParseBaseUnits(c.in)
		if !errors.Is(err, c.err) || got != c.want {
			t.Errorf("ParseBaseUnits(%q) = %d, %v; want %d, %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestParseUIAmount(t *testing.T) {
	for _, c := range []struct {
		in       string
		decimals uint8
		want     uint64
		err      error
	}{
		{"1.5", 6, 1_500_000, nil},
		{"1", 6, 1_000_000, nil},
		{"1.", 6, 1_000_000, nil},
		{".5", 6, 500_000, nil},
		{"0.000001", 6, 1, nil},
		{"1.50", 1, 15, nil}, // trailing zeros are not precision
		{"007.25", 2, 725, nil},
		{"0", 9, 0, nil},
		{"5", 0, 5, nil},
		{"18446744073709.551615", 6, 18446744073709551615, nil},
		{"18446744073709.551616", 6, 0, errTooLarge},
		{"0.0000001", 6, 0, errTooPrecise},
		{"1.5", 0, 0, errTooPrecise},
		{"", 6, 0, errEmptyAmount},
		{".", 6, 0, errNotDecimal},
		{"1.2.3", 6, 0, errNotDecimal},
		{"1,5", 6, 0, errNotDecimal},
		{"1e3", 6, 0, errNotDecimal},
		{"-1", 6, 0, errNotDecimal},
		{"0x1", 6, 0, errNotDecimal},
		{"1_000", 6, 0, errNotDecimal},
		{"1", 19, 0, errBadDecimals},
	} {
		got, err := ParseUIAmount(c.in, c.decimals)
		if !errors.Is(err, c.err) || got != c.want {
			t.Errorf("ParseUIAmount(%q, %d) = %d, %v; want %d, %v", c.in, c.decimals, got, err, c.want, c.err)
		}
	}
}

func TestFormatUIAmount(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		d    uint8
		want string
	}{{1_500_000, 6, "1.5"}, {1, 6, "0.000001"}, {2_000_000, 6, "2"}, {0, 6, "0"}, {5, 0, "5"}, {18446744073709551615, 18, "18.446744073709551615"}} {
		if got := FormatUIAmount(c.v, c.d); got != c.want {
			t.Errorf("FormatUIAmount(%d, %d) = %q, want %q", c.v, c.d, got, c.want)
		}
	}
}

func TestParseFlagInt(t *testing.T) {
	if v, err := ParseFlagInt("split", "03"); err != nil || v != 3 {
		t.Fatalf("03: %d %v", v, err)
	}
	_, err := ParseFlagInt("amount", "0x10")
	if Classify(err) != ExitUsage || err.Error() != `--amount: "0x10" is not a whole number of base units: digits 0-9 only, no sign, prefix, separator or exponent` {
		t.Fatalf("0x10: %v", err)
	}
	if _, err := ParseFlagInt("amount", "9223372036854775808"); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("2^63: %v", err)
	}
}

// FuzzAmounts: the parsers never panic, accept only what they document,
// and round-trip with FormatUIAmount.
func FuzzAmounts(f *testing.F) {
	for _, s := range []string{"0", "010", "1.5", ".5", "1.", "0x10", "1_0", "1e3", "-1", "18446744073709551615", "99999999999999999999", "1.0000000000000000001"} {
		f.Add(s, uint8(6))
	}
	f.Fuzz(func(t *testing.T, s string, decimals uint8) {
		if v, err := ParseBaseUnits(s); err == nil {
			if strings.TrimLeft(s, "0") != strings.TrimLeft(strconv.FormatUint(v, 10), "0") {
				t.Fatalf("ParseBaseUnits(%q) = %d", s, v)
			}
		}
		v, err := ParseUIAmount(s, decimals)
		if err != nil {
			return
		}
		if strings.ContainsAny(s, "+-_eExXbBoO, ") {
			t.Fatalf("ParseUIAmount accepted %q", s)
		}
		back, err := ParseUIAmount(FormatUIAmount(v, decimals), decimals)
		if err != nil || back != v {
			t.Fatalf("round trip of %q (%d decimals): %d → %q → %d, %v", s, decimals, v, FormatUIAmount(v, decimals), back, err)
		}
	})
}
