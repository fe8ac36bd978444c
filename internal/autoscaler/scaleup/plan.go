package scaleup

import (
	"fmt"
	"maps"
	"math/rand"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/autoscaler/config"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler"
)

// Group is one node group as the planner needs it.
type Group struct {
	// Name is the node group's id (the ASG name on AWS).
	Name             string
	MinSize, MaxSize int
	// Target is the group's current target (desired) size.
	Target int
	// Registered counts the group's nodes that exist; Target-Registered
	// nodes are upcoming (asked for, not yet registered).
	Registered int
	// Template is the node a new instance of the group would become, and
	// TemplatePods the pods (DaemonSet pods) that would start on it.
	Template     *corev1.Node
	TemplatePods []*corev1.Pod
	// Backoff marks a group whose last scale-up failed: it is skipped.
	Backoff bool
}

// Input is one scale-up decision's inputs.
type Input struct {
	// State, when set, is the cluster to simulate on (berth's own
	// controller); otherwise Nodes and Pods build one.
	State *cluster.State
	// Nodes are the cluster's nodes, Pods every pod bound to one of them.
	Nodes []*corev1.Node
	Pods  []*corev1.Pod
	// Pending are the pods the scheduler marked unschedulable, oldest first.
	Pending []*corev1.Pod
	Groups  []Group
	Options config.Options
	// Priorities is the priority expander's configuration (the
	// "priorities" key of its ConfigMap); empty when there is none.
	Priorities string
	// Seed drives the random expander and the final tie-break.
	Seed int64
	// KubernetesVersion selects the scheduler's behaviour ("" = berth's default).
	KubernetesVersion string
	// MemoryMaxBytes, when non-zero, replaces Options.MemoryMaxGiB: the
	// differential harness sets limits below a GiB, as upstream's tests do.
	MemoryMaxBytes int64
}

// Increase is one group's new target, printed as cluster-autoscaler's
// ScaleUpInfo: {<group> <from>-><to> (max: <max>)}.
type Increase struct {
	Group         string
	From, To, Max int
}

func (i Increase) String() string {
	return fmt.Sprintf("{%s %d->%d (max: %d)}", i.Group, i.From, i.To, i.Max)
}

// Result is the plan.
type Result struct {
	// Increases is empty when nothing scales up.
	Increases []Increase
	// Triggered are the pods the chosen option helps (TriggeredScaleUp).
	Triggered []*corev1.Pod
	// NoScaleUp holds, for each pending pod no option helps, the reasons
	// per group, aggregated; it is filled only when nothing scales up, as
	// cluster-autoscaler sends NotTriggerScaleUp only then.
	NoScaleUp []PodReasons
	// FittingElsewhere are pending pods that fit existing or upcoming
	// nodes: they wait and trigger nothing.
	FittingElsewhere []*corev1.Pod
	// Expendable are pods below --expendable-pods-priority-cutoff.
	Expendable []*corev1.Pod
	// Options are the expansion options the expanders chose among.
	Options []Option
	// Chosen is the option the expanders picked (nil: none).
	Chosen *Option
	// Remaining are the pods no group's template accepts (or, with
	// --max-nodes-total reached, every pending pod): cluster-autoscaler's
	// PodsRemainUnschedulable. A pod that fits some group's template but
	// was left out of every option (cut by a limit) is not among them
	// (docs/cluster-autoscaler.md#scale-up).
	Remaining []*corev1.Pod
	// Awaiting are the pods that fit some group's template but not the
	// chosen group's: cluster-autoscaler's PodsAwaitEvaluation. Set only
	// when something scales up.
	Awaiting []*corev1.Pod
}

// Option is one group's way to help: NodeCount new nodes for Pods.
type Option struct {
	Group     string
	NodeCount int
	Pods      []*corev1.Pod
}

// Plan decides one scale-up as cluster-autoscaler's main loop would
// (docs/cluster-autoscaler.md#scale-up).
func Plan(in Input) (*Result, error) {
	s := in.State
	if s == nil {
		s = buildState(in)
	}
	p := &planner{in: in, s: s, sc: scheduler.New(), rng: rand.New(rand.NewSource(in.Seed))}
	return p.run()
}

// buildState turns plain inputs into a cluster berth's scheduler can read.
func buildState(in Input) *cluster.State {
	return cluster.FromObjects(in.KubernetesVersion, in.Seed, in.Nodes, in.Pods, in.Pending)
}

type planner struct {
	in  Input
	s   *cluster.State
	sc  *scheduler.Scheduler
	rng *rand.Rand
	res Result
	// reasons[pod key][group] are the group's reasons for the pod.
	rejected map[string]map[string][]string
	skipped  map[string][]string
	// fits[group] are the equivalence groups the group's template accepts
	// (cluster-autoscaler's schedulable pod groups), in pending order.
	fits map[string][]*equivalence
	// classes are the pods' equivalence classes.
	classes classes
	// requests caches least-waste's view of each pod's requests.
	requests map[*corev1.Pod]podRequests
}

// equivalence is pods of one owner with the same spec: cluster-autoscaler
// judges one and applies the verdict to all.
type equivalence struct {
	pods []*corev1.Pod
	// fitGroups are the simulated groups whose template accepts the pods.
	fitGroups []string
}

// fitsGroup tells whether the group's template accepts the pods.
func (e *equivalence) fitsGroup(name string) bool {
	for _, g := range e.fitGroups {
		if g == name {
			return true
		}
	}
	return false
}

func (p *planner) run() (*Result, error) {
	var pending []*corev1.Pod
	for _, pod := range p.in.Pending {
		if int(corev1helpers.PodPriority(pod)) < p.in.Options.ExpendablePodsPriorityCutoff {
			p.res.Expendable = append(p.res.Expendable, pod)
			continue
		}
		pending = append(pending, pod)
	}
	pending, err := p.filterFitting(pending)
	if err != nil {
		return nil, err
	}
	if len(pending) == 0 {
		return &p.res, nil
	}
	groups := p.equivalenceGroups(pending)
	p.rejected = map[string]map[string][]string{}
	p.skipped = map[string][]string{}
	limits := newLimits(p.in)
	// As cluster-autoscaler does: every considered group's template is
	// checked against the pods first, then the options are estimated, so
	// that an estimate knows which similar groups accept the same pods.
	var considered []*Group
	for gi := range p.in.Groups {
		g := &p.in.Groups[gi]
		if reason := p.skipReason(g, limits); reason != "" {
			p.skipped[g.Name] = []string{reason}
			continue
		}
		if err := p.fit(g, groups); err != nil {
			return nil, err
		}
		considered = append(considered, g)
	}
	var options []Option
	for _, g := range considered {
		opt, err := p.option(g, limits)
		if err != nil {
			return nil, err
		}
		if opt != nil {
			options = append(options, *opt)
		}
	}
	p.res.Options = options
	if limits.clusterFull() {
		p.res.Remaining = pending
		p.noScaleUp(pending, true)
		return &p.res, nil
	}
	// Only pods no template accepts remain unschedulable: cluster-
	// autoscaler reports nothing for the others, even when no option
	// holds them (docs/cluster-autoscaler.md#scale-up).
	for _, e := range groups {
		if len(e.fitGroups) == 0 {
			p.res.Remaining = append(p.res.Remaining, e.pods...)
		}
	}
	if len(options) == 0 {
		p.noScaleUp(p.res.Remaining, false)
		return &p.res, nil
	}
	best, err := p.expand(options)
	if err != nil {
		return nil, err
	}
	p.res.Chosen = best
	capped := *best
	capped.NodeCount = limits.capped(p.group(best.Group), best.NodeCount)
	p.res.Increases = p.balance(&capped, options, limits)
	p.res.Triggered = best.Pods
	for _, e := range groups {
		if len(e.fitGroups) > 0 && !e.fitsGroup(best.Group) {
			p.res.Awaiting = append(p.res.Awaiting, e.pods...)
		}
	}
	return &p.res, nil
}

// filterFitting drops pods that fit a node that exists or is coming:
// cluster-autoscaler waits for those rather than asking for more.
func (p *planner) filterFitting(pending []*corev1.Pod) ([]*corev1.Pod, error) {
	var upcoming []scheduler.HypotheticalNode
	for _, g := range p.in.Groups {
		for i := g.Registered; i < g.Target; i++ {
			upcoming = append(upcoming, copyTemplate(g, fmt.Sprintf("upcoming-%d", i)))
		}
	}
	sim, err := p.sc.Simulate(p.s, upcoming...)
	if err != nil {
		return nil, err
	}
	nodes := sim.Nodes()
	var out []*corev1.Pod
	failed := map[string]bool{}
	// next is where the search for the next pod starts: cluster-
	// autoscaler's scheduling simulator resumes after the node that took
	// the previous pod (its last-index node ordering) rather than starting
	// over, which spreads small pods over the nodes
	// (docs/cluster-autoscaler.md#scale-up).
	next := 0
	for _, pod := range pending {
		key := p.classes.key(pod)
		if key != "" && failed[key] {
			out = append(out, pod)
			continue
		}
		placed := false
		pf := sim.PreFilter(pod)
		for i := range nodes {
			at := (next + i) % len(nodes)
			if st := pf.Filter(nodes[at]); st == nil || st.IsSuccess() {
				if err := sim.Assume(pod, nodes[at]); err != nil {
					return nil, err
				}
				placed = true
				next = at + 1
				break
			}
		}
		if placed {
			p.res.FittingElsewhere = append(p.res.FittingElsewhere, pod)
			continue
		}
		if key != "" {
			failed[key] = true
		}
		out = append(out, pod)
	}
	return out, nil
}

// copyTemplate names a copy of the group's template node and its pods.
// The node is a shallow copy with its own labels: the simulation reads
// nodes and never writes them, and bin packing makes them by the thousand.
func copyTemplate(g Group, suffix string) scheduler.HypotheticalNode {
	cp := *g.Template
	n := &cp
	n.Name = g.Name + "-" + suffix
	if n.Labels != nil {
		n.Labels = maps.Clone(n.Labels)
		n.Labels[corev1.LabelHostname] = n.Name
	}
	h := scheduler.HypotheticalNode{Node: n}
	for _, tp := range g.TemplatePods {
		cp := tp.DeepCopy()
		cp.Name = tp.Name + "-" + n.Name
		cp.Spec.NodeName = ""
		h.Pods = append(h.Pods, cp)
	}
	return h
}

func ownerUID(pod *corev1.Pod) string {
	for _, r := range pod.OwnerReferences {
		if r.Controller != nil && *r.Controller {
			return string(r.UID)
		}
	}
	return ""
}

// equivalenceGroups groups pods by owner and spec, in first-seen order.
func (p *planner) equivalenceGroups(pods []*corev1.Pod) []*equivalence {
	var out []*equivalence
	index := map[string]*equivalence{}
	for _, pod := range pods {
		key := p.classes.key(pod)
		if key != "" {
			if e := index[key]; e != nil {
				e.pods = append(e.pods, pod)
				continue
			}
		}
		e := &equivalence{pods: []*corev1.Pod{pod}}
		out = append(out, e)
		if key != "" {
			index[key] = e
		}
	}
	return out
}

// skipReason is why a group is not considered at all, "" if it is.
func (p *planner) skipReason(g *Group, l *limits) string {
	switch {
	case g.Backoff:
		return ReasonBackoff
	case g.Target >= g.MaxSize:
		return ReasonMaxSize
	case g.Template == nil:
		return ReasonNotReady
	}
	if r := l.exceeded(g); r != "" {
		return r
	}
	return ""
}

// fit checks each equivalence group against the group's template and
// records the ones it accepts in p.fits.
func (p *planner) fit(g *Group, groups []*equivalence) error {
	sim, err := p.sc.Simulate(p.s, copyTemplate(*g, "template"))
	if err != nil {
		return err
	}
	tmpl := g.Name + "-template"
	var fitting []*equivalence
	for _, e := range groups {
		st := sim.Filter(e.pods[0], tmpl)
		if st == nil || st.IsSuccess() {
			fitting = append(fitting, e)
			e.fitGroups = append(e.fitGroups, g.Name)
			continue
		}
		reasons := st.Reasons()
		if len(reasons) == 0 {
			reasons = []string{st.Message()}
		}
		for _, pod := range e.pods {
			key := cluster.Key(pod.Namespace, pod.Name)
			if p.rejected[key] == nil {
				p.rejected[key] = map[string][]string{}
			}
			p.rejected[key][g.Name] = reasons
		}
	}
	if len(fitting) == 0 {
		return nil
	}
	if p.fits == nil {
		p.fits = map[string][]*equivalence{}
	}
	p.fits[g.Name] = fitting
	return nil
}

// option packs the pods the group's template accepts onto new nodes.
func (p *planner) option(g *Group, l *limits) (*Option, error) {
	fitting := p.fits[g.Name]
	if len(fitting) == 0 {
		return nil, nil
	}
	limit := l.nodesFor(g, p.in.Options, p.similarHeadroom(g, l))
	count, pods, err := p.estimate(g, fitting, limit)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, nil
	}
	return &Option{Group: g.Name, NodeCount: count, Pods: pods}, nil
}

// noScaleUp records the reasons of every pod that remains unschedulable.
func (p *planner) noScaleUp(pending []*corev1.Pod, clusterFull bool) {
	for _, pod := range pending {
		key := cluster.Key(pod.Namespace, pod.Name)
		pr := PodReasons{Pod: pod}
		if clusterFull {
			pr.Message = ReasonMaxTotal
			p.res.NoScaleUp = append(p.res.NoScaleUp, pr)
			continue
		}
		var agg aggregate
		for _, g := range p.in.Groups {
			agg.add(p.rejected[key][g.Name])
		}
		for _, g := range p.in.Groups {
			agg.add(p.skipped[g.Name])
		}
		pr.Reasons = agg.items
		pr.Message = agg.String()
		p.res.NoScaleUp = append(p.res.NoScaleUp, pr)
	}
}

// groupIndex finds a group by name.
func (p *planner) group(name string) *Group {
	for i := range p.in.Groups {
		if p.in.Groups[i].Name == name {
			return &p.in.Groups[i]
		}
	}
	return nil
}
