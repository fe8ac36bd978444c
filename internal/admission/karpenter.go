package admission

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	karpv1alpha5 "github.com/berth-sim/berth/internal/karpenter/apis/v1alpha5"
)

// Karpenter's defaults (docs/karpenter-apis.md). The v1 kinds are defaulted
// by their CRD schemas (+kubebuilder:default in kubernetes-sigs/karpenter
// pkg/apis/v1/nodepool.go, nodeclaim.go and aws/karpenter-provider-aws
// pkg/apis/v1/ec2nodeclass.go); the v1alpha5 Provisioner by the AWS
// provider's defaulting webhook (aws/karpenter-provider-aws@v0.31.4
// pkg/apis/v1alpha5/provisioner.go SetDefaults).

// Classic v1 defaults.
const (
	DefaultExpireAfter      karpv1.NillableDuration = "720h"
	DefaultConsolidateAfter karpv1.NillableDuration = "0s"
	DefaultBudgetNodes                              = "10%"
)

// DefaultNodePool applies the NodePool CRD's defaults.
func DefaultNodePool(np *karpv1.NodePool) {
	if np.Spec.Template.Spec.ExpireAfter == "" {
		np.Spec.Template.Spec.ExpireAfter = DefaultExpireAfter
	}
	d := &np.Spec.Disruption
	if d.ConsolidateAfter == "" {
		d.ConsolidateAfter = DefaultConsolidateAfter
	}
	if d.ConsolidationPolicy == "" {
		d.ConsolidationPolicy = karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized
	}
	// The budgets default applies only when the field is absent; an explicit
	// empty list stays empty (and means no budget limit).
	if d.Budgets == nil {
		d.Budgets = []karpv1.Budget{{Nodes: DefaultBudgetNodes}}
	}
}

// DefaultNodeClaim applies the NodeClaim CRD's defaults.
func DefaultNodeClaim(nc *karpv1.NodeClaim) {
	if nc.Spec.ExpireAfter == "" {
		nc.Spec.ExpireAfter = DefaultExpireAfter
	}
}

// DefaultEC2NodeClass applies the EC2NodeClass CRD's metadataOptions
// defaults: the whole object when absent, each field when left out.
func DefaultEC2NodeClass(nc *karpv1.EC2NodeClass) {
	if nc.Spec.MetadataOptions == nil {
		nc.Spec.MetadataOptions = &karpv1.MetadataOptions{}
	}
	m := nc.Spec.MetadataOptions
	if m.HTTPEndpoint == nil {
		m.HTTPEndpoint = ptrTo("enabled")
	}
	if m.HTTPProtocolIPv6 == nil {
		m.HTTPProtocolIPv6 = ptrTo("disabled")
	}
	if m.HTTPPutResponseHopLimit == nil {
		m.HTTPPutResponseHopLimit = ptrTo(int64(1))
	}
	if m.HTTPTokens == nil {
		m.HTTPTokens = ptrTo("required")
	}
}

// DefaultProvisioner is the v0.31 AWS defaulting webhook: requirements the
// Provisioner does not mention at all (any operator, beta keys counting as
// their stable names) get linux, amd64, on-demand, and, when no instance
// type constraint is given, categories c/m/r of generation > 2.
func DefaultProvisioner(p *karpv1alpha5.Provisioner) {
	has := map[string]bool{}
	for _, r := range p.Spec.Requirements {
		key := r.Key
		if n, ok := karpv1alpha5.NormalizedLabels[key]; ok {
			key = n
		}
		has[key] = true
	}
	in := func(key string, values ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
	}
	if !has[corev1.LabelOSStable] {
		p.Spec.Requirements = append(p.Spec.Requirements, in(corev1.LabelOSStable, "linux"))
	}
	if !has[corev1.LabelArchStable] {
		p.Spec.Requirements = append(p.Spec.Requirements, in(corev1.LabelArchStable, "amd64"))
	}
	if !has["karpenter.sh/capacity-type"] {
		p.Spec.Requirements = append(p.Spec.Requirements, in("karpenter.sh/capacity-type", "on-demand"))
	}
	if !has[corev1.LabelInstanceTypeStable] && !has["karpenter.k8s.aws/instance-family"] &&
		!has["karpenter.k8s.aws/instance-category"] && !has["karpenter.k8s.aws/instance-generation"] {
		p.Spec.Requirements = append(p.Spec.Requirements,
			in("karpenter.k8s.aws/instance-category", "c", "m", "r"),
			corev1.NodeSelectorRequirement{Key: "karpenter.k8s.aws/instance-generation", Operator: corev1.NodeSelectorOpGt, Values: []string{"2"}})
	}
}

// defaultKarpenter applies the defaults of a Karpenter kind; false if obj
// is not one.
func defaultKarpenter(obj runtime.Object) bool {
	switch o := obj.(type) {
	case *karpv1.NodePool:
		DefaultNodePool(o)
	case *karpv1.NodeClaim:
		DefaultNodeClaim(o)
	case *karpv1.EC2NodeClass:
		DefaultEC2NodeClass(o)
	case *karpv1alpha5.Provisioner:
		DefaultProvisioner(o)
	case *karpv1alpha5.AWSNodeTemplate:
	default:
		return false
	}
	return true
}

// carryKarpenterStatus keeps the stored status on update (these CRDs have a
// status subresource) and reports whether the spec changed, which bumps
// metadata.generation as for any custom resource.
func carryKarpenterStatus(obj, old runtime.Object) (specChanged, ok bool) {
	switch o := obj.(type) {
	case *karpv1.NodePool:
		op := old.(*karpv1.NodePool)
		o.Status = op.Status
		return !apiequality.Semantic.DeepEqual(o.Spec, op.Spec), true
	case *karpv1.NodeClaim:
		op := old.(*karpv1.NodeClaim)
		o.Status = op.Status
		return !apiequality.Semantic.DeepEqual(o.Spec, op.Spec), true
	case *karpv1.EC2NodeClass:
		op := old.(*karpv1.EC2NodeClass)
		o.Status = op.Status
		return !apiequality.Semantic.DeepEqual(o.Spec, op.Spec), true
	case *karpv1alpha5.Provisioner:
		op := old.(*karpv1alpha5.Provisioner)
		o.Status = op.Status
		return !apiequality.Semantic.DeepEqual(o.Spec, op.Spec), true
	case *karpv1alpha5.AWSNodeTemplate:
		op := old.(*karpv1alpha5.AWSNodeTemplate)
		o.Status = op.Status
		return !apiequality.Semantic.DeepEqual(o.Spec, op.Spec), true
	}
	return false, false
}

// karpenterRequirements counts a pool's requirements (-1 for other kinds),
// so that what defaulting added can be told afterwards.
func karpenterRequirements(obj runtime.Object) int {
	switch o := obj.(type) {
	case *karpv1alpha5.Provisioner:
		return len(o.Spec.Requirements)
	case *karpv1.NodePool:
		return len(o.Spec.Template.Spec.Requirements)
	}
	return -1
}

// noteKarpenterDefaults records, as a berth event on a created pool, which
// API and which defaults berth applied, since they change what launches:
// a Provisioner got its era's webhook requirements and runs as a converted
// NodePool; a v1 NodePool gets no architecture default
// (docs/karpenter-apis.md#defaults).
func noteKarpenterDefaults(s *cluster.State, obj runtime.Object, before int) {
	m, ok := obj.(metav1.Object)
	if !ok || before < 0 || m.GetUID() == "" || !exists(s, obj, cluster.Key(m.GetNamespace(), m.GetName())) {
		return
	}
	var msg string
	switch o := obj.(type) {
	case *karpv1alpha5.Provisioner:
		var added []string
		for _, r := range o.Spec.Requirements[before:] {
			added = append(added, fmt.Sprintf("%s %s %v", r.Key, r.Operator, r.Values))
		}
		msg = "karpenter.sh/v1alpha5 Provisioner, run as a karpenter.sh/v1 NodePool converted as the migration guide maps it"
		if len(added) > 0 {
			msg += "; the v0.31 AWS webhook added requirements: " + strings.Join(added, ", ")
		}
	case *karpv1.NodePool:
		msg = "karpenter.sh/v1 NodePool (Karpenter v1.6 semantics)"
		arch := false
		for _, r := range o.Spec.Template.Spec.Requirements {
			arch = arch || r.Key == corev1.LabelArchStable
		}
		if !arch {
			msg += "; no kubernetes.io/arch requirement and no webhook adds one: arm64 instance types compete on price"
		}
	default:
		return
	}
	ref := corev1.ObjectReference{Kind: typeMeta(obj).Kind, APIVersion: typeMeta(obj).APIVersion, Name: m.GetName(), UID: m.GetUID()}
	s.Record(cluster.EventSource{Component: "berth", Plain: true}, ref, corev1.EventTypeNormal, "Defaulted", msg)
}
