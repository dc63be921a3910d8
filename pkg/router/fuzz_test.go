package router

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzHandler feeds arbitrary bodies to the handler: it must never panic,
// and every answer must be a valid JSON-RPC response (an envelope, or a
// non-empty array of them), or an empty 204 when only notifications came.
func FuzzHandler(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"getRoutes"}`,
		`{"jsonrpc":"2.0","id":"x","method":"getIdentity","params":[]}`,
		`{"jsonrpc":"2.0","id":2,"method":"getDelegationStatus","params":["DSLT4neMssXyDn2nHPzn5n9tJHu5Nywhj3dFgYjyyLwp"]}`,
		`{"jsonrpc":"2.0","id":3,"method":"getBlockhashForAccounts","params":[["DSLT4neMssXyDn2nHPzn5n9tJHu5Nywhj3dFgYjyyLwp","HQ6fRTZyj9WYiYmwHsezgqYNsdWe4VaF6TZVsbZXUnzu"]]}`,
		`[{"jsonrpc":"2.0","id":1,"method":"getHealth"},{"jsonrpc":"2.0","method":"getRoutes"}]`,
		`[{"jsonrpc":"2.0","method":"getRoutes"}]`,
		`{"jsonrpc":"2.0","id":null,"method":"getDelegationStatus","params":{"a":1}}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"getRoutes"}`,
		`[]`, `[1,2]`, `{`, ``, `null`, `"x"`, `{"id":[1]}`,
		// Depth and size.
		strings.Repeat("[", 200), strings.Repeat("[", 128) + strings.Repeat("]", 128), strings.Repeat("[", 127) + strings.Repeat("]", 127),
		`{"jsonrpc":"2.0","id":2,"method":"getDelegationStatus","params":["` + strings.Repeat("z", 5000) + `"]}`,
		"[" + strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"getHealth"},`, 200) + `{"jsonrpc":"2.0","id":1,"method":"getHealth"}]`,
	} {
		f.Add([]byte(s))
	}
	l := newLedger()
	l.delegate(f, eATA, localID, 1)
	h := &Handler{Backend: mustLocal(f, l), MaxBodyBytes: 1 << 16}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/", bytes.NewReader(body)))
		out := rec.Body.Bytes()
		switch rec.Code {
		case http.StatusNoContent:
			if len(out) != 0 {
				t.Fatalf("204 with body %q", out)
			}
			return
		case http.StatusOK, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("HTTP %d for %q", rec.Code, body)
		}
		out = bytes.TrimSpace(out)
		if len(out) > 0 && out[0] == '[' {
			var arr []json.RawMessage
			if err := json.Unmarshal(out, &arr); err != nil || len(arr) == 0 {
				t.Fatalf("bad batch response %q for %q", out, body)
			}
			for _, e := range arr {
				checkEnvelope(t, e, body)
			}
			return
		}
		checkEnvelope(t, out, body)
	})
}

func checkEnvelope(t *testing.T, b []byte, req []byte) {
	t.Helper()
	var env map[string]json.RawMessage
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("response %q is not a JSON object (request %q): %v", b, req, err)
	}
	if string(env["jsonrpc"]) != `"2.0"` {
		t.Fatalf("response %q lacks jsonrpc 2.0", b)
	}
	if _, ok := env["id"]; !ok {
		t.Fatalf("response %q lacks id", b)
	}
	_, hasResult := env["result"]
	errRaw, hasError := env["error"]
	if hasResult == hasError {
		t.Fatalf("response %q must carry exactly one of result and error", b)
	}
	if hasError {
		var e struct {
			Code    *int    `json:"code"`
			Message *string `json:"message"`
		}
		if err := json.Unmarshal(errRaw, &e); err != nil || e.Code == nil || e.Message == nil {
			t.Fatalf("error object %s lacks code or message", errRaw)
		}
		if len(*e.Message) > 512 {
			t.Fatalf("error message of %d bytes repeats the input: %.100s…", len(*e.Message), *e.Message)
		}
	}
}
