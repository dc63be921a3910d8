// Package openapicheck checks an OpenAPI 3.1 document the way the
// project's tests need it checked: the structure the specification
// requires of the objects ferry's document uses, that every $ref
// resolves, that every operation documents a request schema (when it
// takes a body), a 200 response and its errors, each with a schema and an
// example, and that every example validates against its schema (the JSON
// Schema 2020-12 keywords the document uses: type, enum, required,
// properties, items, minItems, maxItems, minimum, maximum, minLength,
// pattern, oneOf, $ref; format solana-pubkey is checked as base58).
package openapicheck

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mr-tron/base58"
)

// Check returns every problem of the document (nil when there is none).
func Check(raw []byte) []error {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return []error{fmt.Errorf("not JSON: %w", err)}
	}
	c := &checker{doc: doc}
	c.top()
	return c.errs
}

type checker struct {
	doc  map[string]any
	errs []error
}

func (c *checker) fail(where, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
}

func obj(v any) (map[string]any, bool) { m, ok := v.(map[string]any); return m, ok }

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func (c *checker) top() {
	if v, _ := c.doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		c.fail("openapi", "%q is not 3.1.x", c.doc["openapi"])
	}
	info, ok := obj(c.doc["info"])
	if !ok || info["title"] == nil || info["version"] == nil {
		c.fail("info", "title and version are required")
	}
	paths, ok := obj(c.doc["paths"])
	if !ok || len(paths) == 0 {
		c.fail("paths", "no paths")
	}
	tags := map[string]bool{}
	if ts, ok := c.doc["tags"].([]any); ok {
		for _, t := range ts {
			if m, ok := obj(t); ok {
				name, _ := m["name"].(string)
				if name == "" || tags[name] {
					c.fail("tags", "a tag without a name, or twice: %v", m)
				}
				tags[name] = true
			}
		}
	}
	c.walkRefs("#", c.doc)
	comps, _ := obj(c.doc["components"])
	schemas, _ := obj(comps["schemas"])
	for _, name := range sortedKeys(schemas) {
		s, ok := obj(schemas[name])
		if !ok {
			c.fail("components.schemas."+name, "not a schema object")
			continue
		}
		if ex, ok := s["example"]; ok {
			c.validate("components.schemas."+name+".example", s, ex)
		}
	}
	security, _ := obj(comps["securitySchemes"])
	ids := map[string]string{}
	for _, p := range sortedKeys(paths) {
		if !strings.HasPrefix(p, "/") {
			c.fail("paths", "%q does not start with /", p)
		}
		item, _ := obj(paths[p])
		for _, m := range sortedKeys(item) {
			if !slices.Contains(methods, m) {
				c.fail(p, "%q is not an HTTP method", m)
				continue
			}
			op, _ := obj(item[m])
			c.operation(strings.ToUpper(m)+" "+p, op, tags, security, ids)
		}
	}
}

// walkRefs checks that every $ref is a local reference that resolves.
func (c *checker) walkRefs(at string, v any) {
	switch x := v.(type) {
	case map[string]any:
		if r, ok := x["$ref"].(string); ok {
			if _, err := c.resolve(r); err != nil {
				c.fail(at, "%v", err)
			}
		}
		for _, k := range sortedKeys(x) {
			c.walkRefs(at+"/"+k, x[k])
		}
	case []any:
		for i, e := range x {
			c.walkRefs(fmt.Sprintf("%s/%d", at, i), e)
		}
	}
}

func (c *checker) resolve(ref string) (map[string]any, error) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("$ref %q is not local", ref)
	}
	var cur any = c.doc
	for _, part := range strings.Split(ref[2:], "/") {
		m, ok := obj(cur)
		if !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
		if cur, ok = m[part]; !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
	}
	m, ok := obj(cur)
	if !ok {
		return nil, fmt.Errorf("$ref %q is not an object", ref)
	}
	return m, nil
}

func (c *checker) operation(where string, op map[string]any, tags map[string]bool, security map[string]any, ids map[string]string) {
	if op == nil {
		c.fail(where, "not an operation object")
		return
	}
	id, _ := op["operationId"].(string)
	if id == "" {
		c.fail(where, "no operationId")
	} else if prev, dup := ids[id]; dup {
		c.fail(where, "operationId %q also used by %s", id, prev)
	}
	ids[id] = where
	if ts, ok := op["tags"].([]any); ok {
		for _, t := range ts {
			if s, _ := t.(string); !tags[s] {
				c.fail(where, "tag %v is not declared", t)
			}
		}
	}
	if sec, ok := op["security"].([]any); ok {
		for _, req := range sec {
			m, _ := obj(req)
			for name := range m {
				if security[name] == nil {
					c.fail(where, "security scheme %q is not declared", name)
				}
			}
		}
	}
	if ps, ok := op["parameters"].([]any); ok {
		for _, p := range ps {
			pm, _ := obj(p)
			in, _ := pm["in"].(string)
			if pm["name"] == nil || !slices.Contains([]string{"query", "header", "path", "cookie"}, in) || pm["schema"] == nil {
				c.fail(where, "parameter %v needs name, in and schema", pm["name"])
			}
			if ex, ok := pm["example"]; ok {
				c.validate(fmt.Sprintf("%s parameter %v example", where, pm["name"]), pm["schema"], ex)
			}
		}
	}
	if rb, ok := obj(op["requestBody"]); ok {
		content, _ := obj(rb["content"])
		if len(content) == 0 {
			c.fail(where, "request body without content")
		}
		for _, ct := range sortedKeys(content) {
			c.media(where+" request "+ct, content[ct])
		}
	}
	resps, ok := obj(op["responses"])
	if !ok || resps["200"] == nil {
		c.fail(where, "no 200 response")
		return
	}
	errors := 0
	for _, st := range sortedKeys(resps) {
		r, _ := obj(resps[st])
		if _, ok := r["description"].(string); !ok {
			c.fail(where+" "+st, "response without description")
		}
		content, _ := obj(r["content"])
		if len(content) == 0 {
			c.fail(where+" "+st, "response without content")
		}
		for _, ct := range sortedKeys(content) {
			c.media(where+" "+st+" "+ct, content[ct])
		}
		if st >= "400" {
			errors++
		}
	}
	if errors == 0 {
		c.fail(where, "no error responses")
	}
}

// media checks a media type object: a schema, and an example (or named
// examples) that validates against it.
func (c *checker) media(where string, v any) {
	m, _ := obj(v)
	sch, ok := m["schema"]
	if !ok {
		c.fail(where, "no schema")
		return
	}
	ex, one := m["example"]
	exs, many := obj(m["examples"])
	switch {
	case one:
		c.validate(where+" example", sch, ex)
	case many && len(exs) > 0:
		for _, name := range sortedKeys(exs) {
			e, _ := obj(exs[name])
			val, ok := e["value"]
			if !ok {
				c.fail(where+" example "+name, "no value")
				continue
			}
			c.validate(where+" example "+name, sch, val)
		}
	default:
		c.fail(where, "no example")
	}
}

func (c *checker) validate(where string, schema, value any) {
	for _, e := range c.check(schema, value, "", 0) {
		c.fail(where, "%s", e)
	}
}

var base58Key = regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]{32,44}$`)

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func typeMatches(want any, got string) bool {
	var ts []string
	switch t := want.(type) {
	case string:
		ts = []string{t}
	case []any:
		for _, e := range t {
			s, _ := e.(string)
			ts = append(ts, s)
		}
	default:
		return true
	}
	for _, t := range ts {
		if t == got || t == "number" && got == "integer" {
			return true
		}
	}
	return false
}

// check validates value against schema, returning the problems found.
func (c *checker) check(schema, value any, path string, depth int) []string {
	if depth > 32 {
		return []string{path + ": schema nesting too deep"}
	}
	s, ok := obj(schema)
	if !ok {
		return nil // true schema
	}
	if r, ok := s["$ref"].(string); ok {
		target, err := c.resolve(r)
		if err != nil {
			return []string{path + ": " + err.Error()}
		}
		return c.check(target, value, path, depth+1)
	}
	at := path
	if at == "" {
		at = "(value)"
	}
	var out []string
	if one, ok := s["oneOf"].([]any); ok {
		n := 0
		for _, alt := range one {
			if len(c.check(alt, value, path, depth+1)) == 0 {
				n++
			}
		}
		if n != 1 {
			out = append(out, fmt.Sprintf("%s: matches %d of the oneOf schemas, want 1", at, n))
		}
	}
	got := jsonType(value)
	if t, ok := s["type"]; ok && !typeMatches(t, got) {
		return append(out, fmt.Sprintf("%s: %s, want %v", at, got, t))
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(value) && jsonType(e) == got }) {
		out = append(out, fmt.Sprintf("%s: %v is not one of %v", at, value, enum))
	}
	switch x := value.(type) {
	case string:
		if n, ok := s["minLength"].(float64); ok && float64(len([]rune(x))) < n {
			out = append(out, fmt.Sprintf("%s: shorter than %v", at, n))
		}
		if p, ok := s["pattern"].(string); ok {
			if re, err := regexp.Compile(p); err != nil || !re.MatchString(x) {
				out = append(out, fmt.Sprintf("%s: %q does not match %s", at, x, p))
			}
		}
		if s["format"] == "solana-pubkey" {
			if b, err := base58.Decode(x); err != nil || len(b) != 32 || !base58Key.MatchString(x) {
				out = append(out, fmt.Sprintf("%s: %q is not a public key", at, x))
			}
		}
	case float64:
		if n, ok := s["minimum"].(float64); ok && x < n {
			out = append(out, fmt.Sprintf("%s: %v < %v", at, x, n))
		}
		if n, ok := s["maximum"].(float64); ok && x > n {
			out = append(out, fmt.Sprintf("%s: %v > %v", at, x, n))
		}
	case []any:
		if n, ok := s["minItems"].(float64); ok && float64(len(x)) < n {
			out = append(out, fmt.Sprintf("%s: fewer than %v items", at, n))
		}
		if n, ok := s["maxItems"].(float64); ok && float64(len(x)) > n {
			out = append(out, fmt.Sprintf("%s: more than %v items", at, n))
		}
		for i, e := range x {
			out = append(out, c.check(s["items"], e, fmt.Sprintf("%s[%d]", path, i), depth+1)...)
		}
	case map[string]any:
		props, _ := obj(s["properties"])
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := x[r.(string)]; !ok {
					out = append(out, fmt.Sprintf("%s: required %v missing", at, r))
				}
			}
		}
		for _, k := range sortedKeys(x) {
			if ps, ok := props[k]; ok {
				out = append(out, c.check(ps, x[k], strings.TrimPrefix(path+"."+k, "."), depth+1)...)
			} else if s["additionalProperties"] == false {
				out = append(out, fmt.Sprintf("%s: property %s is not allowed", at, k))
			}
		}
	}
	return out
}
