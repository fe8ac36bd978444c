package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// berthRun is one `berth apply -f FILE` into a new state, measured from the
// outside as a user's shell would: wall clock of the whole process, its CPU
// (user+sys) and peak resident set from the child's rusage.
type berthRun struct {
	Wall, CPU time.Duration
	PeakRSS   int64 // bytes
	// Pods and Scheduled count the pods in the state afterwards and those
	// bound to a node; Placement maps namespace/name to the node ("" when
	// pending).
	Pods, Scheduled int
	Placement       map[string]string
}

// buildBerth compiles the main module's command into dir and returns the
// binary's path. The conformance module replaces the main module with its
// parent directory, which `go list -m` reports.
func buildBerth(dir string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/berth-sim/berth").Output()
	if err != nil {
		return "", fmt.Errorf("locating the berth module: %w", err)
	}
	bin := filepath.Join(dir, "berth")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/berth")
	cmd.Dir = strings.TrimSpace(string(out))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/berth: %w", err)
	}
	return bin, nil
}

// applyFile runs berth apply on file into the new state directory state.
// Its output goes to a file (a user's terminal, without the terminal).
func applyFile(bin, file, state string) (berthRun, error) {
	var res berthRun
	logPath := state + ".apply.log"
	logFile, err := os.Create(logPath)
	if err != nil {
		return res, err
	}
	defer logFile.Close()
	var errOut bytes.Buffer
	cmd := exec.Command(bin, "--state", state, "apply", "-f", file)
	cmd.Stdout, cmd.Stderr = logFile, &errOut
	start := time.Now()
	err = cmd.Run()
	res.Wall = time.Since(start)
	if err != nil {
		return res, fmt.Errorf("berth apply -f %s: %v: %s", file, err, tail(errOut.String(), 800))
	}
	ps := cmd.ProcessState
	res.CPU = ps.UserTime() + ps.SystemTime()
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		res.PeakRSS = int64(ru.Maxrss) * 1024 // kilobytes on Linux
	}
	res.Placement, err = placements(bin, state)
	if err != nil {
		return res, err
	}
	res.Pods = len(res.Placement)
	for _, node := range res.Placement {
		if node != "" {
			res.Scheduled++
		}
	}
	return res, nil
}

// placements lists every pod of the state with its node through the CLI
// (not the state's files, whose format may change).
func placements(bin, state string) (map[string]string, error) {
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, "--state", state, "get", "pods", "-A", "-o",
		`jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {.spec.nodeName}{"\n"}{end}`)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("berth get pods: %v: %s", err, tail(errOut.String(), 800))
	}
	m := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		pod, node, _ := strings.Cut(line, " ")
		m[pod] = strings.TrimSpace(node)
	}
	return m, nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
