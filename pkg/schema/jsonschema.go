package schema

import (
	"strconv"
)

// Base58PubkeyPattern matches the base58 alphabet at public-key lengths.
const Base58PubkeyPattern = "^[1-9A-HJ-NP-Za-km-z]{32,44}$"

// JSONSchema describes the type as a JSON Schema object (draft 2020-12, the
// dialect of OpenAPI 3.1 and MCP). For request types, "required" lists the
// fields with the required rule; for response types (no validate tags), the
// fields without omitempty.
func (t *Type) JSONSchema() map[string]any { return t.JSONSchemaWith(nil) }

// JSONSchemaWith is JSONSchema where nested struct types for which ref
// returns a non-empty string become {"$ref": <that string>} (e.g.
// "#/components/schemas/TransferFees" in an OpenAPI document) instead of
// inline schemas. A nil ref inlines everything.
func (t *Type) JSONSchemaWith(ref func(*Type) string) map[string]any {
	props := map[string]any{}
	var required []string
	anyRule := false
	for _, f := range t.Fields {
		if f.Required {
			anyRule = true
		}
	}
	for _, f := range t.Fields {
		props[f.JSON] = f.jsonSchema(ref)
		if f.Required || (!anyRule && !f.Optional && !f.Ptr) {
			required = append(required, f.JSON)
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func (f *Field) jsonSchema(ref func(*Type) string) map[string]any {
	s := map[string]any{"type": f.Kind.jsonType()}
	if f.Doc != "" {
		s["description"] = f.Doc
	}
	switch f.Kind {
	case Object:
		if f.Object == nil { // map[string]any: any properties
			break
		}
		if ref != nil {
			if r := ref(f.Object); r != "" {
				o := map[string]any{"$ref": r}
				if f.Doc != "" {
					o["description"] = f.Doc
				}
				return o
			}
		}
		o := f.Object.JSONSchemaWith(ref)
		if f.Doc != "" {
			o["description"] = f.Doc
		}
		return o
	case Array:
		s["items"] = f.Items.jsonSchema(ref)
		if f.MinItems > 0 {
			s["minItems"] = f.MinItems
		}
		if f.MaxItems > 0 {
			s["maxItems"] = f.MaxItems
		}
	case Integer:
		if f.Min != nil {
			s["minimum"] = *f.Min
		}
		if f.Max != nil {
			s["maximum"] = *f.Max
		} else if f.Safe {
			s["maximum"] = int64(MaxSafeInteger)
		}
	case String:
		if len(f.Enum) > 0 {
			s["enum"] = f.Enum
		}
		if f.Pubkey {
			s["pattern"] = Base58PubkeyPattern
			s["format"] = "solana-pubkey"
		}
		if f.Digits {
			s["pattern"] = `^\d+$`
		}
		if f.URL {
			s["format"] = "uri"
		}

		if f.MinLen > 0 {
			s["minLength"] = f.MinLen
		}
	}
	if f.Default != "" {
		s["default"] = f.defaultValue()
	}
	if f.Example != "" {
		s["examples"] = []any{f.Example}
	}
	return s
}

func (f *Field) defaultValue() any {
	switch f.Kind {
	case Boolean:
		b, _ := strconv.ParseBool(f.Default)
		return b
	case Integer:
		n, _ := strconv.ParseInt(f.Default, 10, 64)
		return n
	}
	return f.Default
}
