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
	c.sweep(s.Events, s.Now)
	x := s.index()
	id := eventID{src.Component, reason, eventType, &regarding}
	hObject, idBytes := x.identity(id)
	// The event as the recorder makes it, in scratch space: most are
	// patches or new events built afresh, and the keys only read it.
	// Only these fields of the scratch events are ever set (out's message
	// and reporting controller below): assigned one by one, not as a whole
	// 600-byte literal.
	ev := &c.scratch[0]
	ev.InvolvedObject = regarding
	ev.Reason = reason
	ev.Message = message
	ev.Source.Component = src.Component
	ev.Type = eventType
	ev.ReportingController = src.Component
	lazy := lazyKey{event: ev}
	latest := x.latestHashed(id, hObject)
	kept := c.kept(regarding.UID)
	combined, rec := c.aggregate(lazy.get(kept && len(c.Aggregates) > 0), ev, latest, s.Now)

	// The logger: the event of the same key (the full one, or the
	// aggregate key for a combined event) takes one more occurrence. A
	// combined event is a new one, without the reporting controller.
	out, key := ev, message
	if combined {
		out = &c.scratch[1]
		out.InvolvedObject = regarding
		out.Reason = reason
		out.Message = combinedPrefix + message
		out.Source.Component = src.Component
		out.Type = eventType
		out.ReportingController = ""
		key = combinedKey
	}
	stored := x.withMessageOf(id, latest, key, idBytes)
	var count int32
	var first time.Time
	if stored != nil {
		count, first = stored.Count, stored.FirstTimestamp.Time
	}
	var unsentKey string
	jump := false
	if kept && len(c.Unsent) > 0 {
		unsentKey = lazy.logger(combined)
		if o := c.Unsent[unsentKey]; o != nil {
			count, first, jump = o.Count, o.First, true
		}
	}
	if count == 0 {
		first = s.Now
	}

	policy := spamPolicies[src.Correlator]
	bucket := c.bucket(s.Events, policy, src.Correlator, out)
	if !bucket.take(policy, s.Now) {
		// Dropped: the logger counted it all the same, and the
		// aggregator saw it, so neither is implied by the log any more.
		if unsentKey == "" {
			unsentKey = lazy.logger(combined)
		}
		if c.Unsent == nil {
			c.Unsent = map[string]*Observation{}
		}
		c.Unsent[unsentKey] = &Observation{Count: count + 1, First: first}
		c.keep(regarding.UID)
		c.keepAggregate(lazy.get(true), ev, latest, rec)
		if stored != nil {
			return stored
		}
		dropped := *out
		dropped.Count = count + 1
		dropped.FirstTimestamp, dropped.LastTimestamp = metav1.NewTime(first), metav1.NewTime(s.Now)
		return &dropped
	}
	if unsentKey != "" {
		delete(c.Unsent, unsentKey)
	}
	now := metav1.NewTime(s.Now)
	e := stored
	// logged: the log tells this occurrence, at its time (a count of two
	// tells both times; more tell them only when they are all the same).
	logged := count == 0
	if count > 0 && stored != nil {
		logged = !jump && (count == 1 || stored.FirstTimestamp.Time.Equal(s.Now))
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
		// The slab's events are zero: only the set fields are written
		// (a whole literal writes all 600 bytes).
		e.Name = eventName(regarding.Name, s.Now.UnixNano()+s.ResourceVersion+1)
		e.Namespace = eventNamespace(regarding)
		e.CreationTimestamp = now
		e.ResourceVersion = s.Bump()
		e.InvolvedObject = regarding
		e.Reason = reason
		e.Message = x.intern(out.Message, regarding.Name)
		e.Source = out.Source
		e.FirstTimestamp = metav1.NewTime(first)
		e.LastTimestamp = now
		e.Count = count + 1
		e.Type = eventType
		e.ReportingController = out.ReportingController
		s.Events = append(s.Events, e)
		x.addHashed(e, hObject, idBytes)
		x.events, x.first = len(s.Events), s.Events[0]
		latest = e
	}
	c.settle(bucket, policy, src.Correlator, out, logged, s.Now)
	if kept || !aggregateImplied(ev, latest, rec) {
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
