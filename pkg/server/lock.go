package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockFileName is the data directory's lock: ferry serve holds an
// exclusive lock on it (flock) for as long as it runs, so that a second
// instance, and a second instance's --reset, cannot touch the directory.
// The file holds the holder's process id, for the error message; it is
// never deleted (deleting a locked file would let a third process lock a
// new one).
const LockFileName = "ferry.lock"

// ErrDataDirLocked is returned when another process holds the data
// directory's lock.
var ErrDataDirLocked = errors.New("data directory is in use by another ferry serve")

// DirLock is a held data directory lock.
type DirLock struct {
	f *os.File
}

// LockDataDir takes the exclusive lock of dir (creating dir and the lock
// file if needed) without waiting. When another process holds it the
// error wraps ErrDataDirLocked and names that process.
func LockDataDir(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	path := filepath.Join(dir, LockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := lockFile(f); err != nil {
		holder := ""
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
				holder = fmt.Sprintf(" (pid %d)", pid)
			}
		}
		f.Close()
		if errors.Is(err, errWouldBlock) {
			return nil, fmt.Errorf("%w%s: %s is locked; stop that process first (nothing was changed)", ErrDataDirLocked, holder, dir)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// Record who holds it; a failure here only loses the hint.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &DirLock{f: f}, nil
}

// Unlock releases the lock.
func (l *DirLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unlockFile(l.f)
	return errors.Join(err, l.f.Close())
}
