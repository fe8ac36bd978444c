package framework

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/version"
)

// MaxNodeScore and MinNodeScore bound every normalized plugin score.
const (
	MaxNodeScore int64 = 100
	MinNodeScore int64 = 0
)

// Plugin is the parent of every plugin interface.
type Plugin interface {
	Name() string
}

// PreFilterResult narrows the nodes Filter has to look at. nil NodeNames means all.
type PreFilterResult struct {
	NodeNames map[string]struct{}
}

// AllNodes reports whether the result leaves every node in play.
func (r *PreFilterResult) AllNodes() bool { return r == nil || r.NodeNames == nil }

// PreFilterPlugin runs once per cycle before Filter.
type PreFilterPlugin interface {
	Plugin
	PreFilter(state *CycleState, pod *PodInfo, nodes []*NodeInfo) (*PreFilterResult, *Status)
	// PreFilterExtensions may be nil; preemption uses it to add and remove
	// pods from the cycle state incrementally.
	PreFilterExtensions() PreFilterExtensions
}

// PreFilterExtensions updates a plugin's PreFilter state when pods are
// hypothetically added to or removed from a node (nominated pods, preemption).
type PreFilterExtensions interface {
	AddPod(state *CycleState, podToSchedule *PodInfo, podToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RemovePod(state *CycleState, podToSchedule *PodInfo, podToRemove *PodInfo, nodeInfo *NodeInfo) *Status
}

// FilterPlugin decides whether a pod fits one node.
type FilterPlugin interface {
	Plugin
	Filter(state *CycleState, pod *PodInfo, nodeInfo *NodeInfo) *Status
}

// PostFilterResult carries a preemption outcome.
type PostFilterResult struct {
	NominatedNodeName string
	// Victims are the pods preemption chose to evict from NominatedNodeName;
	// the scheduler deletes them (upstream's executor).
	Victims []*v1.Pod
}

// PostFilterPlugin runs when no node passed Filter. filtered maps node name
// to the status Filter (or PreFilter) gave it.
type PostFilterPlugin interface {
	Plugin
	PostFilter(state *CycleState, pod *PodInfo, filtered NodeToStatus) (*PostFilterResult, *Status)
}

// PreScorePlugin runs once before Score over the feasible nodes; Skip disables its Score.
type PreScorePlugin interface {
	Plugin
	PreScore(state *CycleState, pod *PodInfo, nodes []*NodeInfo) *Status
}

// ScorePlugin ranks feasible nodes.
type ScorePlugin interface {
	Plugin
	Score(state *CycleState, pod *PodInfo, nodeInfo *NodeInfo) (int64, *Status)
	// ScoreExtensions returns nil when the plugin does not normalize.
	ScoreExtensions() ScoreExtensions
}

// ScoreExtensions normalizes a plugin's raw scores to [0, MaxNodeScore].
type ScoreExtensions interface {
	NormalizeScore(state *CycleState, pod *PodInfo, scores NodeScoreList) *Status
}

// NodeScore is one node's score from one plugin (or a total).
type NodeScore struct {
	Name  string
	Score int64
}

// NodeScoreList is scores in the order of the nodes being scored.
type NodeScoreList []NodeScore

// NodeToStatus maps node names to their filter status; nodes not present get Absent.
// The explicit statuses are in Statuses, or, when ByPosition is set, there
// instead (nodestatus.go); readers go through Len, Lookup and Map.
type NodeToStatus struct {
	Statuses map[string]*Status
	// Absent is the status of nodes excluded by a PreFilterResult.
	Absent *Status
	// ByPosition holds the explicit statuses by snapshot position.
	ByPosition *StatusesByPosition
}

// Handle is what plugins may read beyond the pod and node in hand.
type Handle interface {
	// Nodes returns every node in the snapshot, in node-tree order.
	Nodes() []*NodeInfo
	// Node returns one node's info, or nil.
	Node(name string) *NodeInfo
	// HavePodsWithAffinity lists nodes hosting at least one pod with (anti-)affinity.
	HavePodsWithAffinity() []*NodeInfo
	// HavePodsWithRequiredAntiAffinity lists nodes hosting a pod with required anti-affinity.
	HavePodsWithRequiredAntiAffinity() []*NodeInfo
	// Namespace returns a namespace object, or nil.
	Namespace(name string) *v1.Namespace
	// Namespaces returns all namespaces.
	Namespaces() []*v1.Namespace
	// Services returns the services of one namespace.
	Services(namespace string) []*v1.Service
	// ReplicaSet / StatefulSet / ReplicationController by namespace and name, or nil.
	ReplicaSet(namespace, name string) *appsv1.ReplicaSet
	StatefulSet(namespace, name string) *appsv1.StatefulSet
	ReplicationController(namespace, name string) *v1.ReplicationController
	// Features are the version-selected behaviours.
	Features() version.Features
}

// ReservePlugin updates plugin state once a node is chosen; Unreserve undoes
// it when a later step of the cycle fails.
type ReservePlugin interface {
	Plugin
	Reserve(state *CycleState, pod *PodInfo, nodeName string) *Status
	Unreserve(state *CycleState, pod *PodInfo, nodeName string)
}

// PreBindPlugin runs after Reserve and before the pod is bound (upstream runs
// it in the asynchronous binding cycle; berth binds right after it).
type PreBindPlugin interface {
	Plugin
	PreBind(state *CycleState, pod *PodInfo, nodeName string) *Status
}
