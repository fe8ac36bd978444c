package podtopologyspread

import (
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	natable "github.com/berth-sim/berth/internal/scheduler/plugins/nodeaffinity"
)

// includer answers matchNodeInclusionPolicies for one constraint and pod by
// node position. Whether a node takes part depends only on the node and on
// what the policies read of the pod (nodeSelector and required node
// affinity when nodeAffinityPolicy is Honor, tolerations when
// nodeTaintsPolicy is Honor), so the verdicts are kept per snapshot under
// that "inclusion shape" (selections.included) and pods of one template,
// owned or bare, share them: the walk over every node in PreFilter then
// reads a byte per node instead of matching affinity and taints
// (docs/scheduler.md, "PodTopologySpread selections").
type includer struct {
	all      bool
	verdicts []int8 // by position: 0 not asked yet, 1 included, 2 not
	// fast, when set, answers the node affinity half (nodeAffinityPolicy
	// Honor) by position from NodeAffinity's compiled matcher, tested
	// against the helper's (docs/scheduler.md, "PodTopologySpread
	// selections"); nil: the helper's matcher in required.
	fast     *natable.Required
	c        *constraint
	pod      *v1.Pod
	required nodeaffinity.RequiredNodeAffinity
	nodes    []*framework.NodeInfo
}

// inclusion is one inclusion shape's state in a snapshot: its verdicts
// and, when it honours node affinity, the pod's nodeSelector and required
// affinity compiled once over the snapshot's label table.
type inclusion struct {
	verdicts []int8
	compiled bool
	fast     *natable.Required
}

// has reports whether the node at position p passes the policies.
func (in *includer) has(p int32) bool {
	if in.all {
		return true
	}
	switch in.verdicts[p] {
	case 1:
		return true
	case 2:
		return false
	}
	var ok bool
	if in.fast != nil {
		ok = in.fast.Match(p) && in.c.matchNodeTaintsPolicy(in.pod, in.nodes[p].Node)
	} else {
		ok = in.c.matchNodeInclusionPolicies(in.pod, in.nodes[p].Node, in.required)
	}
	if ok {
		in.verdicts[p] = 1
		return true
	}
	in.verdicts[p] = 2
	return false
}

// includer returns constraint c's includer for pod over nodes, the list the
// index was updated with.
func (s *selections) includer(c *constraint, pod *v1.Pod, required nodeaffinity.RequiredNodeAffinity, nodes []*framework.NodeInfo) includer {
	in := includer{c: c, pod: pod, required: required, nodes: nodes}
	key, all := s.inclusionKey(c, pod)
	if all {
		in.all = true
		return in
	}
	v := s.included[key]
	if v == nil {
		v = &inclusion{verdicts: make([]int8, len(nodes))}
		if s.included == nil {
			s.included = map[string]*inclusion{}
		}
		s.included[key] = v
	}
	if !v.compiled && c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor {
		// A shape is compiled on its first use in the snapshot; the shape
		// key spells out everything compiled, so any pod of the shape may
		// stand for it.
		v.compiled = true
		if s.affinity == nil || !s.affinity.Same(nodes) {
			s.affinity = natable.NewTable(nodes)
		}
		if s.affinity != nil {
			v.fast = s.affinity.CompileRequired(pod)
		}
	}
	in.verdicts, in.fast = v.verdicts, v.fast
	return in
}

// inclusionKey spells out everything matchNodeInclusionPolicies reads of
// the constraint and the pod; all is true when every node passes (no
// policy honoured, or nothing to honour).
func (s *selections) inclusionKey(c *constraint, pod *v1.Pod) (string, bool) {
	affinity := c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor
	taints := c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor
	var required *v1.NodeSelector
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if (!affinity || (len(pod.Spec.NodeSelector) == 0 && required == nil)) && !taints {
		return "", true
	}
	b := &s.key
	b.Reset()
	if affinity {
		b.WriteString("A")
		keys := make([]string, 0, len(pod.Spec.NodeSelector))
		for k := range pod.Spec.NodeSelector {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		putInt(b, len(keys))
		for _, k := range keys {
			put(b, k)
			put(b, pod.Spec.NodeSelector[k])
		}
		// A required affinity with no terms matches nothing; with terms,
		// each term's requirements in order.
		if required != nil {
			b.WriteString("R")
			putInt(b, len(required.NodeSelectorTerms))
			for i := range required.NodeSelectorTerms {
				putRequirements(b, required.NodeSelectorTerms[i].MatchExpressions)
				putRequirements(b, required.NodeSelectorTerms[i].MatchFields)
			}
		}
	}
	if taints {
		b.WriteString("T")
		putInt(b, len(pod.Spec.Tolerations))
		for _, t := range pod.Spec.Tolerations {
			put(b, t.Key)
			put(b, string(t.Operator))
			put(b, t.Value)
			put(b, string(t.Effect))
			if t.TolerationSeconds != nil {
				putInt(b, int(*t.TolerationSeconds))
			} else {
				b.WriteString("-")
			}
		}
	}
	return b.String(), false
}

func putRequirements(b *strings.Builder, reqs []v1.NodeSelectorRequirement) {
	putInt(b, len(reqs))
	for _, r := range reqs {
		put(b, r.Key)
		put(b, string(r.Operator))
		putInt(b, len(r.Values))
		for _, v := range r.Values {
			put(b, v)
		}
	}
}

// put writes s length-prefixed, so that no two spellings collide.
func put(b *strings.Builder, s string) {
	putInt(b, len(s))
	b.WriteString(s)
}

func putInt(b *strings.Builder, n int) {
	var buf [20]byte
	b.Write(strconv.AppendInt(buf[:0], int64(n), 10))
	b.WriteByte(':')
}
