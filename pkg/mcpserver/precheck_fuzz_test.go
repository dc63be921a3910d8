package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzPrecheck feeds arbitrary bodies to the /mcp body check: it never
// panics; what it refuses gets a JSON-RPC error body; what it passes on
// reaches the SDK byte for byte, and (when it is valid JSON) nests no
// deeper and batches no more than the limits.
func FuzzPrecheck(f *testing.F) {
	const depth, batch = 5, 4
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `[]`, `[{},{},{},{}]`, `[{},{},{},{},{}]`,
		`[[[[[]]]]]`, `[[[[[[]]]]]]`, `{"a":"[[[[[[[["}`, `["\"[[[[[[[["]`, ``, `[`, `]]]]`,
		strings.Repeat("[", 1000), strings.Repeat(`{"a":`, 10) + "1" + strings.Repeat("}", 10),
		strings.Repeat(" ", 1<<16+1), // over the body limit
	} {
		f.Add([]byte(s))
	}
	h := &Handler{maxBody: 1 << 16, maxDepth: depth, maxBatch: batch}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
		w := httptest.NewRecorder()
		if !h.precheck(w, r) {
			var resp struct {
				JSONRPC string
				Error   *struct{ Code int }
				ID      any
			}
			tooBig := len(body) > int(h.maxBody) && w.Code == http.StatusRequestEntityTooLarge
			if json.Unmarshal(w.Body.Bytes(), &resp) != nil || resp.Error == nil || !tooBig && (w.Code != http.StatusBadRequest ||
				resp.Error.Code != CodeParseError && resp.Error.Code != CodeInvalidRequest) {
				t.Fatalf("refusal of %q: %d %s", body, w.Code, w.Body)
			}
			return
		}
		passed, err := io.ReadAll(r.Body)
		if err != nil || !bytes.Equal(passed, body) {
			t.Fatalf("the SDK would read %q, not %q (%v)", passed, body, err)
		}
		var v any
		if !utf8.Valid(body) || json.Unmarshal(body, &v) != nil {
			return
		}
		if d := depthOf(v); d > depth {
			t.Fatalf("%q nests %d levels, passed", body, d)
		}
		if a, ok := v.([]any); ok && len(a) > batch {
			t.Fatalf("%q: batch of %d passed", body, len(a))
		}
	})
}

func depthOf(v any) int {
	d := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	}
	return 0
}
