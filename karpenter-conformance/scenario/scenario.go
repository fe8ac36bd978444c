// Package scenario is the input and output shared by the two Karpenter
// provisioning schedulers the harness compares (genuine Karpenter and berth's):
// a cluster with NodePools over berth's EC2 catalog, the pods pending in one
// provisioning batch, and what each side decided for them.
//
// Both types serialise to plain YAML (sigs.k8s.io/yaml) so a failing seed can
// be saved as a regression file and replayed on either side.
package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/yaml"
)

// Scenario is one provisioning batch.
type Scenario struct {
	// Name identifies the scenario (a seed, or a regression's file name).
	Name string `json:"name"`
	// Region is the AWS region whose on-demand prices drive offerings.
	Region string `json:"region"`
	// Zones are the zones offerings exist in (each instance type with a price
	// in Region is offered in every zone, spot and on-demand).
	Zones []string `json:"zones"`
	// InstanceTypes restricts the catalog to these names; empty means every
	// catalog type with a price in Region.
	InstanceTypes []string `json:"instanceTypes,omitempty"`

	// NodePools are karpenter.sh/v1 NodePools. Their nodeClassRef is kept as
	// written; every pool counts as Ready and resolves to the same catalog.
	NodePools []*karpv1.NodePool `json:"nodePools"`
	// Nodes are already in the cluster, with their bound pods.
	Nodes []*Node `json:"nodes,omitempty"`
	// DaemonSets add per-node overhead to new NodeClaims, and to existing nodes
	// whose taints and labels they fit, less the daemon pods already bound there
	// (a bound pod counts as the DaemonSet's when it has its controller
	// ownerReference). No daemon pod is bound unless listed in Node.Pods.
	DaemonSets []*appsv1.DaemonSet `json:"daemonSets,omitempty"`

	StorageClasses         []*storagev1.StorageClass       `json:"storageClasses,omitempty"`
	PersistentVolumes      []*corev1.PersistentVolume      `json:"persistentVolumes,omitempty"`
	PersistentVolumeClaims []*corev1.PersistentVolumeClaim `json:"persistentVolumeClaims,omitempty"`
	// CSINodes give existing nodes attach limits per CSI driver
	// (spec.drivers[].allocatable.count), which Karpenter checks before
	// placing a pod with volumes on an existing node.
	CSINodes []*storagev1.CSINode `json:"csiNodes,omitempty"`

	// Pods are pending (unbound, marked Unschedulable by kube-scheduler). Their
	// order is creation order: a runner stamps creationTimestamp base+i seconds
	// when unset, which is Karpenter's queue tie-break after CPU and memory.
	Pods []*corev1.Pod `json:"pods"`
}

// Launch states of a managed Node (Node.State).
const (
	NodeNotInitialized = "notInitialized"
	NodeInFlight       = "inFlight"
)

// Node is an existing node and the pods already bound to it.
type Node struct {
	Node *corev1.Node `json:"node"`
	// Managed nodes carry karpenter.sh/nodepool (and the instance-type label);
	// runners give them a NodeClaim, registered and initialized, with the
	// node's capacity. Unmanaged nodes have no NodeClaim.
	Managed bool `json:"managed,omitempty"`
	// State of a managed node's launch: "" is registered and initialized;
	// NodeNotInitialized is registered but not initialized (the NodeClaim's
	// resources fill what the node reports as zero, its ephemeral taints are
	// ignored); NodeInFlight is a launched NodeClaim whose Node has not
	// registered (no Node object, no bound pods, labels without hostname).
	State string `json:"state,omitempty"`
	// Pods are bound to the node (spec.nodeName is set by the runner).
	Pods []*corev1.Pod `json:"pods,omitempty"`
}

// Result is what one scheduler decided for the batch.
type Result struct {
	// NodeClaims are the new NodeClaims in the scheduler's creation order.
	NodeClaims []NodeClaim `json:"nodeClaims,omitempty"`
	// Existing are pods placed on existing nodes, sorted by pod.
	Existing []Placement `json:"existing,omitempty"`
	// Errors are pods that did not schedule, sorted by pod.
	Errors []PodError `json:"errors,omitempty"`
}

// NodeClaim is one new NodeClaim.
type NodeClaim struct {
	NodePool string `json:"nodePool"`
	// Zones, CapacityTypes and Archs are the claim's final requirement values
	// for topology.kubernetes.io/zone, karpenter.sh/capacity-type and
	// kubernetes.io/arch, sorted; nil means the key is unconstrained.
	Zones         []string `json:"zones,omitempty"`
	CapacityTypes []string `json:"capacityTypes,omitempty"`
	Archs         []string `json:"archs,omitempty"`
	// InstanceTypes are the compatible types in the order the NodeClaim's
	// node.kubernetes.io/instance-type requirement lists them: cheapest
	// compatible offering first, truncated to 60 (MaxInstanceTypes).
	InstanceTypes []string `json:"instanceTypes"`
	// Prices parallels InstanceTypes: each type's cheapest available offering
	// compatible with the claim. Upstream orders equal prices with an unstable
	// sort, so a comparison should treat runs of equal price as sets (and the
	// run cut by truncation as a partial set).
	Prices []float64 `json:"prices"`
	// Launch is the offering the claim would launch (see Offering).
	Launch Offering `json:"launch"`
	// Pods are the pods assigned (namespace/name), sorted.
	Pods []string `json:"pods"`
}

// Offering is the launched offering under the harness's launch model: the
// capacity type the AWS provider would request (reserved, else spot when the
// claim allows it and some type offers it, else on-demand), then the cheapest
// available offering of that capacity type compatible with the claim, ties
// broken by InstanceTypes order, then zone.
type Offering struct {
	InstanceType string  `json:"instanceType"`
	Zone         string  `json:"zone"`
	CapacityType string  `json:"capacityType"`
	Price        float64 `json:"price"`
}

// Placement is a pod placed on an existing node.
type Placement struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

// PodError is a pod that did not schedule and the scheduler's error text.
type PodError struct {
	Pod   string `json:"pod"`
	Error string `json:"error"`
}

// PodKey is the namespace/name the result uses for a pod.
func PodKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// Marshal renders v (a Scenario or a Result) as YAML.
func Marshal(v any) ([]byte, error) { return yaml.Marshal(v) }

// Load parses a scenario file.
func Load(data []byte) (*Scenario, error) {
	var sc Scenario
	if err := yaml.UnmarshalStrict(data, &sc); err != nil {
		return nil, err
	}
	return &sc, nil
}

// BaseTime anchors the creation timestamps runners stamp on pending pods
// (base+i seconds): Karpenter's queue breaks CPU/memory ties by
// creationTimestamp, then UID, so both sides must stamp the same values.
var BaseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// UID derives a stable UID from an object's kind and name parts. Both
// runners use it: it is the queue's last tie-break and the scheduler's
// pod-data cache key.
func UID(parts ...string) types.UID {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	s := hex.EncodeToString(h.Sum(nil))
	return types.UID(s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32])
}
