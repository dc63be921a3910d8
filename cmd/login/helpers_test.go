package login

import "net/http"

// clitestNotFound answers like a payments API without the auth routes.
type clitestNotFound struct{}

func (clitestNotFound) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	w.Write([]byte(`{"error":{"code":"NOT_FOUND","message":"Route not found"}}`))
}
