package scheduler

import (
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// joinsLast tells whether node, added now, lands last in node-tree order
// with nothing else moving, and counts it in. The tree lists nodes round
// robin over zones; a node that is the c-th of its zone comes last exactly
// when no zone had more than c nodes before it. It also needs no image
// (an image on it would change every other node's image counts). Bin
// packing adds node after node of one template, so after the first few
// nodes of a zone every new one qualifies and the snapshot grows in place
// instead of being rebuilt (docs/scheduler.md#asking-without-writing).
func (sim *Simulation) joinsLast(node *v1.Node) bool {
	if sim.needsSnapshotBuild {
		return false
	}
	if sim.zones == nil {
		sim.zones = map[string]int{}
		for _, name := range sim.state.Scheduler.NodeOrder {
			n := sim.state.Nodes[name]
			if n == nil {
				continue
			}
			k := zoneKey(n)
			sim.zones[k]++
			sim.maxZone = max(sim.maxZone, sim.zones[k])
		}
	}
	k := zoneKey(node)
	c := sim.zones[k]
	sim.zones[k] = c + 1
	last := c >= sim.maxZone && len(node.Status.Images) == 0
	sim.maxZone = max(sim.maxZone, c+1)
	return last
}

// appendSnapshotNode is addSnapshotNode for a node that joins the node tree
// last and carries no image: the existing NodeInfos keep their order and
// image states, so only the new one is made. The snapshot is still a new
// one (a new id), so plugins rebuild what they derived from the old, as
// after addSnapshotNode. nominatedHere tells whether a pod is nominated to
// the node's name (the nominated-pods index leaves out pods nominated to
// nodes it does not know, so it must be rebuilt).
func (sc *Scheduler) appendSnapshotNode(node *v1.Node, nominatedHere bool) {
	old := sc.handle.snap
	ni := framework.NewNodeInfo(node)
	sc.order.usedPorts(ni)
	setImageStates(ni, nil)
	// The old snapshot is dropped: its list and map become the new one's
	// (a plugin still holding the old list sees it unchanged, at its
	// length).
	nodes := append(old.nodes, ni)
	snap := &Snapshot{nodes: nodes, byName: old.byName, affinityDirty: true, id: snapshotIDs.Add(1)}
	snap.byName[node.Name] = ni
	sc.handle.snap, sc.handle.services, sc.handle.pvs = snap, nil, nil
	sc.handle.epoch, sc.handle.writes = sc.handle.epoch+1, nil
	if nominatedHere {
		sc.nominated.valid = false
	}
	sc.static = map[string]*staticVerdicts{}
}

// nominatedTo tells whether some pod of the simulation is nominated to the
// named node, from an index of the nominations built on first use and kept
// up to date by place (walking every pod per added node would cost the
// whole cluster per node).
func (sim *Simulation) nominatedTo(name string) bool {
	if sim.nominations == nil {
		sim.nominations = map[string]bool{}
		for _, p := range sim.state.Pods {
			if n := p.Status.NominatedNodeName; n != "" {
				sim.nominations[n] = true
			}
		}
	}
	return sim.nominations[name]
}

// noteNomination keeps the index of nominatedTo up to date for a pod the
// simulation stores.
func (sim *Simulation) noteNomination(p *v1.Pod) {
	if sim.nominations != nil && p.Status.NominatedNodeName != "" {
		sim.nominations[p.Status.NominatedNodeName] = true
	}
}
