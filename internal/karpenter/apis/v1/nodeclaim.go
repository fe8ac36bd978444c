package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/karpenter/apis"
)

// NodeClaim is karpenter.sh/v1 NodeClaim: one node Karpenter launches.
// Karpenter creates them; users do not (docs/karpenter-apis.md).
type NodeClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NodeClaimSpec   `json:"spec"`
	Status NodeClaimStatus `json:"status,omitempty"`
}

// NodeClaimSpec is immutable once created.
type NodeClaimSpec struct {
	Taints                 []corev1.Taint                         `json:"taints,omitempty"`
	StartupTaints          []corev1.Taint                         `json:"startupTaints,omitempty"`
	Requirements           []NodeSelectorRequirementWithMinValues `json:"requirements"`
	Resources              ResourceRequirements                   `json:"resources,omitempty"`
	NodeClassRef           *NodeClassReference                    `json:"nodeClassRef"`
	TerminationGracePeriod *Duration                              `json:"terminationGracePeriod,omitempty"`
	ExpireAfter            NillableDuration                       `json:"expireAfter,omitempty"`
}

// ResourceRequirements are the summed requests of the pods packed onto the claim.
type ResourceRequirements struct {
	Requests corev1.ResourceList `json:"requests,omitempty"`
}

// NodeClaimStatus is what the launch and registration controllers learn.
type NodeClaimStatus struct {
	NodeName         string              `json:"nodeName,omitempty"`
	ProviderID       string              `json:"providerID,omitempty"`
	ImageID          string              `json:"imageID,omitempty"`
	Capacity         corev1.ResourceList `json:"capacity,omitempty"`
	Allocatable      corev1.ResourceList `json:"allocatable,omitempty"`
	Conditions       []metav1.Condition  `json:"conditions,omitempty"`
	LastPodEventTime metav1.Time         `json:"lastPodEventTime,omitempty"`
}

// DeepCopy returns an exact copy (apis.JSONCopy).
func (in *NodeClaim) DeepCopy() *NodeClaim { return apis.JSONCopy(in) }

// DeepCopyObject implements runtime.Object.
func (in *NodeClaim) DeepCopyObject() runtime.Object { return in.DeepCopy() }
