package generator

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/cli"
)

func TestForApplyCountsWhatEachReplicaSetAdopts(t *testing.T) {
	sc, err := Profile("mixed", 30, 400, 1)
	if err != nil {
		t.Fatal(err)
	}
	ForApply(sc)
	if len(sc.StatefulSets) == 0 || len(sc.ReplicaSets) == 0 {
		t.Fatalf("mixed has %d StatefulSets, %d ReplicaSets", len(sc.StatefulSets), len(sc.ReplicaSets))
	}
	total := int32(0)
	for _, rs := range sc.ReplicaSets {
		sel, _ := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		n := int32(0)
		for _, p := range sc.Pending {
			if p.Namespace == rs.Namespace && sel.Matches(labels.Set(p.Labels)) {
				n++
			}
		}
		if *rs.Spec.Replicas != n || rs.Status.Replicas != n {
			t.Errorf("%s/%s: replicas %d (status %d), selects %d", rs.Namespace, rs.Name, *rs.Spec.Replicas, rs.Status.Replicas, n)
		}
		total += n
	}
	if total == 0 || total == int32(len(sc.Pending)) {
		t.Errorf("ReplicaSets adopt %d of %d pods; the profile has bare pods and owned ones", total, len(sc.Pending))
	}
	for _, set := range sc.StatefulSets {
		if *set.Spec.Replicas != 0 {
			t.Errorf("%s/%s: replicas %d", set.Namespace, set.Name, *set.Spec.Replicas)
		}
	}
	for _, p := range sc.Pending {
		if len(p.OwnerReferences) != 0 {
			t.Fatalf("pod %s keeps its ownerReferences", p.Name)
		}
	}
}

func TestForApplyChangesOnlyOwnersAndReplicas(t *testing.T) {
	a, _ := Profile("mixed", 20, 100, 3)
	b, _ := Profile("mixed", 20, 100, 3)
	ForApply(b)
	ya, _ := YAML(a)
	yb, _ := YAML(b)
	if bytes.Equal(ya, yb) {
		t.Fatal("ForApply changed nothing")
	}
	for i := range a.ReplicaSets {
		a.ReplicaSets[i].Spec.Replicas, a.ReplicaSets[i].Status = b.ReplicaSets[i].Spec.Replicas, b.ReplicaSets[i].Status
	}
	for i := range a.StatefulSets {
		a.StatefulSets[i].Spec.Replicas, a.StatefulSets[i].Status = b.StatefulSets[i].Spec.Replicas, b.StatefulSets[i].Status
	}
	for _, p := range a.Pending {
		p.OwnerReferences = nil
	}
	ya, _ = YAML(a)
	if !bytes.Equal(ya, yb) {
		t.Error("ForApply changed more than owners and replica counts")
	}
}

// TestForApplyKeepsEveryPodThroughBerthApply applies the written file as a
// user does and lists the pods left: the reason ForApply exists.
func TestForApplyKeepsEveryPodThroughBerthApply(t *testing.T) {
	for _, profile := range []string{"basic", "mixed"} {
		t.Run(profile, func(t *testing.T) {
			sc, err := Profile(profile, 20, 150, 1)
			if err != nil {
				t.Fatal(err)
			}
			ForApply(sc)
			data, err := YAML(sc)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			file := filepath.Join(dir, profile+".yaml")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			state := filepath.Join(dir, "state")
			var out, errOut bytes.Buffer
			if code := cli.Run([]string{"--state", state, "apply", "-f", file}, nil, &out, &errOut); code != 0 {
				t.Fatalf("apply exited %d: %s", code, errOut.String())
			}
			out.Reset()
			if code := cli.Run([]string{"--state", state, "get", "pods", "-A", "-o", "name"}, nil, &out, &errOut); code != 0 {
				t.Fatalf("get exited %d: %s", code, errOut.String())
			}
			got := map[string]bool{}
			for _, n := range strings.Fields(out.String()) {
				got[n] = true
			}
			for _, p := range sc.Pending {
				if !got["pod/"+p.Name] {
					t.Errorf("pod %s/%s is gone after apply", p.Namespace, p.Name)
				}
			}
			if len(got) != len(sc.Pending) {
				t.Errorf("%d pods after apply, want the file's %d", len(got), len(sc.Pending))
			}
		})
	}
}
