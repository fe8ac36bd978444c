package scheduler

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// TestUsedPortsAreASet: two pods bound without the scheduler share a host
// port on a node; when one goes, upstream's long-lived cache frees the port
// (its UsedPorts is a set), so a pod wanting it fits there until the
// scheduler restarts and lists the node's pods afresh.
func TestUsedPortsAreASet(t *testing.T) {
	bound := func(name string) *v1.Pod {
		p := withHostPort(plugintest.SizedPod(name, "100m", ""), 8080)
		p.Spec.NodeName = "n1"
		return p
	}
	setup := func() *cluster.State {
		s := newState("1.36", []*v1.Node{plugintest.SizedNode("n1", "4", "8Gi", 110)})
		created(s, bound("a"), bound("b"), plugintest.SizedPod("too-big", "8", ""))
		return s
	}
	for _, tt := range []struct {
		name    string
		restart bool
		want    string
	}{
		{"same scheduler: the port looks free", false, "n1"},
		{"restarted scheduler: the port is taken", true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := setup()
			sc := New()
			if _, err := sc.Sync(s); err != nil { // builds the cache with a and b
				t.Fatal(err)
			}
			a := s.Pods["default/a"]
			delete(s.Pods, "default/a")
			s.PodDeleted(a)
			created(s, withHostPort(plugintest.SizedPod("c", "100m", ""), 8080))
			if tt.restart {
				sc = New()
			}
			if _, err := sc.Sync(s); err != nil {
				t.Fatal(err)
			}
			if got := s.Pods["default/c"].Spec.NodeName; got != tt.want {
				t.Fatalf("pod c on %q, want %q", got, tt.want)
			}
		})
	}
}
