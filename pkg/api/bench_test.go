package api

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkTransferHandler measures the handler alone (no sockets): decode,
// plan, compile, encode, against the embedded ledgers with warm caches.
//
//	go test -run '^$' -bench TransferHandler -benchmem ./pkg/api
func BenchmarkTransferHandler(b *testing.B) {
	h := newHarness(b, harnessOptions{cfg: func(c *Config) { c.Logger = nil }})
	alice, bob := pubOf(seedKey("alice")), pubOf(seedKey("bob"))
	for _, c := range []struct{ name, vis, from, to string }{
		{"public", "public", "base", "base"},
		{"private", "private", "base", "base"},
		{"private-eph", "private", "base", "ephemeral"},
	} {
		body := []byte(transferBody(alice, bob, h.mint, c.vis, c.from, c.to, ""))
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			rec := httptest.NewRecorder()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/v1/spl/transfer", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				rec.Body.Reset()
				h.srv.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
