package kubelet

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// NextHeartbeat is the first instant after s.Now at which a pass would
// move a lease renewal or a status heartbeat forward (syncNodeHeartbeats):
// they follow the clock on a fixed grid and announce no timer, so an idle
// `advance` may only move the clock short of it
// (docs/state.md#idle-advance). It is s.Now itself when the pass has
// heartbeat work due already (a lease to create or remove, a renewal
// behind its tick), and false when no running kubelet has a tick coming.
func NextHeartbeat(s *cluster.State) (time.Time, bool) {
	var next time.Time
	found := false
	note := func(t time.Time) {
		if !found || t.Before(next) {
			next, found = t, true
		}
	}
	var keys leaseKeys
	for name, node := range s.Nodes {
		lease := keys.lease(s, name)
		if lease == nil {
			return s.Now, true
		}
		if Stopped(node) {
			continue
		}
		start := lease.CreationTimestamp.Time
		at := lastTick(start, s.Now, LeaseRenewInterval)
		if lease.Spec.RenewTime == nil || at.After(lease.Spec.RenewTime.Time) {
			return s.Now, true
		}
		note(at.Add(LeaseRenewInterval))
		var last time.Time
		for _, c := range node.Status.Conditions {
			if kubeletCondition(c.Type) && c.LastTransitionTime.After(last) {
				last = c.LastTransitionTime.Time
			}
		}
		if last.IsZero() {
			continue
		}
		beat := lastTick(last, s.Now, StatusReportInterval)
		for _, c := range node.Status.Conditions {
			if kubeletCondition(c.Type) && beat.After(c.LastHeartbeatTime.Time) {
				return s.Now, true
			}
		}
		note(beat.Add(StatusReportInterval))
	}
	for _, l := range s.Leases {
		if l.Namespace != corev1.NamespaceNodeLease {
			continue
		}
		if node, ok := s.Nodes[l.Name]; !ok || (len(l.OwnerReferences) > 0 && l.OwnerReferences[0].UID != node.UID) {
			return s.Now, true
		}
	}
	return next, found
}

// Beat is the part of a pass an idle `advance` past NextHeartbeat runs:
// every running kubelet renews its lease and posts its heartbeats up to
// s.Now, as syncNodeHeartbeats does, over a state whose leases all exist
// (NextHeartbeat said no more). It needs the nodes and leases only.
func Beat(s *cluster.State) {
	var keys leaseKeys
	for name, node := range s.Nodes {
		if lease := keys.lease(s, name); lease != nil && !Stopped(node) {
			renewLease(s, lease)
			heartbeat(s, node)
		}
	}
}
