package cluster

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// combinedKey stands for the message of a combined event in the event
// index: the aggregator's logger key has no message, and the combined
// event's message changes with every occurrence folded into it.
var combinedKey = "\x00combined"

// messageKey is the message an event is indexed under.
func messageKey(e *corev1.Event) string {
	if isCombined(e) {
		return combinedKey
	}
	return e.Message
}

// correlate records an event of a legacy recorder as client-go's
// EventCorrelator would let it reach the API server: aggregated, counted
// and spam-filtered, in that order (docs/events.md).
func (s *State) correlate(src EventSource, regarding corev1.ObjectReference, eventType, reason, message string) *corev1.Event {
	c := &s.EventCorrelator
	c.sweep(s.Now)
	x := s.index()
	id := eventID{src.Component, reason, eventType, &regarding}
	hObject := x.hash(id, nil)
	ev := &corev1.Event{
		InvolvedObject:      regarding,
		Reason:              reason,
		Message:             message,
		Source:              corev1.EventSource{Component: src.Component},
		Type:                eventType,
		ReportingController: src.Component,
	}
	lazy := lazyKey{event: ev}
	latest := x.latestHashed(id, hObject)
	combined, rec := c.aggregate(lazy.get(len(c.Aggregates) > 0), ev, latest, s.Now)

	// The logger: the event of the same key (the full one, or the
	// aggregate key for a combined event) takes one more occurrence. A
	// combined event is a new one, without the reporting controller.
	out, key := ev, message
	if combined {
		cp := *ev
		cp.Message = combinedPrefix + message
		cp.ReportingController = ""
		out, key = &cp, combinedKey
	}
	hMessage := x.hash(id, &key)
	stored := x.withMessageHashed(id, key, hMessage)
	var count int32
	var first time.Time
	if stored != nil {
		count, first = stored.Count, stored.FirstTimestamp.Time
	}
	var unsentKey string
	if len(c.Unsent) > 0 {
		unsentKey = lazy.logger(combined)
		if o := c.Unsent[unsentKey]; o != nil {
			count, first = o.Count, o.First
		}
	}
	if count == 0 {
		first = s.Now
	}

	policy := spamPolicies[src.Correlator]
	if !c.allow(policy, policy.key(out), s.Now) {
		// Dropped: the logger counted it all the same, and the
		// aggregator saw it, so neither is implied by the log any more.
		if unsentKey == "" {
			unsentKey = lazy.logger(combined)
		}
		if c.Unsent == nil {
			c.Unsent = map[string]*Observation{}
		}
		c.Unsent[unsentKey] = &Observation{Count: count + 1, First: first}
		c.keepAggregate(lazy.get(true), ev, latest, rec)
		out.Count = count + 1
		out.FirstTimestamp, out.LastTimestamp = metav1.NewTime(first), metav1.NewTime(s.Now)
		return out
	}
	if unsentKey != "" {
		delete(c.Unsent, unsentKey)
	}
	now := metav1.NewTime(s.Now)
	e := stored
	if count > 0 && stored != nil {
		// A patch: count, last timestamp and message.
		e.Count = count + 1
		e.LastTimestamp = now
		if combined {
			e.Message = out.Message
		}
	} else {
		// A new event, or one the logger counted but the server never
		// saw (client-go's patch fails and it creates the event whole).
		e = x.newEvent()
		*e = corev1.Event{
			ObjectMeta: metav1.ObjectMeta{
				Name:              eventName(regarding.Name, s.Now.UnixNano()+s.ResourceVersion+1),
				Namespace:         eventNamespace(regarding),
				CreationTimestamp: now,
				ResourceVersion:   s.Bump(),
			},
			InvolvedObject:      regarding,
			Reason:              reason,
			Message:             x.intern(out.Message, regarding.Name),
			Source:              out.Source,
			FirstTimestamp:      metav1.NewTime(first),
			LastTimestamp:       now,
			Count:               count + 1,
			Type:                eventType,
			ReportingController: out.ReportingController,
		}
		s.Events = append(s.Events, e)
		x.addHashed(e, hObject, hMessage)
		x.events, x.first = len(s.Events), s.Events[0]
		latest = e
	}
	if len(c.Aggregates) > 0 || !aggregateImplied(ev, latest, rec) {
		c.keepAggregate(lazy.get(true), ev, latest, rec)
	}
	return e
}

// lazyKey builds an event's aggregate key once, when it is needed: most
// records are implied by the log and never stored.
type lazyKey struct {
	event *corev1.Event
	key   string
}

func (k *lazyKey) get(need bool) string {
	if need && k.key == "" {
		k.key = aggregateKey(k.event)
	}
	return k.key
}

// logger is the logger's key of the event: the aggregate key for a
// combined event, client-go's full key otherwise.
func (k *lazyKey) logger(combined bool) string {
	if combined {
		return k.get(true)
	}
	return fullKey(k.event)
}
