package main

import (
	"fmt"
	"strings"

	"github.com/berth-sim/berth/karpenter-conformance/berthrun"
	"github.com/berth-sim/berth/karpenter-conformance/diff"
	"github.com/berth-sim/berth/karpenter-conformance/scenario"
	"github.com/berth-sim/berth/karpenter-conformance/upstream"
)

// printOutcomes shows the distribution of upstream's distinct outcomes over
// runs, one compact line per outcome (claims as pool@zones:pods, existing
// placements, errored pods), and marks the one berth's result equals. It is
// the evidence for a tie: how often each outcome comes up, and where berth's
// result sits among them.
func printOutcomes(seed uint64, file string, mixed, runs int) error {
	sc, err := load(seed, file, mixed)
	if err != nil {
		return err
	}
	b, err := berthrun.Run(sc)
	if err != nil {
		return err
	}
	outs, err := upstream.Outcomes(sc, runs)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d distinct upstream outcomes over %d runs\n", sc.Name, len(outs), runs)
	for _, o := range outs {
		mark := " "
		if diff.Compare(b, []*scenario.Result{o.Result}).Agree {
			mark = "*"
		}
		fmt.Printf("%s%3d runs  %s\n", mark, o.Runs, summarize(o.Result))
	}
	fmt.Printf("berth      %s\n", summarize(b))
	return nil
}

func summarize(r *scenario.Result) string {
	var parts []string
	for _, nc := range r.NodeClaims {
		parts = append(parts, fmt.Sprintf("%s@%s:%s", nc.NodePool, strings.Join(nc.Zones, ","), strings.Join(short(nc.Pods), ",")))
	}
	byNode := map[string][]string{}
	var nodes []string
	for _, p := range r.Existing {
		if _, ok := byNode[p.Node]; !ok {
			nodes = append(nodes, p.Node)
		}
		byNode[p.Node] = append(byNode[p.Node], p.Pod)
	}
	for _, n := range nodes {
		parts = append(parts, fmt.Sprintf("%s:%s", strings.SplitN(n, ".", 2)[0], strings.Join(short(byNode[n]), ",")))
	}
	var errs []string
	for _, e := range r.Errors {
		errs = append(errs, e.Pod)
	}
	parts = append(parts, "err:"+strings.Join(short(errs), ","))
	return strings.Join(parts, " | ")
}

func short(pods []string) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = strings.TrimPrefix(p, "default/")
	}
	return out
}
