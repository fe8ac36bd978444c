package cluster

import (
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// Cluster events for the scheduling queue (docs/scheduler.md#the-queue).
// Every write that kube-scheduler's informers would turn into an event the
// queue hears of is announced here with the objects before and after; the
// scheduler reads the log at its next Sync and moves the parked pods whose
// rejecting plugins registered the event and whose hints say Queue.

// ActionType is one kind of change, as bits so that registrations can name
// several at once (upstream's fwk.ActionType, same bits and names).
type ActionType int64

// The actions.
const (
	ActionAdd ActionType = 1 << iota
	ActionDelete
	ActionUpdateNodeAllocatable
	ActionUpdateNodeLabel
	ActionUpdateNodeTaint
	ActionUpdateNodeCondition
	ActionUpdateNodeAnnotation
	ActionUpdateNodeDeclaredFeature
	ActionUpdatePodLabel
	ActionUpdatePodScaleDown
	ActionUpdatePodToleration
	ActionUpdatePodSchedulingGatesEliminated
	ActionUpdatePodGeneratedResourceClaim

	ActionAll ActionType = 1<<iota - 1
	// ActionUpdate is every kind of update.
	ActionUpdate = ActionAll &^ (ActionAdd | ActionDelete)
)

// EventResource names the kind of object an event is about.
type EventResource string

// The resources berth announces. Plugins register ResourcePod; incoming pod
// events are about an assigned pod or an unscheduled one, which ResourcePod
// matches both.
const (
	ResourceNode             EventResource = "Node"
	ResourcePod              EventResource = "Pod"
	ResourceAssignedPod      EventResource = "AssignedPod"
	ResourceUnscheduledPod   EventResource = "UnschedulablePod"
	ResourcePVC              EventResource = "PersistentVolumeClaim"
	ResourcePV               EventResource = "PersistentVolume"
	ResourceStorageClass     EventResource = "storage.k8s.io/StorageClass"
	ResourceCSINode          EventResource = "storage.k8s.io/CSINode"
	ResourceVolumeAttachment EventResource = "storage.k8s.io/VolumeAttachment"
	ResourceWildCard         EventResource = "*"
)

// ClusterEvent is a resource and what happened to it.
type ClusterEvent struct {
	Resource EventResource
	Action   ActionType
}

// Matches reports whether the registered event reg covers the incoming
// event in: same resource (Pod covers both pod kinds, * covers all), a
// shared action bit, and no action bit outside reg's (upstream's
// MatchClusterEvents).
func (reg ClusterEvent) Matches(in ClusterEvent) bool {
	if reg.Resource == ResourceWildCard && reg.Action == ActionAll {
		return true
	}
	resource := reg.Resource == ResourceWildCard || reg.Resource == in.Resource ||
		reg.Resource == ResourcePod && (in.Resource == ResourceAssignedPod || in.Resource == ResourceUnscheduledPod)
	return resource && reg.Action&in.Action != 0 && in.Action <= reg.Action
}

// SchedulingEvent is one announced change: Old is nil for an addition, New
// nil for a deletion. Pod, when set, limits the event to that pending pod
// (an update of the pod itself).
type SchedulingEvent struct {
	Event    ClusterEvent
	Old, New any
	Pod      string
}

// eventLog is the in-memory list of announced events. It is not saved: a
// command that writes runs the controllers until nothing changes before it
// saves, so every scheduler has read the log by then (docs/scheduler.md#the-queue).
type eventLog struct {
	events []SchedulingEvent
	// base is the sequence number of events[0].
	base int64
	// cursors is each reader's next sequence number.
	cursors map[string]int64
}

// NoteEvent announces a change to the scheduling queue. It also bumps
// SchedulingGeneration, once per event, which older berth versions read
// and which the saved state keeps: the generation at load time is the
// current one less EventSeq.
func (s *State) NoteEvent(ev ClusterEvent, old, new any) {
	s.SchedulingGeneration++
	s.schedEvents.events = append(s.schedEvents.events, SchedulingEvent{Event: ev, Old: old, New: new})
}

// NotePodSelfUpdate announces an update of an unscheduled pod to its own
// queue entry (a pending pod's spec edited by `apply`).
func (s *State) NotePodSelfUpdate(old, new *corev1.Pod) {
	key := Key(new.Namespace, new.Name)
	for _, ev := range PodUpdateEvents(old, new) {
		s.SchedulingGeneration++
		s.schedEvents.events = append(s.schedEvents.events, SchedulingEvent{Event: ev, Old: old, New: new, Pod: key})
	}
}

// EventSeq is the sequence number the next announced event will get.
func (s *State) EventSeq() int64 { return s.schedEvents.base + int64(len(s.schedEvents.events)) }

// ReadEvents returns the events reader has not read yet, with the sequence
// number of the first, and marks them read. A reader's first call returns
// every event still kept.
func (s *State) ReadEvents(reader string) ([]SchedulingEvent, int64) {
	l := &s.schedEvents
	if l.cursors == nil {
		l.cursors = map[string]int64{}
	}
	from, ok := l.cursors[reader]
	if !ok || from < l.base {
		from = l.base
	}
	l.cursors[reader] = l.base + int64(len(l.events))
	return l.events[from-l.base:], from
}

// TrimEvents drops the events every reader has read; the simulation loop
// calls it between instants, after every controller has run.
func (s *State) TrimEvents() {
	l := &s.schedEvents
	if len(l.events) == 0 {
		return
	}
	upTo := l.base + int64(len(l.events))
	for _, c := range l.cursors {
		upTo = min(upTo, c)
	}
	if l.cursors == nil {
		upTo = l.base
	}
	n := int(upTo - l.base)
	if n == 0 {
		return
	}
	l.events = slices.Delete(l.events, 0, n)
	if len(l.events) == 0 {
		l.events = nil
	}
	l.base = upTo
}

// DetachEvents gives a shallow copy of a state its own empty log, so that
// what a fork announces never reaches the original's readers.
func (s *State) DetachEvents() { s.schedEvents = eventLog{} }

// Helpers for the writes berth makes, each the event upstream's informers
// produce for the same API write.

// NodeAdded announces a new node.
func (s *State) NodeAdded(n *corev1.Node) {
	s.NoteEvent(ClusterEvent{ResourceNode, ActionAdd}, nil, n)
}

// NodeDeleted announces a node's removal.
func (s *State) NodeDeleted(n *corev1.Node) {
	s.NoteEvent(ClusterEvent{ResourceNode, ActionDelete}, n, nil)
}

// NodeUpdated announces a node update, old being a copy from before the
// write: one event per kind of change that matters to scheduling, none for
// other changes (upstream's NodeSchedulingPropertiesChange).
func (s *State) NodeUpdated(old, new *corev1.Node) {
	for _, a := range NodeUpdateActions(old, new) {
		s.NoteEvent(ClusterEvent{ResourceNode, a}, old, new)
	}
}

// NodeUpdateActions lists the node update kinds between old and new, in
// upstream's order.
func NodeUpdateActions(old, new *corev1.Node) []ActionType {
	var out []ActionType
	if new.Spec.Unschedulable != old.Spec.Unschedulable && !new.Spec.Unschedulable {
		out = append(out, ActionUpdateNodeTaint)
	}
	if !equality.Semantic.DeepEqual(old.Status.Allocatable, new.Status.Allocatable) {
		out = append(out, ActionUpdateNodeAllocatable)
	}
	if !maps.Equal(old.Labels, new.Labels) {
		out = append(out, ActionUpdateNodeLabel)
	}
	if !equality.Semantic.DeepEqual(old.Spec.Taints, new.Spec.Taints) {
		out = append(out, ActionUpdateNodeTaint)
	}
	if !maps.Equal(conditionStatuses(old), conditionStatuses(new)) {
		out = append(out, ActionUpdateNodeCondition)
	}
	if !maps.Equal(old.Annotations, new.Annotations) {
		out = append(out, ActionUpdateNodeAnnotation)
	}
	return out
}

func conditionStatuses(n *corev1.Node) map[corev1.NodeConditionType]corev1.ConditionStatus {
	out := make(map[corev1.NodeConditionType]corev1.ConditionStatus, len(n.Status.Conditions))
	for _, c := range n.Status.Conditions {
		out[c.Type] = c.Status
	}
	return out
}

// AssignedPodAdded announces a pod bound to a node (or created bound).
func (s *State) AssignedPodAdded(p *corev1.Pod) {
	s.NoteEvent(ClusterEvent{ResourceAssignedPod, ActionAdd}, nil, p)
}

// PodDeleted announces a pod's removal: an assigned pod's frees its node;
// an unscheduled pod's is no event for other pods.
func (s *State) PodDeleted(p *corev1.Pod) {
	if p.Spec.NodeName == "" {
		return
	}
	s.NoteEvent(ClusterEvent{ResourceAssignedPod, ActionDelete}, p, nil)
}

// AssignedPodUpdated announces an update of a bound pod, old being a copy
// from before the write (upstream's PodSchedulingPropertiesChange).
func (s *State) AssignedPodUpdated(old, new *corev1.Pod) {
	for _, ev := range PodUpdateEvents(old, new) {
		s.NoteEvent(ev, old, new)
	}
}

// PodUpdateEvents lists the pod update kinds between old and new; a
// change of none of them is a plain Update.
func PodUpdateEvents(old, new *corev1.Pod) []ClusterEvent {
	r := ResourceAssignedPod
	if new.Spec.NodeName == "" {
		r = ResourceUnscheduledPod
	}
	var out []ClusterEvent
	if !maps.Equal(old.Labels, new.Labels) {
		out = append(out, ClusterEvent{r, ActionUpdatePodLabel})
	}
	if scaledDown(old, new) {
		out = append(out, ClusterEvent{r, ActionUpdatePodScaleDown})
	}
	if len(new.Spec.SchedulingGates) == 0 && len(old.Spec.SchedulingGates) != 0 {
		out = append(out, ClusterEvent{r, ActionUpdatePodSchedulingGatesEliminated})
	}
	if len(new.Spec.Tolerations) != len(old.Spec.Tolerations) {
		out = append(out, ClusterEvent{r, ActionUpdatePodToleration})
	}
	if len(out) == 0 {
		out = append(out, ClusterEvent{r, ActionUpdate})
	}
	return out
}

// scaledDown reports whether some container request went down or away
// (berth does not resize pods in place; a spec edit may).
func scaledDown(old, new *corev1.Pod) bool {
	if reflect.DeepEqual(old.Spec.Containers, new.Spec.Containers) {
		return false
	}
	sum := func(p *corev1.Pod) corev1.ResourceList {
		out := corev1.ResourceList{}
		for _, c := range p.Spec.Containers {
			for n, q := range c.Resources.Requests {
				v := out[n]
				v.Add(q)
				out[n] = v
			}
		}
		return out
	}
	before, after := sum(old), sum(new)
	for n, q := range before {
		a, ok := after[n]
		if !ok || a.MilliValue() < q.MilliValue() {
			return true
		}
	}
	return false
}

// ObjectAdded, ObjectUpdated and ObjectDeleted announce storage objects
// (PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes);
// other kinds are no scheduling event and are ignored.
func (s *State) ObjectAdded(obj any) { s.noteObject(obj, ActionAdd, nil, obj) }

// ObjectUpdated: see ObjectAdded; old is a copy from before the write.
func (s *State) ObjectUpdated(old, new any) { s.noteObject(new, ActionUpdate, old, new) }

// ObjectDeleted: see ObjectAdded.
func (s *State) ObjectDeleted(obj any) { s.noteObject(obj, ActionDelete, obj, nil) }

func (s *State) noteObject(obj any, a ActionType, old, new any) {
	var r EventResource
	switch obj.(type) {
	case *corev1.PersistentVolumeClaim:
		r = ResourcePVC
	case *corev1.PersistentVolume:
		r = ResourcePV
	case *storagev1.StorageClass:
		r = ResourceStorageClass
	case *storagev1.CSINode:
		r = ResourceCSINode
	}
	if r == "" {
		return
	}
	s.NoteEvent(ClusterEvent{r, a}, old, new)
}
