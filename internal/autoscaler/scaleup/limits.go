package scaleup

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/autoscaler/config"
)

// limits are the cluster-wide caps: --max-nodes-total, --cores-total and
// --memory-total, counted over every node plus the upcoming ones.
type limits struct {
	opts      config.Options
	maxMemory int64
	// nodes counts every node plus the upcoming ones (what the estimator's
	// cluster threshold and the final cap see); ready counts the Ready
	// nodes alone (what the loop's --max-nodes-total check sees).
	nodes       int
	ready       int
	cores       int64
	memoryBytes int64
}

const gib = int64(1) << 30

func newLimits(in Input) *limits {
	l := &limits{opts: in.Options, maxMemory: in.Options.MemoryMaxGiB * gib}
	if in.MemoryMaxBytes > 0 {
		l.maxMemory = in.MemoryMaxBytes
	}
	nodes := in.Nodes
	if in.State != nil {
		nodes = nil
		for _, n := range in.State.Nodes {
			nodes = append(nodes, n)
		}
	}
	for _, n := range nodes {
		l.nodes++
		if nodeReady(n) {
			l.ready++
		}
		l.cores += n.Status.Capacity.Cpu().Value()
		l.memoryBytes += n.Status.Capacity.Memory().Value()
	}
	for _, g := range in.Groups {
		if up := g.Target - g.Registered; up > 0 && g.Template != nil {
			l.nodes += up
			l.cores += int64(up) * g.Template.Status.Capacity.Cpu().Value()
			l.memoryBytes += int64(up) * g.Template.Status.Capacity.Memory().Value()
		}
	}
	return l
}

// clusterFull tells whether --max-nodes-total is reached as cluster-
// autoscaler's loop checks it before scaling up: by Ready nodes only. With
// not-ready or upcoming nodes the loop goes on, and the estimator, which
// counts them, finds no room (docs/cluster-autoscaler.md#scale-up).
func (l *limits) clusterFull() bool {
	return l.opts.MaxNodesTotal > 0 && l.ready >= l.opts.MaxNodesTotal
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// exceeded names the resource limits one more node of g would pass.
func (l *limits) exceeded(g *Group) string {
	if g.Template == nil {
		return ""
	}
	var over []string
	cpu, mem := templateCapacity(g.Template)
	if l.cores+cpu > l.opts.CoresMax {
		over = append(over, "cpu")
	}
	if l.memoryBytes+mem > l.maxMemory {
		over = append(over, "memory")
	}
	if len(over) == 0 {
		return ""
	}
	return reasonResourceLimit(over...)
}

// nodesFor is how many nodes the binpacking estimator may open for g:
// production cluster-autoscaler limits it by --max-nodes-per-scale-up, the
// group's room to its max size (plus headroom, the room left in the groups
// similar to it when balancing) and the cluster's room to
// --max-nodes-total, not by --cores-total or --memory-total, which cap the
// chosen option afterwards (capped) (docs/cluster-autoscaler.md#scale-up).
func (l *limits) nodesFor(g *Group, o config.Options, headroom int) int {
	n := g.MaxSize - g.Target + headroom
	if o.MaxNodesPerScaleUp < n {
		n = o.MaxNodesPerScaleUp
	}
	if o.MaxNodesTotal > 0 && o.MaxNodesTotal-l.nodes < n {
		n = o.MaxNodesTotal - l.nodes
	}
	if n < 0 {
		n = 0
	}
	return n
}

// capped is how many of the chosen option's nodes are added: the option's
// count cut to the cluster's room under --max-nodes-total, then to what
// --cores-total and --memory-total leave. The option keeps its pods: they
// all get TriggeredScaleUp even when fewer nodes come.
func (l *limits) capped(g *Group, count int) int {
	n := count
	if o := l.opts; o.MaxNodesTotal > 0 && o.MaxNodesTotal-l.nodes < n {
		n = o.MaxNodesTotal - l.nodes
	}
	cpu, mem := templateCapacity(g.Template)
	if cpu > 0 {
		if left := int((l.opts.CoresMax - l.cores) / cpu); left < n {
			n = left
		}
	}
	if mem > 0 {
		if left := int((l.maxMemory - l.memoryBytes) / mem); left < n {
			n = left
		}
	}
	if n < 0 {
		n = 0
	}
	return n
}

func templateCapacity(n *corev1.Node) (cpu, mem int64) {
	return n.Status.Capacity.Cpu().Value(), n.Status.Capacity.Memory().Value()
}
