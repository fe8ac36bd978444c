package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The types below mirror karpenter-conformance/scenario field for field (same
// JSON). They are copied, not imported: scenario holds upstream Karpenter's
// NodePool type, whose package needs controller-runtime, which does not
// build on berth's k8s.io versions. NodePools stay raw JSON and are decoded
// into berth's own API type.

// Scenario mirrors scenario.Scenario.
type Scenario struct {
	Name                   string                          `json:"name"`
	Region                 string                          `json:"region"`
	Zones                  []string                        `json:"zones"`
	InstanceTypes          []string                        `json:"instanceTypes,omitempty"`
	NodePools              []json.RawMessage               `json:"nodePools"`
	Nodes                  []*Node                         `json:"nodes,omitempty"`
	DaemonSets             []*appsv1.DaemonSet             `json:"daemonSets,omitempty"`
	StorageClasses         []*storagev1.StorageClass       `json:"storageClasses,omitempty"`
	PersistentVolumes      []*corev1.PersistentVolume      `json:"persistentVolumes,omitempty"`
	PersistentVolumeClaims []*corev1.PersistentVolumeClaim `json:"persistentVolumeClaims,omitempty"`
	CSINodes               []*storagev1.CSINode            `json:"csiNodes,omitempty"`
	Pods                   []*corev1.Pod                   `json:"pods"`
}

// Node mirrors scenario.Node.
type Node struct {
	Node    *corev1.Node  `json:"node"`
	Managed bool          `json:"managed,omitempty"`
	State   string        `json:"state,omitempty"`
	Pods    []*corev1.Pod `json:"pods,omitempty"`
}

// Result mirrors scenario.Result.
type Result struct {
	NodeClaims []NodeClaim `json:"nodeClaims,omitempty"`
	Existing   []Placement `json:"existing,omitempty"`
	Errors     []PodError  `json:"errors,omitempty"`
}

// NodeClaim mirrors scenario.NodeClaim.
type NodeClaim struct {
	NodePool      string    `json:"nodePool"`
	Zones         []string  `json:"zones,omitempty"`
	CapacityTypes []string  `json:"capacityTypes,omitempty"`
	Archs         []string  `json:"archs,omitempty"`
	InstanceTypes []string  `json:"instanceTypes"`
	Prices        []float64 `json:"prices"`
	Launch        Offering  `json:"launch"`
	Pods          []string  `json:"pods"`
}

// Offering mirrors scenario.Offering.
type Offering struct {
	InstanceType string  `json:"instanceType"`
	Zone         string  `json:"zone"`
	CapacityType string  `json:"capacityType"`
	Price        float64 `json:"price"`
}

// Placement mirrors scenario.Placement.
type Placement struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

// PodError mirrors scenario.PodError.
type PodError struct {
	Pod   string `json:"pod"`
	Error string `json:"error"`
}

// Request is one line on stdin; Response one line on stdout.
type Request struct {
	Scenario *Scenario `json:"scenario"`
	// Decide runs provisioner.Decide itself instead of the split
	// Prepare/Solve/truncate (the two must agree).
	Decide bool `json:"decide,omitempty"`
}

type Response struct {
	Result     *Result `json:"result,omitempty"`
	SolveNanos int64   `json:"solveNanos"`
	Error      string  `json:"error,omitempty"`
}

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// baseTime is scenario.BaseTime.
var baseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// uid is scenario.UID.
func uid(parts ...string) types.UID {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	s := hex.EncodeToString(h.Sum(nil))
	return types.UID(s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32])
}
