//go:build unix

package main

import (
	"os"
	"syscall"
)

// fileID is the file's inode: a file deleted and recreated gets a new one.
func fileID(st os.FileInfo) uint64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Ino)
	}
	return 0
}
