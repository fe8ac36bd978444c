package app

import (
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/sim"
)

// RawError is an error kubectl prints as it is, one line per error, without
// the "error: " prefix (what cmdutil.CheckErr does with an aggregate).
type RawError struct{ Lines []string }

func (e *RawError) Error() string { return strings.Join(e.Lines, "\n") }

// output collects a command's stdout and stderr lines in the order kubectl
// would write them; they are printed only once the state is saved.
type output struct {
	lines []outLine
}

type outLine struct {
	err  bool
	text string
}

func (o *output) out(format string, a ...interface{}) {
	o.lines = append(o.lines, outLine{text: fmt.Sprintf(format, a...)})
}

func (o *output) errf(format string, a ...interface{}) {
	o.lines = append(o.lines, outLine{err: true, text: fmt.Sprintf(format, a...)})
}

// stdout is an output of lines all bound for stdout.
func stdout(lines []string) *output {
	o := &output{}
	for _, l := range lines {
		o.lines = append(o.lines, outLine{text: l})
	}
	return o
}

// commit runs the changed copy of the cluster until it settles, makes it the
// state, saves it, and only then prints what kubectl would have printed: a
// failed command leaves neither the state nor the terminal changed.
func (a *App) commit(work *cluster.State, o *output) error {
	err := sim.Settle(work, a.withProgress(a.controllers(work), 0), sim.DefaultSettleHorizon)
	a.clearProgress()
	if err != nil {
		return err
	}
	a.state = work
	if err := a.save(); err != nil {
		return err
	}
	for _, l := range o.lines {
		if l.err {
			fmt.Fprintln(a.opts.ErrOut, l.text)
		} else {
			fmt.Fprintln(a.opts.Out, l.text)
		}
	}
	return nil
}

func lookupNodes(s *cluster.State, names []string) ([]*corev1.Node, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("resource(s) were provided, but no name was specified")
	}
	var out []*corev1.Node
	for _, n := range names {
		node, ok := s.Nodes[n]
		if !ok {
			return nil, fmt.Errorf("Error from server (NotFound): nodes %q not found", n)
		}
		out = append(out, node)
	}
	return out, nil
}

// Cordon marks nodes unschedulable (desired) or schedulable again, as
// kubectl cordon / uncordon do; the node lifecycle controller then adds or
// removes the node.kubernetes.io/unschedulable:NoSchedule taint.
func (a *App) Cordon(names []string, desired bool) (err error) {
	defer a.finish(&err)
	work := a.change()
	o := &output{}
	if err := cordon(work, names, desired, o); err != nil {
		return err
	}
	return a.commit(work, o)
}

func cordon(s *cluster.State, names []string, desired bool, o *output) error {
	nodes, err := lookupNodes(s, names)
	if err != nil {
		return err
	}
	verb := "cordoned"
	if !desired {
		verb = "uncordoned"
	}
	for _, node := range nodes {
		if node.Spec.Unschedulable == desired {
			o.out("node/%s already %s", node.Name, verb)
			continue
		}
		old := node.DeepCopy()
		node.Spec.Unschedulable = desired
		if desired {
			addTaint(s, node, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
		} else {
			removeTaint(node, corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule)
		}
		touchNode(s, old, node)
		kubelet.RecordSchedulable(s, node)
		o.out("node/%s %s", node.Name, verb)
	}
	return nil
}

// addTaint adds a controller taint (stamped with timeAdded, as
// SwapNodeControllerTaint does) unless the node already has it.
func addTaint(s *cluster.State, node *corev1.Node, t corev1.Taint) {
	for _, old := range node.Spec.Taints {
		if old.MatchTaint(&t) {
			return
		}
	}
	now := metav1.NewTime(s.Now)
	t.TimeAdded = &now
	node.Spec.Taints = append(node.Spec.Taints, t)
}

func removeTaint(node *corev1.Node, key string, effect corev1.TaintEffect) bool {
	kept := node.Spec.Taints[:0]
	removed := false
	for _, t := range node.Spec.Taints {
		if t.Key == key && (effect == "" || t.Effect == effect) {
			removed = true
			continue
		}
		kept = append(kept, t)
	}
	node.Spec.Taints = kept
	if len(kept) == 0 {
		node.Spec.Taints = nil
	}
	return removed
}

// touchNode records a node write that may change where pods can go, old
// being a copy from before it (the scheduling queue hears of its update kinds).
func touchNode(s *cluster.State, old, node *corev1.Node) {
	node.ResourceVersion = s.Bump()
	s.NodeUpdated(old, node)
}

// FailNode makes a node stop reporting, as when its instance dies: the node
// lifecycle controller sets its conditions to Unknown and taints it
// node.kubernetes.io/unreachable (NoSchedule and NoExecute); the taint
// eviction controller then removes its pods once their tolerationSeconds run out.
func (a *App) FailNode(name string) (err error) {
	defer a.finish(&err)
	work := a.change()
	nodes, err := lookupNodes(work, []string{name})
	if err != nil {
		return err
	}
	node := nodes[0]
	o := &output{}
	if failNode(work, node) {
		o.out("node/%s failed: kubelet stopped posting node status", node.Name)
	} else {
		o.out("node/%s already failed", node.Name)
	}
	return a.commit(work, o)
}

// Node lifecycle controller texts (pkg/controller/nodelifecycle).
const (
	nodeStatusUnknownReason  = "NodeStatusUnknown"
	nodeStatusUnknownMessage = "Kubelet stopped posting node status."
	nodeControllerSource     = "node-controller"
)

func failNode(s *cluster.State, node *corev1.Node) bool {
	old := node.DeepCopy()
	changed := false
	now := metav1.NewTime(s.Now)
	for i := range node.Status.Conditions {
		c := &node.Status.Conditions[i]
		switch c.Type {
		case corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure:
		default:
			continue
		}
		if c.Status == corev1.ConditionUnknown {
			continue
		}
		c.Status, c.Reason, c.Message = corev1.ConditionUnknown, nodeStatusUnknownReason, nodeStatusUnknownMessage
		c.LastTransitionTime = now
		changed = true
	}
	if !changed {
		return false
	}
	// The unreachable taints replace the not-ready ones.
	removeTaint(node, corev1.TaintNodeNotReady, "")
	addTaint(s, node, corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule})
	addTaint(s, node, corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute})
	s.Record(cluster.EventSource{Component: nodeControllerSource}, cluster.Regarding("Node", "v1", node),
		corev1.EventTypeNormal, "NodeNotReady", fmt.Sprintf("Node %s status is now: NodeNotReady", node.Name))
	touchNode(s, old, node)
	return true
}

// aggregateText is utilerrors.Aggregate's Error(): one message as it is,
// several as "[a, b]", duplicates dropped.
func aggregateText(msgs []string) string {
	var uniq []string
	seen := map[string]bool{}
	for _, m := range msgs {
		if !seen[m] {
			seen[m] = true
			uniq = append(uniq, m)
		}
	}
	if len(uniq) == 1 {
		return uniq[0]
	}
	return "[" + strings.Join(uniq, ", ") + "]"
}

// errNoProgress is berth's own stop for a drain without --timeout whose
// evictions can never succeed: kubectl would retry forever.
var errNoProgress = errors.New("no further progress is possible in virtual time")

// evictRetryDelay is kubectl drain's EvictErrorRetryDelay.
const evictRetryDelay = 5 * time.Second
