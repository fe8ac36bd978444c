package scaleup

import (
	"fmt"
	"regexp"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/berth-sim/berth/internal/autoscaler/config"
)

// expand runs the --expander chain: each expander keeps its best options,
// the next one chooses among those, and a random pick settles what is left
// (docs/cluster-autoscaler.md#expanders).
func (p *planner) expand(options []Option) (*Option, error) {
	left := options
	for _, name := range p.in.Options.Expanders {
		if len(left) <= 1 {
			break
		}
		var err error
		switch name {
		case config.ExpanderRandom:
			left = []Option{left[p.rng.Intn(len(left))]}
		case config.ExpanderMostPods:
			left = best(left, func(o Option) float64 { return -float64(len(o.Pods)) })
		case config.ExpanderLeastNodes:
			left = best(left, func(o Option) float64 { return float64(o.NodeCount) })
		case config.ExpanderLeastWaste:
			left = best(left, p.waste)
		case config.ExpanderPriority:
			left, err = p.byPriority(left)
			if err != nil {
				return nil, err
			}
		}
	}
	chosen := left[0]
	if len(left) > 1 {
		chosen = left[p.rng.Intn(len(left))]
	}
	return &chosen, nil
}

// best keeps the options with the lowest score.
func best(options []Option, score func(Option) float64) []Option {
	var out []Option
	var min float64
	for i, o := range options {
		sc := score(o)
		switch {
		case i == 0 || sc < min:
			min, out = sc, []Option{o}
		case sc == min:
			out = append(out, o)
		}
	}
	return out
}

// waste is least-waste's score: the share of the new nodes' cpu and memory
// capacity the pods leave unused, summed.
func (p *planner) waste(o Option) float64 {
	g := p.group(o.Group)
	capCPU := g.Template.Status.Capacity.Cpu().MilliValue() * int64(o.NodeCount)
	capMem := g.Template.Status.Capacity.Memory().Value() * int64(o.NodeCount)
	var reqCPU, reqMem int64
	for _, pod := range o.Pods {
		r := p.wasteRequests(pod)
		reqCPU += r.milliCPU
		reqMem += r.memory
	}
	var w float64
	if capCPU > 0 {
		w += float64(capCPU-reqCPU) / float64(capCPU)
	}
	if capMem > 0 {
		w += float64(capMem-reqMem) / float64(capMem)
	}
	return w
}

// podRequests are a pod's regular containers' cpu (millicores) and memory
// (bytes) requests, as least-waste counts them.
type podRequests struct{ milliCPU, memory int64 }

// wasteRequests is containerRequests' cpu and memory for pod, computed
// once a plan: every option lists thousands of the same pending pods.
func (p *planner) wasteRequests(pod *corev1.Pod) podRequests {
	if r, ok := p.requests[pod]; ok {
		return r
	}
	var cpu, mem resource.Quantity
	for _, c := range pod.Spec.Containers {
		if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
			cpu.Add(q)
		}
		if q, ok := c.Resources.Requests[corev1.ResourceMemory]; ok {
			mem.Add(q)
		}
	}
	r := podRequests{milliCPU: cpu.MilliValue(), memory: mem.Value()}
	if p.requests == nil {
		p.requests = map[*corev1.Pod]podRequests{}
	}
	p.requests[pod] = r
	return r
}

// containerRequests sums the regular containers' requests, as least-waste does.
func containerRequests(pod *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		for name, q := range c.Resources.Requests {
			sum := out[name]
			sum.Add(q)
			out[name] = sum
		}
	}
	return out
}

// byPriority keeps the options of the highest priority whose regular
// expressions match the group name; with none matching it keeps them all.
func (p *planner) byPriority(options []Option) ([]Option, error) {
	if p.in.Priorities == "" {
		return options, nil
	}
	var prios map[int][]string
	if err := yaml.Unmarshal([]byte(p.in.Priorities), &prios); err != nil {
		return nil, fmt.Errorf("priority expander: can't parse the priorities: %v", err)
	}
	levels := make([]int, 0, len(prios))
	for k := range prios {
		levels = append(levels, k)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(levels)))
	for _, lvl := range levels {
		var out []Option
		for _, o := range options {
			for _, expr := range prios[lvl] {
				re, err := regexp.Compile(expr)
				if err != nil {
					return nil, fmt.Errorf("priority expander: bad regular expression %q: %v", expr, err)
				}
				if re.MatchString(o.Group) {
					out = append(out, o)
					break
				}
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return options, nil
}
