package cluster

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMatches(t *testing.T) {
	tests := []struct {
		reg, in ClusterEvent
		want    bool
	}{
		{ClusterEvent{ResourcePod, ActionDelete}, ClusterEvent{ResourceAssignedPod, ActionDelete}, true},
		{ClusterEvent{ResourcePod, ActionDelete}, ClusterEvent{ResourceAssignedPod, ActionAdd}, false},
		{ClusterEvent{ResourcePod, ActionAdd | ActionUpdatePodLabel}, ClusterEvent{ResourceUnscheduledPod, ActionUpdatePodLabel}, true},
		{ClusterEvent{ResourceNode, ActionAdd | ActionUpdateNodeTaint}, ClusterEvent{ResourceNode, ActionUpdateNodeTaint}, true},
		{ClusterEvent{ResourceNode, ActionAdd}, ClusterEvent{ResourcePod, ActionAdd}, false},
		// A plain Update (every update bit) only matches a registration of all of them.
		{ClusterEvent{ResourcePod, ActionDelete | ActionUpdatePodScaleDown}, ClusterEvent{ResourceAssignedPod, ActionUpdate}, false},
		{ClusterEvent{ResourcePVC, ActionAdd | ActionUpdate}, ClusterEvent{ResourcePVC, ActionUpdate}, true},
		{ClusterEvent{ResourceWildCard, ActionAll}, ClusterEvent{ResourceCSINode, ActionAdd}, true},
	}
	for _, tt := range tests {
		if got := tt.reg.Matches(tt.in); got != tt.want {
			t.Errorf("%v matches %v = %v, want %v", tt.reg, tt.in, got, tt.want)
		}
	}
}

func TestNodeUpdateActions(t *testing.T) {
	base := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "1"}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	tests := []struct {
		name   string
		change func(n *corev1.Node)
		want   []ActionType
	}{
		{"nothing the scheduler reads", func(n *corev1.Node) { n.Spec.PodCIDR = "10.0.0.0/24" }, nil},
		{"label", func(n *corev1.Node) { n.Labels["b"] = "2" }, []ActionType{ActionUpdateNodeLabel}},
		{"taint", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectNoSchedule}} }, []ActionType{ActionUpdateNodeTaint}},
		{"allocatable", func(n *corev1.Node) { n.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse("4") }, []ActionType{ActionUpdateNodeAllocatable}},
		{"condition status", func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionUnknown }, []ActionType{ActionUpdateNodeCondition}},
		{"condition heartbeat only", func(n *corev1.Node) { n.Status.Conditions[0].LastHeartbeatTime = metav1.Now() }, nil},
		{"cordon is no event", func(n *corev1.Node) { n.Spec.Unschedulable = true }, nil},
		{"annotation", func(n *corev1.Node) { n.Annotations = map[string]string{"k": "v"} }, []ActionType{ActionUpdateNodeAnnotation}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := base.DeepCopy()
			tt.change(n)
			if got := NodeUpdateActions(base, n); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("actions %v, want %v", got, tt.want)
			}
		})
	}
	cordoned := base.DeepCopy()
	cordoned.Spec.Unschedulable = true
	if got := NodeUpdateActions(cordoned, base); !reflect.DeepEqual(got, []ActionType{ActionUpdateNodeTaint}) {
		t.Errorf("uncordon: %v, want the taint update", got)
	}
}

func TestPodUpdateEvents(t *testing.T) {
	old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "1"}}, Spec: corev1.PodSpec{NodeName: "n"}}
	relabelled := old.DeepCopy()
	relabelled.Labels["a"] = "2"
	if got := PodUpdateEvents(old, relabelled); !reflect.DeepEqual(got, []ClusterEvent{{ResourceAssignedPod, ActionUpdatePodLabel}}) {
		t.Errorf("label change: %v", got)
	}
	status := old.DeepCopy()
	status.Status.Phase = corev1.PodRunning
	if got := PodUpdateEvents(old, status); !reflect.DeepEqual(got, []ClusterEvent{{ResourceAssignedPod, ActionUpdate}}) {
		t.Errorf("status change: %v", got)
	}
	pending := &corev1.Pod{Spec: corev1.PodSpec{SchedulingGates: []corev1.PodSchedulingGate{{Name: "g"}}}}
	ungated := pending.DeepCopy()
	ungated.Spec.SchedulingGates = nil
	ungated.Spec.Tolerations = []corev1.Toleration{{Key: "x"}}
	want := []ClusterEvent{{ResourceUnscheduledPod, ActionUpdatePodSchedulingGatesEliminated}, {ResourceUnscheduledPod, ActionUpdatePodToleration}}
	if got := PodUpdateEvents(pending, ungated); !reflect.DeepEqual(got, want) {
		t.Errorf("gates and tolerations: %v, want %v", got, want)
	}
}

// TestEventLog: each reader sees every event once; the log keeps what some
// reader has not read; the generation counts events.
func TestEventLog(t *testing.T) {
	s := New("", 1)
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	s.NodeAdded(n)
	a, from := s.ReadEvents("a")
	if len(a) != 1 || from != 0 {
		t.Fatalf("first read %d from %d", len(a), from)
	}
	s.NodeDeleted(n)
	s.TrimEvents() // b has not read anything yet: b is unknown, nothing read by all known readers but the first
	a, from = s.ReadEvents("a")
	if len(a) != 1 || from != 1 || a[0].Event.Action != ActionDelete {
		t.Fatalf("second read %v from %d", a, from)
	}
	s.TrimEvents()
	if got := s.EventSeq(); got != 2 {
		t.Fatalf("seq %d", got)
	}
	if b, from := s.ReadEvents("b"); len(b) != 0 || from != 2 {
		t.Fatalf("a new reader after the trim got %d from %d", len(b), from)
	}
	if s.SchedulingGeneration != 2 {
		t.Fatalf("generation %d", s.SchedulingGeneration)
	}
	// A pending pod's removal is no event for other pods.
	s.PodDeleted(&corev1.Pod{})
	if s.EventSeq() != 2 {
		t.Fatal("an unscheduled pod's removal was announced")
	}
}
