package cluster

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// LockFile is the advisory lock every berth command takes on its state
// directory before it loads the state and holds until it has saved it, so
// concurrent commands run one after the other instead of losing updates.
// The file is empty and never rewritten or removed: removing a lock file that
// another process may be waiting on would let two holders in.
const LockFile = "lock"

// DefaultLockTimeout is how long a command waits for another one by default.
const DefaultLockTimeout = time.Minute

// lockPoll is how often a waiting command tries the lock again.
const lockPoll = 20 * time.Millisecond

// Lock is a held lock on a state directory; Unlock releases it.
type Lock struct {
	release func() error
}

// Unlock releases the lock; it is safe to call more than once.
func (l *Lock) Unlock() error {
	if l == nil || l.release == nil {
		return nil
	}
	r := l.release
	l.release = nil
	return r()
}

// LockTimeoutError says another command held the lock for the whole wait.
type LockTimeoutError struct {
	Dir     string
	Timeout time.Duration
}

func (e *LockTimeoutError) Error() string {
	return fmt.Sprintf("timed out after %s waiting for the lock on %s: another berth command is still using this state (wait for it, or raise --lock-timeout)", e.Timeout, e.Dir)
}

// LockState takes the lock on dir: exclusive for commands that write the
// state, shared for those that only read it. When the lock is held it says
// so once on wait and retries until timeout has passed (0: no waiting). A
// reader of a directory that does not exist takes no lock and creates
// nothing: there is no state to read.
func LockState(dir string, exclusive bool, timeout time.Duration, wait io.Writer) (*Lock, error) {
	if exclusive {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	} else if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return &Lock{}, nil
	}
	deadline := time.Now().Add(timeout)
	said := false
	for {
		release, held, err := tryLock(dir, exclusive)
		if err != nil {
			return nil, fmt.Errorf("locking %s: %w", dir, err)
		}
		if !held {
			return &Lock{release: release}, nil
		}
		if !time.Now().Before(deadline) {
			return nil, &LockTimeoutError{Dir: dir, Timeout: timeout}
		}
		if !said && wait != nil {
			fmt.Fprintf(wait, "berth: waiting for the lock on %s held by another berth command\n", dir)
			said = true
		}
		time.Sleep(lockPoll)
	}
}
