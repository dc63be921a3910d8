package schema

import (
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/ferry-sh/ferry/pkg/apierr"
)

type sample struct {
	From   string   `json:"from" validate:"required,pubkey" doc:"Sender."`
	Amount int64    `json:"amount" validate:"required,min=1,safe"`
	Vis    string   `json:"visibility" validate:"required,enum=public|private"`
	Split  *int64   `json:"split,omitempty" validate:"min=1,max=15" default:"1"`
	Delay  string   `json:"minDelayMs,omitempty" validate:"digits"`
	Flag   *bool    `json:"flag,omitempty"`
	To     string   `json:"to,omitempty" validate:"minlen=1,maxbytes=5"`
	Keys   []string `json:"keys,omitempty" validate:"items=pubkey,minitems=1,maxitems=2"`
	Ignore string   `json:"-"`
}

const key = "3rXKwQ1kpjBd5tdcco32qsvqUh1BnZjcYnS5kYrP7AYE"

func TestDecodeValid(t *testing.T) {
	var s sample
	err := Decode([]byte(`{"from":"`+key+`","amount":1e3,"visibility":"private","split":3,"minDelayMs":"10","flag":false,"keys":["`+key+`"],"extra":1}`), &s)
	if err != nil {
		t.Fatal(err)
	}
	if s.From != key || s.Amount != 1000 || s.Vis != "private" || *s.Split != 3 || s.Delay != "10" || *s.Flag || len(s.Keys) != 1 {
		t.Fatalf("%+v", s)
	}
}

func TestDecodeIssues(t *testing.T) {
	cases := []struct {
		body    string
		message string
		issues  []apierr.Issue
	}{
		{`{}`, "Missing required fields: from, amount, visibility", []apierr.Issue{
			apierr.Missing("from"), apierr.Missing("amount"), apierr.Missing("visibility")}},
		{`{"from":"nope","amount":"5","visibility":"secret"}`, "Request validation failed", []apierr.Issue{
			{Code: "custom", Message: "Invalid public key", Path: []any{"from"}},
			{Code: "invalid_type", Message: "Expected number, received string", Path: []any{"amount"}},
			{Code: "invalid_enum_value", Message: "Invalid enum value. Expected 'public' | 'private', received 'secret'", Path: []any{"visibility"}}}},
		{`{"from":"` + key + `","amount":1.5,"visibility":"public","split":16,"minDelayMs":"-1","to":"toolong"}`, "Request validation failed", []apierr.Issue{
			{Code: "invalid_type", Message: "Expected integer, received float", Path: []any{"amount"}},
			{Code: "too_big", Message: "Number must be less than or equal to 15", Path: []any{"split"}},
			{Code: "custom", Message: "Must be a non-negative bigint string", Path: []any{"minDelayMs"}},
			{Code: "too_big", Message: "Must be 5 UTF-8 bytes or fewer.", Path: []any{"to"}}}},
		{`{"from":"` + key + `","amount":0,"visibility":"public","keys":["x"],"flag":"yes"}`, "Request validation failed", []apierr.Issue{
			{Code: "too_small", Message: "Number must be greater than or equal to 1", Path: []any{"amount"}},
			{Code: "invalid_type", Message: "Expected boolean, received string", Path: []any{"flag"}},
			{Code: "custom", Message: "Invalid public key", Path: []any{"keys", 0}}}},
		{`{"from":"` + key + `","amount":9007199254740992,"visibility":"public"}`, "Request validation failed", []apierr.Issue{
			{Code: "too_big", Message: "Number must be less than or equal to 9007199254740991", Path: []any{"amount"}}}},
		{`[1]`, "Request validation failed", []apierr.Issue{{Code: "invalid_type", Message: "Expected object, received array", Path: []any{}}}},
		{`{"from":null,"amount":1,"visibility":"public"}`, "Request validation failed", []apierr.Issue{
			{Code: "invalid_type", Message: "Expected string, received null", Path: []any{"from"}}}},
	}
	for _, c := range cases {
		var s sample
		err := Decode([]byte(c.body), &s)
		var ae *apierr.Error
		if !errors.As(err, &ae) {
			t.Fatalf("%s: err %v", c.body, err)
		}
		if ae.Status != 422 || ae.Code != "VALIDATION_ERROR" || ae.Message != c.message || !reflect.DeepEqual(ae.Issues, c.issues) {
			t.Errorf("%s:\n got %d %s %q %#v\nwant %q %#v", c.body, ae.Status, ae.Code, ae.Message, ae.Issues, c.message, c.issues)
		}
	}
	var s sample
	if err := Decode([]byte(`{"from":`), &s); !errors.Is(err, ErrMalformedJSON) {
		t.Fatalf("malformed: %v", err)
	}
}

func TestJSONSchema(t *testing.T) {
	got, _ := json.Marshal(Of[sample]().JSONSchema())
	want := `{"properties":{"amount":{"maximum":9007199254740991,"minimum":1,"type":"integer"},"flag":{"type":"boolean"},"from":{"description":"Sender.","format":"solana-pubkey","pattern":"^[1-9A-HJ-NP-Za-km-z]{32,44}$","type":"string"},"keys":{"items":{"format":"solana-pubkey","pattern":"^[1-9A-HJ-NP-Za-km-z]{32,44}$","type":"string"},"maxItems":2,"minItems":1,"type":"array"},"minDelayMs":{"pattern":"^\\d+$","type":"string"},"split":{"default":1,"maximum":15,"minimum":1,"type":"integer"},"to":{"minLength":1,"type":"string"},"visibility":{"enum":["public","private"],"type":"string"}},"required":["from","amount","visibility"],"type":"object"}`
	if string(got) != want {
		t.Fatalf("schema\n got %s\nwant %s", got, want)
	}
	type fees struct {
		Lamports string `json:"lamports"`
	}
	type resp struct {
		Kind string   `json:"kind"`
		V    string   `json:"validator,omitempty"`
		Fees *fees    `json:"fees,omitempty"`
		Sign []string `json:"requiredSigners"`
	}
	got, _ = json.Marshal(Of[resp]().JSONSchema())
	want = `{"properties":{"fees":{"properties":{"lamports":{"type":"string"}},"required":["lamports"],"type":"object"},"kind":{"type":"string"},"requiredSigners":{"items":{"type":"string"},"type":"array"},"validator":{"type":"string"}},"required":["kind","requiredSigners"],"type":"object"}`
	if string(got) != want {
		t.Fatalf("response schema\n got %s\nwant %s", got, want)
	}
}

func TestParseU64(t *testing.T) {
	for s, want := range map[string]bool{"0": true, "18446744073709551615": true, "18446744073709551616": false, "": false, "1a": false,
		"000000000000000000000000042": true, "99999999999999999999": false, strings.Repeat("9", 1<<20): false, "00": true} {
		if _, ok := ParseU64(s); ok != want {
			t.Errorf("ParseU64(%.30q) ok=%v", s, ok)
		}
	}
	if n, _ := ParseU64("000000000000000000000000042"); n != 42 {
		t.Errorf("leading zeros: %d", n)
	}
	// A megabyte of digits is refused without a big-number parse: no
	// allocation at all.
	long := strings.Repeat("9", 1<<20)
	if a := testing.AllocsPerRun(100, func() { ParseU64(long) }); a != 0 {
		t.Errorf("ParseU64 of 1 MiB of digits: %v allocations", a)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"from":"` + key + `","amount":1,"visibility":"public"}`))
	f.Add([]byte(`{"amount":1e400}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var s sample
		err := Decode(body, &s)
		if err == nil {
			return
		}
		var ae *apierr.Error
		if !errors.As(err, &ae) && !errors.Is(err, ErrMalformedJSON) {
			t.Fatalf("unexpected error type %T: %v", err, err)
		}
		if ae != nil && (ae.Status != 422 || len(ae.Issues) == 0) {
			t.Fatalf("bad validation error %+v", ae)
		}
	})
}

type extras struct {
	Endpoint string         `json:"endpoint,omitempty" validate:"url"`
	Handle   string         `json:"handle" validate:"required,minlen=1,maxbytes=3" msg:"Handle must be 3 UTF-8 bytes or fewer."`
	Quote    map[string]any `json:"quote,omitempty"`
	N        *int64         `json:"n,omitempty" validate:"min=0"`
	Flag     *bool          `json:"flag,omitempty"`
	Keys     []string       `json:"keys,omitempty" validate:"items=pubkey"`
}

func TestExtraRules(t *testing.T) {
	var e extras
	if err := Decode([]byte(`{"endpoint":"https://er.example/x","handle":"abc","quote":{"a":[1]}}`), &e); err != nil {
		t.Fatal(err)
	}
	if e.Endpoint != "https://er.example/x" || e.Quote["a"] == nil {
		t.Fatalf("%+v", e)
	}
	err := Decode([]byte(`{"endpoint":"ftp://x","handle":"abcd","quote":[1]}`), &e)
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		t.Fatal(err)
	}
	want := []apierr.Issue{
		{Code: "invalid_string", Message: "Invalid url", Path: []any{"endpoint"}},
		{Code: "too_big", Message: "Handle must be 3 UTF-8 bytes or fewer.", Path: []any{"handle"}},
		{Code: "invalid_type", Message: "Expected object, received array", Path: []any{"quote"}},
	}
	if !reflect.DeepEqual(ae.Issues, want) {
		t.Fatalf("issues %#v", ae.Issues)
	}
	got, _ := json.Marshal(Of[extras]().JSONSchemaWith(func(*Type) string { return "" }))
	wantSchema := `{"properties":{"endpoint":{"format":"uri","type":"string"},"flag":{"type":"boolean"},"handle":{"minLength":1,"type":"string"},"keys":{"items":{"format":"solana-pubkey","pattern":"^[1-9A-HJ-NP-Za-km-z]{32,44}$","type":"string"},"type":"array"},"n":{"minimum":0,"type":"integer"},"quote":{"type":"object"}},"required":["handle"],"type":"object"}`
	if string(got) != wantSchema {
		t.Fatalf("schema\n got %s\nwant %s", got, wantSchema)
	}
}

func TestJSONSchemaRefs(t *testing.T) {
	type inner struct {
		A string `json:"a"`
	}
	type outer struct {
		In  inner  `json:"in"`
		Opt *inner `json:"opt,omitempty" doc:"Optional."`
	}
	ref := func(t *Type) string {
		if t.Name == "inner" {
			return "#/components/schemas/Inner"
		}
		return ""
	}
	got, _ := json.Marshal(Of[outer]().JSONSchemaWith(ref))
	want := `{"properties":{"in":{"$ref":"#/components/schemas/Inner"},"opt":{"$ref":"#/components/schemas/Inner","description":"Optional."}},"required":["in"],"type":"object"}`
	if string(got) != want {
		t.Fatalf("got %s", got)
	}
}

func TestDecodeQuery(t *testing.T) {
	var e extras
	q := url.Values{"handle": {"ab"}, "n": {"7"}, "flag": {"TRUE"}, "keys": {key, key}, "endpoint": {""}}
	if err := DecodeQuery(q, &e); err != nil {
		t.Fatal(err)
	}
	if e.Handle != "ab" || *e.N != 7 || !*e.Flag || len(e.Keys) != 2 || e.Endpoint != "" {
		t.Fatalf("%+v", e)
	}
	err := DecodeQuery(url.Values{"n": {"x"}, "flag": {"yes"}}, &e)
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		t.Fatal(err)
	}
	want := []apierr.Issue{
		apierr.Missing("handle"),
		{Code: "invalid_type", Message: "Expected number, received string", Path: []any{"n"}},
		{Code: "invalid_type", Message: "Expected boolean, received string", Path: []any{"flag"}},
	}
	if !reflect.DeepEqual(ae.Issues, want) {
		t.Fatalf("issues %#v", ae.Issues)
	}
	if err := DecodeQuery(url.Values{"handle": {"a"}, "n": {"-1"}}, &e); err == nil || !strings.Contains(err.Error(), "VALIDATION_ERROR") {
		t.Fatalf("negative: %v", err)
	}
}
