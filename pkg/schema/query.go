package schema

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
)

// DecodeQuery validates URL query parameters against dst's struct type and
// fills dst, with the same rules and issues as Decode. Query values are
// strings, so they are first coerced by field kind, as the hosted API's
// query schemas do: integer fields accept digit strings, boolean fields
// "true" or "false" (any case), array fields repeated parameters. A value
// that does not coerce is kept as a string and fails validation with the
// usual "Expected …, received string" issue. Only the first value of a
// repeated scalar parameter counts. An empty value counts as absent.
func DecodeQuery(q url.Values, dst any) error {
	t := TypeOf(reflect.TypeOf(dst).Elem())
	return DecodeValue(QueryValue(t, q), dst)
}

// QueryValue converts query parameters into the JSON value DecodeValue
// expects for t (see DecodeQuery).
func QueryValue(t *Type, q url.Values) map[string]any {
	obj := make(map[string]any, len(q))
	for _, f := range t.Fields {
		vs, ok := q[f.JSON]
		if !ok || len(vs) == 0 || (len(vs) == 1 && vs[0] == "" && f.Kind != Array) {
			continue
		}
		switch f.Kind {
		case Integer:
			if IsDigits(vs[0]) || (len(vs[0]) > 1 && vs[0][0] == '-' && IsDigits(vs[0][1:])) {
				obj[f.JSON] = json.Number(vs[0])
			} else {
				obj[f.JSON] = vs[0]
			}
		case Boolean:
			switch strings.ToLower(vs[0]) {
			case "true":
				obj[f.JSON] = true
			case "false":
				obj[f.JSON] = false
			default:
				obj[f.JSON] = vs[0]
			}
		case Array:
			arr := make([]any, 0, len(vs))
			for _, v := range vs {
				arr = append(arr, v)
			}
			obj[f.JSON] = arr
		default:
			obj[f.JSON] = vs[0]
		}
	}
	return obj
}
