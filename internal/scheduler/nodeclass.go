package scheduler

import (
	"encoding/binary"
	"slices"
	"sort"
	"strconv"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/nodeaffinity"
)

// Static Filter verdicts depend on a node only through its name, its
// taints, its unschedulable flag and the labels the pod's nodeSelector and
// required node affinity name. Nodes that agree on all of these but their
// name form a class; for a pod template that does not read the name (nor
// the hostname label), one verdict per class stands for every node in it.
// Classes are numbered per set of label keys, so that templates selecting
// on few keys (or none) get few classes even where every node's full label
// set is unique.

// appendClassKey is what static filters can see of n for a template whose
// selectors name keys: the unschedulable flag, the taints and, per key,
// whether n has it and its value.
func appendClassKey(b []byte, n *v1.Node, keys []string) []byte {
	if n.Spec.Unschedulable {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	part := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(len(n.Spec.Taints)))
	for _, t := range n.Spec.Taints {
		part(t.Key)
		part(t.Value)
		part(string(t.Effect))
		if t.TimeAdded != nil {
			part(t.TimeAdded.UTC().String())
		} else {
			b = append(b, 0xff)
		}
	}
	for _, k := range keys {
		if v, ok := n.Labels[k]; ok {
			b = append(b, 1)
			part(v)
		} else {
			b = append(b, 0)
		}
	}
	return b
}

// classTable numbers the snapshot's nodes for one set of label keys.
type classTable struct {
	classOf []int32
	n       int
}

// nodeClassesOn numbers the snapshot's nodes by class for templates whose
// selectors name keys (sorted; none: only taints and the unschedulable
// flag count). Built once per key set per snapshot (nodes do not change
// within a Sync). Nodes without a Node object each get their own class.
func (sn *Snapshot) nodeClassesOn(keys []string) ([]int32, int) {
	if len(sn.nodes) == 0 {
		return nil, 0
	}
	var kb []byte
	for _, k := range keys {
		kb = binary.AppendUvarint(kb, uint64(len(k)))
		kb = append(kb, k...)
	}
	if t := sn.classesOn[string(kb)]; t != nil {
		return t.classOf, t.n
	}
	ids := map[string]int32{}
	classOf := make([]int32, len(sn.nodes))
	var b []byte
	for i, ni := range sn.nodes {
		if ni.Node == nil {
			classOf[i] = int32(len(ids))
			ids["\xff"+strconv.Itoa(i)] = classOf[i]
			continue
		}
		b = appendClassKey(b[:0], ni.Node, keys)
		id, ok := ids[string(b)]
		if !ok {
			id = int32(len(ids))
			ids[string(b)] = id
		}
		classOf[i] = id
	}
	if sn.classesOn == nil {
		sn.classesOn = map[string]*classTable{}
	}
	sn.classesOn[string(kb)] = &classTable{classOf: classOf, n: len(ids)}
	return classOf, len(ids)
}

// selectorKeys lists, sorted and once each, the label keys pod's
// nodeSelector and required node affinity terms name (matchExpressions;
// templates with matchFields are not class blind).
func selectorKeys(pod *v1.Pod) []string {
	var keys []string
	for k := range pod.Spec.NodeSelector {
		keys = append(keys, k)
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, r := range term.MatchExpressions {
				keys = append(keys, r.Key)
			}
		}
	}
	sort.Strings(keys)
	return slices.Compact(keys)
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

// classStatic sets up c, the cache of a template that does not name nodes
// up to the static plugin upTo, to keep verdicts per class. The static
// plugins before NodeAffinity read no label (nor, for such templates, the
// name): they are kept per keyless class in a table shared by every
// template with the same tolerations, provided none of them has a
// PreFilter that could skip it for one pod and not another. The plugins
// from there up to upTo (NodeAffinity, for a class-blind template) are
// kept per class of the template's selector keys.
func (sc *Scheduler) classStatic(c *staticVerdicts, pod *v1.Pod, upTo int) {
	snap := sc.handle.snap
	share := sc.fw.staticIndex(nodeaffinity.Name)
	for i := 0; i < share; i++ {
		if _, ok := sc.fw.filter[i].(framework.PreFilterPlugin); ok {
			share = 0
		}
	}
	if share > upTo {
		share = upTo
	}
	if share > 0 {
		keyless, n := snap.nodeClassesOn(nil)
		c.keyless, c.sharedUpTo, c.shared = keyless, share, snap.sharedFor(tolerationsKey(pod), n)
	}
	if upTo > share {
		var keys []string
		if upTo == sc.fw.staticFilters {
			keys = selectorKeys(pod)
		}
		classOf, n := snap.nodeClassesOn(keys)
		c.classOf, c.classUpTo, c.classDone, c.byClass = classOf, upTo, make([]bool, n), make([]*framework.Status, n)
	}
}

// sharedFor returns the snapshot's shared verdict table for the
// tolerations spelled tols, over n keyless classes.
func (sn *Snapshot) sharedFor(tols string, n int) *sharedVerdicts {
	if sv := sn.shared[tols]; sv != nil {
		return sv
	}
	if sn.shared == nil {
		sn.shared = map[string]*sharedVerdicts{}
	}
	sv := &sharedVerdicts{done: make([]bool, n), st: make([]*framework.Status, n)}
	sn.shared[tols] = sv
	return sv
}

// tolerationsKey spells out pod's tolerations, each length-prefixed in its
// protobuf encoding (deterministic), in order; "\xff" marks tolerations
// that do not encode, which then share nothing.
func tolerationsKey(pod *v1.Pod) string {
	b := binary.AppendUvarint(nil, uint64(len(pod.Spec.Tolerations)))
	for i := range pod.Spec.Tolerations {
		m, err := pod.Spec.Tolerations[i].Marshal()
		if err != nil {
			return "\xff" + pod.Namespace + "/" + pod.Name + "/" + string(pod.UID)
		}
		b = binary.AppendUvarint(b, uint64(len(m)))
		b = append(b, m...)
	}
	return string(b)
}
