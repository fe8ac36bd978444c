package why

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
)

// maxListed is how many distinct node groups, types or zones a line
// names before it only counts them; maxNodesListed and maxPodsListed cap
// the per-node capacity lines and the other pending pods in text (the
// json and yaml reports keep them all).
const (
	maxListed      = 4
	maxNodesListed = 10
	maxPodsListed  = 10
)

// Render writes the reports as text.
func Render(w io.Writer, reports []*Report) {
	for i, r := range reports {
		if i > 0 {
			fmt.Fprintln(w)
		}
		render(w, r)
	}
}

func render(w io.Writer, r *Report) {
	if r.Node != "" {
		fmt.Fprintf(w, "Pod %s is %s on %s (%s).\n", r.Pod, r.Phase, r.Node, r.Scheduler)
	} else {
		fmt.Fprintf(w, "Pod %s is %s (%s).\n", r.Pod, r.Phase, r.Scheduler)
	}
	if len(r.AlsoPending) > 0 {
		names := r.AlsoPending
		more := ""
		if len(names) > maxPodsListed {
			names, more = names[:maxPodsListed], fmt.Sprintf(" and %d more", len(r.AlsoPending)-maxPodsListed)
		}
		fmt.Fprintf(w, "Also pending with the same spec: %s%s.\n", strings.Join(names, ", "), more)
	}
	if r.LastFailedScheduling != "" {
		fmt.Fprintf(w, "Last FailedScheduling: %s\n", r.LastFailedScheduling)
	}
	if l := r.SchedulerLayer; l != nil {
		renderScheduler(w, r, l)
	}
	if len(r.Karpenter) > 0 {
		fmt.Fprintln(w, "\nKarpenter, each pool on its own:")
		if r.KarpenterLastEvent != "" {
			fmt.Fprintf(w, "  (last FailedScheduling from karpenter: %s)\n", r.KarpenterLastEvent)
		}
		for _, v := range r.Karpenter {
			line := fmt.Sprintf("  %s %s: %s", v.Kind, v.Pool, v.Outcome)
			switch {
			case v.Outcome == "launch":
				line += " a new NodeClaim (" + strings.Join(v.InstanceTypes, ", ") + ")"
			case v.Target != "":
				line += " " + v.Target
			}
			if v.Message != "" {
				line += ": " + v.Message
			}
			fmt.Fprintln(w, line)
			if len(v.Nearest) > 0 {
				fmt.Fprintf(w, "    nearest instance types: %s\n", strings.Join(v.Nearest, "; "))
			}
		}
	}
	if len(r.NodeGroups) > 0 {
		fmt.Fprintln(w, "\ncluster-autoscaler, each node group on its own:")
		if r.AutoscalerLastEvent != "" {
			fmt.Fprintf(w, "  (last NotTriggerScaleUp: %s)\n", r.AutoscalerLastEvent)
		}
		for _, v := range r.NodeGroups {
			fmt.Fprintf(w, "  node group %s: %s: %s\n", v.Group, v.Outcome, v.Message)
		}
	}
	if len(r.Fargate) > 0 {
		fmt.Fprintln(w, "\nFargate:")
		for _, v := range r.Fargate {
			line := fmt.Sprintf("  profile %s: %s", v.Profile, v.Outcome)
			if v.Message != "" {
				line += ": " + v.Message
			}
			fmt.Fprintln(w, line)
		}
	}
	if r.Node != "" || r.Scheduler == fargateScheduler {
		// Fargate's answer is the message itself: berth tries no changes
		// for fargate-scheduler pods (docs/why.md#fixes).
		return
	}
	if len(r.Fixes) == 0 {
		fmt.Fprintln(w, "\nNo suggested fix: none of the small changes berth tries makes the pod schedule.")
		return
	}
	fmt.Fprintln(w, "\nSuggested fixes (each verified on a copy of the cluster; smallest change first):")
	for i, f := range r.Fixes {
		fmt.Fprintf(w, "  %d. %s\n     -> %s\n", i+1, f.Change, f.LandsOn)
	}
}

func renderScheduler(w io.Writer, r *Report, l *SchedulerLayer) {
	fmt.Fprintln(w)
	if r.Node != "" {
		fmt.Fprintf(w, "kube-scheduler, asked again without the pod: %d of %d nodes fit", l.Fit, l.Nodes)
	} else {
		fmt.Fprintf(w, "kube-scheduler: %d of %d nodes fit", l.Fit, l.Nodes)
	}
	if l.WouldPlaceOn != "" {
		fmt.Fprintf(w, "; the next attempt would choose %s", l.WouldPlaceOn)
	}
	fmt.Fprintln(w)
	if l.Stale && l.Message != "" {
		fmt.Fprintf(w, "  next attempt: %s\n  (differs from the event above: an event series keeps its first message, or the cluster changed since)\n", l.Message)
	}
	for _, g := range l.Groups {
		noun := "nodes"
		if g.Count == 1 {
			noun = "node"
		}
		fmt.Fprintf(w, "  %d %s %s\n", g.Count, noun, where(g))
		if len(g.Verdicts) == 0 {
			fmt.Fprintln(w, "      fit")
		}
		for _, v := range g.Verdicts {
			fmt.Fprintf(w, "      %s: %s\n", v.Plugin, strings.Join(v.Reasons, ", "))
		}
	}
	if len(l.NotEnoughCapacityIn) > 0 {
		fmt.Fprintf(w, "\nNot enough capacity in %s: the nodes that pass every other filter are full (closest to fitting first).\n", strings.Join(l.NotEnoughCapacityIn, ", "))
		for i, nc := range l.Capacity {
			if i == maxNodesListed {
				fmt.Fprintf(w, "  and %d more nodes, none closer to fitting\n", len(l.Capacity)-maxNodesListed)
				break
			}
			var parts []string
			for _, rn := range nc.Resources {
				name := corev1.ResourceName(rn.Resource)
				parts = append(parts, fmt.Sprintf("%s: pod requests %s, %s of %s allocatable in use, %s free", name,
					quantity(name, rn.Requested), quantity(name, rn.Used), quantity(name, rn.Allocatable), quantity(name, rn.Allocatable-rn.Used)))
			}
			fmt.Fprintf(w, "  %s (%s)  %s\n", nc.Node, nc.Zone, strings.Join(parts, "; "))
		}
	}
	if len(l.Scores) > 0 {
		fmt.Fprintln(w, "\nScores of the chosen node and the runners-up (normalized score per plugin; total = sum of score x weight):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		header := "  NODE\tTOTAL"
		for _, p := range l.Scores[0].Plugins {
			header += fmt.Sprintf("\t%s(x%d)", p.Plugin, p.Weight)
		}
		fmt.Fprintln(tw, header)
		for _, ns := range l.Scores {
			name := ns.Node
			if ns.Chosen {
				name += " *"
			}
			row := fmt.Sprintf("  %s\t%d", name, ns.Total)
			for _, p := range ns.Plugins {
				row += fmt.Sprintf("\t%d", p.Score)
			}
			fmt.Fprintln(tw, row)
		}
		tw.Flush()
	}
}

// where names a line's nodes: the node itself when alone, else the node
// groups, instance types and zones they span.
func where(g NodeGroupLine) string {
	var parts []string
	for _, list := range [][]string{g.NodeGroups, g.InstanceTypes, g.Zones} {
		if len(list) == 0 {
			continue
		}
		if len(list) > maxListed {
			parts = append(parts, fmt.Sprintf("%s and %d more", strings.Join(list[:maxListed], ", "), len(list)-maxListed))
			continue
		}
		parts = append(parts, strings.Join(list, ", "))
	}
	desc := strings.Join(parts, "; ")
	if g.Count == 1 {
		if desc == "" {
			return g.Nodes[0]
		}
		return g.Nodes[0] + " (" + desc + ")"
	}
	if desc == "" {
		return ""
	}
	return "(" + desc + ")"
}
