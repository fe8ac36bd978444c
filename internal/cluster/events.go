package cluster

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// seriesWindow is client-go's events series window: a repeat within it joins
// the series instead of making a new event.
const seriesWindow = 6 * 60 // seconds

// EventSource says who reports an event and how repeats are folded.
type EventSource struct {
	Component string
	// Series folds repeats as client-go's events.k8s.io recorder does (the
	// first note is kept, whatever the later ones say); otherwise events go
	// through client-go's legacy EventCorrelator (correlator.go).
	Series bool
	// Plain marks berth's own notes, which no upstream recorder writes:
	// repeats of an identical message fold, nothing is aggregated or
	// dropped.
	Plain bool
	// Correlator picks the legacy recorder's correlator options.
	Correlator CorrelatorKind
}

// Regarding builds the reference an event points at.
func Regarding(kind, apiVersion string, m metav1.Object) corev1.ObjectReference {
	return corev1.ObjectReference{
		Kind:            kind,
		APIVersion:      apiVersion,
		Namespace:       m.GetNamespace(),
		Name:            m.GetName(),
		UID:             m.GetUID(),
		ResourceVersion: m.GetResourceVersion(),
	}
}

// Record appends an event at the current virtual time, folding repeats.
// A legacy recorder's event goes through its correlator (correlate), which
// may drop it: the event returned is then the logged one it would have
// counted into, or one not in the log.
func (s *State) Record(src EventSource, regarding corev1.ObjectReference, eventType, reason, message string) *corev1.Event {
	if !src.Series && !src.Plain {
		return s.correlate(src, regarding, eventType, reason, message)
	}
	now := metav1.NewTime(s.Now)
	x := s.index()
	id := eventID{src.Component, reason, eventType, &regarding}
	// The hash serves the lookup and, for a new event, the index entry.
	hObject, b := x.identity(id)
	e := x.latestHashed(id, hObject)
	if src.Series {
		if e != nil && s.Now.Sub(e.LastTimestamp.Time).Seconds() > seriesWindow {
			e = nil
		}
	} else {
		e = x.withMessageOf(id, e, message, b)
	}
	if e != nil {
		e.Count++
		e.LastTimestamp = now
		if src.Series {
			if e.Series == nil {
				e.Series = &corev1.EventSeries{}
			}
			e.Series.Count = e.Count
			e.Series.LastObservedTime = metav1.NewMicroTime(s.Now)
		}
		return e
	}
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
		Message:             x.intern(message, regarding.Name),
		Source:              corev1.EventSource{Component: src.Component},
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		Type:                eventType,
		ReportingController: src.Component,
	}
	if src.Series {
		e.EventTime = metav1.NewMicroTime(s.Now)
	}
	s.Events = append(s.Events, e)
	x.addHashed(e, hObject, b)
	x.events, x.first = len(s.Events), s.Events[0]
	return e
}

// HasEvent reports whether an event from component with this type and reason
// about the object is in the log (a constant-time lookup in the index).
func (s *State) HasEvent(component, eventType, reason string, regarding corev1.ObjectReference) bool {
	return s.index().latest(eventID{component, reason, eventType, &regarding}) != nil
}

// eventName is "NAME.%x" of the sequence number, built without fmt.
func eventName(object string, seq int64) string {
	var b strings.Builder
	b.Grow(len(object) + 17)
	b.WriteString(object)
	b.WriteByte('.')
	var digits [17]byte
	b.Write(strconv.AppendInt(digits[:0], seq, 16))
	return b.String()
}

func eventNamespace(ref corev1.ObjectReference) string {
	if ref.Namespace == "" {
		return "default"
	}
	return ref.Namespace
}

// EventsFor returns the events about one object, oldest first.
func (s *State) EventsFor(kind, namespace, name string) []*corev1.Event {
	var out []*corev1.Event
	for _, e := range s.Events {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Namespace == namespace && e.InvolvedObject.Name == name {
			out = append(out, e)
		}
	}
	return out
}
