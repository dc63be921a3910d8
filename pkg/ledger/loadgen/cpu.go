package loadgen

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user + system) this process has used. Throughput
// on a shared machine swings with other processes' load; CPU time per
// transaction does not, so benchmarks report both.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
