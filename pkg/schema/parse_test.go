package schema

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
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
	deep := []byte(strings.Repeat("[", 10001) + strings.Repeat("]", 10001))
	checkParse(t, deep)
	checkParse(t, deep[1:len(deep)-1])
}

func checkParse(t *testing.T, b []byte) {
	t.Helper()
	want, wantOK := reference(b)
	got, err := parseJSON(b)
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
	f.Fuzz(func(t *testing.T, b []byte) { checkParse(t, b) })
}
