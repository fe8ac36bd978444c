package scheduler

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// PreFiltered is one pod's PreFilter, run once, so that Filter can be asked
// about node after node without running it again: what kube-scheduler's
// cycle does over its nodes, and what cluster-autoscaler's predicate
// checker does when it looks for any node that takes a pod
// (docs/scheduler.md#asking-without-writing).
//
// PreFilter reads the whole snapshot (the pods already on the nodes, the
// node list), so the result holds only while the simulation is unchanged:
// after an AddNode or an Assume, the next Filter runs PreFilter again first.
// The answers are those of Simulation.Filter, call for call.
type PreFiltered struct {
	sim       *Simulation
	pi        *framework.PodInfo
	state     *framework.CycleState
	pre       *framework.PreFilterResult
	status    *framework.Status
	narrowing []string
	// version is the simulation's version the result was computed at.
	version uint64
	ran     bool
}

// PreFilter prepares pod for Filter questions on the simulation's nodes.
// PreFilter itself runs on the first question.
func (sim *Simulation) PreFilter(pod *v1.Pod) *PreFiltered {
	sim.snapshot()
	return &PreFiltered{sim: sim, pi: sim.derivedInfo(pod)}
}

// Filter runs Filter for the pod on one node, with the pods nominated to it,
// after PreFilter (again, if the simulation changed since): nil means the
// pod fits.
func (pf *PreFiltered) Filter(node string) *framework.Status {
	sim := pf.sim
	if !pf.ran || pf.version != sim.version {
		pf.run()
	}
	ni := sim.sc.handle.snap.byName[node]
	if ni == nil {
		return framework.AsStatus(fmt.Errorf("simulate: no node %q", node))
	}
	if !pf.status.IsSuccess() {
		return pf.status
	}
	if !pf.pre.AllNodes() {
		if _, ok := pf.pre.NodeNames[node]; !ok {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable,
				fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", pf.narrowing))
		}
	}
	return sim.sc.filterWithNominated(pf.state, pf.pi, ni, nil, nil, -1)
}

func (pf *PreFiltered) run() {
	sim := pf.sim
	sim.snapshot()
	pf.state = framework.NewCycleState()
	pf.pre, pf.status, pf.narrowing = sim.sc.fw.runPreFilterPlugins(pf.state, pf.pi, sim.sc.handle.snap.nodes)
	pf.version, pf.ran = sim.version, true
}

// derivedInfo is pod's derived data (requests, parsed affinity), computed
// once per pod object and resourceVersion and shared by every simulation
// of the scheduler: a caller asks about the same pending pods again and
// again (cluster-autoscaler: every node group's estimate), and the data
// depends on the pod object alone.
func (sim *Simulation) derivedInfo(pod *v1.Pod) *framework.PodInfo {
	return sim.sc.podInfo(cluster.Key(pod.Namespace, pod.Name), pod)
}
