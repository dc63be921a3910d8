package rpcserver

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"
)

func TestParseSendConfig(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		in   string
		ok   bool
		want sendConfig
	}{
		{`{"encoding":"base64","skipPreflight":false,"preflightCommitment":"processed"}`, true,
			sendConfig{Encoding: str("base64"), PreflightCommitment: str("processed")}},
		{` { "skipPreflight" : true } `, true, sendConfig{SkipPreflight: true}},
		{`{}`, true, sendConfig{}},
		{`{"encoding":"base58","encoding":"base64"}`, true, sendConfig{Encoding: str("base64")}},
		// Everything else is left to encoding/json.
		{`{"Encoding":"base64"}`, false, sendConfig{}},
		{`{"encoding":"base\u0036\u0034"}`, false, sendConfig{}},
		{`{"encoding":null}`, false, sendConfig{}},
		{`{"maxRetries":3}`, false, sendConfig{}},
		{`{"skipPreflight":"true"}`, false, sendConfig{}},
		{`{"encoding":"é"}`, false, sendConfig{}},
		{`{"encoding":"base64",}`, false, sendConfig{}},
		{`{"encoding":"base64"} x`, false, sendConfig{}},
		{`[]`, false, sendConfig{}},
	} {
		var got sendConfig
		ok := parseSendConfig([]byte(tc.in), &got)
		if ok != tc.ok || (ok && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("%s: ok %v %+v, want %v %+v", tc.in, ok, got, tc.ok, tc.want)
		}
	}
}

// FuzzParseSendConfig: whatever the fast path accepts, encoding/json
// reads the same way.
func FuzzParseSendConfig(f *testing.F) {
	for _, s := range []string{
		`{"encoding":"base64","skipPreflight":false,"preflightCommitment":"processed"}`,
		`{"skipPreflight":true,"encoding":"base58"}`, `{}`, `{"encoding":"x","encoding":"y"}`, `{"a":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast sendConfig
		if !parseSendConfig(b, &fast) {
			return
		}
		var slow sendConfig
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatalf("%q accepted by the fast path, refused by encoding/json: %v", b, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", b, fast, slow)
		}
	})
}

// TestStringView checks that stringView reads a parameter as String does,
// and that a plain JSON string is read in place: the transaction of a
// sendTransaction is not copied before it is decoded.
func TestStringView(t *testing.T) {
	for _, raw := range []string{`"AQID"`, ` "abc" `, `""`, `"a\nb"`, `"\u0041"`, `12`, `null`, `["x"]`} {
		p := Params{json.RawMessage(raw)}
		want, wantErr := p.String(0)
		got, err := p.stringView(0)
		if got != want || (err == nil) != (wantErr == nil) {
			t.Fatalf("%s: stringView = %q, %v; String = %q, %v", raw, got, err, want, wantErr)
		}
		if c, plain := plainContent(p[0]); plain && len(c) > 0 && unsafe.StringData(got) != &c[0] {
			t.Fatalf("%s: a plain string was copied", raw)
		}
	}
	if _, err := (Params{}).stringView(0); err == nil {
		t.Fatal("a missing parameter read without an error")
	}
}
