package defaultpreemption

import (
	"errors"
	"math"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// SelectVictimsOnNode finds the fewest lower-priority pods to evict from ni
// (a copy it modifies) so that pod fits: it removes every pod of strictly
// lower priority, checks the fit, then adds pods back most important first —
// PDB-violating ones before the others — keeping each that still fits. It
// returns the victims, how many of them violate a budget, and the node's
// status when preemption cannot help there.
func (pl *DefaultPreemption) SelectVictimsOnNode(state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo, pdbs []*policyv1.PodDisruptionBudget) ([]*v1.Pod, int, *framework.Status) {
	prio := corev1helpers.PodPriority(pod.Pod)
	var potential []*framework.PodInfo
	for _, p := range ni.Pods {
		if corev1helpers.PodPriority(p.Pod) < prio {
			potential = append(potential, p)
		}
	}
	remove := func(p *framework.PodInfo) *framework.Status {
		ni.RemovePod(p.Pod)
		return pl.runner.RunPreFilterExtensionRemovePod(state, pod, p, ni)
	}
	for _, p := range potential {
		if st := remove(p); !st.IsSuccess() {
			return nil, 0, asError(st)
		}
	}
	if len(potential) == 0 {
		return nil, 0, framework.NewStatus(framework.UnschedulableAndUnresolvable, MsgNoVictims)
	}
	return pl.victimsAfterRemoval(state, pod, ni, potential, pdbs)
}

// victimsAfterRemoval is SelectVictimsOnNode once the potential victims
// (not empty) are gone from ni and from state.
func (pl *DefaultPreemption) victimsAfterRemoval(state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo, potential []*framework.PodInfo, pdbs []*policyv1.PodDisruptionBudget) ([]*v1.Pod, int, *framework.Status) {
	if st := pl.runner.RunFilterPluginsWithNominatedPods(state, pod, ni); !st.IsSuccess() {
		return nil, 0, st
	}
	return pl.reprieveVictims(state, pod, ni, potential, pdbs)
}

// reprieveVictims is victimsAfterRemoval once the pod fits ni without the
// potential victims: they are added back most important first, each kept
// when the pod still fits.
func (pl *DefaultPreemption) reprieveVictims(state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo, potential []*framework.PodInfo, pdbs []*policyv1.PodDisruptionBudget) ([]*v1.Pod, int, *framework.Status) {
	remove := func(p *framework.PodInfo) *framework.Status {
		ni.RemovePod(p.Pod)
		return pl.runner.RunPreFilterExtensionRemovePod(state, pod, p, ni)
	}
	add := func(p *framework.PodInfo) *framework.Status {
		ni.AddPod(p)
		return pl.runner.RunPreFilterExtensionAddPod(state, pod, p, ni)
	}
	now := pl.runner.Now()
	// sort.Slice as upstream: with MoreImportantPod's treatment of pods that
	// have not started, the resulting order depends on the algorithm.
	sort.Slice(potential, func(i, j int) bool { return MoreImportantPod(potential[i].Pod, potential[j].Pod, now) })
	violating, nonViolating := FilterPodsWithPDBViolation(potential, pdbs)

	var victims []*framework.PodInfo
	reprieve := func(p *framework.PodInfo) (bool, *framework.Status) {
		if st := add(p); !st.IsSuccess() {
			return false, asError(st)
		}
		fits := pl.runner.RunFilterPluginsWithNominatedPods(state, pod, ni).IsSuccess()
		if !fits {
			if st := remove(p); !st.IsSuccess() {
				return false, asError(st)
			}
			victims = append(victims, p)
		}
		return fits, nil
	}
	violations := 0
	for _, p := range violating {
		fits, st := reprieve(p)
		if st != nil {
			return nil, 0, st
		}
		if !fits {
			violations++
		}
	}
	for _, p := range nonViolating {
		if _, st := reprieve(p); st != nil {
			return nil, 0, st
		}
	}
	if len(violating) > 0 && len(nonViolating) > 0 {
		sort.Slice(victims, func(i, j int) bool { return MoreImportantPod(victims[i].Pod, victims[j].Pod, now) })
	}
	out := make([]*v1.Pod, len(victims))
	for i, p := range victims {
		out[i] = p.Pod
	}
	return out, violations, nil
}

func asError(st *framework.Status) *framework.Status {
	if st.Code() == framework.Error {
		return st
	}
	return framework.AsStatus(errors.New(st.Message()))
}

// PodStartTime is status.startTime, or now for pods that have not started
// (upstream uses the wall clock there; berth its virtual one).
func PodStartTime(p *v1.Pod, now time.Time) time.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return now
}

// MoreImportantPod: higher priority first, then the one that started earlier.
// Upstream reads the clock for each pod without a start time, the first
// argument's before the second's, so of two such pods the first always
// counts as earlier; berth reproduces that rather than its wall-clock jitter.
func MoreImportantPod(a, b *v1.Pod, now time.Time) bool {
	pa, pb := corev1helpers.PodPriority(a), corev1helpers.PodPriority(b)
	if pa != pb {
		return pa > pb
	}
	if a.Status.StartTime == nil && b.Status.StartTime == nil {
		return true
	}
	return PodStartTime(a, now).Before(PodStartTime(b, now))
}

// FilterPodsWithPDBViolation splits pods (in importance order) into those
// whose eviction would take a budget below zero allowed disruptions and the
// rest. A budget counts each matching pod that is not already among its
// disrupted pods; budgets with an empty selector match nothing.
func FilterPodsWithPDBViolation(pods []*framework.PodInfo, pdbs []*policyv1.PodDisruptionBudget) (violating, nonViolating []*framework.PodInfo) {
	allowed := make([]int32, len(pdbs))
	for i, pdb := range pdbs {
		allowed[i] = pdb.Status.DisruptionsAllowed
	}
	for _, pi := range pods {
		pod := pi.Pod
		violated := false
		if len(pod.Labels) != 0 {
			for i, pdb := range pdbs {
				if pdb.Namespace != pod.Namespace {
					continue
				}
				sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
				if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
					continue
				}
				if _, ok := pdb.Status.DisruptedPods[pod.Name]; ok {
					continue
				}
				allowed[i]--
				if allowed[i] < 0 {
					violated = true
				}
			}
		}
		if violated {
			violating = append(violating, pi)
		} else {
			nonViolating = append(nonViolating, pi)
		}
	}
	return violating, nonViolating
}

// PickOneNode is pickOneNodeForPreemption: fewest PDB violations, then the
// lowest highest-victim priority, the smallest sum of priorities (each
// shifted by 2^31), the fewest victims, the latest start of the earliest
// highest-priority victim; the first remaining candidate wins ties.
func PickOneNode(candidates []*Candidate, now time.Time) *Candidate {
	if len(candidates) == 0 {
		return nil
	}
	scores := []func(c *Candidate) int64{
		func(c *Candidate) int64 { return -int64(c.NumPDBViolations) },
		func(c *Candidate) int64 { return -int64(corev1helpers.PodPriority(c.Victims[0])) },
		func(c *Candidate) int64 {
			var sum int64
			for _, p := range c.Victims {
				sum += int64(corev1helpers.PodPriority(p)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		func(c *Candidate) int64 { return -int64(len(c.Victims)) },
		func(c *Candidate) int64 { return earliestStartOfHighest(c.Victims, now).UnixNano() },
	}
	remaining := candidates
	for _, score := range scores {
		var best []*Candidate
		top := int64(math.MinInt64)
		for _, c := range remaining {
			v := score(c)
			if v > top {
				top, best = v, best[:0]
			}
			if v == top {
				best = append(best, c)
			}
		}
		if len(best) == 1 {
			return best[0]
		}
		remaining = best
	}
	return remaining[0]
}

// earliestStartOfHighest is the earliest start time among the victims of
// the highest priority.
func earliestStartOfHighest(victims []*v1.Pod, now time.Time) time.Time {
	earliest := PodStartTime(victims[0], now)
	top := corev1helpers.PodPriority(victims[0])
	for _, p := range victims {
		switch prio := corev1helpers.PodPriority(p); {
		case prio == top:
			if t := PodStartTime(p, now); t.Before(earliest) {
				earliest = t
			}
		case prio > top:
			top, earliest = prio, PodStartTime(p, now)
		}
	}
	return earliest
}
