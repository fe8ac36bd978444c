package scaleup

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
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
	withPods := map[string]bool{}
	last, next := "", 0
	var placed []*corev1.Pod
	fits := func(pod *corev1.Pod, node string) bool {
		st := sim.Filter(pod, node)
		return st == nil || st.IsSuccess()
	}
	place := func(pod *corev1.Pod, node string) error {
		if err := sim.Assume(pod, node); err != nil {
			return err
		}
		withPods[node] = true
		placed = append(placed, pod)
		return nil
	}
	for _, e := range ordered {
		// Onto the new nodes so far: stop at the first pod that fits none.
		// The search resumes after the node that took the last pod, as
		// cluster-autoscaler's predicate checker does (its lastIndex), so
		// that a large group is not tried against every full node again.
		i := 0
		for ; i < len(e.pods); i++ {
			target := ""
			// PreFilter once for the pod, Filter node after node, as
			// cluster-autoscaler's predicate checker does.
			pf := sim.PreFilter(e.pods[i])
			for k := range newNodes {
				n := newNodes[(next+k)%len(newNodes)]
				if st := pf.Filter(n); st == nil || st.IsSuccess() {
					target = n
					next = (next + k + 1) % len(newNodes)
					break
				}
			}
			if target == "" {
				break
			}
			if err := place(e.pods[i], target); err != nil {
				return 0, nil, err
			}
		}
		// The rest onto the last node, or fresh ones.
		for _, pod := range e.pods[i:] {
			if last != "" && fits(pod, last) {
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
			newNodes = append(newNodes, last)
			if !fits(pod, last) {
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
