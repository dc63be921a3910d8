//go:build !unix

package main

import "os"

// fileID is the modification time where there are no inodes.
func fileID(st os.FileInfo) uint64 { return uint64(st.ModTime().UnixNano()) }
