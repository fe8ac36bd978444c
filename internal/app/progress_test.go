package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/lifecycle"
	"github.com/berth-sim/berth/internal/progress"
)

// fakeProgress is always due and records what it was shown, and how much
// the command had printed at each call, to check the line is erased before
// any output.
type fakeProgress struct {
	out     *bytes.Buffer
	shown   []progress.Snapshot
	drawn   bool
	drawnAt int
	t       *testing.T
}

func (f *fakeProgress) Due() bool { return true }

func (f *fakeProgress) Show(s progress.Snapshot) {
	if f.drawn && f.out.Len() != f.drawnAt {
		f.t.Errorf("output printed over a drawn line")
	}
	f.shown = append(f.shown, s)
	f.drawn, f.drawnAt = true, f.out.Len()
}

func (f *fakeProgress) Clear() {
	if f.drawn && f.out.Len() != f.drawnAt {
		f.t.Errorf("output printed before the line was erased")
	}
	f.drawn = false
}

// runCommands applies two nodes and a deployment, then advances an hour,
// with p as the progress hook (nil: none), and returns what was printed and
// the saved state.
func runCommands(t *testing.T, p func(out *bytes.Buffer) Progress) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	var out bytes.Buffer
	opts := Options{StateDir: dir, Seed: 1, Out: &out, ErrOut: &out, Progress: p(&out)}
	// Ten pods of 500m on two 2-CPU nodes: eight fit, two stay pending.
	nodes := writeManifest(t, "nodes.yaml", twoNodes)
	web := writeManifest(t, "web.yaml", strings.Replace(webDeployment, "replicas: 3", "replicas: 10", 1))
	for _, cmd := range []func(a *App) error{
		func(a *App) error { return a.Apply(ApplyRequest{Files: []string{nodes, web}}) },
		func(a *App) error { return a.Advance(time.Hour) },
	} {
		a, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		err = cmd(a)
		a.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The database file's bytes depend on bbolt's page placement, which
	// follows map order; the state it holds is compared instead.
	s, err := cluster.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	state, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), state
}

// TestProgressObservesOnly: the hook sees the run's virtual time and pods,
// is erased before every line the commands print, and changes neither the
// output nor the saved state.
func TestProgressObservesOnly(t *testing.T) {
	plainOut, plainState := runCommands(t, func(*bytes.Buffer) Progress { return nil })
	var f *fakeProgress
	out, state := runCommands(t, func(out *bytes.Buffer) Progress {
		f = &fakeProgress{out: out, t: t}
		return f
	})
	if out != plainOut {
		t.Errorf("output with progress %q, without %q", out, plainOut)
	}
	if !bytes.Equal(state, plainState) {
		t.Errorf("saved state differs with progress")
	}
	if f.drawn {
		t.Errorf("line left drawn at the end")
	}
	if len(f.shown) == 0 {
		t.Fatal("nothing shown")
	}
	first, last := f.shown[0], f.shown[len(f.shown)-1]
	// apply settles open-ended; advance counts up to its hour.
	if first.Total != 0 || first.Nodes != 2 {
		t.Errorf("first snapshot %+v, want apply settling on 2 nodes", first)
	}
	if last.Total != time.Hour || last.Elapsed != time.Hour || last.Pending != 2 || last.Nodes != 2 {
		t.Errorf("last snapshot %+v, want advance at 1h of 1h with 2 pods pending on 2 nodes", last)
	}
	for _, s := range f.shown {
		if s.Elapsed < 0 || (s.Total > 0 && s.Elapsed > s.Total) {
			t.Errorf("snapshot %+v outside its run", s)
		}
	}
}

// TestSnapshotCounts: unbound pods are pending (not those being deleted),
// and NodeClaims launch until Initialized (not those being deleted).
func TestSnapshotCounts(t *testing.T) {
	s := cluster.New("", 1)
	start := s.Now
	s.Now = s.Now.Add(90 * time.Minute)
	gone := metav1.NewTime(s.Now)
	s.Pods = map[string]*corev1.Pod{
		"a": {},
		"b": {Spec: corev1.PodSpec{NodeName: "n1"}},
		"c": {ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &gone}},
	}
	s.Nodes = map[string]*corev1.Node{"n1": {}}
	initialized := []metav1.Condition{{Type: lifecycle.ConditionInitialized, Status: metav1.ConditionTrue}}
	s.NodeClaims = map[string]*karpv1.NodeClaim{
		"new":   {},
		"ready": {Status: karpv1.NodeClaimStatus{Conditions: initialized}},
		"gone":  {ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &gone}},
	}
	got := snapshot(s, start, 2*time.Hour)
	want := progress.Snapshot{Elapsed: 90 * time.Minute, Total: 2 * time.Hour, Pending: 1, Nodes: 1, Launching: 1}
	if got != want {
		t.Fatalf("snapshot %+v, want %+v", got, want)
	}
}
