package scheduler

import (
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/defaultpreemption"
)

var _ defaultpreemption.Runner = (*handle)(nil)

// RunFilterPluginsWithNominatedPods implements defaultpreemption.Runner.
func (h *handle) RunFilterPluginsWithNominatedPods(state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return h.sched.filterWithNominated(state, pod, ni, nil, nil, -1)
}

// RunPreFilterExtensionAddPod tells PreFilter state that a pod joined a node.
func (h *handle) RunPreFilterExtensionAddPod(state *framework.CycleState, pod, added *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return h.fw.runPreFilterExtensionAddPod(state, pod, added, ni)
}

// PodDisruptionBudgets lists the cluster's budgets by key.
func (h *handle) PodDisruptionBudgets() []*policyv1.PodDisruptionBudget {
	out := make([]*policyv1.PodDisruptionBudget, 0, len(h.state.PodDisruptionBudgets))
	for _, k := range cluster.SortedKeys(h.state.PodDisruptionBudgets) {
		out = append(out, h.state.PodDisruptionBudgets[k])
	}
	return out
}

// RandomInt draws from the cluster's seeded source.
func (h *handle) RandomInt(n int) int { return h.state.Rand.Intn(n) }

// Now is the virtual clock.
func (h *handle) Now() time.Time { return h.state.Now }

// hasActiveExtensions reports whether a PreFilter plugin that ran (was not
// skipped) has extensions, i.e. whether AddPod/RemovePod can change state.
func (fw *Framework) hasActiveExtensions(state *framework.CycleState) bool {
	for _, pl := range fw.preFilter {
		if _, skip := state.SkipFilterPlugins[pl.Name()]; skip {
			continue
		}
		if pl.PreFilterExtensions() != nil {
			return true
		}
	}
	return false
}

// runPreFilterExtensionAddPod updates every active PreFilter state for a pod
// added to ni (nominated pods, preemption's reprieve).
func (fw *Framework) runPreFilterExtensionAddPod(state *framework.CycleState, pod, added *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return fw.runPreFilterExtensions(state, "AddPod", func(ext framework.PreFilterExtensions) *framework.Status {
		return ext.AddPod(state, pod, added, ni)
	})
}

// nominatedIndex lists, per node, the pending pods nominated to it in key
// order (the scheduling queue's nominator). It is rebuilt from the state at
// the start of each Sync and then kept in step with the scheduler's own
// changes: bindings and preemptions. It is keyed by the node object, which
// within a Sync is the one the snapshot's NodeInfos (and their copies) hold;
// pods nominated to a node that does not exist are never asked for.
type nominatedIndex struct {
	valid  bool
	byNode map[*v1.Node][]nominatedPod
}

type nominatedPod struct {
	key string
	pi  *framework.PodInfo
	// priority is the pod's (immutable) priority, kept at hand.
	priority int32
}

func newNominatedPod(key string, pi *framework.PodInfo) nominatedPod {
	return nominatedPod{key: key, pi: pi, priority: corev1helpers.PodPriority(pi.Pod)}
}

// nominatedOn lists the pods nominated to the named node.
func (sc *Scheduler) nominatedOn(node string) []nominatedPod {
	return sc.nominatedFor(sc.handle.state.Nodes[node])
}

// nominatedFor lists the pods nominated to node.
func (sc *Scheduler) nominatedFor(node *v1.Node) []nominatedPod {
	ix := &sc.nominated
	if !ix.valid {
		ix.valid = true
		ix.byNode = map[*v1.Node][]nominatedPod{}
		s := sc.handle.state
		// Key order over the nominated pods alone (few), not every pod.
		var keys []string
		for key, p := range s.Pods {
			if p.Status.NominatedNodeName != "" {
				keys = append(keys, key)
			}
		}
		sort.Strings(keys)
		for _, key := range keys {
			p := s.Pods[key]
			if p.Spec.NodeName != "" || p.DeletionTimestamp != nil ||
				cluster.IsTerminal(p) || !sc.responsibleFor(p) {
				continue
			}
			n := s.Nodes[p.Status.NominatedNodeName]
			if n == nil {
				continue
			}
			ix.byNode[n] = append(ix.byNode[n], newNominatedPod(key, sc.podInfo(key, p)))
		}
	}
	if node == nil {
		return nil
	}
	return ix.byNode[node]
}

// anyNominated reports whether some pod is nominated to some node (the
// index nominatedFor keeps, built if need be).
func (sc *Scheduler) anyNominated() bool {
	sc.nominatedFor(nil)
	return len(sc.nominated.byNode) > 0
}

// removeNominated takes the pod under key off the named node's list.
func (sc *Scheduler) removeNominated(node, key string) {
	ix := &sc.nominated
	n := sc.handle.state.Nodes[node]
	if !ix.valid || n == nil {
		return
	}
	list := ix.byNode[n]
	for i := range list {
		if list[i].key == key {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(ix.byNode, n)
		return
	}
	ix.byNode[n] = list
}

// addNominated puts a pod on the named node's list at its key's place.
func (sc *Scheduler) addNominated(node string, np nominatedPod) {
	ix := &sc.nominated
	n := sc.handle.state.Nodes[node]
	if !ix.valid || n == nil {
		return
	}
	list := ix.byNode[n]
	i := sort.Search(len(list), func(i int) bool { return list[i].key >= np.key })
	if i < len(list) && list[i].key == np.key {
		list[i] = np
		return
	}
	out := make([]nominatedPod, 0, len(list)+1)
	out = append(append(append(out, list[:i]...), np), list[i:]...)
	ix.byNode[n] = out
}

// filterWithNominated is RunFilterPluginsWithNominatedPods: pods nominated to
// the node with at least the pod's priority are added to a copy of the node
// (and to the PreFilter state) and Filter runs; when that passes and some
// were added, Filter runs again without them. Both must pass.
func (sc *Scheduler) filterWithNominated(state *framework.CycleState, pi *framework.PodInfo, ni *framework.NodeInfo, skip []bool, cache *staticVerdicts, pos int) *framework.Status {
	nominated := sc.nominatedFor(ni.Node)
	if len(nominated) == 0 {
		return sc.fw.runFilterPlugins(state, pi, ni, skip, cache, pos)
	}
	prio := corev1helpers.PodPriority(pi.Pod)
	withState, withNode := state, ni
	added := false
	for _, n := range nominated {
		np := n.pi
		if n.priority < prio || np.Pod.UID == pi.Pod.UID {
			continue
		}
		if !added {
			// The state is copied only if some PreFilter extension will
			// change it: Filter plugins never write to the state.
			if sc.fw.hasActiveExtensions(state) {
				withState = state.Clone()
			}
			withNode, added = ni.Clone(), true
		}
		withNode.AddPod(np)
		if st := sc.fw.runPreFilterExtensionAddPod(withState, pi, np, withNode); !st.IsSuccess() {
			return st
		}
	}
	st := sc.fw.runFilterPlugins(withState, pi, withNode, skip, cache, pos)
	if !added || !st.IsSuccess() {
		return st
	}
	return sc.fw.runFilterPlugins(state, pi, ni, skip, cache, pos)
}

// tryNominatedNode is the fast path for a pod that preemption nominated: if
// its nominated node passes Filter, the pod goes there without scoring and
// without moving the search start.
func (sc *Scheduler) tryNominatedNode(state *framework.CycleState, pi *framework.PodInfo) string {
	name := pi.Pod.Status.NominatedNodeName
	if name == "" {
		return ""
	}
	ni := sc.handle.snap.byName[name]
	if ni == nil {
		return ""
	}
	if st := sc.filterWithNominated(state, pi, ni, nil, sc.staticCache(pi.Pod), -1); !st.IsSuccess() {
		return ""
	}
	return name
}

// settleNomination runs before a pod is bound: it leaves the nominator, and
// a nomination to another node is cleared. From 1.35 the binding clears
// any nomination (ClearingNominatedNodeNameAfterBinding, beta on).
func (sc *Scheduler) settleNomination(pod *v1.Pod, node string) {
	if pod.Status.NominatedNodeName == "" {
		return
	}
	sc.removeNominated(pod.Status.NominatedNodeName, cluster.Key(pod.Namespace, pod.Name))
	if pod.Status.NominatedNodeName != node || sc.features.Version.AtLeast(35, 0) {
		pod.Status.NominatedNodeName = ""
	}
}

// nominate is a status update that sets (or, with "", clears) the pod's
// nominated node; it is always a write, even when the value is unchanged.
func nominate(node string) func(*v1.PodStatus) bool {
	return func(st *v1.PodStatus) bool {
		st.NominatedNodeName = node
		return true
	}
}

// preemptionMessage is the DisruptionTarget condition's message on a victim.
func preemptionMessage(schedulerName string) string {
	return fmt.Sprintf("%s: preempting to accommodate a higher priority %s", schedulerName, "pod")
}

// preempt carries out a preemption decision as upstream's executor does:
// each victim gets DisruptionTarget=True (PreemptionByScheduler), is deleted
// (at once in berth) and gets a Preempted event; lower-priority pods
// nominated to the node lose their nomination; the preemptor is nominated.
// The snapshot is refreshed so that the rest of this Sync sees the room made.
func (sc *Scheduler) preempt(s *cluster.State, p pendingPod, r *framework.PostFilterResult) {
	if r == nil || r.NominatedNodeName == "" {
		return
	}
	node, preemptor := r.NominatedNodeName, p.pod
	if d := sc.diagnoses[p.key]; d != nil {
		d.NominatedNode, d.Victims = node, r.Victims
	}
	for _, v := range r.Victims {
		cur := s.Pods[cluster.Key(v.Namespace, v.Name)]
		if cur == nil || cur.UID != v.UID || cur.DeletionTimestamp != nil {
			continue
		}
		setDisruptionTarget(s, cur, preemptionMessage(sc.schedulerName))
		s.DeletePod(cur)
		// The cache sees the condition's update, then the deletion: the pod
		// moves to the end and leaves, so the node's last pod takes its slot.
		sc.order.remove(cluster.Key(cur.Namespace, cur.Name))
		s.Record(sc.eventSource(), cluster.Regarding("Pod", "v1", cur), v1.EventTypeNormal, "Preempted",
			fmt.Sprintf("Preempted by pod %v on node %v", preemptor.UID, node))
	}
	prio := corev1helpers.PodPriority(preemptor)
	for _, n := range sc.nominatedOn(node) {
		np := n.pi
		if n.priority < prio && np.Pod.UID != preemptor.UID {
			s.UpdatePodStatus(np.Pod, nominate(""))
			sc.removeNominated(node, n.key)
		}
	}
	if preemptor.Status.NominatedNodeName != node {
		if old := preemptor.Status.NominatedNodeName; old != "" {
			sc.removeNominated(old, p.key)
		}
		s.UpdatePodStatus(preemptor, nominate(node))
		if preemptor.Spec.NodeName == "" && preemptor.DeletionTimestamp == nil && !cluster.IsTerminal(preemptor) && sc.responsibleFor(preemptor) {
			sc.addNominated(node, newNominatedPod(p.key, sc.podInfo(p.key, preemptor)))
		}
	}
	sc.refreshAfterPreemption(s, node)
	if sc.afterPreempt != nil {
		sc.afterPreempt(s)
	}
}

// refreshAfterPreemption brings the snapshot to what buildSnapshot would
// build now, without walking the cluster: within a Sync only the scheduler
// changes the state, so only the victims' node changed beyond the pods bound
// since the build, which the snapshot already holds in the cache's order.
// Nodes, images and storage are unchanged, so the static verdicts and the
// storage epoch stay valid. The snapshot gets a new id, so plugins that
// follow its log rebuild their indexes as before.
func (sc *Scheduler) refreshAfterPreemption(s *cluster.State, node string) {
	snap := sc.handle.snap
	if ni := snap.byName[node]; ni != nil {
		fresh := sc.rebuiltNodeInfo(s, ni)
		for i := range snap.nodes {
			if snap.nodes[i] == ni {
				snap.nodes[i] = fresh
			}
		}
		snap.byName[node] = fresh
	}
	snap.id = snapshotIDs.Add(1)
	snap.added, snap.claims = nil, nil
	snap.affinityDirty = true
}

// rebuiltNodeInfo is ni as buildSnapshot would build it: the pods the cache
// order lists on the node.
func (sc *Scheduler) rebuiltNodeInfo(s *cluster.State, ni *framework.NodeInfo) *framework.NodeInfo {
	for _, p := range ni.Pods {
		if key := cluster.Key(p.Pod.Namespace, p.Pod.Name); s.Pods[key] == nil {
			delete(sc.podInfos, key)
		}
	}
	fresh := framework.NewNodeInfo(ni.Node)
	fresh.ImageStates = ni.ImageStates
	for _, key := range sc.order.byNode[ni.Name()] {
		fresh.AddPod(sc.podInfo(key, s.Pods[key]))
	}
	sc.order.usedPorts(fresh)
	return fresh
}

// setDisruptionTarget adds or updates the pod's DisruptionTarget condition.
func setDisruptionTarget(s *cluster.State, pod *v1.Pod, message string) {
	c := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler,
		Message: message, LastTransitionTime: metav1.NewTime(s.Now)}
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == v1.DisruptionTarget {
			pod.Status.Conditions[i] = c
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, c)
}
