package scheduler

import (
	"fmt"
	"maps"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// A Simulation answers "what would the scheduler do if…" without changing
// the cluster: Karpenter, cluster-autoscaler, Fargate and `berth why` ask
// their questions here instead of reaching into the cycle
// (docs/scheduler.md#asking-without-writing).
//
// It runs on a private scheduler (its own plugins, caches and snapshot)
// and a shallow copy of the state whose shared maps it never writes: the
// copies it changes (nodes and pods it is told to assume, the search start,
// the random source) are its own. The cluster and the Scheduler it was
// forked from are left exactly as they were.
type Simulation struct {
	sc *Scheduler
	// state is the copy the private scheduler reads; nodes and pods maps
	// are copied on the first write (ownNodes, ownPods).
	state              *cluster.State
	ownNodes, ownPods  bool
	hypothetical       map[string]bool
	needsSnapshotBuild bool
	// version counts the changes (AddNode, Assume): a PreFiltered result
	// is good for the version it was computed at. antiVersion counts the
	// pods with required anti-affinity placed, all a PreFilter that read
	// the pod alone depends on (simulate_prefilter.go).
	version, antiVersion uint64
	// zones counts the nodes per node-tree zone and maxZone is the largest
	// count, for AddNode's append fast path (nil until first needed).
	zones   map[string]int
	maxZone int
	// nominations are the node names pods are nominated to (nominatedTo).
	nominations map[string]bool
	// podBlock is storage for the pod copies place makes (newPod).
	podBlock []v1.Pod
	// lastSnap, lastName and lastInfo are nodeInfo's last answer.
	lastSnap *Snapshot
	lastName string
	lastInfo *framework.NodeInfo
}

// HypotheticalNode is a node that does not exist yet (a template made from
// an instance type, a node group or a NodePool), with the pods that would be
// bound to it before any pending pod is considered (its DaemonSet pods).
type HypotheticalNode struct {
	Node *v1.Node
	Pods []*v1.Pod
}

// Simulate starts a simulation on s as the scheduler would see it at its
// next cycle, with the hypothetical nodes added (they join the node tree
// last, as nodes the cache learns about now would). Neither s nor sc is
// changed, now or by anything the simulation is asked later.
func (sc *Scheduler) Simulate(s *cluster.State, nodes ...HypotheticalNode) (*Simulation, error) {
	cp := *s
	cp.DetachEvents()
	cp.Scheduler.NodeOrder = append([]string(nil), s.Scheduler.NodeOrder...)
	cp.Scheduler.Queue = nil
	cp.Events, cp.Timers = nil, nil
	fork := NewWithProfile(sc.schedulerName, sc.plugins)
	fork.PercentageOfNodesToScore = sc.PercentageOfNodesToScore
	fork.RecordScores = true
	// A pod's derived data depends only on the pod object, so the fork
	// reads and fills the parent's cache: entries are checked against the
	// object and its resourceVersion before use.
	fork.podInfos = sc.podInfos
	if sc.derived == nil {
		sc.derived = &derivedCache{}
	}
	fork.derived = sc.derived
	if sc.order.seen != nil {
		fork.order = sc.order.clone()
	}
	if err := fork.ensureFramework(&cp); err != nil {
		return nil, err
	}
	sim := &Simulation{sc: fork, state: &cp, hypothetical: map[string]bool{}, needsSnapshotBuild: true}
	for _, h := range nodes {
		if err := sim.AddNode(h); err != nil {
			return nil, err
		}
	}
	sim.snapshot()
	return sim, nil
}

// AddNode adds a hypothetical node with its pods. The node sits in the
// node tree where the cache would put it. Once the snapshot exists the node
// joins it incrementally (addSnapshotNode): bin packing adds node after
// node, and rebuilding the snapshot from the whole state each time would
// cost every pod of the cluster per node.
func (sim *Simulation) AddNode(h HypotheticalNode) error {
	if h.Node == nil || h.Node.Name == "" {
		return fmt.Errorf("simulate: a hypothetical node needs a name")
	}
	s := sim.state
	if _, ok := s.Nodes[h.Node.Name]; ok {
		return fmt.Errorf("simulate: node %q already exists", h.Node.Name)
	}
	sim.ownNodeMap()
	last := sim.joinsLast(h.Node)
	s.Nodes[h.Node.Name] = h.Node
	s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, h.Node.Name)
	sim.hypothetical[h.Node.Name] = true
	sim.version++
	if !sim.needsSnapshotBuild {
		if last {
			sim.sc.appendSnapshotNode(h.Node, sim.nominatedTo(h.Node.Name))
		} else {
			sim.sc.addSnapshotNode(s, h.Node)
		}
	}
	for _, p := range h.Pods {
		if err := sim.place(p, h.Node.Name); err != nil {
			return err
		}
	}
	return nil
}

// addSnapshotNode gives the scheduler a snapshot with node added, as a
// rebuild from s would: the node-tree order and image states are
// recomputed from the nodes, the existing NodeInfos (with their pods, kept
// up to date by place) are reused, and everything derived from the
// snapshot is invalidated as after a rebuild.
func (sc *Scheduler) addSnapshotNode(s *cluster.State, node *v1.Node) {
	old := sc.handle.snap
	inserted := make([]*v1.Node, 0, len(s.Scheduler.NodeOrder))
	for _, name := range s.Scheduler.NodeOrder {
		inserted = append(inserted, s.Nodes[name])
	}
	images := imageSummaries(inserted)
	ordered := NodeTreeOrder(inserted)
	infos := make([]*framework.NodeInfo, 0, len(ordered))
	for _, n := range ordered {
		ni := old.byName[n.Name]
		if ni == nil {
			ni = framework.NewNodeInfo(n)
			sc.order.usedPorts(ni)
		}
		setImageStates(ni, images)
		infos = append(infos, ni)
	}
	sc.handle.snap, sc.handle.services, sc.handle.pvs = NewSnapshot(infos), nil, nil
	sc.handle.epoch, sc.handle.writes = sc.handle.epoch+1, nil
	// The nominated-pods index stays valid unless a pod is nominated to
	// the new node's name (the index leaves out pods nominated to nodes it
	// does not know).
	if sc.nominated.valid {
		for _, p := range s.Pods {
			if p.Status.NominatedNodeName == node.Name {
				sc.nominated.valid = false
				break
			}
		}
	}
	sc.static = map[string]*staticVerdicts{}
}

// Hypothetical tells whether the named node was added by AddNode.
func (sim *Simulation) Hypothetical(node string) bool { return sim.hypothetical[node] }

// Assume counts pod as bound to node for every later question, as the
// scheduler's cache assumes a pod it has just placed (bin packing onto new
// nodes asks pod after pod).
func (sim *Simulation) Assume(pod *v1.Pod, node string) error {
	if _, ok := sim.state.Nodes[node]; !ok {
		return fmt.Errorf("simulate: no node %q", node)
	}
	return sim.place(pod, node)
}

// place stores a copy of pod bound to node in the simulation's own pods.
// The copy is shallow (the pod's own fields, its maps and slices shared):
// the simulation writes only the node name and resourceVersion, and reads
// the cluster's pods without copying them anyway.
func (sim *Simulation) place(pod *v1.Pod, node string) error {
	s := sim.state
	key := cluster.Key(pod.Namespace, pod.Name)
	if cur, ok := s.Pods[key]; ok && cur.Spec.NodeName != "" {
		return fmt.Errorf("simulate: pod %s is already bound to %q", key, cur.Spec.NodeName)
	}
	p := sim.newPod()
	*p = *pod
	p.Spec.NodeName = node
	p.ResourceVersion = s.Bump()
	sim.ownPodMap()
	s.Pods[key] = p
	sim.noteNomination(p)
	sim.version++
	if a := p.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		sim.antiVersion++
	}
	if sim.needsSnapshotBuild {
		return nil
	}
	// The snapshot stays incremental, as after a binding in a real Sync.
	// The copy's derived data is the original's (it depends on the spec,
	// and the copy differs only in the node name and resourceVersion).
	derived := *sim.derivedInfo(pod)
	derived.Pod = p
	pi := &derived
	sim.sc.handle.snap.AddPod(pi, node)
	sim.sc.order.add(key, p)
	return nil
}

// newPod hands out the storage of one pod copy: copies are carved from
// blocks, since bin packing assumes pods by the thousand and one
// allocation each would cost more than the copy.
func (sim *Simulation) newPod() *v1.Pod {
	if len(sim.podBlock) == 0 {
		sim.podBlock = make([]v1.Pod, 256)
	}
	p := &sim.podBlock[0]
	sim.podBlock = sim.podBlock[1:]
	return p
}

func (sim *Simulation) ownNodeMap() {
	if !sim.ownNodes {
		sim.state.Nodes, sim.ownNodes = maps.Clone(sim.state.Nodes), true
	}
}

func (sim *Simulation) ownPodMap() {
	if !sim.ownPods {
		sim.state.Pods, sim.ownPods = maps.Clone(sim.state.Pods), true
	}
}

// snapshot builds the private scheduler's snapshot when nodes changed.
func (sim *Simulation) snapshot() {
	if sim.needsSnapshotBuild {
		sim.sc.buildSnapshot(sim.state)
		sim.needsSnapshotBuild = false
	}
}

// podInfo derives pod's data for one question; the pod itself is not
// stored, so asking about it leaves no trace.
func (sim *Simulation) podInfo(pod *v1.Pod) *framework.PodInfo {
	sim.snapshot()
	return framework.NewPodInfo(pod, sim.sc.features.PodLevelResources)
}

// Schedule runs one scheduling cycle for pod, as the real scheduler's next
// attempt would: the same snapshot, nominated pods, search start, scoring
// and tie-break draw, and PostFilter's preemption decision (Diagnosis
// NominatedNode and Victims) without carrying it out. The binding cycle
// (Reserve, PreBind) is not run. Each call advances the simulation's own
// search start and random source, as consecutive attempts would.
func (sim *Simulation) Schedule(pod *v1.Pod) *Diagnosis {
	pi := sim.podInfo(pod)
	res := sim.sc.scheduleOne(sim.state, pi)
	if r := res.preemption; r != nil && r.NominatedNodeName != "" {
		res.diag.NominatedNode, res.diag.Victims = r.NominatedNodeName, r.Victims
	}
	return res.diag
}

// Filter runs PreFilter and then Filter on one node, as the cycle would for
// that node (with the pods nominated to it): nil means the pod fits. A
// caller asking about one pod on many nodes uses PreFilter instead.
func (sim *Simulation) Filter(pod *v1.Pod, node string) *framework.Status {
	return sim.PreFilter(pod).Filter(node)
}

// Nodes lists the simulation's nodes in node-tree order.
func (sim *Simulation) Nodes() []string {
	sim.snapshot()
	out := make([]string, len(sim.sc.handle.snap.nodes))
	for i, ni := range sim.sc.handle.snap.nodes {
		out[i] = ni.Name()
	}
	return out
}

// ScoreWeights returns each Score plugin's weight by name.
func (sim *Simulation) ScoreWeights() map[string]int64 { return sim.sc.ScoreWeights() }

// Advance carries the simulation's search start and random draws over to
// s, for a caller that carries out a simulated decision itself (the
// conformance harness): the next cycle then starts where the simulated one
// left off, as it would after the real attempt. It is the one method that
// writes to a cluster, and only to the scheduler's own bookkeeping.
func (sim *Simulation) Advance(s *cluster.State) {
	s.Scheduler.NextStartNodeIndex = sim.state.Scheduler.NextStartNodeIndex
	s.Rand = sim.state.Rand
}

// Resync brings the scheduler's cache (each node's pod order and host
// ports) up to writes others made to s, as its informers would have; Sync
// does this itself. A caller that binds or deletes pods without Sync calls
// it after each write, so that later simulations see the cache upstream's
// would hold.
func (sc *Scheduler) Resync(s *cluster.State) { sc.order.sync(s) }

// NodeInfo returns a copy of the named node's scheduling view (its
// allocatable, the requests of the pods on it), nil when there is no such
// node; `berth why` prints the numbers behind an Insufficient reason.
func (sim *Simulation) NodeInfo(node string) *framework.NodeInfo {
	sim.snapshot()
	ni := sim.sc.handle.snap.byName[node]
	if ni == nil {
		return nil
	}
	return ni.Clone()
}

// PodRequests is the pod's effective request as the scheduler counts it
// (docs/scheduler.md#requests).
func (sim *Simulation) PodRequests(pod *v1.Pod) framework.Resource {
	return sim.podInfo(pod).Requests
}
