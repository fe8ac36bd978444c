package framework

// CloneWithout is Clone followed by RemovePod of every pod drop selects,
// in one pass: preemption's dry run copies each node it examines and takes
// all lower-priority pods off the copy, and removing them one by one
// searches and re-slices the pod lists once per pod
// (docs/scheduler.md#failed-cycles-by-position). It returns the copy and
// the dropped pods in the node's order. The sums are reduced pod by pod,
// in that order, exactly as RemovePod would. A node lists each pod once,
// so the pods dropped are the ones RemovePod would find.
func (n *NodeInfo) CloneWithout(drop func(*PodInfo) bool) (*NodeInfo, []*PodInfo) {
	var removed []*PodInfo
	var kept []*PodInfo
	for i, p := range n.Pods {
		if !drop(p) {
			if removed != nil {
				kept = append(kept, p)
			}
			continue
		}
		if removed == nil {
			kept = make([]*PodInfo, i, len(n.Pods)-1)
			copy(kept, n.Pods[:i])
		}
		removed = append(removed, p)
	}
	if removed == nil {
		return n.Clone(), nil
	}
	c := &NodeInfo{
		Node:                         n.Node,
		Pods:                         kept,
		PodsWithAffinity:             without(n.PodsWithAffinity, removed),
		PodsWithRequiredAntiAffinity: without(n.PodsWithRequiredAntiAffinity, removed),
		UsedPorts:                    n.UsedPorts.Clone(),
		Requested:                    n.Requested.cloneValue(),
		NonZeroRequested:             n.NonZeroRequested.cloneValue(),
		Allocatable:                  n.Allocatable.cloneValue(),
		ImageStates:                  n.ImageStates,
		Generation:                   n.Generation,
		Index:                        n.Index,
	}
	for _, p := range removed {
		c.update(p, -1)
	}
	return c, removed
}

// without copies list less the pods in removed (matched as RemovePod
// matches them).
func without(list, removed []*PodInfo) []*PodInfo {
	out := make([]*PodInfo, 0, len(list))
	for _, p := range list {
		gone := false
		for _, r := range removed {
			if samePod(p.Pod, r.Pod) {
				gone = true
				break
			}
		}
		if !gone {
			out = append(out, p)
		}
	}
	return out
}
