package kubelet

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// waits remembers, across syncs, the pods that are waiting for an instant
// of virtual time (the sandbox, the image pull, the containers' start,
// readiness) and what that instant was computed from
// (docs/simulation-speed.md#kubelet-passes-over-waiting-pods-session-23).
//
// A pod starting at t0 is visited once more in each later round of the
// same instant (another controller's write makes the kubelet run again)
// and finds nothing to do: at 100,000 pods two of every five visits were
// such. A remembered wait lets the sync leave the pod out before sorting.
//
// The wait is the same as long as nothing it was computed from changed:
// the pod (its resource version moves with every write), its node (the
// same object at the same resource version: its timing and its images) and
// the clock (still before the instant). Pods with claims are not
// remembered: their wait also reads claims and volumes. The timer syncPod
// asked for is still queued: timers are only dropped once due
// (sim.step), and other controllers remove only their own.
type waits struct {
	state *cluster.State
	pods  map[*corev1.Pod]wait
	// size is how many pods the sync visits: the map, when made, is made
	// that large at once (at 100,000 pods starting together, growing it
	// step by step cost as much as the lookups it saves).
	size int
	// waiting counts the pods of this sync that wait: those check found
	// still waiting and those whose visit noted a wait.
	waiting int
}

type wait struct {
	rv     string
	node   *corev1.Node
	nodeRV string
	at     time.Time
	// rev is the pod's create revision, its sort key after the creation
	// timestamp: the visit after the wait reads it from here instead of
	// looking the pod's uid up in the state's map of revisions.
	rev int64
}

// rememberWaits can be turned off by tests, which compare the syncs with
// and without the shortcut.
var rememberWaits = true

// begin starts a sync: waits remembered for another state are forgotten,
// and so are those of pods that left the state once they outnumber it.
func (w *waits) begin(s *cluster.State) {
	if w.state != s || len(w.pods) > len(s.Pods) {
		w.state, w.pods = s, nil
	}
	w.waiting = 0
}

// end ends a sync: once no pod waits, the map goes (maps do not shrink, and
// at 100,000 pods started together it was made for all of them), with the
// entries of waits that ended for pods this sync did not visit.
func (w *waits) end() {
	if w.waiting == 0 {
		w.pods = nil
	}
}

// check reports whether the pod waits for a later instant, computed from
// the pod and node as they are now. When the pod has an entry, waiting or
// not, known is true and rev is its create revision. An entry whose wait
// is over stays until the pod's visit notes the visit's outcome over it
// (one map write per visit rather than a removal and an insertion); until
// then it is not taken for a wait, since the instant stays reached and
// every other condition is checked again on every pass.
func (w *waits) check(s *cluster.State, pod *corev1.Pod) (waiting bool, rev int64, known bool) {
	got, ok := w.pods[pod]
	if !ok {
		return false, 0, false
	}
	if got.rv == pod.ResourceVersion && s.Now.Before(got.at) &&
		s.Nodes[pod.Spec.NodeName] == got.node && got.node.ResourceVersion == got.nodeRV {
		w.waiting++
		return true, got.rev, true
	}
	return false, got.rev, true
}

// note remembers the outcome of the pod's visit: the instant it waits for
// on node (zero: none); rev is the pod's create revision.
func (w *waits) note(pod *corev1.Pod, node *corev1.Node, at time.Time, rev int64) {
	if at.IsZero() || !rememberWaits || hasClaims(pod) {
		if w.pods != nil {
			delete(w.pods, pod)
		}
		return
	}
	if w.pods == nil {
		w.pods = make(map[*corev1.Pod]wait, w.size)
	}
	w.pods[pod] = wait{rv: pod.ResourceVersion, node: node, nodeRV: node.ResourceVersion, at: at, rev: rev}
	w.waiting++
}

// hasClaims: the pod mounts a PersistentVolumeClaim or an ephemeral volume
// (what podVolumes looks up).
func hasClaims(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return true
		}
	}
	return false
}
