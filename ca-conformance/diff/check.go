package diff

import (
	"fmt"
	"slices"

	"github.com/berth-sim/berth/ca-conformance/berthrun"
	"github.com/berth-sim/berth/ca-conformance/cases"
	"github.com/berth-sim/berth/ca-conformance/generator"
	"github.com/berth-sim/berth/ca-conformance/regressions"
	"github.com/berth-sim/berth/ca-conformance/scenario"
)

// Invariants returns what any cluster-autoscaler result on sc must satisfy,
// whoever computed it: every resize starts at the group's current size and
// stays within its max (and the cluster within --max-nodes-total); the pod
// lists name pending pods, each at most once; nothing triggered without a
// scale-up; every NotTriggerScaleUp message has the upstream prefix and at
// least one reason.
func Invariants(sc *scenario.Scenario, r *scenario.Result) []string {
	var out []string
	added := 0
	seenGroup := map[string]bool{}
	for _, c := range r.ScaleUp {
		if seenGroup[c.Group] {
			out = append(out, fmt.Sprintf("scale-up: group %s resized twice", c.Group))
		}
		seenGroup[c.Group] = true
		size, ok := sc.GroupSize(c.Group)
		if !ok {
			out = append(out, fmt.Sprintf("scale-up: unknown group %s", c.Group))
			continue
		}
		g := group(sc, c.Group)
		if c.From != size {
			out = append(out, fmt.Sprintf("scale-up: %s from %d, its size is %d", c.Group, c.From, size))
		}
		if c.To <= c.From || c.To > g.Max {
			out = append(out, fmt.Sprintf("scale-up: %s %d->%d outside (%d, max %d]", c.Group, c.From, c.To, c.From, g.Max))
		}
		added += c.To - c.From
	}
	if limit := sc.Options.MaxNodesTotal; limit > 0 && added > 0 && clusterSize(sc)+added > limit {
		out = append(out, fmt.Sprintf("scale-up: %d nodes + %d new exceeds --max-nodes-total %d", clusterSize(sc), added, limit))
	}
	pending := map[string]bool{}
	for _, p := range sc.Pods {
		pending[p.Name] = true
	}
	where := map[string]string{}
	for _, l := range []struct {
		name string
		pods []string
	}{{"triggered", r.Triggered}, {"remaining", r.Remaining}, {"awaiting", r.Awaiting}} {
		for _, p := range l.pods {
			if !pending[p] {
				out = append(out, fmt.Sprintf("%s: %s is not a pending pod", l.name, p))
			}
			if prev, dup := where[p]; dup {
				out = append(out, fmt.Sprintf("%s: %s is also %s", l.name, p, prev))
			}
			where[p] = l.name
		}
	}
	if len(r.ScaleUp) == 0 && len(r.Triggered) > 0 {
		out = append(out, fmt.Sprintf("triggered %v without a scale-up", r.Triggered))
	}
	for _, pod := range keys(r.NotTriggerScaleUp, nil) {
		msg := r.NotTriggerScaleUp[pod]
		if !pending[pod] {
			out = append(out, fmt.Sprintf("NotTriggerScaleUp for %s, not a pending pod", pod))
		}
		if parts, ok := Reasons(msg); !ok || len(parts) == 0 || slices.Contains(parts, "") {
			out = append(out, fmt.Sprintf("NotTriggerScaleUp %s: no reasons in %q", pod, msg))
		}
	}
	nodes := map[string]bool{}
	for _, n := range sc.Nodes {
		nodes[n.Name] = true
	}
	for _, n := range r.Unneeded {
		if !nodes[n] {
			out = append(out, fmt.Sprintf("unneeded: unknown node %s", n))
		}
		if _, both := r.Unremovable[n]; both {
			out = append(out, fmt.Sprintf("unneeded: %s is also unremovable", n))
		}
	}
	return out
}

// clusterSize is what --max-nodes-total counts: the nodes that exist plus
// the instances groups asked for that have not registered yet.
func clusterSize(sc *scenario.Scenario) int {
	n := len(sc.Nodes)
	for _, g := range sc.NodeGroups {
		size, _ := sc.GroupSize(g.Name)
		inGroup := 0
		for _, node := range sc.Nodes {
			if node.Group == g.Name {
				inGroup++
			}
		}
		if size > inGroup {
			n += size - inGroup
		}
	}
	return n
}

func group(sc *scenario.Scenario, name string) *scenario.NodeGroup {
	for i := range sc.NodeGroups {
		if sc.NodeGroups[i].Name == name {
			return &sc.NodeGroups[i]
		}
	}
	return nil
}

// Outcome is one case's comparison.
type Outcome struct {
	Case string
	// Err is the runner's error, if it failed.
	Err error
	// Diffs are the differences from the expectation, then any broken
	// invariant.
	Diffs []string
}

// Agrees reports whether the runner matched the case.
func (o Outcome) Agrees() bool { return o.Err == nil && len(o.Diffs) == 0 }

// CheckCases runs r on every case and compares its result with the
// expectation. The berth comparison test is this over berthrun.Default,
// failing on any outcome that does not agree.
func CheckCases(r berthrun.Runner) ([]Outcome, error) {
	all, err := cases.All()
	if err != nil {
		return nil, err
	}
	return checkNamed(r, all), nil
}

// CheckRegressions is CheckCases over regressions/: scenarios on which
// berth once differed from the genuine autoscaler.
func CheckRegressions(r berthrun.Runner) ([]Outcome, error) {
	all, err := regressions.All()
	if err != nil {
		return nil, err
	}
	return checkNamed(r, all), nil
}

func checkNamed(r berthrun.Runner, all []cases.Named) []Outcome {
	out := make([]Outcome, 0, len(all))
	for i := range all {
		c := &all[i]
		o := Outcome{Case: c.File}
		got, err := r.Run(&c.Scenario)
		if err != nil {
			o.Err = err
		} else {
			o.Diffs = append(Compare(&c.Expect, got), Invariants(&c.Scenario, got)...)
		}
		out = append(out, o)
	}
	return out
}

// CheckGenerated runs r on generator.Small(seed) for each seed and checks
// the invariants alone: no reference result exists for generated
// scenarios yet (README, "Why no upstream run").
func CheckGenerated(r berthrun.Runner, seeds []uint64) []Outcome {
	out := make([]Outcome, 0, len(seeds))
	for _, seed := range seeds {
		sc := generator.Small(seed)
		o := Outcome{Case: sc.Name}
		got, err := r.Run(sc)
		if err != nil {
			o.Err = err
		} else {
			o.Diffs = Invariants(sc, got)
		}
		out = append(out, o)
	}
	return out
}
