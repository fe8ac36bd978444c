package cli

import (
	"io"
	"time"

	"golang.org/x/term"

	"github.com/berth-sim/berth/internal/app"
	"github.com/berth-sim/berth/internal/progress"
)

// stderrProgress is the status line for commands that run the cluster
// forward, or nil when errOut is not a terminal (pipes, files, CI and every
// test), so that output there stays exactly what it was
// (docs/progress.md). time.Now is handed over only to throttle redraws.
func stderrProgress(errOut io.Writer) app.Progress {
	l := progress.New(errOut, terminal, time.Now)
	if l == nil {
		return nil // a nil *Line in the interface would not compare nil
	}
	return l
}

// terminal asks the operating system whether fd is a terminal, and how wide.
func terminal(fd uintptr) (bool, int) {
	if !term.IsTerminal(int(fd)) {
		return false, 0
	}
	w, _, err := term.GetSize(int(fd))
	if err != nil {
		return true, 0
	}
	return true, w
}
