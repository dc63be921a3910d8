package cmdutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/itchyny/gojq"
)

// CheckJSONFlags validates --json and --jq before a command runs: they
// imply --output json, and contradict any other explicit --output. outputSet
// reports whether --output was given.
func (f *Factory) CheckJSONFlags(outputSet bool) error {
	if len(f.JSONFields) == 0 && f.JQ == "" {
		return nil
	}
	if outputSet && f.Output != OutputJSON {
		return UsageErrorf("--json and --jq print JSON: they cannot be combined with --output %s", f.Output)
	}
	f.Output = OutputJSON
	for _, fld := range f.JSONFields {
		if strings.TrimSpace(fld) == "" {
			return UsageErrorf("--json: empty field name (use a comma-separated list, e.g. --json signature,sendTo)")
		}
	}
	if f.JQ != "" {
		if _, err := compileJQ(f.JQ); err != nil {
			return err
		}
	}
	return nil
}

func compileJQ(expr string) (*gojq.Code, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, UsageErrorf("--jq: %v", err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, UsageErrorf("--jq: %v", err)
	}
	return code, nil
}

// PrintRawJSON writes a JSON document (already encoded) to stdout with the
// --json and --jq filters applied; without them, write is used.
func (f *Factory) PrintRawJSON(raw []byte, write func() error) error {
	if len(f.JSONFields) == 0 && f.JQ == "" {
		return write()
	}
	return f.printFiltered(json.RawMessage(raw))
}

// printFiltered applies --json (keep only these top-level fields of an
// object, or of each object in an array) and then --jq to v, as gh does:
// string results of --jq are printed raw, others as JSON.
func (f *Factory) printFiltered(v any) error {
	doc, err := toGeneric(v)
	if err != nil {
		return err
	}
	if len(f.JSONFields) > 0 {
		if doc, err = selectFields(doc, f.JSONFields); err != nil {
			return err
		}
	}
	if f.JQ == "" {
		return writeIndented(f, doc)
	}
	code, err := compileJQ(f.JQ)
	if err != nil {
		return err
	}
	iter := code.Run(doc)
	for {
		r, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, ok := r.(error); ok {
			if h, ok := err.(*gojq.HaltError); ok && h.Value() == nil {
				return nil
			}
			return InputErrorf("--jq: %v", err)
		}
		if s, ok := r.(string); ok {
			if _, err := fmt.Fprintln(f.IO.Out, s); err != nil {
				return err
			}
			continue
		}
		if err := writeIndented(f, r); err != nil {
			return err
		}
	}
}

func writeIndented(f *Factory, v any) error {
	enc := json.NewEncoder(f.IO.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// toGeneric turns v into the maps, slices and numbers gojq works on.
func toGeneric(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode JSON output: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("decode JSON output: %w", err)
	}
	return normalizeNumbers(out), nil
}

// normalizeNumbers converts json.Number into the number types gojq
// accepts: int when it fits, *big.Int for larger integers (u64 amounts
// stay exact), float64 otherwise.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		if !strings.ContainsAny(x.String(), ".eE") {
			if bi, ok := new(big.Int).SetString(x.String(), 10); ok {
				return bi
			}
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// selectFields keeps the named top-level fields of an object (or of each
// object of an array). An unknown name is a usage error listing the
// fields there are.
func selectFields(doc any, fields []string) (any, error) {
	pick := func(m map[string]any) (map[string]any, error) {
		out := make(map[string]any, len(fields))
		for _, fld := range fields {
			fld = strings.TrimSpace(fld)
			v, ok := m[fld]
			if !ok {
				names := make([]string, 0, len(m))
				for k := range m {
					names = append(names, k)
				}
				sort.Strings(names)
				return nil, UsageErrorf("--json: unknown field %q; available fields: %s", fld, strings.Join(names, ", "))
			}
			out[fld] = v
		}
		return out, nil
	}
	switch x := doc.(type) {
	case map[string]any:
		return pick(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, UsageErrorf("--json: the output is a list of %T, not of objects; use --jq", e)
			}
			p, err := pick(m)
			if err != nil {
				return nil, err
			}
			out[i] = p
		}
		return out, nil
	}
	return nil, UsageErrorf("--json: the output is not a JSON object; use --jq")
}
