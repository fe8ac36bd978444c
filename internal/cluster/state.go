// Package cluster holds the simulated cluster: typed Kubernetes objects, the
// virtual clock, the seeded random source and the event log. Controllers read
// and write it; views only read it. It is the single thing that is persisted.
package cluster

import (
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"

	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	karpv1alpha5 "github.com/berth-sim/berth/internal/karpenter/apis/v1alpha5"
)

// FormatVersion is bumped whenever the persisted layout changes incompatibly.
const FormatVersion = 2

// legacyFormatVersion is the version of the state.json files berth wrote
// before the state database; they are upgraded (docs/state.md#upgrade).
const legacyFormatVersion = 1

// DefaultKubernetesVersion is used when neither a ClusterConfig nor
// --kubernetes-version names one. It mirrors eksctl's default.
const DefaultKubernetesVersion = "1.34"

// Epoch is virtual time zero. Every timestamp berth writes is Epoch plus the
// virtual time that has passed, so output never depends on the wall clock.
var Epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// Info describes the cluster as a whole: what a ClusterConfig's metadata and
// top-level fields say.
type Info struct {
	Name              string   `json:"name,omitempty"`
	Region            string   `json:"region,omitempty"`
	KubernetesVersion string   `json:"kubernetesVersion"`
	Zones             []string `json:"zones,omitempty"`
	VPCCIDR           string   `json:"vpcCIDR,omitempty"`
}

// NodeGroup is a node group from an eksctl ClusterConfig, normalised: taint
// effects in Kubernetes spelling, scaling defaults applied.
type NodeGroup struct {
	Name           string            `json:"name"`
	Managed        bool              `json:"managed"`
	InstanceTypes  []string          `json:"instanceTypes"`
	DesiredSize    int               `json:"desiredSize"`
	MinSize        int               `json:"minSize"`
	MaxSize        int               `json:"maxSize"`
	Labels         map[string]string `json:"labels,omitempty"`
	Taints         []corev1.Taint    `json:"taints,omitempty"`
	Zones          []string          `json:"zones,omitempty"`
	Spot           bool              `json:"spot,omitempty"`
	AMIFamily      string            `json:"amiFamily,omitempty"`
	MaxPodsPerNode int               `json:"maxPodsPerNode,omitempty"`
	// Tags are the group's own AWS tags; PropagateASGTags and AutoScaler
	// (iam.withAddonPolicies.autoScaler) decide the Auto Scaling group tags
	// cluster-autoscaler reads (internal/autoscaler/nodegroups).
	Tags             map[string]string `json:"tags,omitempty"`
	PropagateASGTags bool              `json:"propagateASGTags,omitempty"`
	AutoScaler       bool              `json:"autoScaler,omitempty"`
	// Source names the file and document the group came from, for errors.
	Source string `json:"source,omitempty"`
	// CreatedAt is when the group was created (berth get nodegroups' AGE).
	CreatedAt time.Time `json:"createdAt,omitempty"`
}

// State is the whole simulated cluster. Object maps are keyed by Key (for
// namespaced kinds "namespace/name", for cluster-scoped kinds "name").
type State struct {
	FormatVersion int   `json:"formatVersion"`
	Info          Info  `json:"info"`
	Seed          int64 `json:"seed"`
	// Now is the virtual clock.
	Now  time.Time `json:"now"`
	Rand Rand      `json:"rand"`
	// ResourceVersion counts every write; objects carry it as metadata.resourceVersion.
	ResourceVersion int64 `json:"resourceVersion"`
	// SchedulingGeneration counts the cluster events announced to the
	// scheduling queue (NoteEvent); kept for states saved before the queue
	// recorded rejecting plugins (QueuedPod.Plugins).
	SchedulingGeneration int64 `json:"schedulingGeneration"`
	// CreateRevisions is each live object's create revision, by uid (order.go).
	CreateRevisions map[types.UID]int64 `json:"createRevisions,omitempty"`

	NodeGroups []NodeGroup `json:"nodeGroups,omitempty"`
	// FargateProfiles are the cluster's Fargate profiles by name.
	FargateProfiles map[string]*FargateProfile `json:"fargateProfiles,omitempty"`

	Namespaces      map[string]*corev1.Namespace           `json:"namespaces,omitempty"`
	Nodes           map[string]*corev1.Node                `json:"nodes,omitempty"`
	Pods            map[string]*corev1.Pod                 `json:"pods,omitempty"`
	Services        map[string]*corev1.Service             `json:"services,omitempty"`
	ServiceAccounts map[string]*corev1.ServiceAccount      `json:"serviceAccounts,omitempty"`
	ConfigMaps      map[string]*corev1.ConfigMap           `json:"configMaps,omitempty"`
	Secrets         map[string]*corev1.Secret              `json:"secrets,omitempty"`
	PriorityClasses map[string]*schedulingv1.PriorityClass `json:"priorityClasses,omitempty"`
	Deployments     map[string]*appsv1.Deployment          `json:"deployments,omitempty"`
	ReplicaSets     map[string]*appsv1.ReplicaSet          `json:"replicaSets,omitempty"`
	StatefulSets    map[string]*appsv1.StatefulSet         `json:"statefulSets,omitempty"`
	DaemonSets      map[string]*appsv1.DaemonSet           `json:"daemonSets,omitempty"`
	Jobs            map[string]*batchv1.Job                `json:"jobs,omitempty"`
	// PodDisruptionBudgets, storage objects and CSINodes (attach limits).
	PodDisruptionBudgets   map[string]*policyv1.PodDisruptionBudget `json:"podDisruptionBudgets,omitempty"`
	PersistentVolumes      map[string]*corev1.PersistentVolume      `json:"persistentVolumes,omitempty"`
	PersistentVolumeClaims map[string]*corev1.PersistentVolumeClaim `json:"persistentVolumeClaims,omitempty"`
	StorageClasses         map[string]*storagev1.StorageClass       `json:"storageClasses,omitempty"`
	CSINodes               map[string]*storagev1.CSINode            `json:"csiNodes,omitempty"`
	// Karpenter's objects (docs/karpenter-apis.md); NodeClaims are launched,
	// registered and terminated by internal/karpenter/lifecycle.
	NodePools        map[string]*karpv1.NodePool              `json:"nodePools,omitempty"`
	NodeClaims       map[string]*karpv1.NodeClaim             `json:"nodeClaims,omitempty"`
	EC2NodeClasses   map[string]*karpv1.EC2NodeClass          `json:"ec2NodeClasses,omitempty"`
	Provisioners     map[string]*karpv1alpha5.Provisioner     `json:"provisioners,omitempty"`
	AWSNodeTemplates map[string]*karpv1alpha5.AWSNodeTemplate `json:"awsNodeTemplates,omitempty"`
	// Leases are the kubelets' node leases in kube-node-lease (nodelease.go).
	Leases map[string]*coordinationv1.Lease `json:"leases,omitempty"`
	// Endpoints and EndpointSlices list each Service's serving addresses
	// (internal/controllers/endpointslice, docs/services.md).
	Endpoints      map[string]*corev1.Endpoints          `json:"endpoints,omitempty"`
	EndpointSlices map[string]*discoveryv1.EndpointSlice `json:"endpointSlices,omitempty"`
	Events         []*corev1.Event                       `json:"events,omitempty"`
	Timers         []Timer                               `json:"timers,omitempty"`
	Scheduler      SchedulerState                        `json:"scheduler"`
	// Karpenter is the memory of Karpenter's controllers (karpenter.go).
	Karpenter KarpenterState `json:"karpenter,omitempty"`
	// Fargate is the memory of the Fargate controller (fargate.go).
	Fargate FargateState `json:"fargate,omitempty"`
	// Autoscaler is the memory of cluster-autoscaler and the ASGs (autoscaler.go).
	Autoscaler AutoscalerState `json:"autoscaler,omitempty"`
	// NodeLedger records the nodes that are gone, for `berth cost` over
	// virtual time (ledger.go).
	NodeLedger []NodeLife `json:"nodeLedger,omitempty"`
	// Settled says the controllers had nothing left to do when the state
	// was saved, so that an idle `advance` may only move the clock
	// (settled.go, docs/state.md#idle-advance).
	Settled *Settled `json:"settled,omitempty"`
	// EventCorrelator is the legacy event recorders' memory that the event
	// log does not tell (correlator.go, docs/events.md#memory).
	EventCorrelator CorrelatorState `json:"eventCorrelator,omitempty"`

	// eventIndex speeds up Record's search for the event to fold into; it is
	// derived from Events and rebuilt whenever Events changed behind its back.
	eventIndex eventIndex
	// stored is what the state database held when this state was loaded
	// or last saved (persist_db.go); legacy says it came from a state.json.
	stored *storeMemo
	legacy bool
	// partial says only part of the stored state was loaded (LoadSome).
	partial bool
	// schedEvents are the cluster events the schedulers have yet to read
	// (schedevents.go); never saved.
	schedEvents eventLog
	// head says only the head was loaded (LoadHead); settledAt is the
	// last settled pass of this process (MarkSettled).
	head      bool
	settledAt *settledPass
	// objectSetGen counts creations and replacements of objects in this
	// process (objectset.go); never saved.
	objectSetGen int64
	// bindsAndDeletes counts bindings and deletion marks (objectset.go).
	bindsAndDeletes int64
}

// Partial reports whether the state was loaded in part for a read-only
// command (LoadSome): it may miss objects of any kind and events, so
// nothing may change or save it (docs/state.md#speed).
func (s *State) Partial() bool { return s.partial }

// SchedulerState is what kube-scheduler keeps between cycles and that changes
// observable results: where the next node search starts, and per-pod queue data.
type SchedulerState struct {
	NextStartNodeIndex int `json:"nextStartNodeIndex"`
	// Queue holds scheduling-queue bookkeeping for pending pods, keyed by pod Key.
	Queue map[string]*QueuedPod `json:"queue,omitempty"`
	// NodeOrder is the cache's insertion order of nodes (the node tree is
	// built from it); names of deleted nodes are removed.
	NodeOrder []string `json:"nodeOrder,omitempty"`
	// QueueSeq counts additions to the active queue; QueuedPod.Seq orders
	// pods whose priority and timestamp are equal by arrival.
	QueueSeq int64 `json:"queueSeq,omitempty"`
}

// QueuedPod is the scheduling queue's memory of one pending pod.
type QueuedPod struct {
	// Timestamp is when the pod was (re)added to the active queue.
	Timestamp time.Time `json:"timestamp"`
	// Attempts counts failed scheduling attempts (drives backoff).
	Attempts int `json:"attempts"`
	// Unschedulable is true while the pod waits in the unschedulable pool
	// for a cluster event that one of its rejecting plugins says may help;
	// false once an event (or the 5-minute flush) moved it, when it waits
	// for its backoff only.
	Unschedulable bool `json:"unschedulable"`
	// BackoffUntil is when the pod may be tried again.
	BackoffUntil time.Time `json:"backoffUntil"`
	// ParkedAt is when the pod entered the unschedulable pool.
	ParkedAt time.Time `json:"parkedAt"`
	// Generation is the state's SchedulingGeneration at the last attempt.
	// States saved before Plugins existed parked a pod until the generation
	// moved past it; such an entry is read as moved (docs/scheduler.md#the-queue).
	Generation int64 `json:"generation"`
	// Plugins are the plugins that rejected the last attempt (upstream's
	// UnschedulablePlugins) and PendingPlugins those that answered Pending;
	// only their registered events, when their hints say so, move the pod.
	Plugins        []string `json:"plugins,omitempty"`
	PendingPlugins []string `json:"pendingPlugins,omitempty"`
	// Recorded marks an entry whose last failure recorded its plugins, so
	// that empty Plugins mean "none" rather than "saved before plugins were
	// recorded".
	Recorded bool `json:"recorded,omitempty"`
	// Seq is the pod's arrival number in the queue (SchedulerState.QueueSeq
	// when it was added or re-added): the tie-break after the timestamp.
	Seq int64 `json:"seq,omitempty"`
}

// Timer is a future moment at which some controller has work.
type Timer struct {
	At     time.Time `json:"at"`
	Owner  string    `json:"owner"`
	Object string    `json:"object,omitempty"`
	// Settling timers keep `apply` running forward; periodic ones (such as the
	// scheduler's five-minute flush) only fire under `advance`.
	Settling bool `json:"settling"`
}

// New returns an empty cluster at virtual time zero.
func New(kubernetesVersion string, seed int64) *State {
	if kubernetesVersion == "" {
		kubernetesVersion = DefaultKubernetesVersion
	}
	s := &State{
		FormatVersion: FormatVersion,
		Info:          Info{KubernetesVersion: kubernetesVersion},
		Seed:          seed,
		Now:           Epoch,
		Rand:          NewRand(seed),
	}
	s.init()
	return s
}

// FromObjects returns a cluster holding nodes (in the scheduler's node
// order as given) and pods, for callers that plan over plain object lists
// (the autoscaler's planners and their conformance harnesses).
func FromObjects(kubernetesVersion string, seed int64, nodes []*corev1.Node, pods ...[]*corev1.Pod) *State {
	s := New(kubernetesVersion, seed)
	for _, n := range nodes {
		s.Nodes[n.Name] = n
		s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, n.Name)
	}
	for _, list := range pods {
		for _, p := range list {
			s.Pods[Key(p.Namespace, p.Name)] = p
		}
	}
	return s
}

func (s *State) init() {
	if s.Namespaces == nil {
		s.Namespaces = map[string]*corev1.Namespace{}
	}
	if s.Nodes == nil {
		s.Nodes = map[string]*corev1.Node{}
	}
	if s.Pods == nil {
		s.Pods = map[string]*corev1.Pod{}
	}
	if s.Services == nil {
		s.Services = map[string]*corev1.Service{}
	}
	if s.ServiceAccounts == nil {
		s.ServiceAccounts = map[string]*corev1.ServiceAccount{}
	}
	if s.ConfigMaps == nil {
		s.ConfigMaps = map[string]*corev1.ConfigMap{}
	}
	if s.Secrets == nil {
		s.Secrets = map[string]*corev1.Secret{}
	}
	if s.PriorityClasses == nil {
		s.PriorityClasses = map[string]*schedulingv1.PriorityClass{}
	}
	if s.Deployments == nil {
		s.Deployments = map[string]*appsv1.Deployment{}
	}
	if s.ReplicaSets == nil {
		s.ReplicaSets = map[string]*appsv1.ReplicaSet{}
	}
	for _, k := range Kinds {
		k.ensure(s)
	}
	if s.Scheduler.Queue == nil {
		s.Scheduler.Queue = map[string]*QueuedPod{}
	}
}

// Key is the map key of an object: "namespace/name", or "name" when cluster-scoped.
func Key(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// Bump records a write and returns the new resource version as a string for
// metadata.resourceVersion.
func (s *State) Bump() string {
	s.ResourceVersion++
	return strconv.FormatInt(s.ResourceVersion, 10)
}

// Since is the virtual time elapsed since t.
func (s *State) Since(t time.Time) time.Duration { return s.Now.Sub(t) }

// AddTimer schedules future work for owner. Duplicate timers are harmless.
func (s *State) AddTimer(t Timer) { s.Timers = append(s.Timers, t) }

// NextTimer returns the earliest timer after Now, considering only settling
// timers when settlingOnly is set.
func (s *State) NextTimer(settlingOnly bool) (time.Time, bool) {
	var best time.Time
	found := false
	for _, t := range s.Timers {
		if settlingOnly && !t.Settling {
			continue
		}
		if !found || t.At.Before(best) {
			best, found = t.At, true
		}
	}
	return best, found
}

// DropTimersUpTo removes every timer due at or before t.
func (s *State) DropTimersUpTo(t time.Time) {
	kept := s.Timers[:0]
	for _, tm := range s.Timers {
		if tm.At.After(t) {
			kept = append(kept, tm)
		}
	}
	s.Timers = kept
}

// SortedKeys returns the keys of any object map in sorted order; iteration
// over state maps must go through it so that output never depends on map order.
func SortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// PodsOnNode returns the non-terminal pods bound to node, sorted by key.
func (s *State) PodsOnNode(node string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, k := range SortedKeys(s.Pods) {
		p := s.Pods[k]
		if p.Spec.NodeName == node && !IsTerminal(p) {
			out = append(out, p)
		}
	}
	return out
}

// IsTerminal reports whether a pod has finished (Succeeded or Failed).
func IsTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// NewUID returns a deterministic RFC 4122-shaped UID from the seeded source.
func (s *State) NewUID() string { return s.Rand.UID() }
