// Package events publishes Karpenter's events the way its recorder does:
// as the "karpenter" component, and with deduplication that drops a repeat
// of the same reason for the same object within a timeout rather than
// counting it (docs/karpenter-provisioning.md#events).
package events

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// Component is the events' reporting component.
const Component = "karpenter"

// DefaultDedupe is the recorder's default deduplication timeout.
const DefaultDedupe = 2 * time.Minute

var source = cluster.EventSource{Component: Component}

// Event is one event to publish. DedupeValues (usually the object's uid)
// with the reason form the deduplication key; without them the event is
// always published.
type Event struct {
	Regarding     corev1.ObjectReference
	Type          string
	Reason        string
	Message       string
	DedupeValues  []string
	DedupeTimeout time.Duration
}

// Publish records the events that are not deduplicated away and reports
// whether it recorded any; the deduplication memory lives in the state, so
// it survives between commands.
func Publish(s *cluster.State, evts ...Event) bool {
	published := false
	for _, e := range evts {
		if len(e.DedupeValues) > 0 {
			key := e.Reason
			for _, v := range e.DedupeValues {
				key += "-" + v
			}
			if until, ok := s.Karpenter.Dedupe[key]; ok && s.Now.Before(until) {
				continue
			}
			timeout := e.DedupeTimeout
			if timeout == 0 {
				timeout = DefaultDedupe
			}
			if s.Karpenter.Dedupe == nil {
				s.Karpenter.Dedupe = map[string]time.Time{}
			}
			s.Karpenter.Dedupe[key] = s.Now.Add(timeout)
		}
		s.Record(source, e.Regarding, e.Type, e.Reason, e.Message)
		published = true
	}
	return published
}

// PruneDedupe forgets keys whose timeout has passed, so the state does not
// grow without bound.
func PruneDedupe(s *cluster.State) {
	for k, until := range s.Karpenter.Dedupe {
		if !s.Now.Before(until) {
			delete(s.Karpenter.Dedupe, k)
		}
	}
}
