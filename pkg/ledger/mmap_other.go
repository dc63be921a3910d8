//go:build !unix

package ledger

import (
	"io"
	"os"
)

// mapFile reads a file into memory (no mmap on this platform).
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}

// dropMapped does nothing here: tables are heap copies, not mappings.
func dropMapped([]byte) {}

// dropMappedAt does nothing here.
func dropMappedAt(uintptr, int) {}
