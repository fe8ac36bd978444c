package scheduler

import (
	"sort"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
	"github.com/berth-sim/berth/internal/version"
)

// Snapshot is the scheduler's view of the nodes for one Sync: NodeInfos in
// node-tree order, kept up to date incrementally as pods are bound.
type Snapshot struct {
	nodes  []*framework.NodeInfo
	byName map[string]*framework.NodeInfo
	// names lists the nodes' names by position: reporting thousands of
	// rejected nodes reads them here rather than through each node.
	names []string
	// affinity lists are rebuilt lazily after a pod with affinity is added.
	affinityDirty      bool
	withAffinity       []*framework.NodeInfo
	withRequiredAntiAf []*framework.NodeInfo
	// id tells snapshots apart; added logs the pods bound since it was built
	// (helper.PodLog), so plugins can advance their indexes incrementally.
	id    uint64
	added []helper.AddedPod
	// claims counts the pods using each claim "namespace/name" (built on
	// first use, then kept in step).
	claims map[string]int
	// classesOn numbers the nodes' classes per set of selector keys
	// (nodeclass.go); nil until first used.
	classesOn map[string]*classTable
	// shared holds the static verdicts templates with equal tolerations
	// share, by tolerations (nodeclass.go).
	shared map[string]*sharedVerdicts
}

// snapshotIDs numbers snapshots; ids only identify, they decide nothing.
var snapshotIDs atomic.Uint64

// NewSnapshot wraps NodeInfos that are already in node-tree order.
func NewSnapshot(nodes []*framework.NodeInfo) *Snapshot {
	sn := &Snapshot{nodes: nodes, byName: make(map[string]*framework.NodeInfo, len(nodes)), names: make([]string, len(nodes)),
		affinityDirty: true, id: snapshotIDs.Add(1)}
	for i, n := range nodes {
		sn.names[i] = n.Name()
		sn.byName[sn.names[i]] = n
		n.Index = int32(i)
	}
	return sn
}

// AddPod accounts a newly bound pod on its node.
func (sn *Snapshot) AddPod(pi *framework.PodInfo, node string) {
	ni := sn.byName[node]
	if ni == nil {
		return
	}
	ni.AddPod(pi)
	sn.added = append(sn.added, helper.AddedPod{Node: ni, Pod: pi})
	if sn.claims != nil {
		countClaims(sn.claims, pi)
	}
	if pi.HasAffinity() {
		sn.affinityDirty = true
	}
}

// claimUsers returns the number of assigned pods using each claim.
func (sn *Snapshot) claimUsers() map[string]int {
	if sn.claims == nil {
		sn.claims = map[string]int{}
		for _, ni := range sn.nodes {
			for _, p := range ni.Pods {
				countClaims(sn.claims, p)
			}
		}
	}
	return sn.claims
}

func countClaims(claims map[string]int, p *framework.PodInfo) {
	for _, vol := range p.Pod.Spec.Volumes {
		if vol.PersistentVolumeClaim != nil {
			claims[cluster.Key(p.Pod.Namespace, vol.PersistentVolumeClaim.ClaimName)]++
		}
	}
}

func (sn *Snapshot) refreshAffinityLists() {
	if !sn.affinityDirty {
		return
	}
	sn.withAffinity, sn.withRequiredAntiAf = nil, nil
	for _, n := range sn.nodes {
		if len(n.PodsWithAffinity) > 0 {
			sn.withAffinity = append(sn.withAffinity, n)
		}
		if len(n.PodsWithRequiredAntiAffinity) > 0 {
			sn.withRequiredAntiAf = append(sn.withRequiredAntiAf, n)
		}
	}
	sn.affinityDirty = false
}

// zoneKey is the node tree's zone key: region + ":\x00:" + zone, from the GA
// labels or their beta predecessors; "" for nodes with neither.
func zoneKey(n *v1.Node) string {
	l := n.Labels
	zone, ok := l[v1.LabelTopologyZone]
	if !ok {
		zone = l[v1.LabelFailureDomainBetaZone]
	}
	region, ok := l[v1.LabelTopologyRegion]
	if !ok {
		region = l[v1.LabelFailureDomainBetaRegion]
	}
	if region == "" && zone == "" {
		return ""
	}
	return region + ":\x00:" + zone
}

// NodeTreeOrder lists nodes as kube-scheduler's node tree does: zones in
// order of first appearance, then round robin across zones, nodes within a
// zone in insertion order.
func NodeTreeOrder(inserted []*v1.Node) []*v1.Node {
	var zones []string
	tree := map[string][]*v1.Node{}
	for _, n := range inserted {
		k := zoneKey(n)
		if _, ok := tree[k]; !ok {
			zones = append(zones, k)
		}
		tree[k] = append(tree[k], n)
	}
	out := make([]*v1.Node, 0, len(inserted))
	for i := 0; len(out) < len(inserted); i++ {
		for _, z := range zones {
			if i < len(tree[z]) {
				out = append(out, tree[z][i])
			}
		}
	}
	return out
}

// syncNodeOrder keeps s.Scheduler.NodeOrder equal to the cache's insertion
// order: deleted nodes leave it, nodes it does not know yet join at the end
// (by name, for determinism).
func syncNodeOrder(s *cluster.State) {
	seen := make(map[string]bool, len(s.Nodes))
	kept := s.Scheduler.NodeOrder[:0]
	for _, name := range s.Scheduler.NodeOrder {
		if _, ok := s.Nodes[name]; ok && !seen[name] {
			seen[name] = true
			kept = append(kept, name)
		}
	}
	s.Scheduler.NodeOrder = kept
	if len(kept) == len(s.Nodes) {
		return
	}
	var missing []string
	for name := range s.Nodes {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, missing...)
}

// handle implements framework.Handle (and defaultpreemption.Runner) over the
// cluster state and the current snapshot.
type handle struct {
	state    *cluster.State
	snap     *Snapshot
	features version.Features
	fw       *Framework
	services map[string][]*v1.Service
	// pvs is PersistentVolumes' sorted list for this Sync (nil: not built).
	pvs []*v1.PersistentVolume
	// epoch changes with every Sync; writes lists PreBind's updates in it
	// (framework.StorageEpoch).
	epoch  uint64
	writes []framework.StorageWrite
	// sched gives preemption the nominated pods (preemption.go).
	sched *Scheduler
}

var (
	_ framework.Handle = (*handle)(nil)
	_ helper.PodLog    = (*handle)(nil)
)

// AddedPods implements helper.PodLog.
func (h *handle) AddedPods() (uint64, []helper.AddedPod) { return h.snap.id, h.snap.added }

func (h *handle) Nodes() []*framework.NodeInfo { return h.snap.nodes }

func (h *handle) Node(name string) *framework.NodeInfo { return h.snap.byName[name] }

func (h *handle) HavePodsWithAffinity() []*framework.NodeInfo {
	h.snap.refreshAffinityLists()
	return h.snap.withAffinity
}

func (h *handle) HavePodsWithRequiredAntiAffinity() []*framework.NodeInfo {
	h.snap.refreshAffinityLists()
	return h.snap.withRequiredAntiAf
}

func (h *handle) Namespace(name string) *v1.Namespace { return h.state.Namespaces[name] }

func (h *handle) Namespaces() []*v1.Namespace {
	out := make([]*v1.Namespace, 0, len(h.state.Namespaces))
	for _, k := range cluster.SortedKeys(h.state.Namespaces) {
		out = append(out, h.state.Namespaces[k])
	}
	return out
}

// Services indexes services by namespace once per Sync.
func (h *handle) Services(namespace string) []*v1.Service {
	if h.services == nil {
		h.services = map[string][]*v1.Service{}
		for _, k := range cluster.SortedKeys(h.state.Services) {
			svc := h.state.Services[k]
			h.services[svc.Namespace] = append(h.services[svc.Namespace], svc)
		}
	}
	return h.services[namespace]
}

func (h *handle) ReplicaSet(namespace, name string) *appsv1.ReplicaSet {
	return h.state.ReplicaSets[cluster.Key(namespace, name)]
}

// StatefulSet is the state's StatefulSet, so system-default spreading
// sees its selector as upstream's StatefulSet lister does.
func (h *handle) StatefulSet(namespace, name string) *appsv1.StatefulSet {
	return h.state.StatefulSets[cluster.Key(namespace, name)]
}

// ReplicationController: berth does not model them (the state has no
// ReplicationControllers), so a pod they own gets no owner selector.
func (h *handle) ReplicationController(namespace, name string) *v1.ReplicationController {
	return nil
}

func (h *handle) Features() version.Features { return h.features }

// RunFilterPlugins lets preemption re-run Filter on a modified node.
func (h *handle) RunFilterPlugins(state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return h.fw.runFilterPlugins(state, pod, ni, nil, nil, -1)
}

// RunPreFilterExtensionRemovePod tells PreFilter state that a pod left a node.
func (h *handle) RunPreFilterExtensionRemovePod(state *framework.CycleState, pod, victim *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return h.fw.runPreFilterExtensionRemovePod(state, pod, victim, ni)
}

// ObjectsEpoch implements framework.ObjectsEpoch: the state and its
// services are only replaced together with the snapshot, and every
// snapshot has its own id.
func (h *handle) ObjectsEpoch() uint64 { return h.snap.id }
