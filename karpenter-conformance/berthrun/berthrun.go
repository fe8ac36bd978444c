// Package berthrun runs berth's Karpenter provisioning on a scenario, as the
// other side of the differential test.
//
// berth's provisioning builds against k8s.io v0.36 (Toleration.ToleratesTaint
// takes a logger there) and genuine Karpenter v1.6 against v0.33, so the two
// cannot share a binary. berth's side therefore lives in its own module,
// ./kberth, built from this source tree on berth's own dependency set and run
// as a persistent child process that answers one JSON line per scenario. It
// is built once per process (go build, so Go's build cache makes it cheap).
package berthrun

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/berth-sim/berth/karpenter-conformance/scenario"
)

type request struct {
	Scenario *scenario.Scenario `json:"scenario"`
	Decide   bool               `json:"decide,omitempty"`
}

type response struct {
	Result     *scenario.Result `json:"result,omitempty"`
	SolveNanos int64            `json:"solveNanos"`
	Error      string           `json:"error,omitempty"`
}

var (
	mu     sync.Mutex
	child  *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	dir    string
)

// Run provisions sc's pending pods once with berth (Prepare, Solve,
// Decide's truncation).
func Run(sc *scenario.Scenario) (*scenario.Result, error) {
	res, _, err := RunTimed(sc)
	return res, err
}

// RunTimed is Run that also reports the wall time of provisioning.Solve alone.
func RunTimed(sc *scenario.Scenario) (*scenario.Result, time.Duration, error) {
	resp, err := call(request{Scenario: sc})
	if err != nil {
		return nil, 0, err
	}
	return resp.Result, time.Duration(resp.SolveNanos), nil
}

// Decide provisions through provisioner.Decide itself, the controller's entry
// point, rather than the split the timing needs; both must agree.
func Decide(sc *scenario.Scenario) (*scenario.Result, error) {
	resp, err := call(request{Scenario: sc, Decide: true})
	if err != nil {
		return nil, err
	}
	return resp.Result, nil
}

func call(req request) (*response, error) {
	mu.Lock()
	defer mu.Unlock()
	if child == nil {
		if err := start(); err != nil {
			return nil, err
		}
	}
	line, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := stdin.Write(append(line, '\n')); err != nil {
		stopLocked()
		return nil, fmt.Errorf("kberth: %w", err)
	}
	out, err := stdout.ReadBytes('\n')
	if err != nil {
		stopLocked()
		return nil, fmt.Errorf("kberth: reading answer: %w", err)
	}
	var resp response
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("kberth: decoding answer: %w", err)
	}
	if resp.Error != "" {
		return nil, fmt.Errorf("berth on %s: %s", req.Scenario.Name, resp.Error)
	}
	if resp.Result == nil {
		resp.Result = &scenario.Result{}
	}
	return &resp, nil
}

// kberthDir is the child's module directory, next to this file.
func kberthDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate berthrun's source directory")
	}
	d := filepath.Join(filepath.Dir(file), "kberth")
	if _, err := os.Stat(filepath.Join(d, "go.mod")); err != nil {
		return "", fmt.Errorf("kberth module not found: %w", err)
	}
	return d, nil
}

func start() error {
	src, err := kberthDir()
	if err != nil {
		return err
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "kberth-"); err != nil {
			return err
		}
	}
	bin := filepath.Join(dir, "kberth")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = src
	// The child is its own module: the parent's GOFLAGS/GOWORK must not leak.
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building kberth: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	child, stdin, stdout = cmd, in, bufio.NewReaderSize(out, 1<<20)
	return nil
}

// Stop ends the child process (it is restarted on the next call).
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	stopLocked()
}

func stopLocked() {
	if child == nil {
		return
	}
	stdin.Close()
	_ = child.Wait()
	child, stdin, stdout = nil, nil, nil
	if dir != "" {
		os.RemoveAll(dir)
		dir = ""
	}
}
