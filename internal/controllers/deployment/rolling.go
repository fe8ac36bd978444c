package deployment

import (
	"github.com/berth-sim/berth/internal/cluster"
	appsv1 "k8s.io/api/apps/v1"
)

// rolloutRolling is one pass of the RollingUpdate strategy: scale the new
// ReplicaSet up within maxSurge, else scale old ones down within
// maxUnavailable, else prune history once complete.
func rolloutRolling(s *cluster.State, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, olds, err := getAllReplicaSetsAndSyncRevision(s, d, rsList, true)
	if err != nil {
		return err
	}
	all := append(append([]*appsv1.ReplicaSet(nil), olds...), newRS)
	if reconcileNewReplicaSet(s, d, all, newRS) {
		return syncRolloutStatus(s, d, all, newRS)
	}
	if reconcileOldReplicaSets(s, d, all, activeReplicaSets(olds), newRS) {
		return syncRolloutStatus(s, d, all, newRS)
	}
	if DeploymentComplete(d, &d.Status) {
		cleanupDeployment(s, d, olds)
	}
	return syncRolloutStatus(s, d, all, newRS)
}

func reconcileNewReplicaSet(s *cluster.State, d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) bool {
	switch {
	case rsReplicas(newRS) == replicas(d):
		return false
	case rsReplicas(newRS) > replicas(d):
		return scaleReplicaSet(s, d, newRS, replicas(d))
	}
	return scaleReplicaSet(s, d, newRS, NewRSNewReplicas(d, all, newRS))
}

// reconcileOldReplicaSets scales old ReplicaSets down as far as the
// availability budget allows: first their unhealthy replicas, then healthy
// ones while more than minAvailable pods are available.
func reconcileOldReplicaSets(s *cluster.State, d *appsv1.Deployment, all, olds []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) bool {
	if specReplicaSum(olds) == 0 {
		return false
	}
	allPods := specReplicaSum(all)
	minAvailable := replicas(d) - MaxUnavailable(d)
	newUnavailable := rsReplicas(newRS) - newRS.Status.AvailableReplicas
	maxScaledDown := allPods - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false
	}
	cleaned := cleanupUnhealthyReplicas(s, d, olds, maxScaledDown)
	all = append(append([]*appsv1.ReplicaSet(nil), olds...), newRS)
	scaled := scaleDownOldReplicaSetsForRollingUpdate(s, d, all, olds)
	return cleaned+scaled > 0
}

// cleanupUnhealthyReplicas scales down, oldest first, the replicas of old
// ReplicaSets that are not available, up to maxCleanup in total.
func cleanupUnhealthyReplicas(s *cluster.State, d *appsv1.Deployment, olds []*appsv1.ReplicaSet, maxCleanup int32) int32 {
	sortByCreation(olds)
	var total int32
	for _, rs := range olds {
		if total >= maxCleanup {
			break
		}
		if rsReplicas(rs) == 0 || rsReplicas(rs) == rs.Status.AvailableReplicas {
			continue
		}
		n := min(maxCleanup-total, rsReplicas(rs)-rs.Status.AvailableReplicas)
		scaleReplicaSet(s, d, rs, rsReplicas(rs)-n)
		total += n
	}
	return total
}

// scaleDownOldReplicaSetsForRollingUpdate scales old ReplicaSets down,
// oldest first, by as many pods as are available above minAvailable.
func scaleDownOldReplicaSetsForRollingUpdate(s *cluster.State, d *appsv1.Deployment, all, olds []*appsv1.ReplicaSet) int32 {
	minAvailable := replicas(d) - MaxUnavailable(d)
	available := statusSum(nonNil(all), func(st *appsv1.ReplicaSetStatus) int32 { return st.AvailableReplicas })
	if available <= minAvailable {
		return 0
	}
	sortByCreation(olds)
	budget := available - minAvailable
	var total int32
	for _, rs := range olds {
		if total >= budget {
			break
		}
		if rsReplicas(rs) == 0 {
			continue
		}
		n := min(rsReplicas(rs), budget-total)
		scaleReplicaSet(s, d, rs, rsReplicas(rs)-n)
		total += n
	}
	return total
}
