package why

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/berth-sim/berth/internal/autoscaler/config"
	autoscaler "github.com/berth-sim/berth/internal/autoscaler/controller"
	"github.com/berth-sim/berth/internal/autoscaler/scaleup"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioning"
)

func caOptions(s *cluster.State) (config.Options, bool, error) { return autoscaler.Options(s) }

// limitCandidates raise the limits of each pool whose limits stopped it:
// to what the pool uses now plus the first instance type the solve picks
// once the limits are out of the way (docs/why.md#fixes).
func limitCandidates(s *cluster.State, pod *corev1.Pod, r *Report) ([]candidate, error) {
	var out []candidate
	for _, v := range r.Karpenter {
		if v.Outcome != "no" || !strings.Contains(v.Message, "exceed limits for nodepool") {
			continue
		}
		var pool *pools.Pool
		for _, p := range pools.List(s) {
			if p.Name == v.Pool {
				pool = p
			}
		}
		if pool == nil || pool.Solver.Limits == nil {
			continue
		}
		name := v.Pool
		unlimited := func(in *provisioning.Input) {
			for _, np := range in.NodePools {
				if np.Name == name {
					np.Limits = nil
				}
			}
		}
		res, err := solveAlone(s, pod, name, unlimited)
		if err != nil {
			return nil, err
		}
		if res == nil || len(res.NewNodeClaims) == 0 || len(res.NewNodeClaims[0].InstanceTypes) == 0 {
			continue
		}
		first := smallest(res.NewNodeClaims[0].InstanceTypes, pool.Solver.Limits)
		usage, _ := pools.Usage(s, pool)
		raised := corev1.ResourceList{}
		var texts []string
		for _, rn := range cluster.SortedKeys(pool.Solver.Limits) {
			limit := pool.Solver.Limits[rn]
			want := usage[rn].DeepCopy()
			if c, ok := first.Capacity[rn]; ok {
				want.Add(c)
			}
			if want.Cmp(limit) <= 0 {
				raised[rn] = limit
				continue
			}
			raised[rn] = want
			texts = append(texts, fmt.Sprintf("%s from %s to %s", rn, limit.String(), want.String()))
		}
		if len(texts) == 0 {
			continue
		}
		edit := func(in *provisioning.Input) {
			for _, np := range in.NodePools {
				if np.Name == name {
					np.Limits = raised
				}
			}
		}
		out = append(out, candidate{karpenter: edit, pool: name, fix: Fix{Kind: "nodepool-limit", Size: len(texts),
			Change: fmt.Sprintf("raise %s %s limits: %s", pool.Kind, name, strings.Join(texts, ", "))}})
	}
	return out, nil
}

// maxSizeCandidates raise by one the max size of each group at its max.
func maxSizeCandidates(s *cluster.State, pod *corev1.Pod, r *Report) ([]candidate, error) {
	var out []candidate
	atMax := map[string]bool{}
	for _, v := range r.NodeGroups {
		if v.Outcome == "no" && strings.Contains(v.Message, scaleup.ReasonMaxSize) {
			atMax[v.Group] = true
		}
	}
	if len(atMax) == 0 {
		return nil, nil
	}
	groups, _, err := caGroups(s)
	if err != nil {
		return nil, err
	}
	for i, g := range groups {
		if !atMax[g.Name] {
			continue
		}
		edited := append([]scaleup.Group(nil), groups...)
		edited[i].MaxSize = g.Target + 1
		out = append(out, candidate{groups: edited, fix: Fix{Kind: "group-max", Size: 1,
			Change: fmt.Sprintf("raise node group %s max size from %d to %d", g.Name, g.MaxSize, g.Target+1)}})
	}
	return out, nil
}

// smallest is the claim's instance type that uses least of the limited
// resources (in the limits' order): the smallest raise that launches it.
func smallest(its instancetype.InstanceTypes, limits corev1.ResourceList) *instancetype.InstanceType {
	names := cluster.SortedKeys(limits)
	best := its[0]
	for _, it := range its[1:] {
		for _, rn := range names {
			a, b := it.Capacity[rn], best.Capacity[rn]
			if c := a.Cmp(b); c != 0 {
				if c < 0 {
					best = it
				}
				break
			}
		}
	}
	return best
}

// shrinkSteps is how many halvings the search for the largest request a
// pool can launch for takes (a precision of 1/4096 of the request).
const shrinkSteps = 12

// shrinkCandidates lower the requests of a pod larger than every instance
// type a pool allows: the short resources (those above every type's
// allocatable) are cut together, by the smallest cut at which that pool
// alone would launch a NodeClaim for the pod, found by halving on the
// provisioning solve ("lower requests to fit the largest node" for nodes
// that do not exist yet).
func shrinkCandidates(s *cluster.State, pod *corev1.Pod, r *Report) ([]candidate, error) {
	var out []candidate
	for _, v := range r.Karpenter {
		if len(v.Nearest) == 0 {
			continue
		}
		var pool *pools.Pool
		for _, p := range pools.List(s) {
			if p.Name == v.Pool {
				pool = p
			}
		}
		if pool == nil {
			continue
		}
		req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
		largest := corev1.ResourceList{}
		for _, it := range poolTypes(s, pool) {
			for rn, q := range it.Allocatable() {
				if cur, ok := largest[rn]; !ok || q.Cmp(cur) > 0 {
					largest[rn] = q
				}
			}
		}
		var short []corev1.ResourceName
		for _, rn := range cluster.SortedKeys(req) {
			if rn != corev1.ResourceCPU && rn != corev1.ResourceMemory {
				continue
			}
			if q := req[rn]; q.Cmp(largest[rn]) > 0 {
				short = append(short, rn)
			}
		}
		if len(short) == 0 {
			continue
		}
		scaled := func(f float64) (*corev1.Pod, []string) {
			p := pod.DeepCopy()
			var texts []string
			for _, rn := range short {
				q := req[rn]
				had := q.Value()
				if rn == corev1.ResourceCPU {
					had = q.MilliValue()
				}
				want := int64(float64(had) * f)
				scaleRequests(p, rn, want, had)
				texts = append(texts, fmt.Sprintf("%s %s (from %s)", rn, quantity(rn, want), quantity(rn, had)))
			}
			return p, texts
		}
		launches := func(p *corev1.Pod) (bool, error) {
			res, err := solveAlone(s, p, pool.Name, nil)
			if err != nil || res == nil {
				return false, err
			}
			return len(res.NewNodeClaims) > 0 && res.PodErrors[cluster.Key(p.Namespace, p.Name)] == nil, nil
		}
		lo, hi := 0.0, 1.0
		for i := 0; i < shrinkSteps; i++ {
			mid := (lo + hi) / 2
			p, _ := scaled(mid)
			ok, err := launches(p)
			if err != nil {
				return nil, err
			}
			if ok {
				lo = mid
			} else {
				hi = mid
			}
		}
		if lo == 0 {
			continue
		}
		p, texts := scaled(lo)
		out = append(out, candidate{pod: p, fix: Fix{Kind: "requests", Size: max(int(100-lo*100), 1),
			Change: "lower requests to " + strings.Join(texts, ", ")}})
	}
	return out, nil
}
