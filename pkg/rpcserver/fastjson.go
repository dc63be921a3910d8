package rpcserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"unicode/utf8"
)

// A single-pass JSON scanner for the request envelope. encoding/json
// validates its whole input before decoding it, so splitting a batch,
// decoding each request and then its params reads a sendTransaction body
// (mostly one long base64 string) six or seven times; this reads it once.
// scanValue accepts exactly what json.Valid accepts (FuzzScanValue checks
// it, up to the depth limit), so error codes do not change.
//
// The scanner recurses once per nesting level, so every entry point takes
// the depth left (Options.MaxJSONDepth at the top): deeper input fails
// with scanTooDeep after at most that many frames, whatever its size.

// Results of scanValue besides an index.
const (
	scanInvalid = -1 // not JSON
	scanTooDeep = -2 // nested deeper than allowed
)

// scanValue validates the JSON value starting at b[i] (after optional
// whitespace), nested at most depth levels, and returns the index just
// past it, or scanInvalid or scanTooDeep.
func scanValue(b []byte, i, depth int) int {
	i = skipSpace(b, i)
	if i >= len(b) {
		return scanInvalid
	}
	switch c := b[i]; {
	case c == '{' || c == '[':
		if depth <= 0 {
			return scanTooDeep
		}
		if c == '[' {
			return scanArray(b, i, depth)
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1
		}
		for {
			if i = scanString(b, skipSpace(b, i)); i < 0 {
				return -1
			}
			if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
				return -1
			}
			if i = scanValue(b, i+1, depth-1); i < 0 {
				return i
			}
			if i = skipSpace(b, i); i >= len(b) {
				return -1
			}
			switch b[i] {
			case ',':
				i++
			case '}':
				return i + 1
			default:
				return -1
			}
		}
	case c == '"':
		return scanString(b, i)
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(b, i)
	}
	return -1
}

// scanArray validates the array starting at b[i] ('['), whose elements
// may nest depth-1 levels.
func scanArray(b []byte, i, depth int) int {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		if i = scanValue(b, i, depth-1); i < 0 {
			return i
		}
		if i = skipSpace(b, i); i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i++
		case ']':
			return i + 1
		default:
			return -1
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func scanLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

func scanNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return -1
		}
	}
	return i
}

// scanString validates a string starting at the quote b[i]. Runs of
// bytes that stand for themselves (printable ASCII but the quote and the
// backslash) are skipped eight at a time: a request is mostly one long
// base64 or base58 string, scanned once per layer of the envelope (the
// batch, the request, its params), and a byte at a time that was 5 % of
// the node's CPU under sendTransaction batches.
func scanString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	i++
	for i < len(b) {
		for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 {
					return -1
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		case c < 0x20:
			return -1
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return -1
			}
			i += n
		}
	}
	return -1
}

// Bytes repeated through a word, for plainWord.
const (
	wordOnes = 0x0101010101010101
	wordHigh = 0x8080808080808080
)

// plainWord reports whether each of the 8 bytes of w is ASCII from 0x20
// up, other than '"' and '\\': bytes a JSON string holds as they are.
func plainWord(w uint64) bool {
	// Some byte is 0x80 or above; else some byte is below 0x20 (its
	// subtraction wraps and sets the high bit; a borrow only follows such
	// a byte); some byte is a quote or a backslash (a zero byte after the
	// xor: (v - ones) &^ v has a high bit set exactly then).
	zero := func(v uint64) uint64 { return (v - wordOnes) &^ v & wordHigh }
	return (w|(w-0x20*wordOnes))&wordHigh|zero(w^('"'*wordOnes))|zero(w^('\\'*wordOnes)) == 0
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// checkJSON is json.Valid in one pass, with a nesting limit: it returns
// nil, errInvalidJSON or errTooDeep.
func checkJSON(b []byte, maxDepth int) error {
	end := scanValue(b, 0, maxDepth)
	switch {
	case end == scanTooDeep:
		return errTooDeep
	case end < 0 || skipSpace(b, end) != len(b):
		return errInvalidJSON
	}
	return nil
}

var (
	errInvalidJSON = errors.New("invalid JSON")
	errTooDeep     = errors.New("JSON nested too deep")
)

// validatedDepth is the depth bound given to the scanner for input that
// checkJSON already accepted: its nesting is bounded by the handler's
// MaxJSONDepth, so this bound is never reached.
const validatedDepth = math.MaxInt

// splitArray splits a valid JSON array into its elements (b must have
// passed checkJSON).
func splitArray(b []byte) ([]json.RawMessage, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	i = skipSpace(b, i+1)
	out := []json.RawMessage{}
	if i < len(b) && b[i] == ']' {
		return out, skipSpace(b, i+1) == len(b)
	}
	for {
		start := skipSpace(b, i)
		end := scanValue(b, start, validatedDepth)
		if end < 0 {
			return nil, false
		}
		out = append(out, json.RawMessage(b[start:end]))
		if i = skipSpace(b, end); i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i++
		case ']':
			return out, skipSpace(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

// envelope holds the raw fields of a request object; a field that is
// absent is nil.
type envelope struct {
	jsonrpc, id, method, params json.RawMessage
}

// scanEnvelope splits a request object into its fields (the last of
// duplicate keys wins, as in encoding/json). ok is false when b is not a
// JSON object; b must be valid JSON.
func scanEnvelope(b []byte) (env envelope, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return env, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return env, true
	}
	for {
		ks := skipSpace(b, i)
		ke := scanString(b, ks)
		if ke < 0 {
			return env, false
		}
		i = skipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return env, false
		}
		vs := skipSpace(b, i+1)
		ve := scanValue(b, vs, validatedDepth)
		if ve < 0 {
			return env, false
		}
		key, plain := plainString(b[ks:ke])
		if !plain {
			var k string
			if json.Unmarshal(b[ks:ke], &k) != nil {
				return env, false
			}
			key = k
		}
		v := json.RawMessage(b[vs:ve])
		switch key {
		case "jsonrpc":
			env.jsonrpc = v
		case "id":
			env.id = v
		case "method":
			env.method = v
		case "params":
			env.params = v
		}
		if i = skipSpace(b, ve); i >= len(b) {
			return env, false
		}
		switch b[i] {
		case ',':
			i++
		case '}':
			return env, true
		default:
			return env, false
		}
	}
}

// plainString returns the content of a valid JSON string without escape
// sequences; ok is false for anything else (use encoding/json then).
func plainString(b []byte) (string, bool) {
	c, ok := plainContent(b)
	return string(c), ok
}

// plainContent is plainString's content as a part of b, not a copy.
func plainContent(b []byte) ([]byte, bool) {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' || bytes.IndexByte(b, '\\') >= 0 {
		return nil, false
	}
	return b[1 : len(b)-1], true
}

// sendConfig is sendTransaction's configuration object.
type sendConfig struct {
	Encoding            *string `json:"encoding"`
	SkipPreflight       bool    `json:"skipPreflight"`
	PreflightCommitment *string `json:"preflightCommitment"`
	MaxRetries          *uint   `json:"maxRetries"`
	MinContextSlot      *uint64 `json:"minContextSlot"`
}

// parseSendConfig reads the configuration clients send with nearly every
// transaction ({"encoding":"base64","skipPreflight":false,
// "preflightCommitment":"processed"}) without encoding/json, which cost
// about 2 % of a node's CPU under a stream of sends. It accepts only a
// flat object with exactly those keys, plain ASCII strings and booleans;
// for anything else it returns false and the caller decodes with
// encoding/json, so what is accepted reads exactly as encoding/json
// would read it.
func parseSendConfig(b []byte, cfg *sendConfig) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		key, next, ok := asciiString(b, i)
		if !ok {
			return false
		}
		i = skipSpace(b, next)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		switch key {
		case "encoding", "preflightCommitment":
			s, next, ok := asciiString(b, i)
			if !ok {
				return false
			}
			if key == "encoding" {
				cfg.Encoding = &s
			} else {
				cfg.PreflightCommitment = &s
			}
			i = next
		case "skipPreflight":
			switch {
			case bytes.HasPrefix(b[i:], []byte("true")):
				cfg.SkipPreflight, i = true, i+4
			case bytes.HasPrefix(b[i:], []byte("false")):
				cfg.SkipPreflight, i = false, i+5
			default:
				return false
			}
		default:
			return false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// asciiString reads a JSON string at b[i] made of printable ASCII without
// escapes, returning it and the index after its closing quote.
func asciiString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return string(b[i+1 : j]), j + 1, true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return "", 0, false
		}
	}
	return "", 0, false
}
