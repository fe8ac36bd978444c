package kubelet

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
)

// Node heartbeats (docs/node-lifecycle.md): the kubelet holds a Lease named
// after its node in kube-node-lease and renews it every quarter of its
// duration; it posts node status when a condition changes and otherwise
// only every report interval. A node whose kubelet stopped (Ready Unknown,
// `berth node fail`) renews nothing, so its lease and heartbeats freeze.
const (
	// LeaseDurationSeconds is the kubelet's nodeLeaseDurationSeconds default.
	LeaseDurationSeconds = 40
	// LeaseRenewInterval is 0.25 × the lease duration, the kubelet's
	// renew interval.
	LeaseRenewInterval = 10 * time.Second
	// StatusReportInterval is the kubelet's nodeStatusReportFrequency: with
	// no change, node status (and so LastHeartbeatTime) is posted this often.
	StatusReportInterval = 5 * time.Minute
)

// syncNodeHeartbeats creates missing node leases and brings every running
// kubelet's lease renewal and condition heartbeats up to the virtual clock.
// Renewals are derived from the clock on a fixed grid (the last tick at or
// before now), so a day of virtual time costs one pass per step, not one
// write per tick. Renewals and heartbeats are not counted as writes (no
// resource version bump): nothing else in the model watches them. It
// reports whether it created or removed a lease.
func syncNodeHeartbeats(s *cluster.State) bool {
	// Renewal order does not matter; creations and removals are writes, so
	// they go in name order to keep resource versions deterministic.
	var missing, ready, stale []string
	var keys leaseKeys
	for name, node := range s.Nodes {
		lease := keys.lease(s, name)
		if lease == nil {
			missing = append(missing, name)
			continue
		}
		if !Stopped(node) {
			renewLease(s, lease)
			heartbeat(s, node)
			if needsReadyEvent(s, node) {
				ready = append(ready, name)
			}
		}
	}
	slices.Sort(missing)
	for _, name := range missing {
		node := s.Nodes[name]
		lease := newNodeLease(s, node)
		recordStartup(s, node)
		if !Stopped(node) {
			renewLease(s, lease)
			heartbeat(s, node)
			if needsReadyEvent(s, node) {
				statusEvent(s, name, NodeReadyReason)
			}
		}
	}
	slices.Sort(ready)
	for _, name := range ready {
		statusEvent(s, name, NodeReadyReason)
	}
	// The garbage collector removes a lease with its owning node.
	for key, l := range s.Leases {
		if l.Namespace != corev1.NamespaceNodeLease {
			continue
		}
		if node, ok := s.Nodes[l.Name]; !ok || (len(l.OwnerReferences) > 0 && l.OwnerReferences[0].UID != node.UID) {
			stale = append(stale, key)
		}
	}
	slices.Sort(stale)
	for _, key := range stale {
		delete(s.Leases, key)
		s.Bump()
	}
	return len(missing) > 0 || len(stale) > 0
}

// Stopped is true once the node lifecycle controller marked the
// node's Ready condition Unknown: its kubelet stopped posting.
func Stopped(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionUnknown
		}
	}
	return false
}

// newNodeLease is what the kubelet's lease controller creates when it
// starts: holder and duration set, renewed now, owned by the Node. Like
// upstream, it sets no acquireTime.
func newNodeLease(s *cluster.State, node *corev1.Node) *coordinationv1.Lease {
	holder := node.Name
	duration := int32(LeaseDurationSeconds)
	start := leaseStart(node)
	lease := &coordinationv1.Lease{
		TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{
			Name: node.Name, Namespace: corev1.NamespaceNodeLease,
			UID:               leaseUID(node),
			CreationTimestamp: metav1.NewTime(start),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID,
			}},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       &holder,
			LeaseDurationSeconds: &duration,
			RenewTime:            &metav1.MicroTime{Time: start},
		},
	}
	lease.ResourceVersion = s.Bump()
	s.NoteCreated(lease.UID)
	if s.Leases == nil {
		s.Leases = map[string]*coordinationv1.Lease{}
	}
	s.Leases[cluster.Key(lease.Namespace, lease.Name)] = lease
	return lease
}

// leaseStart is when the kubelet began renewing: the node's registration.
func leaseStart(node *corev1.Node) time.Time { return node.CreationTimestamp.Time }

// leaseUID derives the lease's uid from its node's, so that adding leases
// does not draw from the seeded source every other name comes from.
func leaseUID(node *corev1.Node) types.UID {
	h := sha256.Sum256([]byte("lease/" + string(node.UID) + "/" + node.Name))
	return types.UID(fmt.Sprintf("%x-%x-4%03x-%02x%02x-%x", h[0:4], h[4:6], uint16(h[6])<<8&0xf00|uint16(h[7]), h[8]&0x3f|0x80, h[9], h[10:16]))
}

// renewLease moves the lease's renewTime to the last renewal tick at or
// before now.
func renewLease(s *cluster.State, lease *coordinationv1.Lease) {
	start := lease.CreationTimestamp.Time
	at := lastTick(start, s.Now, LeaseRenewInterval)
	if lease.Spec.RenewTime == nil || at.After(lease.Spec.RenewTime.Time) {
		lease.Spec.RenewTime = &metav1.MicroTime{Time: at}
	}
}

// heartbeat sets the kubelet's conditions' LastHeartbeatTime to its last
// status post: the last change (a transition) or a report interval since.
func heartbeat(s *cluster.State, node *corev1.Node) {
	var last time.Time
	for _, c := range node.Status.Conditions {
		if kubeletCondition(c.Type) && c.LastTransitionTime.After(last) {
			last = c.LastTransitionTime.Time
		}
	}
	if last.IsZero() {
		return
	}
	at := lastTick(last, s.Now, StatusReportInterval)
	for i := range node.Status.Conditions {
		c := &node.Status.Conditions[i]
		if kubeletCondition(c.Type) && at.After(c.LastHeartbeatTime.Time) {
			c.LastHeartbeatTime = metav1.NewTime(at)
		}
	}
}

func kubeletCondition(t corev1.NodeConditionType) bool {
	switch t {
	case corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure:
		return true
	}
	return false
}

// lastTick is the last start + k×every (k ≥ 0) at or before now.
func lastTick(start, now time.Time, every time.Duration) time.Time {
	if !now.After(start) {
		return start
	}
	return start.Add(now.Sub(start) / every * every)
}
