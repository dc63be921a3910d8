package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ferry-sh/ferry/pkg/inputlimit"
)

// reference is what Decode did before parseJSON: encoding/json's Decoder
// with UseNumber, one value, then More.
func reference(b []byte) (any, bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if dec.More() {
		return nil, false
	}
	return v, true
}

var parseSeeds = []string{
	`{}`, `[]`, `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, `{"a":1.5e-3,"b":-0,"c":1E+9,"d":123456789012345678901234567890}`,
	`{"s":"\u00e9\ud83d\ude00\n\t\\\"\/\b\f\r"}`, `{"s":"\ud800"}`, `{"s":"\ud800\u0041"}`, `{"s":"\udc00\ud800"}`, `{"s":"\ud800\ud800\udc00"}`,
	"{\"s\":\"\xff\xfe\"}", "{\"s\":\"\xe2\x82\"}", "{\"s\":\"ok\xef\xbf\xbd\"}", `{"s":"\u0000"}`, "{\"s\":\"\x01\"}",
	`{"a":1}]`, `{"a":1}}`, `{"a":1} x`, `{"a":1}x`, `1]`, `1x`, `"a"]`, `true}`, `truex`, `nul`, `-`, `01`, `1.`, `.5`, `1e`, `+1`,
	`{"a":1,}`, `[1,]`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, ` {"a" : [ 1 , 2 ] } `, `{"a":"b","a":"c"}`, `"\x"`, `"\u12"`, `"\u12G4"`,
	`[[[[[[[[]]]]]]]]`, `{"a":[{"b":[{"c":{}}]}]}`, "\ufeff{}", `{"a":1}` + "\n\n", `{"a":-12.5e+10}`, `-1`, `0`, `"`, `{`, `{"a"`, `{"a":`,
}

func TestParseJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range parseSeeds {
		checkParse(t, []byte(s))
	}
	for _, n := range []int{MaxJSONDepth - 1, MaxJSONDepth, MaxJSONDepth + 1, 10001} {
		deep := []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
		checkParse(t, deep)
		checkParse(t, []byte(strings.Repeat(`{"a":`, n)+"1"+strings.Repeat("}", n)))
	}
}

// TestDeepBodyRefused: 4 MiB of '[' is refused at the depth limit, with
// no more allocations than 128 bytes of it.
func TestDeepBodyRefused(t *testing.T) {
	huge, limit := []byte(strings.Repeat("[", 4<<20)), []byte(strings.Repeat("[", MaxJSONDepth+1))
	var dst struct{}
	if err := Decode(huge, &dst); !errors.Is(err, ErrMalformedJSON) || !strings.Contains(err.Error(), "JSON nested deeper than 127 levels") {
		t.Fatalf("Decode: %v", err)
	}
	// The least of three measurements: other goroutines' allocations can
	// only add to one.
	allocs := func(in []byte) float64 {
		m := testing.AllocsPerRun(100, func() { parseJSON(in) })
		for i := 0; i < 2; i++ {
			m = min(m, testing.AllocsPerRun(100, func() { parseJSON(in) }))
		}
		return m
	}
	a, b := allocs(huge), allocs(limit)
	if a > b {
		t.Errorf("4 MiB deep: %v allocations, %d bytes deep: %v", a, len(limit), b)
	}
}

// checkParse compares parseJSON with encoding/json, which accepts up to
// 10000 levels where parseJSON stops after MaxJSONDepth.
func checkParse(t *testing.T, b []byte) {
	t.Helper()
	want, wantOK := reference(b)
	got, err := parseJSON(b)
	if wantOK && err != nil && err.Error() == tooDeepMessage {
		if _, derr := inputlimit.CheckJSON(b, MaxJSONDepth); derr == nil {
			t.Fatalf("%q: depth error on a body within the limit", b)
		}
		return
	}
	if (err == nil) != wantOK {
		t.Fatalf("%q: parseJSON err=%v, encoding/json ok=%v", b, err, wantOK)
	}
	if wantOK && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", b, got, want)
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	for _, n := range []int{MaxJSONDepth, MaxJSONDepth + 1} {
		f.Add([]byte(strings.Repeat("[", n) + strings.Repeat("]", n)))
		f.Add([]byte(strings.Repeat(`{"a":[`, n/2) + strings.Repeat("]}", n/2)))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkParse(t, b) })
}

// TestErrorsDoNotEchoLongInput: a validation message quotes at most a
// short prefix of the value it refuses.
func TestErrorsDoNotEchoLongInput(t *testing.T) {
	var dst struct {
		Layer string `json:"layer" validate:"enum=base|ephemeral"`
	}
	err := Decode([]byte(`{"layer":"`+strings.Repeat("x", 100_000)+`"}`), &dst)
	b, _ := json.Marshal(err)
	if err == nil || len(b) > 400 || !strings.Contains(string(b), "…") {
		t.Fatalf("error of %d bytes: %.300s", len(b), b)
	}
}
