package deployment

import (
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	appsv1 "k8s.io/api/apps/v1"
)

// rolloutRecreate is one pass of the Recreate strategy: scale every old
// ReplicaSet to zero, wait until none of their pods is left, then create and
// scale up the new one.
func rolloutRecreate(s *cluster.State, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, olds, err := getAllReplicaSetsAndSyncRevision(s, d, rsList, false)
	if err != nil {
		return err
	}
	all := append(append([]*appsv1.ReplicaSet(nil), olds...), newRS)
	scaledDown := false
	for _, rs := range activeReplicaSets(olds) {
		if scaleReplicaSet(s, d, rs, 0) {
			scaledDown = true
		}
	}
	if scaledDown || oldPodsRunning(s, olds) {
		return syncRolloutStatus(s, d, all, newRS)
	}
	if newRS == nil {
		newRS, olds, err = getAllReplicaSetsAndSyncRevision(s, d, rsList, true)
		if err != nil {
			return err
		}
		all = append(append([]*appsv1.ReplicaSet(nil), olds...), newRS)
	}
	if scaleReplicaSet(s, d, newRS, replicas(d)) {
		return syncRolloutStatus(s, d, all, newRS)
	}
	if DeploymentComplete(d, &d.Status) {
		cleanupDeployment(s, d, olds)
	}
	return syncRolloutStatus(s, d, all, newRS)
}

// oldPodsRunning: an old ReplicaSet still reports replicas, or still owns a
// pod that has not finished.
func oldPodsRunning(s *cluster.State, olds []*appsv1.ReplicaSet) bool {
	for _, rs := range olds {
		if rs.Status.Replicas > 0 {
			return true
		}
	}
	for _, k := range cluster.SortedKeys(s.Pods) {
		p := s.Pods[k]
		if cluster.IsTerminal(p) {
			continue
		}
		for _, rs := range olds {
			if p.Namespace == rs.Namespace && controllerutil.IsControlledBy(p, string(rs.UID)) {
				return true
			}
		}
	}
	return false
}
