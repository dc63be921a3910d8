package inputlimit

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gagliardetto/solana-go"
)

func TestCheckJSON(t *testing.T) {
	for _, tc := range []struct {
		in       string
		max      int
		deep     bool
		array    bool
		elements int
	}{
		{in: `{}`, max: 1},
		{in: `[[]]`, max: 1, deep: true, array: true},
		{in: `[[]]`, max: 2, array: true, elements: 1},
		{in: `{"a":{"b":[1]}}`, max: 3},
		{in: `{"a":{"b":[1]}}`, max: 2, deep: true},
		{in: `["[[[[", "\"[[[", {"}":"]"}]`, max: 2, array: true, elements: 3},
		{in: ` [ 1 , "a" , null , {} , [] ] `, max: 2, array: true, elements: 5},
		{in: `[]`, max: 1, array: true},
		{in: `[ ]`, max: 1, array: true},
		{in: `"[[[["`, max: 1},
		{in: `1`, max: 1},
		{in: ``, max: 1},
		{in: `]]]]][`, max: 1},
		{in: strings.Repeat("[", 4<<20), max: 0, deep: true, array: true}, // the default, 127
		{in: strings.Repeat("[", 127) + strings.Repeat("]", 127), max: 0, array: true, elements: 1},
		{in: strings.Repeat("[", 128) + strings.Repeat("]", 128), max: 0, deep: true, array: true},
	} {
		sh, err := CheckJSON([]byte(tc.in), tc.max)
		var de *DepthError
		if deep := errors.As(err, &de); deep != tc.deep {
			t.Errorf("%.40q max %d: err %v, want deep %v", tc.in, tc.max, err, tc.deep)
			continue
		}
		if tc.deep {
			want := tc.max
			if want == 0 {
				want = DefaultMaxJSONDepth
			}
			if de.Max != want || err.Error() != "JSON nested deeper than "+itoa(want)+" levels" {
				t.Errorf("%.40q: %v", tc.in, err)
			}
			continue
		}
		if sh.Array != tc.array || sh.Elements != tc.elements {
			t.Errorf("%.40q: %+v, want array %v elements %d", tc.in, sh, tc.array, tc.elements)
		}
	}
	deep := []byte(strings.Repeat("[", 1<<20))
	if a := testing.AllocsPerRun(100, func() { CheckJSON(deep, 0) }); a > 1 {
		t.Errorf("CheckJSON allocates %v times on 1 MiB of '['", a)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// depthOf is the nesting depth of a decoded JSON value.
func depthOf(v any) int {
	d := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	}
	return 0
}

// FuzzCheckJSON checks the scanner against encoding/json on valid JSON
// (exact depth and element count) and that it never panics on anything.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[[],[[]]]`, `["]\"[",{"a":[{}]}]`, `[1,2,3]`, `"\\"`, `[`, `]`, `{"a":"\u005b"}`,
		strings.Repeat("[", 10) + strings.Repeat("]", 10), strings.Repeat(`{"a":`, 8) + "1" + strings.Repeat("}", 8)} {
		f.Add([]byte(s), 5)
	}
	f.Fuzz(func(t *testing.T, b []byte, maxDepth int) {
		maxDepth = 1 + abs(maxDepth)%12
		sh, err := CheckJSON(b, maxDepth)
		var v any
		if !utf8.Valid(b) || json.Unmarshal(b, &v) != nil {
			return
		}
		d := depthOf(v)
		if (err != nil) != (d > maxDepth) {
			t.Fatalf("%q depth %d, max %d: err %v", b, d, maxDepth, err)
		}
		if err != nil {
			return
		}
		arr, isArr := v.([]any)
		if sh.Array != isArr || (isArr && sh.Elements != len(arr)) {
			t.Fatalf("%q: %+v, decoded %v", b, sh, v)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // the most negative int
			return 0
		}
		return -n
	}
	return n
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven chars", 10, "eleven cha…"},
		{"ééééé", 3, "é…"}, // never splits a character
		{strings.Repeat("x", 100), 0, strings.Repeat("x", MaxEcho) + "…"},
	} {
		if got := Truncate(tc.in, tc.n); got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestBase58LengthChecks(t *testing.T) {
	key, sig := solana.SystemProgramID.String(), strings.Repeat("1", 64)
	if k, err := PublicKey(key); err != nil || k != solana.SystemProgramID {
		t.Errorf("PublicKey(%s) = %v, %v", key, k, err)
	}
	if _, err := Signature(sig); err != nil {
		t.Errorf("Signature: %v", err)
	}
	if _, err := Hash(key); err != nil {
		t.Errorf("Hash: %v", err)
	}
	long := strings.Repeat("1", 80_000)
	for name, fn := range map[string]func(string) error{
		"PublicKey": func(s string) error { _, err := PublicKey(s); return err },
		"Signature": func(s string) error { _, err := Signature(s); return err },
		"Hash":      func(s string) error { _, err := Hash(s); return err },
		"Decode":    func(s string) error { _, err := DecodeBase58(s, 100); return err },
	} {
		if err := fn(long); err != ErrTooLong {
			t.Errorf("%s(80 KB) = %v, want ErrTooLong", name, err)
		}
		// Refused before decoding: nothing is allocated.
		if a := testing.AllocsPerRun(100, func() { fn(long) }); a != 0 {
			t.Errorf("%s(80 KB) allocates %v times", name, a)
		}
	}
	if _, err := PublicKey(strings.Repeat("1", MaxPubkeyBase58+1)); err != ErrTooLong {
		t.Errorf("45 characters: %v", err)
	}
	if _, err := Signature(strings.Repeat("1", MaxSignatureBase58+1)); err != ErrTooLong {
		t.Errorf("89 characters: %v", err)
	}
}

// BenchmarkBase58Long shows what the length check saves: decoding an
// 80 KB string takes seconds, refusing it nanoseconds.
func BenchmarkBase58Long(b *testing.B) {
	long := strings.Repeat("z", 80_000)
	b.Run("PublicKey", func(b *testing.B) {
		for b.Loop() {
			PublicKey(long)
		}
	})
}
