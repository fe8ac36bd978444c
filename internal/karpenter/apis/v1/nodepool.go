// Package v1 is karpenter.sh/v1 (NodePool, NodeClaim) and karpenter.k8s.aws/v1
// (EC2NodeClass), as in kubernetes-sigs/karpenter pkg/apis/v1 and
// aws/karpenter-provider-aws pkg/apis/v1. Only the types: validation lives in
// internal/manifest and defaulting in internal/admission
// (docs/karpenter-apis.md).
package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-sim/berth/internal/karpenter/apis"
)

// Group names and versions.
const (
	Group    = "karpenter.sh"
	AWSGroup = "karpenter.k8s.aws"
	Version  = "v1"
)

var (
	SchemeGroupVersion    = schema.GroupVersion{Group: Group, Version: Version}
	AWSSchemeGroupVersion = schema.GroupVersion{Group: AWSGroup, Version: Version}
)

// NillableDuration is a duration such as "720h" or "Never". Upstream it is a
// struct around *time.Duration; the API server stores what the client sent
// (the CRD schema says string with a pattern), so a string keeps the user's
// spelling exactly.
type NillableDuration string

// Never disables an expiry or consolidation delay.
const Never NillableDuration = "Never"

// Duration is a metav1.Duration field kept in the spelling the user wrote
// (for the same reason as NillableDuration).
type Duration string

// ConsolidationPolicy says which nodes consolidation may remove.
type ConsolidationPolicy string

const (
	ConsolidationPolicyWhenEmpty                ConsolidationPolicy = "WhenEmpty"
	ConsolidationPolicyWhenEmptyOrUnderutilized ConsolidationPolicy = "WhenEmptyOrUnderutilized"
	// ConsolidationPolicyBalanced is accepted by the v1.14 CRD.
	ConsolidationPolicyBalanced ConsolidationPolicy = "Balanced"
)

// DisruptionReason names a disruption method a budget applies to.
type DisruptionReason string

const (
	DisruptionReasonUnderutilized DisruptionReason = "Underutilized"
	DisruptionReasonEmpty         DisruptionReason = "Empty"
	DisruptionReasonDrifted       DisruptionReason = "Drifted"
)

// NodePool is karpenter.sh/v1 NodePool (cluster-scoped).
type NodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NodePoolSpec   `json:"spec"`
	Status NodePoolStatus `json:"status,omitempty"`
}

// NodePoolSpec is the desired state of a NodePool.
type NodePoolSpec struct {
	Template   NodeClaimTemplate `json:"template"`
	Disruption Disruption        `json:"disruption"`
	Limits     Limits            `json:"limits,omitempty"`
	Weight     *int32            `json:"weight,omitempty"`
	// Replicas makes a static NodePool (v1.8+, alpha).
	Replicas *int64 `json:"replicas,omitempty"`
}

// Disruption says how and when Karpenter may remove the pool's nodes.
type Disruption struct {
	ConsolidateAfter    NillableDuration    `json:"consolidateAfter,omitempty"`
	ConsolidationPolicy ConsolidationPolicy `json:"consolidationPolicy,omitempty"`
	Budgets             []Budget            `json:"budgets,omitempty"`
}

// Budget limits how many nodes may be disrupted at once.
type Budget struct {
	Reasons  []DisruptionReason `json:"reasons,omitempty"`
	Nodes    string             `json:"nodes"`
	Schedule *string            `json:"schedule,omitempty"`
	Duration *Duration          `json:"duration,omitempty"`
}

// Limits caps the resources of all the pool's nodes together.
type Limits corev1.ResourceList

// NodeClaimTemplate is what every NodeClaim of the pool is made from.
type NodeClaimTemplate struct {
	ObjectMeta `json:"metadata,omitempty"`
	Spec       NodeClaimTemplateSpec `json:"spec"`
}

// ObjectMeta is the template's metadata: labels and annotations only.
type ObjectMeta struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// NodeClaimTemplateSpec is a NodeClaimSpec without resources.
type NodeClaimTemplateSpec struct {
	Taints                 []corev1.Taint                         `json:"taints,omitempty"`
	StartupTaints          []corev1.Taint                         `json:"startupTaints,omitempty"`
	Requirements           []NodeSelectorRequirementWithMinValues `json:"requirements"`
	NodeClassRef           *NodeClassReference                    `json:"nodeClassRef"`
	TerminationGracePeriod *Duration                              `json:"terminationGracePeriod,omitempty"`
	ExpireAfter            NillableDuration                       `json:"expireAfter,omitempty"`
}

// NodeSelectorRequirementWithMinValues is a node selector requirement that
// may ask for at least MinValues distinct values (instance-type flexibility).
type NodeSelectorRequirementWithMinValues struct {
	Key       string                      `json:"key"`
	Operator  corev1.NodeSelectorOperator `json:"operator,omitempty"`
	Values    []string                    `json:"values,omitempty"`
	MinValues *int                        `json:"minValues,omitempty"`
}

// NodeClassReference points at the provider's node class (an EC2NodeClass).
type NodeClassReference struct {
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Group string `json:"group"`
}

// NodePoolStatus is written by Karpenter's controllers.
type NodePoolStatus struct {
	Resources                   corev1.ResourceList `json:"resources,omitempty"`
	Nodes                       *int64              `json:"nodes,omitempty"`
	NodeClassObservedGeneration int64               `json:"nodeClassObservedGeneration,omitempty"`
	Conditions                  []metav1.Condition  `json:"conditions,omitempty"`
}

// DeepCopy returns an exact copy (apis.JSONCopy).
func (in *NodePool) DeepCopy() *NodePool { return apis.JSONCopy(in) }

// DeepCopyObject implements runtime.Object.
func (in *NodePool) DeepCopyObject() runtime.Object { return in.DeepCopy() }
