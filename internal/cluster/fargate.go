package cluster

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// FargateProfileGVK is berth's API group for Fargate profiles. Profiles are
// EKS objects, not Kubernetes ones; berth serves them like a custom
// resource so that get, describe and delete work on them
// (docs/fargate.md#profiles-in-berth-get-and-describe).
var FargateProfileGVK = gvk("eks.berth.dev", "v1alpha1", "FargateProfile")

// FargateProfileActive is the only EKS profile status berth models: a
// profile is ACTIVE as soon as it is created.
const FargateProfileActive = "ACTIVE"

// FargateProfile is a Fargate profile from an eksctl ClusterConfig (or
// added later, as `eksctl create fargateprofile` does), normalised: subnets
// resolved to the cluster's subnet IDs, the selectors as written. Its
// fields are those `eksctl get fargateprofile -o yaml` prints, under
// Kubernetes object metadata (docs/fargate.md).
type FargateProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Selectors         []FargateSelector `json:"selectors"`
	// Subnets are subnet IDs; all of them are private subnets of the
	// cluster VPC (a profile naming another one is refused at apply).
	Subnets             []string          `json:"subnets"`
	PodExecutionRoleARN string            `json:"podExecutionRoleARN,omitempty"`
	Tags                map[string]string `json:"tags,omitempty"`
	// Status is the EKS profile status (FargateProfileActive).
	Status string `json:"status,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (p *FargateProfile) DeepCopyObject() runtime.Object {
	out := *p
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Selectors = make([]FargateSelector, len(p.Selectors))
	for i, sel := range p.Selectors {
		out.Selectors[i] = FargateSelector{Namespace: sel.Namespace, Labels: maps.Clone(sel.Labels)}
	}
	out.Subnets = append([]string(nil), p.Subnets...)
	out.Tags = maps.Clone(p.Tags)
	return &out
}

// FargateProfileUID is a profile's uid, derived from the cluster's and the
// profile's names rather than drawn from the random source, so that adding
// a profile does not shift the names and addresses drawn after it.
func FargateProfileUID(clusterName, profile string) types.UID {
	h := sha256.Sum256([]byte("fargateprofile/" + clusterName + "/" + profile))
	h[6] = h[6]&0x0f | 0x40 // a version-4 shape, as the other uids
	h[8] = h[8]&0x3f | 0x80
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16]))
}

// FargateSelector is one selector of a profile: a namespace pattern and
// label patterns, with the * and ? wildcards.
type FargateSelector struct {
	Namespace string            `json:"namespace"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// FargateState is what the Fargate controller remembers about the pods
// fargate-scheduler handles, by pod uid (internal/fargate/controller).
type FargateState struct {
	Pods map[types.UID]*FargatePod `json:"pods,omitempty"`
}

// FargatePod is one pod's Fargate capacity: the size chosen, the subnet and
// address of its micro-VM, and when its node registers. Rejected pods keep
// a record too, so that they are judged once, as fargate-scheduler does.
type FargatePod struct {
	// Pod is the pod's key (namespace/name).
	Pod      string `json:"pod"`
	Profile  string `json:"profile,omitempty"`
	Rejected bool   `json:"rejected,omitempty"`
	// Node is the node's name; it exists from ReadyAt until the pod is gone.
	Node     string    `json:"node,omitempty"`
	IP       string    `json:"ip,omitempty"`
	Zone     string    `json:"zone,omitempty"`
	Subnet   string    `json:"subnet,omitempty"`
	VCPU     string    `json:"vcpu,omitempty"`
	MemoryGB string    `json:"memoryGB,omitempty"`
	ReadyAt  time.Time `json:"readyAt"`
	// NodeCreated is set once the node was added (a node deleted by hand is
	// not brought back).
	NodeCreated bool `json:"nodeCreated,omitempty"`
	// GoneAt is when the pod was first seen gone or finished; the node is
	// removed NodeLinger later.
	GoneAt *time.Time `json:"goneAt,omitempty"`
}
