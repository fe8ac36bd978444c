package cluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/store"
)

// crashChildEnv tells a re-executed test binary to be the child that saves
// and gets killed; its value is the state directory.
const crashChildEnv = "BERTH_CRASH_CHILD"

// crashPointEnv names the write hook point at which the child kills itself.
const crashPointEnv = "BERTH_CRASH_POINT"

// crashToEnv, when set, is the directory the child saves into instead of
// the one it loaded: a complete write of a new file over the state there.
const crashToEnv = "BERTH_CRASH_TO"

// bigChange touches every part of the state: every node, half the pods
// deleted, new events and the clock, so that the save spans many pages.
func bigChange(s *State) {
	for _, n := range s.Nodes {
		n.Labels["crash-test"] = "new"
	}
	for i, k := range SortedKeys(s.Pods) {
		if i%2 == 0 {
			delete(s.Pods, k)
		}
	}
	for i := 0; i < 500; i++ {
		s.Now = s.Now.Add(time.Second)
		s.Record(EventSource{Component: "crash-test"}, corev1.ObjectReference{Kind: "Node", Name: fmt.Sprint("n", i)}, corev1.EventTypeNormal, "Crash", fmt.Sprint("event ", i))
	}
}

// fingerprint is the whole state in a canonical form.
func fingerprint(t *testing.T, dir string) string {
	t.Helper()
	s, err := Load(dir)
	if err != nil {
		t.Fatalf("loading after the crash: %v", err)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func copyState(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	data, err := os.ReadFile(filepath.Join(from, StateDB))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(to, StateDB), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return to
}

// TestCrashMidWrite saves a large change in a child process (this test
// binary run again) and kills it with SIGKILL at points of the write: at
// bbolt's hook before the commit, and at a range of moments after the save
// began. Whenever it dies, the state read back is exactly the previous one
// or exactly the new one.
func TestCrashMidWrite(t *testing.T) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
	base := t.TempDir()
	if err := syntheticState(300, 600, 2000).Save(base); err != nil {
		t.Fatal(err)
	}
	previous := fingerprint(t, base)
	done := copyState(t, base)
	s, err := Load(done)
	if err != nil {
		t.Fatal(err)
	}
	bigChange(s)
	if err := s.Save(done); err != nil {
		t.Fatal(err)
	}
	next := fingerprint(t, done)

	kills(t, base, "", previous, next)
}

// TestCrashMidFullWrite is TestCrashMidWrite for a complete save (a state
// saved where it was not loaded from, store.Creator): the child loads one
// copy of the previous state and saves the changed state over another;
// killed at any point, that directory holds exactly the previous or the
// new state.
func TestCrashMidFullWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	base := t.TempDir()
	if err := syntheticState(300, 600, 2000).Save(base); err != nil {
		t.Fatal(err)
	}
	previous := fingerprint(t, base)
	s, err := Load(copyState(t, base))
	if err != nil {
		t.Fatal(err)
	}
	bigChange(s)
	done := t.TempDir()
	if err := s.Save(done); err != nil {
		t.Fatal(err)
	}
	next := fingerprint(t, done)
	kills(t, base, "full", previous, next)
}

// kills runs the crash child on copies of base at every kill point and
// requires the state read back to be previous or next. With mode "full"
// the child saves into a second copy of base rather than the one it
// loaded.
func kills(t *testing.T, base, mode, previous, next string) {
	t.Helper()
	type kill struct {
		point string
		after time.Duration
	}
	kills := []kill{{point: "before-commit"}}
	for _, d := range []time.Duration{0, 200 * time.Microsecond, time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond, 100 * time.Millisecond} {
		kills = append(kills, kill{after: d})
	}
	seen := map[string]int{}
	for _, k := range kills {
		dir := copyState(t, base)
		target := dir
		env := append(os.Environ(), crashChildEnv+"="+dir, crashPointEnv+"="+k.point)
		if mode == "full" {
			target = copyState(t, base)
			env = append(env, crashToEnv+"="+target)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashMidWrite$")
		cmd.Env = env
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		if k.point == "" && line == "saving\n" {
			time.Sleep(k.after)
			cmd.Process.Signal(syscall.SIGKILL)
		}
		io.Copy(io.Discard, stdout)
		cmd.Wait()
		switch got := fingerprint(t, target); got {
		case previous:
			seen["previous"]++
		case next:
			seen["new"]++
		default:
			t.Errorf("kill %+v: the state read back is neither the previous nor the new one", k)
		}
	}
	t.Logf("after %d kills: %v", len(kills), seen)
}

// crashChild loads the state, applies bigChange and saves, killing itself
// at the named hook point when one is set.
func crashChild(dir string) {
	s, err := Load(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	bigChange(s)
	if point := os.Getenv(crashPointEnv); point != "" {
		store.SetTestHook(func(at string) {
			if at == point {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		})
	}
	fmt.Println("saving")
	if to := os.Getenv(crashToEnv); to != "" {
		dir = to
	}
	if err := s.Save(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}
