// Package garbagecollector is the part of kube-controller-manager's garbage
// collector that workloads need: a ReplicaSet or pod whose controller owner
// no longer exists is deleted (background cascading deletion), so deleting
// a Deployment takes its ReplicaSets and their pods with it.
package garbagecollector

import (
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Name is the controller's name.
const Name = "garbage-collector"

// Controller implements sim.Controller.
type Controller struct{}

// New returns the garbage collector.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync deletes dependents whose controller owner is gone. Owners it does not
// know the kind of are left alone (another controller may own them).
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	changed := false
	deploymentUIDs := map[string]bool{}
	for _, k := range cluster.SortedKeys(s.Deployments) {
		deploymentUIDs[string(s.Deployments[k].UID)] = true
	}
	for _, k := range cluster.SortedKeys(s.ReplicaSets) {
		rs := s.ReplicaSets[k]
		if orphaned(rs, "Deployment", deploymentUIDs) {
			delete(s.ReplicaSets, k)
			s.Bump()
			changed = true
		}
	}
	rsUIDs := map[string]bool{}
	for _, k := range cluster.SortedKeys(s.ReplicaSets) {
		rsUIDs[string(s.ReplicaSets[k].UID)] = true
	}
	for _, k := range cluster.SortedKeys(s.Pods) {
		pod := s.Pods[k]
		if orphaned(pod, "ReplicaSet", rsUIDs) {
			controllerutil.DeletePod(s, pod)
			changed = true
		}
	}
	return changed, nil
}

// orphaned: obj's controller reference is of kind and names no live object.
func orphaned(obj metav1.Object, kind string, live map[string]bool) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.Kind == kind && !live[string(ref.UID)]
}
