// Package v1alpha5 is the legacy Karpenter API (v0.31/v0.32 era):
// karpenter.sh/v1alpha5 Provisioner and karpenter.k8s.aws/v1alpha1
// AWSNodeTemplate, as in kubernetes-sigs/karpenter@v0.32.10
// pkg/apis/v1alpha5/provisioner.go and aws/karpenter-provider-aws@v0.31.4
// pkg/apis/v1alpha1 (docs/karpenter-apis.md).
package v1alpha5

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-sim/berth/internal/karpenter/apis"
)

// Groups and versions.
const (
	Group      = "karpenter.sh"
	Version    = "v1alpha5"
	AWSGroup   = "karpenter.k8s.aws"
	AWSVersion = "v1alpha1"
)

var (
	SchemeGroupVersion    = schema.GroupVersion{Group: Group, Version: Version}
	AWSSchemeGroupVersion = schema.GroupVersion{Group: AWSGroup, Version: AWSVersion}
)

// Provisioner is karpenter.sh/v1alpha5 Provisioner (cluster-scoped), the
// predecessor of NodePool.
type Provisioner struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProvisionerSpec   `json:"spec,omitempty"`
	Status ProvisionerStatus `json:"status,omitempty"`
}

// ProvisionerSpec keeps everything at the top level (v1 moved most of it
// under spec.template).
type ProvisionerSpec struct {
	Annotations          map[string]string                `json:"annotations,omitempty"`
	Labels               map[string]string                `json:"labels,omitempty"`
	Taints               []corev1.Taint                   `json:"taints,omitempty"`
	StartupTaints        []corev1.Taint                   `json:"startupTaints,omitempty"`
	Requirements         []corev1.NodeSelectorRequirement `json:"requirements,omitempty"`
	KubeletConfiguration *KubeletConfiguration            `json:"kubeletConfiguration,omitempty"`
	// Provider is the inline AWS configuration; upstream it is a
	// runtime.RawExtension the AWS webhook decodes into its AWS type. Typed
	// here so that unknown fields are caught at decode time.
	Provider               *AWS                `json:"provider,omitempty"`
	ProviderRef            *MachineTemplateRef `json:"providerRef,omitempty"`
	TTLSecondsAfterEmpty   *int64              `json:"ttlSecondsAfterEmpty,omitempty"`
	TTLSecondsUntilExpired *int64              `json:"ttlSecondsUntilExpired,omitempty"`
	Limits                 *Limits             `json:"limits,omitempty"`
	Weight                 *int32              `json:"weight,omitempty"`
	Consolidation          *Consolidation      `json:"consolidation,omitempty"`
}

// Consolidation turns on underutilization consolidation.
type Consolidation struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// Limits caps the provisioner's total resources.
type Limits struct {
	Resources corev1.ResourceList `json:"resources,omitempty"`
}

// MachineTemplateRef points at an AWSNodeTemplate.
type MachineTemplateRef struct {
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion,omitempty"`
}

// KubeletConfiguration is the v1alpha5 kubelet subset.
type KubeletConfiguration struct {
	ClusterDNS                  []string            `json:"clusterDNS,omitempty"`
	ContainerRuntime            *string             `json:"containerRuntime,omitempty"`
	MaxPods                     *int32              `json:"maxPods,omitempty"`
	PodsPerCore                 *int32              `json:"podsPerCore,omitempty"`
	SystemReserved              corev1.ResourceList `json:"systemReserved,omitempty"`
	KubeReserved                corev1.ResourceList `json:"kubeReserved,omitempty"`
	EvictionHard                map[string]string   `json:"evictionHard,omitempty"`
	EvictionSoft                map[string]string   `json:"evictionSoft,omitempty"`
	EvictionSoftGracePeriod     map[string]string   `json:"evictionSoftGracePeriod,omitempty"`
	EvictionMaxPodGracePeriod   *int32              `json:"evictionMaxPodGracePeriod,omitempty"`
	ImageGCHighThresholdPercent *int32              `json:"imageGCHighThresholdPercent,omitempty"`
	ImageGCLowThresholdPercent  *int32              `json:"imageGCLowThresholdPercent,omitempty"`
	CPUCFSQuota                 *bool               `json:"cpuCFSQuota,omitempty"`
}

// ProvisionerStatus is written by the controllers.
type ProvisionerStatus struct {
	LastScaleTime *metav1.Time        `json:"lastScaleTime,omitempty"`
	Conditions    []metav1.Condition  `json:"conditions,omitempty"`
	Resources     corev1.ResourceList `json:"resources,omitempty"`
}

// DeepCopy returns an exact copy (apis.JSONCopy).
func (in *Provisioner) DeepCopy() *Provisioner { return apis.JSONCopy(in) }

// DeepCopyObject implements runtime.Object.
func (in *Provisioner) DeepCopyObject() runtime.Object { return in.DeepCopy() }

// ProvisionerNameLabelKey is the node label naming a node's Provisioner; a
// Provisioner may not set it.
const ProvisionerNameLabelKey = "karpenter.sh/provisioner-name"

// NormalizedLabels are the deprecated label keys Karpenter reads as their
// current names (v1alpha5.NormalizedLabels).
var NormalizedLabels = map[string]string{
	"failure-domain.beta.kubernetes.io/zone":   "topology.kubernetes.io/zone",
	"failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
	"beta.kubernetes.io/arch":                  "kubernetes.io/arch",
	"beta.kubernetes.io/os":                    "kubernetes.io/os",
	"beta.kubernetes.io/instance-type":         "node.kubernetes.io/instance-type",
}
