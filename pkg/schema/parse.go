package schema

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ferry-sh/ferry/pkg/inputlimit"
)

// MaxJSONDepth is the deepest nesting a request body may have
// (inputlimit.DefaultMaxJSONDepth, the chain nodes' limit): the parser
// recurses once per level, and no request of the API nests more than a few.
const MaxJSONDepth = inputlimit.DefaultMaxJSONDepth

var errSyntax = errors.New("invalid JSON")

// parseJSON parses one JSON value into the generic form encoding/json's
// Decoder produces with UseNumber (map[string]any, []any, string,
// json.Number, bool, nil), accepting and rejecting exactly the inputs that
// Decode (a Decoder's Decode followed by More) does, several times faster,
// except that it refuses nesting deeper than MaxJSONDepth where
// encoding/json allows 10000 levels. FuzzParseJSON checks the equivalence.
func parseJSON(b []byte) (any, error) {
	p := parser{b: b}
	p.ws()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.ws()
	// Like Decoder.More after one value: end of input, or a closing
	// bracket, ends the document; anything else is trailing data.
	if p.i < len(b) && b[p.i] != ']' && b[p.i] != '}' {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

type parser struct {
	b     []byte
	i     int
	depth int
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) fail(what string) error {
	if p.i >= len(p.b) {
		return errors.New("unexpected end of JSON input")
	}
	return errors.New("invalid character " + strconv.QuoteRune(rune(p.b[p.i])) + " " + what)
}

func (p *parser) value() (any, error) {
	if p.i >= len(p.b) {
		return nil, p.fail("")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, p.fail("looking for beginning of value")
}

func (p *parser) literal(word string, v any) (any, error) {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		for k := 0; k < len(word) && p.i < len(p.b) && p.b[p.i] == word[k]; k++ {
			p.i++
		}
		return nil, p.fail("in literal " + word)
	}
	p.i += len(word)
	return v, nil
}

func (p *parser) number() (any, error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case digits() == 0:
		return nil, p.fail("in numeric literal")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.fail("after decimal point in numeric literal")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.fail("in exponent of numeric literal")
		}
	}
	return json.Number(p.b[start:p.i]), nil
}

var tooDeepMessage = (&inputlimit.DepthError{Max: MaxJSONDepth}).Error()

func (p *parser) enter() error {
	p.depth++
	if p.depth > MaxJSONDepth {
		return errors.New(tooDeepMessage)
	}
	return nil
}

func (p *parser) object() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.i++ // {
	m := make(map[string]any, 8)
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		p.depth--
		return m, nil
	}
	for {
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, p.fail("looking for beginning of object key string")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, p.fail("after object key")
		}
		p.i++
		p.ws()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		m[k.(string)] = v
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.fail("")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.ws()
		case '}':
			p.i++
			p.depth--
			return m, nil
		default:
			return nil, p.fail("after object key:value pair")
		}
	}
}

func (p *parser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.i++ // [
	a := []any{}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		p.depth--
		return a, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.fail("")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.ws()
		case ']':
			p.i++
			p.depth--
			return a, nil
		default:
			return nil, p.fail("after array element")
		}
	}
}

// str parses a string literal. Invalid UTF-8 becomes U+FFFD and lone
// surrogate escapes become U+FFFD, as encoding/json does.
func (p *parser) str() (any, error) {
	p.i++ // opening quote
	start := p.i
	// Fast path: plain ASCII without escapes.
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := string(p.b[start:p.i])
			p.i++
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		p.i++
	}
	out := make([]byte, 0, p.i-start+16)
	out = append(out, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), nil
		case c < 0x20:
			return nil, p.fail("in string literal")
		case c == '\\':
			p.i++
			if p.i >= len(p.b) {
				return nil, p.fail("")
			}
			switch e := p.b[p.i]; e {
			case '"', '\\', '/':
				out = append(out, e)
				p.i++
			case 'b':
				out = append(out, '\b')
				p.i++
			case 'f':
				out = append(out, '\f')
				p.i++
			case 'n':
				out = append(out, '\n')
				p.i++
			case 'r':
				out = append(out, '\r')
				p.i++
			case 't':
				out = append(out, '\t')
				p.i++
			case 'u':
				p.i++
				r, ok := p.hex4()
				if !ok {
					return nil, p.fail("in \\u hexadecimal character escape")
				}
				if utf16.IsSurrogate(r) {
					// A valid pair combines; anything else is U+FFFD and
					// the next escape stands on its own.
					if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
						save := p.i
						p.i += 2
						r2, ok := p.hex4()
						if ok {
							if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
								out = utf8.AppendRune(out, d)
								continue
							}
						}
						p.i = save
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
			default:
				return nil, p.fail("in string escape code")
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			p.i++
		default:
			r, size := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, p.b[p.i:p.i+size]...)
			}
			p.i += size
		}
	}
	return nil, p.fail("")
}

func (p *parser) hex4() (rune, bool) {
	if len(p.b)-p.i < 4 {
		for p.i < len(p.b) && isHex(p.b[p.i]) {
			p.i++
		}
		return 0, false
	}
	var r rune
	for k := 0; k < 4; k++ {
		c := p.b[p.i]
		if !isHex(c) {
			return 0, false
		}
		r <<= 4
		switch {
		case c <= '9':
			r |= rune(c - '0')
		case c >= 'a':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
		p.i++
	}
	return r, true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
