package berthrun

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/conformance/scenario"
)

// TestBulkSync schedules all pending pods with one Sync: pods of equal
// priority go in the order they were enqueued, a higher priority first, and
// the one that no longer fits reports its FailedScheduling message.
func TestBulkSync(t *testing.T) {
	sc := &scenario.Scenario{Name: "t", KubernetesVersion: "1.36", PercentageOfNodesToScore: 100,
		Namespaces: []*v1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}},
		Nodes:      []*v1.Node{node("a", "2")}}
	r := New()
	r.SkipScores = true
	if err := r.Load(sc); err != nil {
		t.Fatal(err)
	}
	high := pod("p3-high", "1")
	prio := int32(100)
	high.Spec.Priority = &prio
	// p0 sorts before p1 by name; enqueue order must win among equals.
	pods := []*v1.Pod{pod("p1", "1"), pod("p0", "1"), high}
	if err := r.Enqueue(pods); err != nil {
		t.Fatal(err)
	}
	if err := r.Enqueue(pods[:1]); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("enqueueing a pod twice: %v", err)
	}
	if err := r.Sync(); err != nil {
		t.Fatal(err)
	}
	got := r.Outcomes()
	if got["default/p3-high"].Node != "a" || got["default/p1"].Node != "a" {
		t.Errorf("high-priority and first-enqueued pods not both placed: %+v", got)
	}
	if o := got["default/p0"]; o.Node != "" || !strings.HasPrefix(o.Message, "0/1 nodes are available: 1 Insufficient cpu.") {
		t.Errorf("p0: %+v, want unschedulable for cpu", o)
	}
	if d := r.sched.LastDiagnosis("default/p1"); d == nil || d.Totals != nil {
		t.Errorf("SkipScores: diagnosis of p1 %+v keeps scores", d)
	}
	if pods[0].Spec.NodeName != "" {
		t.Error("Enqueue modified the caller's pod")
	}
}

func TestBulkBeforeLoad(t *testing.T) {
	r := New()
	if err := r.Enqueue(nil); err == nil {
		t.Error("Enqueue before Load accepted")
	}
	if err := r.Sync(); err == nil {
		t.Error("Sync before Load accepted")
	}
}
