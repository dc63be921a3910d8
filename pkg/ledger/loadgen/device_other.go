//go:build !linux

package loadgen

// DeviceWritten is -1 where the kernel does not report a block device's
// writes (see the Linux version).
func DeviceWritten(path string) int64 { return -1 }
