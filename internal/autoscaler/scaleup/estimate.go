package scaleup

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/berth-sim/berth/internal/scheduler"
)

// estimate is cluster-autoscaler's binpacking estimator: first-fit
// decreasing over the equivalence groups (largest share of the template
// first), each pod onto a new node already added if one takes it, else the
// last added node, else a fresh node, up to limit nodes. Every "does it
// fit" is berth's scheduler Filter on the simulated nodes
// (docs/cluster-autoscaler.md#scale-up). It returns the nodes holding pods
// and the pods placed.
func (p *planner) estimate(g *Group, groups []*equivalence, limit int) (int, []*corev1.Pod, error) {
	ordered := orderDecreasing(groups, g.Template)
	sim, err := p.sc.Simulate(p.s)
	if err != nil {
		return 0, nil, err
	}
	var newNodes []string
	position := map[string]int{} // a new node's index in newNodes
	var free freeIndex
	noteFree := func(node string) {
		if at, ok := position[node]; ok {
			cpu, mem, slots, _ := sim.Free(node)
			free.set(at, cpu, mem, slots)
		}
	}
	withPods := map[string]bool{}
	last, next := "", 0
	var placed []*corev1.Pod
	fits := func(pf *scheduler.PreFiltered, node string) bool {
		st := pf.Filter(node)
		return st == nil || st.IsSuccess()
	}
	place := func(pod *corev1.Pod, node string) error {
		if err := sim.Assume(pod, node); err != nil {
			return err
		}
		noteFree(node)
		withPods[node] = true
		placed = append(placed, pod)
		return nil
	}
	// firstFit is the first new node from start on, cyclically, that takes
	// the pod: the nodes in order, less those freeIndex shows cannot.
	firstFit := func(pf *scheduler.PreFiltered, start int) int {
		cpu, mem, bounded := pf.FitBound()
		for _, span := range [2][2]int{{start, len(newNodes)}, {0, start}} {
			for at := span[0]; at < span[1]; at++ {
				if bounded {
					if at = free.next(at, span[1], cpu, mem); at < 0 {
						break
					}
				}
				if fits(pf, newNodes[at]) {
					return at
				}
			}
		}
		return -1
	}
	for _, e := range ordered {
		// PreFilter runs once for a pod and answers Filter on node after
		// node, as cluster-autoscaler's predicate checker does; the pods of
		// an equivalence group share the first one's result while it read
		// the pod alone (docs/scheduler.md#asking-without-writing).
		var first *scheduler.PreFiltered
		prefilter := func(pod *corev1.Pod) *scheduler.PreFiltered {
			if first == nil {
				first = sim.PreFilter(pod)
				return first
			}
			return first.Equivalent(pod)
		}
		// Onto the new nodes so far: stop at the first pod that fits none.
		// The search resumes after the node that took the last pod, as
		// cluster-autoscaler's predicate checker does (its lastIndex), so
		// that a large group is not tried against every full node again.
		i := 0
		for ; i < len(e.pods); i++ {
			if len(newNodes) == 0 {
				break
			}
			at := firstFit(prefilter(e.pods[i]), next)
			if at < 0 {
				break
			}
			target := newNodes[at]
			next = (at + 1) % len(newNodes)
			if err := place(e.pods[i], target); err != nil {
				return 0, nil, err
			}
		}
		// The rest onto the last node, or fresh ones.
		for _, pod := range e.pods[i:] {
			pf := prefilter(pod)
			if last != "" && fits(pf, last) {
				if err := place(pod, last); err != nil {
					return 0, nil, err
				}
				continue
			}
			if last != "" && !withPods[last] {
				break // an empty fresh node did not take it; another would not either
			}
			if len(newNodes) >= limit {
				break
			}
			h := copyTemplate(*g, fmt.Sprintf("e-%d", len(newNodes)))
			if err := sim.AddNode(h); err != nil {
				return 0, nil, err
			}
			last = h.Node.Name
			position[last] = len(newNodes)
			newNodes = append(newNodes, last)
			noteFree(last)
			if !fits(pf, last) {
				break
			}
			if err := place(pod, last); err != nil {
				return 0, nil, err
			}
		}
	}
	return len(withPods), placed, nil
}

// orderDecreasing sorts equivalence groups by their pods' share of the
// template's allocatable cpu plus memory, largest first (stable).
func orderDecreasing(groups []*equivalence, template *corev1.Node) []*equivalence {
	alloc := template.Status.Allocatable
	cpu, mem := alloc.Cpu().MilliValue(), alloc.Memory().Value()
	score := make(map[*equivalence]float64, len(groups))
	for _, e := range groups {
		req := resourcehelper.PodRequests(e.pods[0], resourcehelper.PodResourcesOptions{})
		var sc float64
		if cpu > 0 {
			sc += float64(req.Cpu().MilliValue()) / float64(cpu)
		}
		if mem > 0 {
			sc += float64(req.Memory().Value()) / float64(mem)
		}
		score[e] = sc
	}
	out := append([]*equivalence(nil), groups...)
	sort.SliceStable(out, func(i, j int) bool { return score[out[i]] > score[out[j]] })
	return out
}
