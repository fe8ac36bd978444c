package scheduler

import (
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Static Filter verdicts depend on a node only through its name, labels,
// taints and unschedulable flag. Nodes that agree on everything but their
// name and hostname label form a class; for a pod template that reads
// neither, one verdict per class stands for every node in it.

// nodeClassKey is what static filters can see of n, hostname excluded.
func nodeClassKey(n *v1.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(strconv.FormatBool(n.Spec.Unschedulable))
	b.WriteByte(0)
	for _, t := range n.Spec.Taints {
		b.WriteString(t.Key)
		b.WriteByte(1)
		b.WriteString(t.Value)
		b.WriteByte(1)
		b.WriteString(string(t.Effect))
		b.WriteByte(1)
		if t.TimeAdded != nil {
			b.WriteString(t.TimeAdded.UTC().String())
		}
		b.WriteByte(2)
	}
	b.WriteByte(0)
	keys := make([]string, 0, len(n.Labels))
	for k := range n.Labels {
		if k != v1.LabelHostname {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(1)
		b.WriteString(n.Labels[k])
		b.WriteByte(2)
	}
	return b.String()
}

// nodeClasses numbers the snapshot's nodes by class (built on first use;
// nodes do not change within a Sync). Nodes without a Node object each get
// their own class.
func (sn *Snapshot) nodeClasses() ([]int32, int) {
	if sn.classOf != nil || len(sn.nodes) == 0 {
		return sn.classOf, sn.numClasses
	}
	ids := map[string]int32{}
	classOf := make([]int32, len(sn.nodes))
	for i, ni := range sn.nodes {
		if ni.Node == nil {
			classOf[i] = int32(len(ids))
			ids["\xff"+strconv.Itoa(i)] = classOf[i]
			continue
		}
		k := nodeClassKey(ni.Node)
		id, ok := ids[k]
		if !ok {
			id = int32(len(ids))
			ids[k] = id
		}
		classOf[i] = id
	}
	sn.classOf, sn.numClasses = classOf, len(ids)
	return classOf, sn.numClasses
}

// position is ni's position in the snapshot list, or -1 (NodeInfos the
// list does not hold, such as preemption's copies).
func (sn *Snapshot) position(ni *framework.NodeInfo) int {
	if i := int(ni.Index); i >= 0 && i < len(sn.nodes) && sn.nodes[i] == ni {
		return i
	}
	return -1
}

// nameAt is the name of ni, found at snapshot position pos (-1: unknown).
// A NodeInfo that replaced the one at pos has the same Node, so the same name.
func (sn *Snapshot) nameAt(pos int, ni *framework.NodeInfo) string {
	if pos >= 0 && pos < len(sn.names) {
		return sn.names[pos]
	}
	return ni.Name()
}

// narrowed returns the snapshot's nodes named in names, in node-tree order
// (upstream iterates a map here, so any order is faithful). A few names
// are looked up and ordered by position rather than testing every node.
func (sn *Snapshot) narrowed(names map[string]struct{}) []*framework.NodeInfo {
	out := make([]*framework.NodeInfo, 0, len(names))
	if len(names) <= len(sn.nodes)/16 {
		pos := make([]int, 0, len(names))
		for name := range names {
			ni := sn.byName[name]
			if ni == nil {
				continue
			}
			p := sn.position(ni)
			if p < 0 {
				pos = nil
				break
			}
			pos = append(pos, p)
		}
		if pos != nil || len(names) == 0 {
			sort.Ints(pos)
			for _, p := range pos {
				out = append(out, sn.nodes[p])
			}
			return out
		}
	}
	for _, ni := range sn.nodes {
		if _, ok := names[ni.Name()]; ok {
			out = append(out, ni)
		}
	}
	return out
}

// classBlind tells whether the static filters' verdict for pod cannot
// depend on a node's name or hostname label: no nodeName, no matchFields,
// no hostname key in the node selector or required node affinity.
func classBlind(pod *v1.Pod) bool {
	if pod.Spec.NodeName != "" {
		return false
	}
	if _, ok := pod.Spec.NodeSelector[v1.LabelHostname]; ok {
		return false
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if len(term.MatchFields) > 0 {
			return false
		}
		for _, r := range term.MatchExpressions {
			if r.Key == v1.LabelHostname || r.Key == metav1.ObjectNameField {
				return false
			}
		}
	}
	return true
}
