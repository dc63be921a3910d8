//go:build unix

package ledger

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps a file read-only. Its pages cost no Go heap and are read
// from disk (or the page cache) only when touched.
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return unix.Munmap(b) }, nil
}
