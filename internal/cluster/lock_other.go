//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package cluster

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// heldFile marks the lock on platforms without flock: created exclusively,
// removed on release. Readers take it too (no shared mode here), and a
// command that crashed leaves it behind; the timeout error then applies and
// removing the file by hand frees the state.
const heldFile = LockFile + ".held"

func tryLock(dir string, exclusive bool) (release func() error, held bool, err error) {
	path := filepath.Join(dir, heldFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, true, nil
	}
	if err != nil {
		if !exclusive && errors.Is(err, fs.ErrPermission) {
			return func() error { return nil }, false, nil
		}
		return nil, false, err
	}
	f.Close()
	return func() error { return os.Remove(path) }, false, nil
}
