package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mr-tron/base58"

	"github.com/ferry-sh/ferry/pkg/apierr"
	"github.com/ferry-sh/ferry/pkg/inputlimit"
)

// MaxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, the largest
// integer the hosted API accepts in JSON.
const MaxSafeInteger = 1<<53 - 1

// ErrMalformedJSON is returned when the body is not JSON at all.
var ErrMalformedJSON = errors.New("malformed JSON")

// Decode validates a JSON object body against dst's struct type and fills
// dst. Problems with individual fields are collected and returned together as
// a 422 VALIDATION_ERROR; a body that is not JSON returns ErrMalformedJSON.
// Unknown fields are ignored, as zod's default object schema does.
func Decode(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	raw, err := parseJSON(body)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedJSON, err)
	}
	return DecodeValue(raw, dst)
}

// DecodeValue is Decode for an already parsed JSON value (as produced by
// encoding/json with UseNumber, or a map built from query parameters).
func DecodeValue(raw any, dst any) error {
	rv := reflect.ValueOf(dst).Elem()
	t := TypeOf(rv.Type())
	obj, ok := raw.(map[string]any)
	if !ok {
		return apierr.Validation(apierr.Issue{Code: "invalid_type", Message: "Expected object, received " + jsType(raw), Path: []any{}})
	}
	var issues []apierr.Issue
	path := make([]any, 1) // reused; issues get their own copy
	for _, f := range t.Fields {
		v, present := obj[f.JSON]
		if !present || v == nil && !f.Required {
			if !present && f.Required {
				issues = append(issues, apierr.Missing(f.JSON))
			}
			continue
		}
		path[0] = f.pathElem
		if is := f.assign(rv.FieldByIndex(f.Index), v, path); is != nil {
			for i := range is {
				if len(is[i].Path) == 1 && &is[i].Path[0] == &path[0] {
					is[i].Path = []any{f.JSON}
				}
			}
			issues = append(issues, is...)
		}
	}
	if len(issues) > 0 {
		return apierr.Validation(issues...)
	}
	return nil
}

func jsType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", x)
	}
}

func typeIssue(want string, v any, path []any) []apierr.Issue {
	return []apierr.Issue{{Code: "invalid_type", Message: fmt.Sprintf("Expected %s, received %s", want, jsType(v)), Path: path}}
}

// assign checks v against f and stores it in fv.
func (f *Field) assign(fv reflect.Value, v any, path []any) []apierr.Issue {
	if fv.Kind() == reflect.Pointer {
		p := reflect.New(fv.Type().Elem())
		if is := f.assign(p.Elem(), v, path); is != nil {
			return is
		}
		fv.Set(p)
		return nil
	}
	switch f.Kind {
	case Boolean:
		b, ok := v.(bool)
		if !ok {
			return typeIssue("boolean", v, path)
		}
		fv.SetBool(b)
	case Integer:
		n, is := f.integer(v, path)
		if is != nil {
			return is
		}
		switch fv.Kind() {
		case reflect.Uint32, reflect.Uint64:
			if n < 0 {
				return []apierr.Issue{{Code: "too_small", Message: "Number must be greater than or equal to 0", Path: path}}
			}
			fv.SetUint(uint64(n))
		default:
			fv.SetInt(n)
		}
	case String:
		s, ok := v.(string)
		if !ok {
			return typeIssue("string", v, path)
		}
		if is := f.checkString(s, path); is != nil {
			return is
		}
		fv.SetString(s)
	case Object:
		if f.Object != nil || fv.Kind() != reflect.Map {
			return []apierr.Issue{{Code: "custom", Message: "nested objects are not accepted here", Path: path}}
		}
		m, ok := v.(map[string]any)
		if !ok {
			return typeIssue("object", v, path)
		}
		fv.Set(reflect.ValueOf(m))
	case Array:
		arr, ok := v.([]any)
		if !ok {
			return typeIssue("array", v, path)
		}
		if len(arr) < f.MinItems {
			return []apierr.Issue{{Code: "too_small", Message: fmt.Sprintf("Array must contain at least %d element(s)", f.MinItems), Path: path}}
		}
		if f.MaxItems > 0 && len(arr) > f.MaxItems {
			return []apierr.Issue{{Code: "too_big", Message: fmt.Sprintf("Array must contain at most %d element(s)", f.MaxItems), Path: path}}
		}
		out := reflect.MakeSlice(fv.Type(), len(arr), len(arr))
		var issues []apierr.Issue
		for i, e := range arr {
			p := append(append([]any(nil), path...), i)
			issues = append(issues, f.Items.assign(out.Index(i), e, p)...)
		}
		if issues != nil {
			return issues
		}
		fv.Set(out)
	}
	return nil
}

func (f *Field) integer(v any, path []any) (int64, []apierr.Issue) {
	num, ok := v.(json.Number)
	if !ok {
		if fl, isF := v.(float64); isF {
			num, ok = json.Number(strconv.FormatFloat(fl, 'g', -1, 64)), true
		}
	}
	if !ok {
		return 0, typeIssue("number", v, path)
	}
	fl, err := strconv.ParseFloat(string(num), 64)
	if err != nil || math.IsInf(fl, 0) {
		return 0, typeIssue("number", v, path)
	}
	if fl != math.Trunc(fl) {
		return 0, []apierr.Issue{{Code: "invalid_type", Message: "Expected integer, received float", Path: path}}
	}
	if f.Min != nil && fl < float64(*f.Min) {
		return 0, []apierr.Issue{{Code: "too_small", Message: fmt.Sprintf("Number must be greater than or equal to %d", *f.Min), Path: path}}
	}
	if f.Max != nil && fl > float64(*f.Max) {
		return 0, []apierr.Issue{{Code: "too_big", Message: fmt.Sprintf("Number must be less than or equal to %d", *f.Max), Path: path}}
	}
	if math.Abs(fl) > MaxSafeInteger {
		// Every JSON number the API accepts must be a safe integer: beyond
		// 2^53 JavaScript clients cannot represent it exactly.
		return 0, []apierr.Issue{{Code: "too_big", Message: fmt.Sprintf("Number must be less than or equal to %d", int64(MaxSafeInteger)), Path: path}}
	}
	return int64(fl), nil
}

func (f *Field) checkString(s string, path []any) []apierr.Issue {
	if len(s) < f.MinLen {
		return []apierr.Issue{{Code: "too_small", Message: fmt.Sprintf("String must contain at least %d character(s)", f.MinLen), Path: path}}
	}
	if f.MaxBytes > 0 && len(s) > f.MaxBytes {
		msg := f.Message
		if msg == "" {
			msg = fmt.Sprintf("Must be %d UTF-8 bytes or fewer.", f.MaxBytes)
		}
		return []apierr.Issue{{Code: "too_big", Message: msg, Path: path}}
	}
	if f.MaxBytes > 0 && !utf8.ValidString(s) {
		return []apierr.Issue{{Code: "custom", Message: "Must be valid UTF-8", Path: path}}
	}
	if len(f.Enum) > 0 {
		for _, e := range f.Enum {
			if s == e {
				return nil
			}
		}
		return []apierr.Issue{{Code: "invalid_enum_value", Message: fmt.Sprintf("Invalid enum value. Expected %s, received '%s'", quoteEnum(f.Enum), inputlimit.Truncate(s, inputlimit.MaxEcho)), Path: path}}
	}
	if f.Pubkey && !IsPubkey(s) {
		return []apierr.Issue{{Code: "custom", Message: "Invalid public key", Path: path}}
	}
	if f.Digits && !IsDigits(s) {
		return []apierr.Issue{{Code: "custom", Message: "Must be a non-negative bigint string", Path: path}}
	}
	if f.URL && !IsHTTPURL(s) {
		return []apierr.Issue{{Code: "invalid_string", Message: "Invalid url", Path: path}}
	}
	return nil
}

// IsHTTPURL reports whether s is an absolute http or https URL with a host.
func IsHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func quoteEnum(e []string) string {
	q := make([]string, len(e))
	for i, s := range e {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, " | ")
}

// IsPubkey reports whether s is a base58 string of exactly 32 bytes, which
// is what @solana/web3.js's `new PublicKey(s)` accepts.
func IsPubkey(s string) bool {
	if len(s) < 32 || len(s) > 44 {
		return false
	}
	b, err := base58.Decode(s)
	return err == nil && len(b) == 32
}

// IsDigits reports whether s matches ^\d+$.
func IsDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ParseU64 parses a digit string that must fit in a u64 (leading zeros
// allowed). It runs in linear time whatever the length: the digits after
// the leading zeros are parsed only when there are at most 20.
func ParseU64(s string) (uint64, bool) {
	if !IsDigits(s) {
		return 0, false
	}
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return 0, true
	}
	if len(s) > 20 { // u64 max has 20 digits
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}
