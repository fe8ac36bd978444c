package kubelet

import (
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNodeFactsMatchTheNode: the per-sync memo gives what nodeReporting and
// timingOf give for the node itself, including a node timing of its own,
// and nil for a name without a node.
func TestNodeFactsMatchTheNode(t *testing.T) {
	defer func(old func(*corev1.Node) (Timing, bool)) { NodeTiming = old }(NodeTiming)
	NodeTiming = func(n *corev1.Node) (Timing, bool) {
		if n.Labels["slow"] == "true" {
			return Timing{Sandbox: 9 * time.Second, Pull: 4 * time.Second, Start: time.Second}, true
		}
		return Timing{}, false
	}
	s := cluster.New("1.34", 1)
	ready := func(st corev1.ConditionStatus) []corev1.NodeCondition {
		return []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: st}}
	}
	for _, n := range []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "ready"}, Status: corev1.NodeStatus{Conditions: ready(corev1.ConditionTrue)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "not-ready"}, Status: corev1.NodeStatus{Conditions: ready(corev1.ConditionFalse)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "unknown"}, Status: corev1.NodeStatus{Conditions: ready(corev1.ConditionUnknown)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "no-conditions"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "slow", Labels: map[string]string{"slow": "true"}}, Status: corev1.NodeStatus{Conditions: ready(corev1.ConditionTrue)}},
	} {
		s.Nodes[n.Name] = n
	}
	nodes := &nodeInfos{s: s}
	for _, name := range []string{"ready", "not-ready", "unknown", "no-conditions", "slow", "missing", "ready"} {
		f := nodes.facts(name)
		node, ok := s.Nodes[name]
		if !ok {
			if f != nil {
				t.Errorf("%s: facts of a missing node: %+v", name, f)
			}
			continue
		}
		if f == nil || f.node != node {
			t.Fatalf("%s: facts name another node: %+v", name, f)
		}
		if f.reporting != nodeReporting(node) {
			t.Errorf("%s: reporting %v, nodeReporting %v", name, f.reporting, nodeReporting(node))
		}
		if f.timing != timingOf(node) {
			t.Errorf("%s: timing %+v, timingOf %+v", name, f.timing, timingOf(node))
		}
	}
}
