package api

import (
	_ "embed"
	"net/http"
	"strconv"
)

// referenceHTML is the /reference page: self-contained (inline CSS and a
// small vanilla-JS renderer, no external resources) and rendering /doc.
//
//go:embed reference.html
var referenceHTML []byte

func (s *Server) serveReference(w *responseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(referenceHTML)))
	// Nothing outside this origin may load: the page fetches only /doc.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'")
	w.WriteHeader(http.StatusOK)
	w.Write(referenceHTML)
}
