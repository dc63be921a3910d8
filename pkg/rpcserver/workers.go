package rpcserver

import "time"

// workerPool runs functions on goroutines that are kept for the next
// ones. A batch's items are answered concurrently; a goroutine started
// per batch begins with a small stack and grows it (a copy) on every
// batch whose calls go deep, as a transfer to an account read from disk
// does: 2 µs per transfer at a million accounts, 3 % of the node's CPU.
// A kept worker has grown its stack once.
//
// The zero value is not usable; newWorkerPool makes one. It never blocks
// the caller: with no idle worker it starts one, so it holds at most as
// many goroutines as functions ran at once, and a worker idle for
// workerIdle exits.
type workerPool struct {
	work chan func()
}

// workerIdle is how long a worker waits for more work before it exits.
const workerIdle = 5 * time.Second

func newWorkerPool() *workerPool { return &workerPool{work: make(chan func())} }

// run runs f on an idle worker, or on a new one if none is idle.
func (p *workerPool) run(f func()) {
	select {
	case p.work <- f:
	default:
		go p.worker(f)
	}
}

func (p *workerPool) worker(f func()) {
	f()
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		select {
		case f := <-p.work:
			f()
			idle.Reset(workerIdle)
		case <-idle.C:
			return
		}
	}
}
