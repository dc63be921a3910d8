package loadgen

import (
	"os"
	"strconv"
	"strings"
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

// DiskWritten is how many bytes process pid (0: this one) has caused to
// be written to storage (write_bytes of /proc/PID/io), or -1 where the
// kernel does not report it. The kernel counts a page-cache block when
// it is dirtied, and a whole large folio (up to 2 MiB) where it uses
// them, however little of it was written: DeviceWritten is closer to what
// reached the disk.
func DiskWritten(pid int) int64 { return procIO(pid, "write_bytes") }

// ReadCalls is how many read system calls process pid (0: this one) has
// made (syscr of /proc/PID/io: every read and pread, of files, sockets
// and pipes), or -1 where the kernel does not report it.
func ReadCalls(pid int) int64 { return procIO(pid, "syscr") }

// procIO reads one counter of /proc/PID/io (-1: not there).
func procIO(pid int, field string) int64 {
	path := "/proc/self/io"
	if pid != 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/io"
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+": "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}
