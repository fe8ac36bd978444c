package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
)

// subprocessArgs, when set in the environment, makes the test binary run
// one berth command line (JSON-encoded) instead of the tests: concurrency
// between real processes is what the lock is for.
const subprocessArgs = "BERTH_TEST_SUBPROCESS_ARGS"

func TestMain(m *testing.M) {
	if enc := os.Getenv(subprocessArgs); enc != "" {
		var args []string
		if err := json.Unmarshal([]byte(enc), &args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(Run(args, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// berthProcess prepares the test binary as a berth process.
func berthProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	enc, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), subprocessArgs+"="+string(enc))
	return cmd
}

const podTemplate = `apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  containers:
    - name: c
      image: nginx:1.27
      resources:
        requests:
          cpu: 10m
`

// TestConcurrentWriters starts writers together as separate processes on
// one state: two applies of different pods, a cordon and an advance. With
// the lock they run one after another, so every change survives; without it
// one read-modify-write overwrote another's.
func TestConcurrentWriters(t *testing.T) {
	base := newClusterState(t)
	good, err := os.ReadFile(filepath.Join(base, cluster.StateDB))
	if err != nil {
		t.Fatal(err)
	}
	before, err := cluster.Load(base)
	if err != nil {
		t.Fatal(err)
	}
	files := t.TempDir()
	for _, name := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(files, name+".yaml"), fmt.Appendf(nil, podTemplate, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const node = "ip-10-42-112-200.us-west-2.compute.internal"
	for round := 0; round < 4; round++ {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, cluster.StateDB), good, 0o600); err != nil {
			t.Fatal(err)
		}
		var cmds []*exec.Cmd
		var outs []*bytes.Buffer
		for _, args := range [][]string{
			{"apply", "-f", filepath.Join(files, "a.yaml")},
			{"apply", "-f", filepath.Join(files, "b.yaml")},
			{"cordon", node},
			{"advance", "1m"},
		} {
			cmd := berthProcess(t, append([]string{"--state", dir}, args...)...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmds, outs = append(cmds, cmd), append(outs, &out)
		}
		for _, cmd := range cmds {
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
		}
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("round %d: %v: %v\n%s", round, cmd.Env[len(cmd.Env)-1], err, outs[i])
			}
		}
		s, err := cluster.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		_, a := s.Pods["default/a"]
		_, b := s.Pods["default/b"]
		cordoned := s.Nodes[node].Spec.Unschedulable
		advanced := s.Now.Sub(before.Now) >= time.Minute
		if !a || !b || !cordoned || !advanced {
			t.Errorf("round %d lost an update: pod a %v, pod b %v, cordoned %v, advanced %v", round, a, b, cordoned, advanced)
		}
	}
}

// TestLockWaitAndTimeout holds the lock as another command would: a writer
// says once that it waits and gives up after --lock-timeout, a reader waits
// too (a writer may be half way), and neither touches the state; once the
// lock is free the writer goes ahead.
func TestLockWaitAndTimeout(t *testing.T) {
	dir := newClusterState(t)
	lock, err := cluster.LockState(dir, true, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"cordon", "ip-10-42-112-200.us-west-2.compute.internal"}, {"get", "nodes"}, {"reset"}} {
		var out, errOut bytes.Buffer
		code := Run(append([]string{"--state", dir, "--lock-timeout", "60ms"}, args...), nil, &out, &errOut)
		want := fmt.Sprintf("berth: waiting for the lock on %[1]s held by another berth command\nerror: timed out after 60ms waiting for the lock on %[1]s: another berth command is still using this state (wait for it, or raise --lock-timeout)\n", dir)
		if code != 1 || errOut.String() != want || out.Len() != 0 {
			t.Errorf("berth %s with the lock held: exit %d, stdout %q, stderr:\n%s\nwant exit 1 and:\n%s", strings.Join(args, " "), code, out.String(), errOut.String(), want)
		}
	}
	// A reader shares the lock with another reader.
	shared, err := cluster.LockState(dir, false, 0, nil)
	if err == nil {
		t.Error("a shared lock was granted while an exclusive one is held")
		shared.Unlock()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	var code int
	var errOut bytes.Buffer
	go func() {
		defer wg.Done()
		code = Run([]string{"--state", dir, "cordon", "ip-10-42-112-200.us-west-2.compute.internal"}, nil, &bytes.Buffer{}, &errOut)
	}()
	time.Sleep(50 * time.Millisecond)
	lock.Unlock()
	wg.Wait()
	if want := fmt.Sprintf("berth: waiting for the lock on %s held by another berth command\n", dir); code != 0 || errOut.String() != want {
		t.Errorf("cordon after the lock was freed: exit %d, stderr %q, want 0 and %q", code, errOut.String(), want)
	}
	r1, err := cluster.LockState(dir, false, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Unlock()
	if r2, err := cluster.LockState(dir, false, 0, nil); err != nil {
		t.Errorf("two readers: %v", err)
	} else {
		r2.Unlock()
	}
}
