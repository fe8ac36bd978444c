// Package scenario is the input and output shared by the two schedulers the
// conformance harness compares: a cluster to schedule into, the pods to
// schedule in order, and what each scheduler decided about each pod.
package scenario

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// Scenario is one cluster and a sequence of pods to schedule.
type Scenario struct {
	// Name identifies the scenario (a seed, or a regression's file name).
	Name string
	// KubernetesVersion picks berth's behaviour switches ("1.36").
	KubernetesVersion string
	// PercentageOfNodesToScore: 0 means adaptive (upstream's default), 100 all nodes.
	PercentageOfNodesToScore int32

	Namespaces      []*v1.Namespace
	Nodes           []*v1.Node
	Services        []*v1.Service
	ReplicaSets     []*appsv1.ReplicaSet
	StatefulSets    []*appsv1.StatefulSet
	PriorityClasses []*schedulingv1.PriorityClass
	// Storage objects, created before any pod. Claims a pending pod needs
	// bound are bound in the scenario already (the harness runs no PV
	// controller).
	StorageClasses         []*storagev1.StorageClass
	PersistentVolumes      []*v1.PersistentVolume
	PersistentVolumeClaims []*v1.PersistentVolumeClaim
	CSINodes               []*storagev1.CSINode
	// Existing pods are already bound (spec.nodeName set) before scheduling starts.
	Existing []*v1.Pod
	// Pending pods are created one at a time, in this order, and each is
	// scheduled (or fails) before the next one is created.
	Pending []*v1.Pod
}

// NodeVerdict is one node's outcome for one pod.
type NodeVerdict struct {
	// Plugin is the first Filter (or PreFilter) plugin that rejected the node; "" if feasible.
	Plugin string
	// Reasons are that plugin's reason strings.
	Reasons []string
	// Code is the framework status code name ("Unschedulable", "UnschedulableAndUnresolvable"), "" if feasible.
	Code string
	// Total is the weighted total score (feasible nodes only, when scoring ran).
	Total int64
	// Scores are each score plugin's normalized score times its weight, by plugin name.
	Scores map[string]int64
}

// PodResult is what one scheduler decided for one pod.
type PodResult struct {
	Pod string // namespace/name
	// Node is where the pod was bound; "" if unschedulable.
	Node string
	// Message is the FailedScheduling message (condition message) when unschedulable.
	Message string
	// TopNodes are the nodes sharing the maximal total score (sorted); nil if scoring did not run.
	TopNodes []string
	// Examined is how many nodes Filter examined in the attempt.
	Examined int
	// Nodes holds per-node verdicts when the runner can report them (keyed by node name).
	Nodes map[string]NodeVerdict
	// NominatedNode is the node preemption nominated for an unschedulable
	// pod ("" when it did not preempt); Victims are the pods it deleted
	// (namespace/name, sorted).
	NominatedNode string
	Victims       []string
}

// Scheduler is one side of the comparison. Schedule creates the next pending
// pod, runs one scheduling attempt and binds it. When align is non-empty and
// is one of the scheduler's top-scoring nodes, the pod must be bound to align
// instead of the scheduler's own pick, so later pods see the same cluster on
// both sides (upstream breaks ties at random).
type Scheduler interface {
	Load(s *Scenario) error
	Schedule(pod *v1.Pod, align string) (PodResult, error)
	Close()
}
