//go:build race

package rpcserver

// raceDetector: the race detector's runtime changes allocation counts
// (sync.Pool drops items, instrumented code allocates), so allocation
// comparisons hold only in normal builds.
const raceDetector = true
