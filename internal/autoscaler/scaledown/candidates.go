package scaledown

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/berth-sim/berth/internal/autoscaler/config"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler"
)

// Group is one node group as scale-down needs it.
type Group struct {
	Name    string
	MinSize int
	// Target is the group's current target size.
	Target int
	// Nodes are the names of the group's nodes.
	Nodes []string
}

// Input is one scale-down evaluation's inputs.
type Input struct {
	// State, when set, is the cluster; otherwise Nodes, Pods and PDBs build one.
	State  *cluster.State
	Nodes  []*corev1.Node
	Pods   []*corev1.Pod
	PDBs   []*policyv1.PodDisruptionBudget
	Groups []Group
	// Options are the --scale-down-* and --skip-nodes-with-* flags.
	Options           config.Options
	KubernetesVersion string
}

// Candidate is a node cluster-autoscaler considers unneeded.
type Candidate struct {
	Node        string
	Group       string
	Utilization float64
	// PodsToMove are the pods that would be evicted and placed elsewhere;
	// empty for an empty node (DaemonSet and mirror pods do not count).
	PodsToMove []*corev1.Pod
	// Destinations are where the simulation put PodsToMove, in order.
	Destinations []string
}

// Unremovable is a group node that stays, and why (cluster-autoscaler's
// UnremovableReason names).
type Unremovable struct {
	Node   string
	Reason string
	// Blocking is set for BlockedByPod.
	Blocking *BlockingPod
}

// Candidates are the nodes scale-down may remove in this loop: the
// Unneeded nodes in name order, less those that would take their group
// below its minimum size counting the candidates before them
// (NodeGroupMinSizeReached), as cluster-autoscaler checks the group's size
// when it removes unneeded nodes, not when it finds them
// (docs/cluster-autoscaler.md#scale-down). Nodes of a group already at its
// minimum are reported NodeGroupMinSizeReached too.
func Candidates(in Input) ([]Candidate, []Unremovable, error) {
	unneeded, stay, err := Unneeded(in)
	if err != nil {
		return nil, nil, err
	}
	groups := map[string]Group{}
	for _, g := range in.Groups {
		groups[g.Name] = g
		if g.Target > g.MinSize {
			continue
		}
		for _, n := range g.Nodes {
			stay = append(stay, Unremovable{Node: n, Reason: "NodeGroupMinSizeReached"})
		}
	}
	perGroup := map[string]int{}
	var out []Candidate
	for _, c := range unneeded {
		g := groups[c.Group]
		if g.Target-perGroup[c.Group] <= g.MinSize {
			stay = append(stay, Unremovable{Node: c.Node, Reason: "NodeGroupMinSizeReached"})
			continue
		}
		perGroup[c.Group]++
		out = append(out, c)
	}
	sort.SliceStable(stay, func(i, j int) bool { return stay[i].Node < stay[j].Node })
	return out, stay, nil
}

// Unneeded is one loop of cluster-autoscaler's scale-down planner, without
// side effects: the nodes of every group above its minimum size, in name
// order, judged by the scale-down-disabled annotation, utilization (at or
// below the threshold is underutilized), the pods that block draining, and
// whether every pod to move fits another node (berth's scheduler Filter,
// never the node itself nor one already found unneeded, the pods moved
// before counted). A group at its minimum size is left out entirely, as
// CA's pre-filtering node processor leaves it out; the minimum is not
// counted against the nodes found here (Candidates does that)
// (docs/cluster-autoscaler.md#scale-down).
func Unneeded(in Input) ([]Candidate, []Unremovable, error) {
	s := in.State
	if s == nil {
		s = cluster.FromObjects(in.KubernetesVersion, 0, in.Nodes, in.Pods)
		for _, pdb := range in.PDBs {
			s.PodDisruptionBudgets[cluster.Key(pdb.Namespace, pdb.Name)] = pdb
		}
	}
	// Copies: the loop spends their disruptions as nodes are found
	// unneeded, as CA's remaining-PDB tracker does.
	var pdbs []*policyv1.PodDisruptionBudget
	for _, k := range cluster.SortedKeys(s.PodDisruptionBudgets) {
		pdbs = append(pdbs, s.PodDisruptionBudgets[k].DeepCopy())
	}
	sim, err := scheduler.New().Simulate(s)
	if err != nil {
		return nil, nil, err
	}
	// movedIn holds, by node, the copies earlier nodes' pods were placed
	// as: CA keeps each successful simulation, so a later node's removal
	// must move them again (and its drain rules judge them).
	movedIn := map[string][]*corev1.Pod{}
	var kept []placed
	type member struct{ node, group string }
	var members []member
	for _, g := range in.Groups {
		if g.Target <= g.MinSize {
			continue
		}
		for _, n := range g.Nodes {
			members = append(members, member{n, g.Name})
		}
	}
	sort.Slice(members, func(i, j int) bool { return members[i].node < members[j].node })
	removed := map[string]bool{}
	var out []Candidate
	var stay []Unremovable
	for _, m := range members {
		node := s.Nodes[m.node]
		if node == nil {
			continue
		}
		if toBeDeleted(node) {
			continue
		}
		if node.Annotations[AnnotationScaleDownDisabled] == "true" {
			stay = append(stay, Unremovable{Node: m.node, Reason: "ScaleDownDisabledAnnotation"})
			continue
		}
		pods := livePods(s, m.node)
		util := Utilization(node, pods, in.Options)
		if util > in.Options.ScaleDownUtilizationThreshold {
			stay = append(stay, Unremovable{Node: m.node, Reason: "NotUnderutilized"})
			continue
		}
		var move []*corev1.Pod
		var block *BlockingPod
		all := append(append([]*corev1.Pod{}, pods...), movedIn[m.node]...)
		for _, p := range all {
			if isDaemonSetPod(p) || isMirrorPod(p) {
				continue
			}
			if r := blocking(p, in.Options, pdbs); r != "" {
				block = &BlockingPod{Pod: p, Reason: r}
				break
			}
			move = append(move, p)
		}
		if block != nil {
			stay = append(stay, Unremovable{Node: m.node, Reason: "BlockedByPod", Blocking: block})
			continue
		}
		copies, dests, ok, err := place(sim, move, m.node, removed, s)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			stay = append(stay, Unremovable{Node: m.node, Reason: "NoPlaceToMovePods"})
			if len(copies) > 0 {
				// The pods placed before one found no room must not
				// stay counted (CA reverts its snapshot's fork): the
				// simulation is rebuilt with the kept placements only.
				if sim, err = replay(s, kept); err != nil {
					return nil, nil, err
				}
			}
			continue
		}
		removed[m.node] = true
		for i, cp := range copies {
			movedIn[dests[i]] = append(movedIn[dests[i]], cp)
			kept = append(kept, placed{cp, dests[i]})
		}
		spend(pdbs, move)
		// PodsToMove are the node's own pods (what an eviction names);
		// the copies moved in earlier are only re-placed.
		own := move[:len(move)-countMovedIn(move, movedIn[m.node])]
		out = append(out, Candidate{Node: m.node, Group: m.group, Utilization: util, PodsToMove: own, Destinations: dests[:len(own)]})
	}
	return out, stay, nil
}

// place finds a node for every pod, never the node itself nor one already
// chosen for removal, and counts each placed pod for the next questions.
func place(sim *scheduler.Simulation, pods []*corev1.Pod, self string, removed map[string]bool, s *cluster.State) ([]*corev1.Pod, []string, bool, error) {
	nodes := sim.Nodes()
	var dests []string
	var copies []*corev1.Pod
	for _, p := range pods {
		// The pod as it would be recreated: unbound (its own nodeName
		// would pin it to the node being removed) under a name of its own.
		cp := p.DeepCopy()
		cp.Name = fmt.Sprintf("%s-moved-from-%s", p.Name, self)
		cp.Spec.NodeName = ""
		found := ""
		for _, n := range nodes {
			if n == self || removed[n] {
				continue
			}
			if node := s.Nodes[n]; node != nil && toBeDeleted(node) {
				continue
			}
			if st := sim.Filter(cp, n); st == nil || st.IsSuccess() {
				found = n
				break
			}
		}
		if found == "" {
			// The copies placed so far, for the caller to undo.
			return copies, nil, false, nil
		}
		if err := sim.Assume(cp, found); err != nil {
			return nil, nil, false, err
		}
		dests = append(dests, found)
		copies = append(copies, cp)
	}
	return copies, dests, true, nil
}

// placed is one pod copy a kept simulation put on a node.
type placed struct {
	pod  *corev1.Pod
	node string
}

// replay is a fresh simulation of s with the kept placements assumed.
func replay(s *cluster.State, kept []placed) (*scheduler.Simulation, error) {
	sim, err := scheduler.New().Simulate(s)
	if err != nil {
		return nil, err
	}
	for _, k := range kept {
		if err := sim.Assume(k.pod, k.node); err != nil {
			return nil, err
		}
	}
	return sim, nil
}

// spend takes one disruption from every PDB for each moved pod it
// selects (CA's remaining-PDB tracker after a node is found unneeded).
func spend(pdbs []*policyv1.PodDisruptionBudget, moved []*corev1.Pod) {
	for _, p := range moved {
		for _, pdb := range matching(p, pdbs) {
			pdb.Status.DisruptionsAllowed--
		}
	}
}

// countMovedIn is how many of move (the node's own pods first) are copies
// moved in by earlier nodes.
func countMovedIn(move, in []*corev1.Pod) int {
	set := map[*corev1.Pod]bool{}
	for _, p := range in {
		set[p] = true
	}
	n := 0
	for _, p := range move {
		if set[p] {
			n++
		}
	}
	return n
}

func toBeDeleted(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == "ToBeDeletedByClusterAutoscaler" {
			return true
		}
	}
	return n.DeletionTimestamp != nil
}

func livePods(s *cluster.State, node string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range s.PodsOnNode(node) {
		if !cluster.IsTerminal(p) && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// Utilization is the larger of the node's cpu and memory requests over
// allocatable; DaemonSet and mirror pods count unless the flags say not.
func Utilization(node *corev1.Node, pods []*corev1.Pod, o config.Options) float64 {
	var cpu, mem int64
	for _, p := range pods {
		if o.IgnoreDaemonSetsUtilization && isDaemonSetPod(p) {
			continue
		}
		if o.IgnoreMirrorPodsUtilization && isMirrorPod(p) {
			continue
		}
		req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		cpu += req.Cpu().MilliValue()
		mem += req.Memory().Value()
	}
	var u float64
	if a := node.Status.Allocatable.Cpu().MilliValue(); a > 0 {
		u = float64(cpu) / float64(a)
	}
	if a := node.Status.Allocatable.Memory().Value(); a > 0 {
		if m := float64(mem) / float64(a); m > u {
			u = m
		}
	}
	return u
}
