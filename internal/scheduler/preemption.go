package scheduler

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
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

// runPreFilterExtensionAddPod updates every active PreFilter state for a pod
// added to ni (nominated pods, preemption's reprieve).
func (fw *Framework) runPreFilterExtensionAddPod(state *framework.CycleState, pod, added *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	for _, pl := range fw.preFilter {
		if _, skip := state.SkipFilterPlugins[pl.Name()]; skip {
			continue
		}
		ext := pl.PreFilterExtensions()
		if ext == nil {
			continue
		}
		if s := ext.AddPod(state, pod, added, ni); !s.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("running AddPod on PreFilter plugin %q: %s", pl.Name(), s.Message()))
		}
	}
	return nil
}

// nominatedIndex lists, per node, the pending pods nominated to it (the
// scheduling queue's nominator). It is rebuilt from the state when the
// snapshot changes or a nomination changed.
type nominatedIndex struct {
	snapID uint64
	dirty  bool
	byNode map[string][]*framework.PodInfo
}

func (sc *Scheduler) nominatedOn(node string) []*framework.PodInfo {
	ix := &sc.nominated
	if ix.dirty || ix.snapID != sc.handle.snap.id || ix.byNode == nil {
		ix.snapID, ix.dirty = sc.handle.snap.id, false
		ix.byNode = map[string][]*framework.PodInfo{}
		s := sc.handle.state
		for _, key := range cluster.SortedKeys(s.Pods) {
			p := s.Pods[key]
			if p.Status.NominatedNodeName == "" || p.Spec.NodeName != "" || p.DeletionTimestamp != nil ||
				cluster.IsTerminal(p) || !sc.responsibleFor(p) {
				continue
			}
			ix.byNode[p.Status.NominatedNodeName] = append(ix.byNode[p.Status.NominatedNodeName], sc.podInfo(key, p))
		}
	}
	return ix.byNode[node]
}

// filterWithNominated is RunFilterPluginsWithNominatedPods: pods nominated to
// the node with at least the pod's priority are added to a copy of the node
// (and to the PreFilter state) and Filter runs; when that passes and some
// were added, Filter runs again without them. Both must pass.
func (sc *Scheduler) filterWithNominated(state *framework.CycleState, pi *framework.PodInfo, ni *framework.NodeInfo, skip []bool, cache *staticVerdicts, pos int) *framework.Status {
	nominated := sc.nominatedOn(ni.Name())
	if len(nominated) == 0 {
		return sc.fw.runFilterPlugins(state, pi, ni, skip, cache, pos)
	}
	prio := corev1helpers.PodPriority(pi.Pod)
	withState, withNode := state, ni
	added := false
	for _, np := range nominated {
		if corev1helpers.PodPriority(np.Pod) < prio || np.Pod.UID == pi.Pod.UID {
			continue
		}
		if !added {
			withState, withNode, added = state.Clone(), ni.Clone(), true
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
	sc.nominated.dirty = true
	if pod.Status.NominatedNodeName != node || sc.features.Version.AtLeast(35, 0) {
		pod.Status.NominatedNodeName = ""
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
// The snapshot is rebuilt so that the rest of this Sync sees the room made.
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
		controllerutil.DeletePod(s, cur)
		s.Record(sc.eventSource(), cluster.Regarding("Pod", "v1", cur), v1.EventTypeNormal, "Preempted",
			fmt.Sprintf("Preempted by pod %v on node %v", preemptor.UID, node))
	}
	prio := corev1helpers.PodPriority(preemptor)
	for _, np := range sc.nominatedOn(node) {
		if corev1helpers.PodPriority(np.Pod) < prio && np.Pod.UID != preemptor.UID {
			np.Pod.Status.NominatedNodeName = ""
			np.Pod.ResourceVersion = s.Bump()
		}
	}
	if preemptor.Status.NominatedNodeName != node {
		preemptor.Status.NominatedNodeName = node
		preemptor.ResourceVersion = s.Bump()
	}
	sc.nominated.dirty = true
	sc.buildSnapshot(s)
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
