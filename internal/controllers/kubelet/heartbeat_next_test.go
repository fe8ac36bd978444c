package kubelet

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
)

// TestNextHeartbeat checks NextHeartbeat against what syncNodeHeartbeats
// does: at the instant it names the pass changes a lease or a heartbeat,
// and a second before it changes nothing.
func TestNextHeartbeat(t *testing.T) {
	t0 := cluster.Epoch
	node := func(name string, ready corev1.ConditionStatus, transition time.Time) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(t0)},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: ready, LastTransitionTime: metav1.NewTime(transition), LastHeartbeatTime: metav1.NewTime(transition)},
			}},
		}
	}
	for _, tc := range []struct {
		name  string
		nodes []*corev1.Node
		now   time.Duration
		want  time.Duration // from t0; -1: none
	}{
		{"lease tick", []*corev1.Node{node("a", corev1.ConditionTrue, t0)}, 3 * time.Second, 10 * time.Second},
		{"on a tick", []*corev1.Node{node("a", corev1.ConditionTrue, t0)}, 20 * time.Second, 30 * time.Second},
		{"heartbeat before the lease tick", []*corev1.Node{node("a", corev1.ConditionTrue, t0.Add(-4*time.Minute-55*time.Second))}, 3 * time.Second, 5 * time.Second},
		{"stopped kubelet", []*corev1.Node{node("a", corev1.ConditionUnknown, t0)}, 3 * time.Second, -1},
		{"earliest of two", []*corev1.Node{node("a", corev1.ConditionUnknown, t0), node("b", corev1.ConditionTrue, t0)}, 13 * time.Second, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := cluster.New("", 1)
			for _, n := range tc.nodes {
				s.Nodes[n.Name] = n
			}
			syncNodeHeartbeats(s) // creates the leases at t0
			s.Now = t0.Add(tc.now)
			syncNodeHeartbeats(s)
			got, ok := NextHeartbeat(s)
			if tc.want < 0 {
				if ok {
					t.Fatalf("NextHeartbeat = %s, want none", got.Sub(t0))
				}
				return
			}
			if !ok || !got.Equal(t0.Add(tc.want)) {
				t.Fatalf("NextHeartbeat = %s %v, want %s", got.Sub(t0), ok, tc.want)
			}
			before := s.Clone()
			s.Now = got.Add(-time.Second)
			syncNodeHeartbeats(s)
			if !sameHeartbeats(before, s) {
				t.Errorf("a pass a second before %s changed a lease or heartbeat", tc.want)
			}
			s.Now = got
			syncNodeHeartbeats(s)
			if sameHeartbeats(before, s) {
				t.Errorf("a pass at %s changed nothing", tc.want)
			}
		})
	}
	t.Run("missing lease", func(t *testing.T) {
		s := cluster.New("", 1)
		s.Nodes["a"] = node("a", corev1.ConditionTrue, t0)
		if got, ok := NextHeartbeat(s); !ok || !got.Equal(s.Now) {
			t.Fatalf("NextHeartbeat = %s %v, want now", got, ok)
		}
	})
}

func sameHeartbeats(a, b *cluster.State) bool {
	for key, l := range a.Leases {
		if !l.Spec.RenewTime.Equal(b.Leases[key].Spec.RenewTime) {
			return false
		}
	}
	for name, n := range a.Nodes {
		for i, c := range n.Status.Conditions {
			if !c.LastHeartbeatTime.Equal(&b.Nodes[name].Status.Conditions[i].LastHeartbeatTime) {
				return false
			}
		}
	}
	return true
}
