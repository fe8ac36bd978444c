package kubelet

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
)

func TestLastTick(t *testing.T) {
	start := cluster.Epoch
	for _, tc := range []struct {
		name  string
		now   time.Duration
		every time.Duration
		want  time.Duration
	}{
		{"at start", 0, 10 * time.Second, 0},
		{"before first tick", 9 * time.Second, 10 * time.Second, 0},
		{"on a tick", 20 * time.Second, 10 * time.Second, 20 * time.Second},
		{"between ticks", 7*time.Minute + 3*time.Second, 10 * time.Second, 7 * time.Minute},
		{"report interval", 67 * time.Minute, 5 * time.Minute, 65 * time.Minute},
		{"clock before start", -time.Second, 10 * time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lastTick(start, start.Add(tc.now), tc.every); !got.Equal(start.Add(tc.want)) {
				t.Errorf("lastTick = %s, want %s", got.Sub(start), tc.want)
			}
		})
	}
}

// TestHeartbeatsFreezeOnFailure runs the kubelet's node pass over virtual
// time and checks the lease and heartbeats stop where the kubelet stopped.
func TestHeartbeatsFreezeOnFailure(t *testing.T) {
	s := cluster.New("", 1)
	created := metav1.NewTime(s.Now)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-n1", CreationTimestamp: created},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: created, LastTransitionTime: created},
		}},
	}
	s.Nodes["n1"] = node
	if !syncNodeHeartbeats(s) {
		t.Fatal("the first pass should create the lease")
	}
	lease := s.NodeLease("n1")
	if lease == nil || *lease.Spec.HolderIdentity != "n1" || *lease.Spec.LeaseDurationSeconds != 40 || lease.Spec.AcquireTime != nil {
		t.Fatalf("lease = %+v", lease)
	}
	if !s.HasEvent(Name, corev1.EventTypeNormal, NodeReadyReason, nodeRef("n1")) {
		t.Error("no NodeReady event")
	}
	for _, tc := range []struct {
		at        time.Duration
		fail      bool
		renew     time.Duration
		heartbeat time.Duration
	}{
		{at: 15 * time.Second, renew: 10 * time.Second, heartbeat: 0},
		{at: 6*time.Minute + 4*time.Second, renew: 6 * time.Minute, heartbeat: 5 * time.Minute},
		{at: 6*time.Minute + 7*time.Second, fail: true, renew: 6 * time.Minute, heartbeat: 5 * time.Minute},
		{at: 3 * time.Hour, renew: 6 * time.Minute, heartbeat: 5 * time.Minute},
	} {
		s.Now = cluster.Epoch.Add(tc.at)
		if tc.fail {
			c := &node.Status.Conditions[0]
			c.Status, c.LastTransitionTime = corev1.ConditionUnknown, metav1.NewTime(s.Now)
		}
		if syncNodeHeartbeats(s) {
			t.Errorf("at %s: renewals should not count as changes", tc.at)
		}
		if got := lease.Spec.RenewTime.Sub(cluster.Epoch); got != tc.renew {
			t.Errorf("at %s: renewTime %s, want %s", tc.at, got, tc.renew)
		}
		if got := node.Status.Conditions[0].LastHeartbeatTime.Sub(cluster.Epoch); got != tc.heartbeat {
			t.Errorf("at %s: heartbeat %s, want %s", tc.at, got, tc.heartbeat)
		}
	}
	// A lease deleted by hand comes back without a second start-up.
	delete(s.Leases, cluster.Key(corev1.NamespaceNodeLease, "n1"))
	if !syncNodeHeartbeats(s) || s.NodeLease("n1") == nil {
		t.Fatal("the kubelet should recreate its lease")
	}
	starts := 0
	for _, e := range s.EventsFor("Node", "", "n1") {
		if e.Reason == StartingReason {
			starts++
		}
	}
	if starts != 1 {
		t.Errorf("%d Starting events, want 1", starts)
	}
	delete(s.Nodes, "n1")
	if !syncNodeHeartbeats(s) || s.NodeLease("n1") != nil {
		t.Error("the lease should go with its node")
	}
}

// The reused-buffer lookup finds what s.NodeLease finds, name after name.
func TestLeaseKeysMatchNodeLease(t *testing.T) {
	s := controllertest.NewState()
	for _, name := range []string{"n1", "a-much-longer-node-name.ec2.internal", "n2"} {
		controllertest.AddNode(s, name, "4", "8Gi", nil)
	}
	syncNodeHeartbeats(s)
	var keys leaseKeys
	for _, name := range []string{"a-much-longer-node-name.ec2.internal", "n1", "missing", "n2", "", "n1"} {
		if got, want := keys.lease(s, name), s.NodeLease(name); got != want {
			t.Errorf("%q: %v, want %v", name, got, want)
		}
	}
	if keys.lease(s, "n1") == nil {
		t.Fatal("no lease found for n1")
	}
}
