package scheduler

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/dynamicresources"
	"github.com/berth-sim/berth/internal/scheduler/plugins/interpodaffinity"
	"github.com/berth-sim/berth/internal/scheduler/plugins/nodeaffinity"
	"github.com/berth-sim/berth/internal/scheduler/plugins/nodeports"
	"github.com/berth-sim/berth/internal/scheduler/plugins/noderesources"
	"github.com/berth-sim/berth/internal/scheduler/plugins/nodevolumelimits"
	"github.com/berth-sim/berth/internal/scheduler/plugins/podtopologyspread"
	"github.com/berth-sim/berth/internal/scheduler/plugins/volumebinding"
	"github.com/berth-sim/berth/internal/scheduler/plugins/volumerestrictions"
	"github.com/berth-sim/berth/internal/scheduler/plugins/volumezone"
)

// PreFiltered is one pod's PreFilter, run once, so that Filter can be asked
// about node after node without running it again: what kube-scheduler's
// cycle does over its nodes, and what cluster-autoscaler's predicate
// checker does when it looks for any node that takes a pod
// (docs/scheduler.md#asking-without-writing).
//
// PreFilter may read the whole snapshot (the pods already on the nodes, the
// node list), so in general the result holds only while the simulation is
// unchanged: after an AddNode or an Assume, the next Filter runs PreFilter
// again first. A result that read the pod alone (podOnly) holds until a pod
// with required anti-affinity joins. The answers are those of
// Simulation.Filter, call for call.
type PreFiltered struct {
	sim       *Simulation
	pi        *framework.PodInfo
	state     *framework.CycleState
	pre       *framework.PreFilterResult
	status    *framework.Status
	narrowing []string
	// version (antiVersion for a podOnly result) is the simulation's
	// version the result was computed at.
	version, antiVersion uint64
	podOnly              bool
	ran                  bool
}

// podOnlySkip are the PreFilter plugins whose Skip depends on the incoming
// pod alone (and on objects other than pods and nodes: claims, volumes,
// services), and podOnlyState those whose PreFilter, when it does not skip,
// reads nothing but the pod either (requests, host ports, node selector and
// affinity, volume list). InterPodAffinity skips only when no placed pod's
// required anti-affinity matches the pod, so its Skip holds until such a pod
// joins (antiVersion); PodTopologySpread, VolumeRestrictions and
// VolumeBinding read placed pods when they do not skip.
var (
	podOnlySkip = map[string]bool{
		noderesources.FitName: true, nodeports.Name: true, nodeaffinity.Name: true,
		nodevolumelimits.Name: true, dynamicresources.Name: true, podtopologyspread.Name: true,
		volumerestrictions.Name: true, volumebinding.Name: true, volumezone.Name: true,
		interpodaffinity.Name: true,
	}
	podOnlyState = map[string]bool{
		noderesources.FitName: true, nodeports.Name: true, nodeaffinity.Name: true, nodevolumelimits.Name: true,
	}
)

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
	if !pf.valid() {
		pf.run()
	}
	ni := sim.nodeInfo(node)
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

// Equivalent is a PreFiltered for pod, which must be equivalent to pf's
// pod (cluster-autoscaler's equivalence group: one owner, the same spec).
// When pf's PreFilter read the pod alone, its result is the pod's too and is
// shared; otherwise pod gets its own PreFilter on its first question.
func (pf *PreFiltered) Equivalent(pod *v1.Pod) *PreFiltered {
	out := &PreFiltered{sim: pf.sim, pi: pf.sim.derivedInfo(pod)}
	if !pf.valid() {
		pf.run()
	}
	if pf.podOnly {
		out.state, out.pre, out.status, out.narrowing = pf.state, pf.pre, pf.status, pf.narrowing
		out.version, out.antiVersion, out.podOnly, out.ran = pf.version, pf.antiVersion, true, true
	}
	return out
}

func (pf *PreFiltered) valid() bool {
	if !pf.ran {
		return false
	}
	if pf.podOnly {
		return pf.antiVersion == pf.sim.antiVersion
	}
	return pf.version == pf.sim.version
}

func (pf *PreFiltered) run() {
	sim := pf.sim
	sim.snapshot()
	pf.state = framework.NewCycleState()
	pf.pre, pf.status, pf.narrowing = sim.sc.fw.runPreFilterPlugins(pf.state, pf.pi, sim.sc.handle.snap.nodes)
	pf.version, pf.antiVersion, pf.ran = sim.version, sim.antiVersion, true
	pf.podOnly = pf.status.IsSuccess() && podOnlyResult(sim.sc.fw, pf.state)
}

// podOnlyResult tells whether every PreFilter plugin of the profile either
// skipped on grounds of the pod alone or read the pod alone.
func podOnlyResult(fw *Framework, state *framework.CycleState) bool {
	for _, pl := range fw.preFilter {
		name := pl.Name()
		if _, skipped := state.SkipFilterPlugins[name]; skipped {
			if !podOnlySkip[name] {
				return false
			}
			continue
		}
		if !podOnlyState[name] {
			return false
		}
	}
	return true
}

// nodeInfo is the named node's NodeInfo in the current snapshot. The last
// answer is kept: bin packing asks about the newest node pod after pod.
func (sim *Simulation) nodeInfo(name string) *framework.NodeInfo {
	snap := sim.sc.handle.snap
	if sim.lastSnap == snap && sim.lastName == name {
		return sim.lastInfo
	}
	ni := snap.byName[name]
	sim.lastSnap, sim.lastName, sim.lastInfo = snap, name, ni
	return ni
}

// derivedInfo is pod's derived data (requests, parsed affinity), computed
// once per pod object and resourceVersion and shared by every simulation
// of the scheduler: a caller asks about the same pending pods again and
// again (cluster-autoscaler: every node group's estimate), and the data
// depends on the pod object alone. The index is by object, in front of the
// scheduler's by key, sparing the key's construction and hashing.
func (sim *Simulation) derivedInfo(pod *v1.Pod) *framework.PodInfo {
	d := sim.sc.derived
	if d == nil {
		d = &derivedCache{}
		sim.sc.derived = d
	}
	if c, ok := d.byPod[pod]; ok && c.rv == pod.ResourceVersion {
		return c.pi
	}
	pi := sim.sc.podInfo(cluster.Key(pod.Namespace, pod.Name), pod)
	if d.byPod == nil || len(d.byPod) >= derivedCacheMax {
		d.byPod = map[*v1.Pod]cachedPodInfo{}
	}
	d.byPod[pod] = cachedPodInfo{pod: pod, rv: pod.ResourceVersion, pi: pi}
	return pi
}

// derivedCache is derivedInfo's index. It starts over when it reaches
// derivedCacheMax entries, so a long-lived scheduler asked about ever new
// pod objects does not keep them all.
type derivedCache struct {
	byPod map[*v1.Pod]cachedPodInfo
}

const derivedCacheMax = 1 << 16

// FitBound is the pod's cpu and memory requests as NodeResourcesFit weighs
// them, and whether that filter runs in the profile: a node with no pod
// slot left, or with less free cpu or memory (Simulation.Free) than a
// positive request, fails it whatever the other filters say, so a caller
// looking for any node that takes the pod may pass over such a node
// without asking (docs/scheduler.md#asking-without-writing).
func (pf *PreFiltered) FitBound() (milliCPU, memory int64, ok bool) {
	if !pf.valid() {
		pf.run()
	}
	if _, skipped := pf.state.SkipFilterPlugins[noderesources.FitName]; skipped {
		return 0, 0, false
	}
	for _, pl := range pf.sim.sc.fw.filter {
		if pl.Name() == noderesources.FitName {
			return pf.pi.Requests.MilliCPU, pf.pi.Requests.Memory, true
		}
	}
	return 0, 0, false
}

// Free is what NodeResourcesFit finds free on the named node: allocatable
// less requested cpu and memory, and the pod slots left.
func (sim *Simulation) Free(node string) (milliCPU, memory int64, pods int, ok bool) {
	sim.snapshot()
	ni := sim.nodeInfo(node)
	if ni == nil {
		return 0, 0, 0, false
	}
	return ni.Allocatable.MilliCPU - ni.Requested.MilliCPU, ni.Allocatable.Memory - ni.Requested.Memory,
		ni.Allocatable.AllowedPodNumber - len(ni.Pods), true
}
