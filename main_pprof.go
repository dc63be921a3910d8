//go:build pprof

package main

import (
	"log"
	"net/http"
	_ "net/http/pprof"
	"os"
)

// A profiling build (go build -tags pprof) serves net/http/pprof on
// FERRY_PPROF_ADDR (loopback only) so the ledger can be profiled under load;
// the released binary has no such listener.
func init() {
	addr := os.Getenv("FERRY_PPROF_ADDR")
	if addr == "" {
		return
	}
	go func() {
		if err := http.ListenAndServe(addr, nil); err != nil {
			log.Printf("pprof: %v", err)
		}
	}()
}
