//go:build !unix && !windows

package server

import (
	"errors"
	"os"
)

var errWouldBlock = errors.New("locked")

// Platforms without file locks (plan9, wasm) run unlocked: the ledgers'
// own database locks still refuse a second instance, only later.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }
