// Package garbagecollector is the part of kube-controller-manager's garbage
// collector that berth needs: an object all of whose owners are gone is
// deleted (background cascading deletion), so deleting a Deployment takes its
// ReplicaSets and their pods, a DaemonSet or Job its pods, and a StatefulSet
// whose claims carry owner references (whenDeleted: Delete) its claims too.
package garbagecollector

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
)

// Name is the controller's name.
const Name = "garbage-collector"

// Controller implements sim.Controller.
type Controller struct{}

// New returns the garbage collector.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync deletes every object whose owner references all name objects that no
// longer exist. It repeats until a pass deletes nothing, so chains
// (Deployment -> ReplicaSet -> Pod) go in one Sync.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	if !ownerMissing(s) {
		return false, nil
	}
	changed := false
	for {
		live := liveUIDs(s)
		deleted := false
		for _, k := range cluster.Kinds {
			for _, obj := range k.List(s) {
				m := obj.(metav1.Object)
				if !orphaned(m, live) {
					continue
				}
				if pod, ok := obj.(*corev1.Pod); ok {
					if pod.DeletionTimestamp != nil {
						continue // already Terminating: its kubelet finishes it
					}
					s.GracefulDeletePod(pod, nil)
				} else if wasDeleting := m.GetDeletionTimestamp() != nil; s.MarkDeleting(m) {
					// Karpenter's finalizer holds it: marked once, then left
					// to its termination controller.
					changed = changed || !wasDeleting
					continue
				} else {
					k.Remove(s, cluster.Key(m.GetNamespace(), m.GetName()))
					s.Bump()
				}
				deleted = true
			}
		}
		if !deleted {
			return changed, nil
		}
		changed = true
	}
}

// ownerMissing reports whether some owner reference names an object that
// does not exist. When none does, no object can be orphaned, and the sync
// is two unordered passes without sorting or a set of every uid: the usual
// case, as owners are rarely deleted (docs/simulation-speed.md).
func ownerMissing(s *cluster.State) bool {
	wanted := map[types.UID]bool{}
	for _, k := range cluster.Kinds {
		k.Each(s, func(m metav1.Object) {
			for _, r := range m.GetOwnerReferences() {
				wanted[r.UID] = false
			}
		})
	}
	if len(wanted) == 0 {
		return false
	}
	missing := len(wanted)
	for _, k := range cluster.Kinds {
		k.Each(s, func(m metav1.Object) {
			if seen, ok := wanted[m.GetUID()]; ok && !seen {
				wanted[m.GetUID()] = true
				missing--
			}
		})
	}
	return missing > 0
}

func liveUIDs(s *cluster.State) map[types.UID]bool {
	live := map[types.UID]bool{}
	for _, k := range cluster.Kinds {
		for _, obj := range k.List(s) {
			live[obj.(metav1.Object).GetUID()] = true
		}
	}
	return live
}

// orphaned: the object has owners and none of them exists any more.
func orphaned(m metav1.Object, live map[types.UID]bool) bool {
	refs := m.GetOwnerReferences()
	if len(refs) == 0 {
		return false
	}
	for _, r := range refs {
		if live[r.UID] {
			return false
		}
	}
	return true
}
