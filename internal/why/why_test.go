package why_test

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-sim/berth/internal/app"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/why"
)

// build applies each step (files, or a Kustomize directory when the path
// has no .yaml suffix) to a fresh state and returns it.
func build(t *testing.T, version string, steps ...string) *cluster.State {
	t.Helper()
	dir := t.TempDir()
	for _, step := range steps {
		a, err := app.Open(app.Options{StateDir: dir, Seed: 1, KubernetesVersion: version, Out: io.Discard, ErrOut: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		req := app.ApplyRequest{}
		path := filepath.Join("../..", step)
		if strings.HasSuffix(step, ".yaml") {
			req.Files = []string{path}
		} else {
			req.Kustomize = path
		}
		err = a.Apply(req)
		a.Close()
		if err != nil {
			t.Fatalf("apply %s: %v", step, err)
		}
	}
	a, err := app.Open(app.Options{StateDir: dir, ReadOnly: true, Out: io.Discard, ErrOut: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a.State()
}

var setups = map[string]struct {
	version string
	steps   []string
}{
	"seed000":    {"", []string{"examples/graviton/cluster.yaml", "examples/graviton/base", "examples/graviton/nodeselector-wo-toleration"}},
	"seed002-ca": {"1.30", []string{"examples/roles/cluster.yaml", "examples/roles/workloads.yaml", "examples/roles/cluster-autoscaler.yaml"}},
	"statefulset": {"", []string{"examples/statefulset-zones/cluster.yaml", "examples/statefulset-zones/storageclass.yaml",
		"examples/statefulset-zones/statefulset.yaml"}},
	"karpenter": {"", []string{"examples/karpenter/cluster.yaml", "internal/cli/testdata/manifests/why/karpenter-limits.yaml"}},
}

// TestLeavesStateAlone asks about every pod of each setup and checks that
// the state is byte for byte what it was: every answer and every fix is
// worked out on copies (docs/why.md).
func TestLeavesStateAlone(t *testing.T) {
	for _, name := range []string{"seed000", "seed002-ca", "statefulset", "karpenter"} {
		t.Run(name, func(t *testing.T) {
			setup := setups[name]
			s := build(t, setup.version, setup.steps...)
			before, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			pending := 0
			for _, key := range cluster.SortedKeys(s.Pods) {
				r, err := why.Pod(s, s.Pods[key], why.Options{})
				if err != nil {
					t.Fatalf("%s: %v", key, err)
				}
				if r.Node == "" {
					pending++
				}
			}
			if pending == 0 {
				t.Fatalf("setup %s has no pending pod to ask about", name)
			}
			after, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Errorf("asking why changed the state")
			}
		})
	}
}

// TestFixesAreVerified re-applies each suggested toleration for seed 000
// and checks, through the same text a user would read, that the
// first fix is the walk-through's toleration and that every fix names a
// landing place.
func TestFixesAreVerified(t *testing.T) {
	s := build(t, "", setups["seed000"].steps...)
	reports, err := why.Workload(s, "deployment", "ui", "ui", why.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 {
		t.Fatalf("got %d reports, want 1 pending pod", len(reports))
	}
	r := reports[0]
	if len(r.Fixes) == 0 || r.Fixes[0].Change != "add toleration frontend=true:NoExecute" {
		t.Fatalf("first fix = %+v, want the frontend toleration", r.Fixes)
	}
	if !strings.Contains(r.Fixes[0].LandsOn, "graviton") {
		t.Errorf("toleration lands on %q, want the graviton node", r.Fixes[0].LandsOn)
	}
	for _, f := range r.Fixes {
		if f.LandsOn == "" {
			t.Errorf("fix %q has no landing place", f.Change)
		}
	}
	// The scheduler layer tells the same story as the event.
	if l := r.SchedulerLayer; l == nil || l.Message != r.LastFailedScheduling || l.Stale {
		t.Errorf("scheduler layer message %q differs from the event %q", l.Message, r.LastFailedScheduling)
	}
}

// TestNoFixes leaves the suggestions out on request.
func TestNoFixes(t *testing.T) {
	s := build(t, "", setups["statefulset"].steps...)
	reports, err := why.Workload(s, "statefulset", "default", "express-nodejs", why.Options{NoFixes: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 || len(reports[0].Fixes) != 0 {
		t.Fatalf("reports = %d, fixes = %+v; want one report without fixes", len(reports), reports)
	}
	if got := reports[0].SchedulerLayer.NotEnoughCapacityIn; len(got) != 1 || got[0] != "eu-west-1a" {
		t.Errorf("NotEnoughCapacityIn = %v, want [eu-west-1a]", got)
	}
}

func TestWorkloadErrors(t *testing.T) {
	s := build(t, "", setups["seed000"].steps...)
	for _, tc := range []struct{ kind, name, want string }{
		{"deployment", "nope", `deployments.apps "nope" not found`},
		{"statefulset", "nope", `statefulsets.apps "nope" not found`},
		{"daemonset", "x", "why: daemonset is not a pod, deployment or statefulset"},
	} {
		_, err := why.Workload(s, tc.kind, "ui", tc.name, why.Options{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s/%s: err = %v, want %q", tc.kind, tc.name, err, tc.want)
		}
	}
}
