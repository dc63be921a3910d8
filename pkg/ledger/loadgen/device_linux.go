package loadgen

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DeviceWritten is how many bytes the block device holding path has
// written (sectors written in /sys/dev/block/MAJ:MIN/stat, times 512), or
// -1 where the kernel does not report it. It counts every process's
// writes and the file system's journal: what the disk was actually asked
// to store, which DiskWritten is not on kernels that account whole large
// folios (on Linux 6.18 with ext4 an idle ferry serve dirtied ~470 KB/s by
// write_bytes while its writes and fsyncs reached the disk as ~120 KB/s).
// Only meaningful on a machine where nothing else writes meanwhile.
func DeviceWritten(path string) int64 {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return -1
	}
	dev := uint64(st.Dev)
	b, err := os.ReadFile("/sys/dev/block/" + strconv.FormatUint(uint64(unix.Major(dev)), 10) + ":" + strconv.FormatUint(uint64(unix.Minor(dev)), 10) + "/stat")
	if err != nil {
		return -1
	}
	// Field 7 is sectors written, in 512-byte units whatever the device's
	// sector size (Documentation/block/stat.rst).
	f := strings.Fields(string(b))
	if len(f) < 7 {
		return -1
	}
	n, err := strconv.ParseInt(f[6], 10, 64)
	if err != nil {
		return -1
	}
	return n * 512
}
