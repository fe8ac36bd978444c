package daemonset

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// rollingUpdate replaces out-of-date daemon pods (daemon/update.go). Without
// surge it deletes old pods while staying within maxUnavailable and lets
// manage create their replacements; with surge it creates new pods next to
// old ones, at most maxSurge at a time, and deletes an old pod once its
// replacement is available.
func rollingUpdate(s *cluster.State, ds *appsv1.DaemonSet, hash string) bool {
	byNode := nodeToDaemonPods(s, ds)
	desired := 0
	for _, name := range cluster.SortedKeys(s.Nodes) {
		if shouldRun, _ := NodeShouldRunDaemonPod(s.Nodes[name], ds); shouldRun {
			desired++
		}
	}
	maxSurge, maxUnavailable := surgeAndUnavailable(ds, desired)
	nodes := cluster.SortedKeys(byNode)
	if maxSurge == 0 {
		var numUnavailable int
		var replace, candidates []*corev1.Pod
		for _, name := range nodes {
			newPod, oldPod, ok := findUpdatedPodsOnNode(ds, byNode[name], hash)
			switch {
			case !ok, oldPod == nil && newPod == nil, oldPod != nil && newPod != nil:
				// manage sorts this node out; it counts as unavailable.
				numUnavailable++
			case newPod != nil:
				if !isAvailable(newPod, ds.Spec.MinReadySeconds, s.Now) {
					numUnavailable++
				}
			case !isAvailable(oldPod, ds.Spec.MinReadySeconds, s.Now):
				replace = append(replace, oldPod)
			case numUnavailable < maxUnavailable:
				candidates = append(candidates, oldPod)
			}
		}
		remaining := min(max(maxUnavailable-numUnavailable, 0), len(candidates))
		ch, _ := syncNodes(s, ds, append(replace, candidates[:remaining]...), nil, hash)
		return ch
	}
	var toDelete []*corev1.Pod
	var allowed, candidates []string
	numSurge := 0
	for _, name := range nodes {
		newPod, oldPod, ok := findUpdatedPodsOnNode(ds, byNode[name], hash)
		if !ok {
			numSurge++
			continue
		}
		switch {
		case oldPod == nil:
		case newPod == nil:
			node, exists := s.Nodes[name]
			shouldRun := false
			if exists {
				shouldRun, _ = NodeShouldRunDaemonPod(node, ds)
			}
			switch {
			case !isAvailable(oldPod, ds.Spec.MinReadySeconds, s.Now):
				if !shouldRun {
					toDelete = append(toDelete, oldPod)
					continue
				}
				allowed = append(allowed, name)
			case !shouldRun:
				// Left to manage: the node no longer wants the pod.
			case numSurge < maxSurge:
				candidates = append(candidates, name)
			}
		default:
			if !isAvailable(newPod, ds.Spec.MinReadySeconds, s.Now) {
				numSurge++
				continue
			}
			toDelete = append(toDelete, oldPod)
		}
	}
	remaining := min(max(maxSurge-numSurge, 0), len(candidates))
	ch, _ := syncNodes(s, ds, toDelete, append(allowed, candidates[:remaining]...), hash)
	return ch
}

// findUpdatedPodsOnNode returns the node's one new and one old pod; ok is
// false when there are two of either kind (manage will fix the node first).
func findUpdatedPodsOnNode(ds *appsv1.DaemonSet, pods []*corev1.Pod, hash string) (newPod, oldPod *corev1.Pod, ok bool) {
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			continue
		}
		if isPodUpdated(ds, p, hash) {
			if newPod != nil {
				return nil, nil, false
			}
			newPod = p
		} else {
			if oldPod != nil {
				return nil, nil, false
			}
			oldPod = p
		}
	}
	return newPod, oldPod, true
}
