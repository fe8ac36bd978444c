package why

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

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
