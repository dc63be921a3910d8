// Package schema validates JSON request bodies against Go struct types and
// describes those types as JSON Schema, so that one struct definition drives
// the REST API's validation, its OpenAPI document, the MCP tool input schemas
// and the CLI flags.
//
// Constraints live in a `validate` struct tag, documentation in `doc`:
//
//	Amount int64  `json:"amount" validate:"required,min=1,safe" doc:"Base-unit amount."`
//	Mode   string `json:"mode,omitempty" validate:"enum=a|b" default:"a"`
//
// Supported rules: required; min=N, max=N and safe (integers); minlen=N,
// maxbytes=N (strings); enum=a|b; pubkey (base58, 32 bytes); digits (a
// non-negative decimal integer string); url (an http(s) URL); items=pubkey
// (string slices); minitems=N, maxitems=N. A `msg` tag replaces the message
// of a failed maxbytes rule, e.g. msg:"Handle must be 255 UTF-8 bytes or
// fewer.".
//
// A map[string]any field is a free-form JSON object (any properties).
//
// Validation errors reproduce the hosted payments API's zod messages, so
// clients written for it see the same issues.
package schema

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Field is the parsed description of one struct field.
type Field struct {
	Index    []int // reflect.Value.FieldByIndex path (embedded structs are flattened)
	JSON     string
	Kind     Kind
	Ptr      bool
	Required bool
	Min, Max *int64
	Safe     bool
	MinLen   int
	MaxBytes int
	Enum     []string
	Pubkey   bool
	Digits   bool
	URL      bool   // an absolute http(s) URL
	Items    *Field // element rules for slices
	Object   *Type  // nested struct (response types)
	Optional bool   // json omitempty/omitzero: not required in responses
	MinItems int
	MaxItems int
	Doc      string
	Default  string
	Example  string
	Message  string // replaces the message of a failed maxbytes rule (msg tag)

	pathElem any // JSON as an interface value, for issue paths without allocation
}

// Kind is the JSON type of a field.
type Kind int

// Field kinds.
const (
	String Kind = iota
	Integer
	Boolean
	Array
	Object
	Number
)

func (k Kind) jsonType() string {
	switch k {
	case Integer:
		return "integer"
	case Boolean:
		return "boolean"
	case Array:
		return "array"
	case Object:
		return "object"
	case Number:
		return "number"
	}
	return "string"
}

// Type is the parsed description of a struct type.
type Type struct {
	Name   string
	Fields []*Field
	rt     reflect.Type
}

var cache sync.Map // reflect.Type -> *Type; types are static, so this cannot grow unboundedly

// Of describes struct type T. It panics on an unsupported field type or tag,
// which is a programming error caught by the package's tests.
func Of[T any]() *Type { return TypeOf(reflect.TypeFor[T]()) }

// TypeOf is Of for a reflect.Type.
func TypeOf(rt reflect.Type) *Type {
	if t, ok := cache.Load(rt); ok {
		return t.(*Type)
	}
	t := &Type{Name: rt.Name(), rt: rt}
	t.addFields(rt, nil)
	cache.Store(rt, t)
	return t
}

func (t *Type) addFields(rt reflect.Type, prefix []int) {
	for i := 0; i < rt.NumField(); i++ {
		sf := rt.Field(i)
		index := append(append([]int(nil), prefix...), i)
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Tag.Get("json") == "" {
			t.addFields(sf.Type, index)
			continue
		}
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f, err := parseField(sf.Type, sf.Tag.Get("validate"))
		if err != nil {
			panic(fmt.Sprintf("schema: %s.%s: %v", rt.Name(), sf.Name, err))
		}
		f.Index, f.JSON, f.pathElem = index, name, name
		f.Optional = strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		f.Doc, f.Default, f.Example = sf.Tag.Get("doc"), sf.Tag.Get("default"), sf.Tag.Get("example")
		f.Message = sf.Tag.Get("msg")
		t.Fields = append(t.Fields, f)
	}
}

func parseField(ft reflect.Type, tag string) (*Field, error) {
	f := &Field{}
	if ft.Kind() == reflect.Pointer {
		f.Ptr = true
		ft = ft.Elem()
	}
	switch ft.Kind() {
	case reflect.String:
		f.Kind = String
	case reflect.Int64, reflect.Int, reflect.Uint32, reflect.Uint64, reflect.Int32:
		f.Kind = Integer
	case reflect.Bool:
		f.Kind = Boolean
	case reflect.Float64:
		f.Kind = Number
	case reflect.Struct:
		f.Kind = Object
		f.Object = TypeOf(ft)
	case reflect.Map:
		if ft.Key().Kind() != reflect.String || ft.Elem().Kind() != reflect.Interface {
			return nil, fmt.Errorf("unsupported map type %s (only map[string]any)", ft)
		}
		f.Kind = Object // free-form: Object stays nil
	case reflect.Slice:
		item, err := parseField(ft.Elem(), "")
		if err != nil {
			return nil, fmt.Errorf("slice element: %w", err)
		}
		f.Kind = Array
		f.Items = item
	default:
		return nil, fmt.Errorf("unsupported type %s", ft)
	}
	if tag == "" {
		return f, nil
	}
	for _, rule := range strings.Split(tag, ",") {
		k, v, _ := strings.Cut(rule, "=")
		num := func() (int64, error) { return strconv.ParseInt(v, 10, 64) }
		switch k {
		case "required":
			f.Required = true
		case "min", "max":
			n, err := num()
			if err != nil {
				return nil, fmt.Errorf("bad %s: %w", k, err)
			}
			if k == "min" {
				f.Min = &n
			} else {
				f.Max = &n
			}
		case "safe":
			f.Safe = true
		case "minlen":
			n, err := num()
			if err != nil {
				return nil, err
			}
			f.MinLen = int(n)
		case "maxbytes":
			n, err := num()
			if err != nil {
				return nil, err
			}
			f.MaxBytes = int(n)
		case "enum":
			f.Enum = strings.Split(v, "|")
		case "pubkey":
			f.Pubkey = true
		case "digits":
			f.Digits = true
		case "url":
			f.URL = true
		case "items":
			if f.Items == nil {
				return nil, fmt.Errorf("items= on a non-slice")
			}
			f.Items.Pubkey = v == "pubkey"
		case "minitems", "maxitems":
			n, err := num()
			if err != nil {
				return nil, err
			}
			if k == "minitems" {
				f.MinItems = int(n)
			} else {
				f.MaxItems = int(n)
			}
		default:
			return nil, fmt.Errorf("unknown rule %q", k)
		}
	}
	return f, nil
}

// Field returns the field with JSON name n, or nil.
func (t *Type) Field(n string) *Field {
	for _, f := range t.Fields {
		if f.JSON == n {
			return f
		}
	}
	return nil
}
