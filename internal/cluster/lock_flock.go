//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cluster

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// tryLock takes a flock(2) on the lock file without blocking. The kernel
// drops the lock when the process ends, so a crashed command never leaves
// a stale lock behind. held reports that another command has it.
func tryLock(dir string, exclusive bool) (release func() error, held bool, err error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil && !exclusive && (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)) {
		// A reader of a state it may not write (a read-only checkout):
		// lock the file if it is there, else read without a lock.
		if f, err = os.Open(path); errors.Is(err, fs.ErrNotExist) {
			return func() error { return nil }, false, nil
		}
	}
	if err != nil {
		return nil, false, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, true, nil
	}
	if err != nil {
		f.Close()
		return nil, false, err
	}
	// Closing the file releases the lock.
	return f.Close, false, nil
}
