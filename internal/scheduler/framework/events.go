package framework

import (
	"github.com/berth-sim/berth/internal/cluster"
)

// QueueingHint is a plugin's answer to "may this event make the pod it
// rejected schedulable?" (docs/scheduler.md#the-queue).
type QueueingHint int

// The answers.
const (
	// QueueSkip: the event cannot help; the pod stays parked.
	QueueSkip QueueingHint = iota
	// Queue: the event may help; the pod goes back to the queue (after
	// its backoff).
	Queue
)

// QueueingHintFn answers for pod, which the plugin rejected, given the
// event's objects (old nil for an addition, new nil for a deletion).
type QueueingHintFn func(pod *PodInfo, oldObj, newObj any) QueueingHint

// ClusterEventWithHint is one registration: the event and its hint; a nil
// hint always answers Queue.
type ClusterEventWithHint struct {
	Event cluster.ClusterEvent
	Hint  QueueingHintFn
}

// EnqueueExtensions is implemented by plugins that say which cluster events
// may undo their rejections. A plugin without it is registered for every
// event, as upstream registers it; one that returns no event is moved only
// by the 5-minute flush.
type EnqueueExtensions interface {
	Plugin
	// EventsToRegister lists the plugin's events; queueingHints tells
	// whether the version uses hints (SchedulerQueueingHints, 1.32 on),
	// which changes some registrations as upstream does.
	EventsToRegister(queueingHints bool) []ClusterEventWithHint
}
