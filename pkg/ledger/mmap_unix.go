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

// dropMapped tells the kernel that the process no longer needs the pages
// of a read-only shared file mapping that it touched: they leave the
// process's resident set but stay in the page cache, and the next read
// maps them again (a minor fault, no disk read while the cache keeps
// them). Nothing is lost: the mapping is shared and read-only, so the
// file holds every byte. Errors are ignored; the pages then stay.
func dropMapped(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED)
	}
}

// dropMappedAt is dropMapped for a mapping known by its address (bbolt's,
// which it exposes only as DB.Info().Data).
func dropMappedAt(addr uintptr, n int) {
	if addr != 0 && n > 0 {
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, addr, uintptr(n), unix.MADV_DONTNEED)
	}
}
