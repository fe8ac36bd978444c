// Package poolhash computes the karpenter.sh/nodepool-hash annotation value
// exactly as Karpenter v1.6 does, so the number berth shows equals the one a
// real cluster writes (docs/karpenter-disruption.md#drift).
//
// Karpenter hashes the NodePool's spec.template with hashstructure (format
// v2; slices as sets, zero values skipped, nil pointers as zero values).
// That hash mixes in each struct's Go type name, each exported field's name
// and its value, in field order, so it is a function of the exact Go shape of
// upstream's types, not of the JSON. berth's own API types keep durations as
// the strings the user wrote, so this package converts a template into a
// private mirror of upstream's shape — same type names, field names, field
// order, field kinds and ignore tags — and hashes that. It is kept small and
// free of the simulator's packages so the karpenter-conformance module can
// check it against genuine Karpenter.
package poolhash

import (
	"strconv"
	"time"

	"github.com/mitchellh/hashstructure/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
)

// Annotation keys and the hash version Karpenter v1.6 writes with it.
const (
	AnnotationNodePoolHash        = karpv1.Group + "/nodepool-hash"
	AnnotationNodePoolHashVersion = karpv1.Group + "/nodepool-hash-version"
	// NodePoolHashVersion is v1.6's hash version; upstream bumps it when a
	// hashed field's default changes or a field joins or leaves the hash.
	NodePoolHashVersion = "v3"
)

// The mirror types. Their names, the names, order and kinds of their exported
// fields are what the hash depends on, so they must not be renamed or
// reordered. Fields upstream tags hash:"ignore" (the requirements, the raw
// spelling of a NillableDuration) contribute nothing at all to the hash, so
// they are simply left out, except NillableDuration.Raw, kept with its tag to
// show the shape. A string-kinded type (upstream's TaintEffect) hashes like
// a plain string: only struct types contribute their names. The types are
// exported because the names hashed are upstream's capitalised ones and
// unexported fields are skipped.

type NodeClaimTemplate struct {
	ObjectMeta
	Spec NodeClaimTemplateSpec
}

type ObjectMeta struct {
	Labels      map[string]string
	Annotations map[string]string
}

type NodeClaimTemplateSpec struct {
	Taints                 []Taint
	StartupTaints          []Taint
	NodeClassRef           *NodeClassReference
	TerminationGracePeriod *metav1.Duration
	ExpireAfter            NillableDuration
}

// Taint mirrors core/v1 Taint; TimeAdded hashes as a metav1.Time struct
// around a time.Time, as upstream's does.
type Taint struct {
	Key       string
	Value     string
	Effect    string
	TimeAdded *metav1.Time
}

type NodeClassReference struct {
	Kind  string
	Name  string
	Group string
}

// NillableDuration mirrors upstream's: an embedded *time.Duration (field name
// "Duration"), nil for "Never".
type NillableDuration struct {
	*time.Duration
	Raw []byte `hash:"ignore"`
}

// NodePool returns the karpenter.sh/nodepool-hash value of np's template:
// the decimal form of upstream's uint64.
func NodePool(np *karpv1.NodePool) string {
	return Template(&np.Spec.Template)
}

// Template hashes one NodeClaimTemplate (see NodePool).
func Template(t *karpv1.NodeClaimTemplate) string {
	h, err := hashstructure.Hash(mirror(t), hashstructure.FormatV2, &hashstructure.HashOptions{
		SlicesAsSets:    true,
		IgnoreZeroValue: true,
		ZeroNil:         true,
	})
	if err != nil {
		// Cannot happen: the mirror holds only strings, maps, slices,
		// structs, pointers, integers and a time.Time.
		return ""
	}
	return strconv.FormatUint(h, 10)
}

// mirror converts berth's template to upstream's shape. Empty maps and
// slices become nil: berth's objects pass through JSON with omitempty (state
// file, deep copies), which drops them, so treating them as absent keeps the
// hash the same before and after a copy (docs/karpenter-disruption.md#drift
// notes where that departs from a cluster).
func mirror(t *karpv1.NodeClaimTemplate) NodeClaimTemplate {
	out := NodeClaimTemplate{
		ObjectMeta: ObjectMeta{Labels: nonEmpty(t.Labels), Annotations: nonEmpty(t.Annotations)},
		Spec: NodeClaimTemplateSpec{
			Taints:        taints(t.Spec.Taints),
			StartupTaints: taints(t.Spec.StartupTaints),
			ExpireAfter:   nillableDuration(t.Spec.ExpireAfter),
		},
	}
	if ref := t.Spec.NodeClassRef; ref != nil {
		out.Spec.NodeClassRef = &NodeClassReference{Kind: ref.Kind, Name: ref.Name, Group: ref.Group}
	}
	if tgp := t.Spec.TerminationGracePeriod; tgp != nil {
		// An unparsable value cannot pass validation; were one to reach
		// here it counts as 0s rather than failing the controller.
		d, _ := time.ParseDuration(string(*tgp))
		out.Spec.TerminationGracePeriod = &metav1.Duration{Duration: d}
	}
	return out
}

func nonEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func taints(in []corev1.Taint) []Taint {
	if len(in) == 0 {
		return nil
	}
	out := make([]Taint, len(in))
	for i, t := range in {
		out[i] = Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect), TimeAdded: t.TimeAdded}
	}
	return out
}

// nillableDuration reads a NillableDuration the way upstream's UnmarshalJSON
// does: "Never" (or nothing) leaves it empty, anything else is parsed. The
// spelling itself ("90m" or "1h30m") is not hashed.
func nillableDuration(s karpv1.NillableDuration) NillableDuration {
	if s == "" || s == karpv1.Never {
		return NillableDuration{}
	}
	d, err := time.ParseDuration(string(s))
	if err != nil {
		return NillableDuration{}
	}
	return NillableDuration{Duration: &d, Raw: []byte(strconv.Quote(string(s)))}
}
