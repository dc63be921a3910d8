package loadgen

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDeviceWritten checks the device counter against a synced write of
// known size, and that a path on no block device reads as -1.
func TestDeviceWritten(t *testing.T) {
	if got := DeviceWritten(filepath.Join(t.TempDir(), "missing")); got != -1 {
		t.Fatalf("DeviceWritten(missing path) = %d, want -1", got)
	}
	if got := DeviceWritten("/proc/self"); got != -1 {
		t.Fatalf("DeviceWritten(/proc/self) = %d, want -1 (procfs is on no block device)", got)
	}
	dir := t.TempDir()
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	dev := uint64(st.Dev)
	_, statErr := os.Stat("/sys/dev/block/" + strconv.FormatUint(uint64(unix.Major(dev)), 10) + ":" + strconv.FormatUint(uint64(unix.Minor(dev)), 10) + "/stat")
	before := DeviceWritten(dir)
	if statErr != nil {
		// A temporary directory on tmpfs or overlay storage without a
		// device of its own: nothing to count.
		if before != -1 {
			t.Fatalf("DeviceWritten = %d for a directory on no block device (%v), want -1", before, statErr)
		}
		return
	}
	if before < 0 {
		t.Fatalf("DeviceWritten = %d for a directory on a block device", before)
	}
	const size = 4 << 20
	b := make([]byte, size)
	rand.Read(b)
	f, err := os.Create(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	// Other processes may write meanwhile, so only a lower bound holds.
	if got := DeviceWritten(dir) - before; got < size {
		t.Fatalf("device wrote %d bytes across a synced %d-byte write", got, size)
	}
}
