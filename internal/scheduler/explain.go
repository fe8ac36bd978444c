package scheduler

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Explanation is every plugin's verdict on every node for one pod: where
// the cycle stops at a node's first rejection, an explanation goes on, so
// that "what else would stop it there" has an answer
// (docs/scheduler.md#asking-without-writing).
type Explanation struct {
	// PreFilter is each PreFilter plugin's outcome in profile order. A
	// rejection here applies to every node; a narrowing plugin lists the
	// nodes it kept in Narrowed.
	PreFilter []PreFilterVerdict
	// Nodes in node-tree order.
	Nodes []NodeVerdicts
}

// PreFilterVerdict is one PreFilter plugin's outcome; Status nil is success.
type PreFilterVerdict struct {
	Plugin string
	Status *framework.Status
	// Narrowed is set when the plugin limited the nodes (PreFilterResult).
	Narrowed map[string]struct{}
}

// NodeVerdicts is every Filter plugin's verdict on one node.
type NodeVerdicts struct {
	Node         string
	Hypothetical bool
	// Filters holds one entry per Filter plugin in profile order; a plugin
	// whose PreFilter skipped it has Status Skip, one that passed nil.
	Filters []PluginVerdict
}

// PluginVerdict is one plugin's status on a node (nil: passed).
type PluginVerdict struct {
	Plugin string
	Status *framework.Status
}

// Fits tells whether no plugin rejected the pod on the node.
func (n NodeVerdicts) Fits() bool {
	for _, v := range n.Filters {
		if v.Status != nil && !v.Status.IsSuccess() && !v.Status.IsSkip() {
			return false
		}
	}
	return true
}

// Rejections lists the verdicts that rejected the pod.
func (n NodeVerdicts) Rejections() []PluginVerdict {
	var out []PluginVerdict
	for _, v := range n.Filters {
		if v.Status != nil && !v.Status.IsSuccess() && !v.Status.IsSkip() {
			out = append(out, v)
		}
	}
	return out
}

// Explain runs every PreFilter plugin and then every Filter plugin on
// every node, without the cycle's shortcuts (first rejection, cached
// verdicts, the nominated-node fast path, the search limit). A plugin whose
// PreFilter rejected the pod has no state to filter with; its verdict on
// every node is that rejection. Pods nominated to a node are counted as
// the cycle counts them.
func (sim *Simulation) Explain(pod *v1.Pod) *Explanation {
	pi := sim.podInfo(pod)
	fw := sim.sc.fw
	nodes := sim.sc.handle.snap.nodes
	state := framework.NewCycleState()
	state.SkipFilterPlugins = map[string]struct{}{}
	out := &Explanation{}
	rejectedBy := map[string]*framework.Status{}
	for _, pl := range fw.preFilter {
		r, st := pl.PreFilter(state, pi, nodes)
		v := PreFilterVerdict{Plugin: pl.Name()}
		switch {
		case st.IsSkip():
			state.SkipFilterPlugins[pl.Name()] = struct{}{}
			v.Status = st
		case !st.IsSuccess():
			v.Status = st.WithPlugin(pl.Name())
			rejectedBy[pl.Name()] = v.Status
			// Without state of its own, its extensions must not be asked
			// about nominated pods either.
			state.SkipFilterPlugins[pl.Name()] = struct{}{}
		case !r.AllNodes():
			v.Narrowed = r.NodeNames
		}
		out.PreFilter = append(out.PreFilter, v)
	}
	for _, ni := range nodes {
		out.Nodes = append(out.Nodes, sim.explainNode(state, pi, ni, rejectedBy, out.PreFilter))
	}
	return out
}

// explainNode collects every Filter plugin's verdict on ni; with pods
// nominated there, a plugin that passes with them is asked again without
// them, as the cycle's second pass does.
func (sim *Simulation) explainNode(state *framework.CycleState, pi *framework.PodInfo, ni *framework.NodeInfo,
	rejectedBy map[string]*framework.Status, pre []PreFilterVerdict) NodeVerdicts {
	fw := sim.sc.fw
	nv := NodeVerdicts{Node: ni.Name(), Hypothetical: sim.hypothetical[ni.Name()]}
	withState, withNode := sim.withNominated(state, pi, ni)
	for _, pl := range fw.filter {
		name := pl.Name()
		v := PluginVerdict{Plugin: name}
		if st, ok := rejectedBy[name]; ok {
			v.Status = st
		} else if _, skip := state.SkipFilterPlugins[name]; skip {
			v.Status = framework.NewStatus(framework.Skip).WithPlugin(name)
		} else {
			v.Status = filterStatus(pl, withState, pi, withNode)
			if v.Status == nil && withNode != ni {
				v.Status = filterStatus(pl, state, pi, ni)
			}
		}
		nv.Filters = append(nv.Filters, v)
	}
	for _, p := range pre {
		if p.Narrowed == nil {
			continue
		}
		if _, kept := p.Narrowed[ni.Name()]; !kept {
			st := framework.NewStatus(framework.UnschedulableAndUnresolvable,
				fmt.Sprintf("node(s) didn't satisfy plugin %v", p.Plugin)).WithPlugin(p.Plugin)
			nv.Filters = append(nv.Filters, PluginVerdict{Plugin: p.Plugin, Status: st})
		}
	}
	return nv
}

// filterStatus is one Filter plugin's verdict, nil when it passed.
func filterStatus(pl framework.FilterPlugin, state *framework.CycleState, pi *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	st := pl.Filter(state, pi, ni)
	if st.IsSuccess() {
		return nil
	}
	if !st.IsRejected() {
		return framework.AsStatus(fmt.Errorf("running %q filter plugin: %s", pl.Name(), st.Message())).WithPlugin(pl.Name())
	}
	return st.WithPlugin(pl.Name())
}

// withNominated returns the state and node with the pods nominated to ni
// that weigh at least as much as the pod, or state and ni when there are none.
func (sim *Simulation) withNominated(state *framework.CycleState, pi *framework.PodInfo, ni *framework.NodeInfo) (*framework.CycleState, *framework.NodeInfo) {
	sc := sim.sc
	prio := corev1helpers.PodPriority(pi.Pod)
	withState, withNode := state, ni
	for _, n := range sc.nominatedFor(ni.Node) {
		if n.priority < prio || n.pi.Pod.UID == pi.Pod.UID {
			continue
		}
		if withNode == ni {
			withState, withNode = state.Clone(), ni.Clone()
		}
		withNode.AddPod(n.pi)
		// A failing extension leaves the state as far as it got; the
		// Filter verdicts that follow still say what each plugin thinks.
		sc.fw.runPreFilterExtensionAddPod(withState, pi, n.pi, withNode)
	}
	return withState, withNode
}
