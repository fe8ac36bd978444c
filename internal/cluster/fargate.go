package cluster

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// FargateProfile is a Fargate profile from an eksctl ClusterConfig (or
// added later, as `eksctl create fargateprofile` does), normalised: subnets
// resolved to the cluster's subnet IDs, the selectors as written
// (docs/fargate.md).
type FargateProfile struct {
	Name      string            `json:"name"`
	Selectors []FargateSelector `json:"selectors"`
	// Subnets are subnet IDs; all of them are private subnets of the
	// cluster VPC (a profile naming another one is refused at apply).
	Subnets             []string          `json:"subnets"`
	PodExecutionRoleARN string            `json:"podExecutionRoleARN,omitempty"`
	Tags                map[string]string `json:"tags,omitempty"`
	// CreatedAt is the virtual time the profile became ACTIVE; only pods
	// created from then on are taken by the webhook.
	CreatedAt time.Time `json:"createdAt"`
	// Source names the file and document the profile came from.
	Source string `json:"source,omitempty"`
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
