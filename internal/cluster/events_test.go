package cluster

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestRecordFolding(t *testing.T) {
	ref := corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p", UID: "u"}
	other := corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "q", UID: "v"}
	series := EventSource{Component: "default-scheduler", Series: true}
	legacy := EventSource{Component: "kubelet"}
	s := New("1.36", 1)

	s.Record(series, ref, "Warning", "FailedScheduling", "first")
	s.Record(series, other, "Warning", "FailedScheduling", "other")
	e := s.Record(series, ref, "Warning", "FailedScheduling", "second")
	if len(s.Events) != 2 || e.Count != 2 || e.Message != "first" || e.Series == nil || e.Series.Count != 2 {
		t.Fatalf("series fold: %d events, %+v", len(s.Events), e)
	}
	// Outside the six-minute window a series starts afresh.
	s.Now = s.Now.Add(7 * time.Minute)
	if e := s.Record(series, ref, "Warning", "FailedScheduling", "third"); len(s.Events) != 3 || e.Count != 1 {
		t.Fatalf("window: %d events", len(s.Events))
	}
	// Legacy events fold only identical messages, however old.
	s.Record(legacy, ref, "Normal", "Pulled", "a")
	s.Record(legacy, ref, "Normal", "Pulled", "b")
	if e := s.Record(legacy, ref, "Normal", "Pulled", "a"); len(s.Events) != 5 || e.Count != 2 {
		t.Fatalf("legacy: %d events, count %d", len(s.Events), e.Count)
	}
	// Events changed behind Record's back are re-indexed.
	s.Events = s.Events[:3]
	if e := s.Record(legacy, ref, "Normal", "Pulled", "b"); len(s.Events) != 4 || e.Count != 1 {
		t.Fatalf("reindex: %d events, count %d", len(s.Events), e.Count)
	}
}
