// Package view renders the cluster state the way kubectl does: get tables,
// describe, rollout status and events. Everything here reads a
// *cluster.State and never writes it; ages are measured against the virtual
// clock, never the wall clock.
package view

import (
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/berth-sim/berth/internal/cluster"
)

// describeTimeFormat is kubectl's absolute time layout (time.RFC1123Z).
const describeTimeFormat = time.RFC1123Z

// Node role labels, as kubectl's findNodeRoles reads them.
const (
	labelNodeRolePrefix = "node-role.kubernetes.io/"
	nodeLabelRole       = "kubernetes.io/role"
)

// since is kubectl's translateTimestampSince measured on the virtual clock.
func since(s *cluster.State, t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(s.Now.Sub(t.Time))
}

// sinceMicro is translateMicroTimestampSince on the virtual clock.
func sinceMicro(s *cluster.State, t metav1.MicroTime) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(s.Now.Sub(t.Time))
}

// findNodeRoles returns the sorted roles named by node-role.kubernetes.io/*
// and kubernetes.io/role labels.
func findNodeRoles(node *corev1.Node) []string {
	roles := sets.New[string]()
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, labelNodeRolePrefix):
			if role := strings.TrimPrefix(k, labelNodeRolePrefix); role != "" {
				roles.Insert(role)
			}
		case k == nodeLabelRole && v != "":
			roles.Insert(v)
		}
	}
	return sets.List(roles)
}

// eventLastSeen is the "Age"/"LAST SEEN" text kubectl describe and kubectl
// events print: a series shows its last observation, a legacy repeat its
// last timestamp, each with the count and the time since the first.
func eventLastSeen(s *cluster.State, e *corev1.Event) string {
	first := sinceMicro(s, e.EventTime)
	if e.EventTime.IsZero() {
		first = since(s, e.FirstTimestamp)
	}
	switch {
	case e.Series != nil:
		return sinceMicro(s, e.Series.LastObservedTime) + " (x" + itoa(int64(e.Series.Count)) + " over " + first + ")"
	case e.Count > 1:
		return since(s, e.LastTimestamp) + " (x" + itoa(int64(e.Count)) + " over " + first + ")"
	default:
		return first
	}
}

// eventSortTime is the time `kubectl events` sorts by (its own
// SortableEvents in pkg/cmd/events): a series' last observation, else the
// last timestamp, else the event time.
func eventSortTime(e *corev1.Event) time.Time {
	if e.Series != nil {
		return e.Series.LastObservedTime.Time
	}
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	return e.EventTime.Time
}

// sortEventsByTime orders events oldest first as `kubectl events` does; the
// sort is stable so equal times keep recording order (kubectl's sort.Sort
// would shuffle ties in lists longer than twelve).
func sortEventsByTime(events []*corev1.Event) {
	sort.SliceStable(events, func(i, j int) bool {
		return eventSortTime(events[i]).Before(eventSortTime(events[j]))
	})
}

// sortEventsForDescribe orders events as kubectl describe does
// (util/event.SortableEvents): sort.Sort by lastTimestamp alone.
func sortEventsForDescribe(events []*corev1.Event) {
	sort.Sort(eventsByTime{events, func(e *corev1.Event) time.Time { return e.LastTimestamp.Time }})
}

type eventsByTime struct {
	list []*corev1.Event
	at   func(*corev1.Event) time.Time
}

func (l eventsByTime) Len() int           { return len(l.list) }
func (l eventsByTime) Swap(i, j int)      { l.list[i], l.list[j] = l.list[j], l.list[i] }
func (l eventsByTime) Less(i, j int) bool { return l.at(l.list[i]).Before(l.at(l.list[j])) }

// eventQuery is the field selector kubectl's searchEvents builds: name and
// namespace always, kind and uid only when known.
type eventQuery struct {
	kind, namespace, name string
	uids                  []string
}

func (q eventQuery) find(s *cluster.State) []*corev1.Event {
	var out []*corev1.Event
	for _, e := range s.Events {
		ref := e.InvolvedObject
		if ref.Name != q.name || ref.Namespace != q.namespace {
			continue
		}
		if q.kind != "" && ref.Kind != q.kind {
			continue
		}
		if len(q.uids) > 0 && !containsString(q.uids, string(ref.UID)) {
			continue
		}
		out = append(out, e)
	}
	// The API server lists by namespace and name; kubectl sorts that list.
	sort.SliceStable(out, func(i, j int) bool {
		return cluster.Key(out[i].Namespace, out[i].Name) < cluster.Key(out[j].Namespace, out[j].Name)
	})
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
