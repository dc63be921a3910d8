package rpcserver

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestWorkerPool: every function runs, concurrently when many are handed
// over at once, and functions handed over one after another reuse the
// idle workers instead of starting a goroutine each.
func TestWorkerPool(t *testing.T) {
	p := newWorkerPool()
	// Concurrent: 16 functions that each wait for all 16 to have started
	// can only finish if none waits for another's worker.
	var started sync.WaitGroup
	var wg sync.WaitGroup
	started.Add(16)
	wg.Add(16)
	var ran atomic.Int64
	for range 16 {
		p.run(func() {
			defer wg.Done()
			started.Done()
			started.Wait()
			ran.Add(1)
		})
	}
	wg.Wait()
	if ran.Load() != 16 {
		t.Fatalf("%d of 16 ran", ran.Load())
	}
	// Sequential: the workers above are idle now and take these.
	before := runtime.NumGoroutine()
	for range 200 {
		done := make(chan struct{})
		p.run(func() { close(done) })
		<-done
	}
	if grown := runtime.NumGoroutine() - before; grown > 10 {
		t.Fatalf("200 functions run one after another started %d goroutines", grown)
	}
}
