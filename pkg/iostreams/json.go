package iostreams

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// ANSI styles of JSON tokens: 16-colour SGR codes, which every colour
// terminal understands and the Styled writers strip in pipes.
const (
	jsonKeyStyle     = "\x1b[1;34m" // bold blue
	jsonStringStyle  = "\x1b[32m"   // green
	jsonNumberStyle  = "\x1b[36m"   // cyan
	jsonLiteralStyle = "\x1b[33m"   // yellow: true, false
	jsonNullStyle    = "\x1b[2m"    // faint
	jsonReset        = "\x1b[0m"
)

// WriteJSON writes the JSON document data to w, indented by two spaces and
// followed by a newline; with color, keys, strings, numbers and literals
// are styled with ANSI codes. Numbers keep their exact text (u64 values
// above 2^53 are not rounded). Write through Styled so the codes disappear
// where colour is not wanted.
func WriteJSON(w io.Writer, data []byte, color bool) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, data, "", "  "); err != nil {
		return fmt.Errorf("format JSON: %w", err)
	}
	buf.WriteByte('\n')
	out := buf.Bytes()
	if color {
		out = ColorizeJSON(out)
	}
	_, err := w.Write(out)
	return err
}

// ColorizeJSON returns a copy of the valid JSON text b with ANSI styles
// around keys, strings, numbers, true/false and null. Whitespace and
// punctuation are kept as they are.
func ColorizeJSON(b []byte) []byte {
	out := make([]byte, 0, len(b)*3/2)
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(b)) // include the closing quote
			style := jsonStringStyle
			k := j
			for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '\n' || b[k] == '\r') {
				k++
			}
			if k < len(b) && b[k] == ':' {
				style = jsonKeyStyle
			}
			out = append(append(append(out, style...), b[i:j]...), jsonReset...)
			i = j
		case c == '-' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(b) && bytes.IndexByte([]byte("0123456789.eE+-"), b[j]) >= 0 {
				j++
			}
			out = append(append(append(out, jsonNumberStyle...), b[i:j]...), jsonReset...)
			i = j
		case bytes.HasPrefix(b[i:], []byte("true")), bytes.HasPrefix(b[i:], []byte("false")):
			n := 4
			if c == 'f' {
				n = 5
			}
			out = append(append(append(out, jsonLiteralStyle...), b[i:i+n]...), jsonReset...)
			i += n
		case bytes.HasPrefix(b[i:], []byte("null")):
			out = append(append(append(out, jsonNullStyle...), "null"...), jsonReset...)
			i += 4
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}
