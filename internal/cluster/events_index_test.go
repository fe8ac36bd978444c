package cluster

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
)

// TestEventIndexCollisions puts a foreign event under the hash of an
// identity, as a hash collision would, and checks that Record and HasEvent
// still find exactly the events of that identity.
func TestEventIndexCollisions(t *testing.T) {
	ref := corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p", UID: "u"}
	other := corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "q", UID: "v"}
	series := EventSource{Component: "default-scheduler", Series: true}
	legacy := EventSource{Component: "kubelet"}
	tests := []struct {
		name string
		src  EventSource
	}{
		{"series", series},
		{"legacy", legacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New("1.36", 1)
			foreign := s.Record(tt.src, other, "Warning", "R", "m")
			x := s.index()
			id := eventID{tt.src.Component, "R", "Warning", &ref}
			msg := "m"
			x.byObject[x.hash(id, nil)] = foreign
			x.byMessage[x.hash(id, &msg)] = foreign
			if s.HasEvent(tt.src.Component, "Warning", "R", ref) {
				t.Fatal("HasEvent found the colliding event of another object")
			}
			first := s.Record(tt.src, ref, "Warning", "R", "m")
			if first == foreign || first.InvolvedObject.Name != "p" || first.Count != 1 {
				t.Fatalf("first record folded into %s (count %d)", first.InvolvedObject.Name, first.Count)
			}
			again := s.Record(tt.src, ref, "Warning", "R", "m")
			if again != first || again.Count != 2 || foreign.Count != 1 {
				t.Fatalf("repeat: same event %v, counts %d and %d", again == first, again.Count, foreign.Count)
			}
			if !s.HasEvent(tt.src.Component, "Warning", "R", ref) || len(s.Events) != 2 {
				t.Fatalf("HasEvent after spill, %d events", len(s.Events))
			}
		})
	}
}

func TestEventMessagesShared(t *testing.T) {
	s := New("1.36", 1)
	a := s.Record(EventSource{Component: "kubelet"}, corev1.ObjectReference{Kind: "Pod", Name: "web-1", UID: "1"}, "Normal", "Started", strings.Clone("Started container"))
	b := s.Record(EventSource{Component: "kubelet"}, corev1.ObjectReference{Kind: "Pod", Name: "web-2", UID: "2"}, "Normal", "Started", strings.Clone("Started container"))
	if a.Message != b.Message || unsafeData(a.Message) != unsafeData(b.Message) {
		t.Fatal("equal messages are not shared")
	}
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }

// TestEventIndexNewestOfMessage records a random mix of folding sources
// about a few objects and checks, after every event, that the index finds
// for every identity and message of the log the newest such event (what a
// scan of the log finds), as Record keeps it and as a rebuilt index does.
func TestEventIndexNewestOfMessage(t *testing.T) {
	refs := []corev1.ObjectReference{
		{Kind: "Pod", Namespace: "default", Name: "p", UID: "u1"},
		{Kind: "Pod", Namespace: "default", Name: "q", UID: "u2"},
	}
	sources := []EventSource{
		{Component: "default-scheduler", Series: true},
		{Component: "berth", Plain: true},
		{Component: "kubelet"},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	s := New("1.36", 1)
	check := func(x *eventIndex, when string) {
		t.Helper()
		for _, e := range s.Events {
			id, key := eventIDOf(e), messageKey(e)
			var want *corev1.Event
			for _, o := range s.Events {
				if id.of(o) && messageKey(o) == key {
					want = o
				}
			}
			h, b := x.identity(id)
			latest := x.latestHashed(id, h)
			if got := x.withMessageOf(id, latest, key, b); got != want {
				t.Fatalf("%s: %s %s %q: found %v, want %v", when, e.InvolvedObject.Name, e.Reason, key, got, want)
			}
		}
	}
	for i := range 400 {
		s.Now = s.Now.Add(time.Duration(rng.IntN(240)) * time.Second)
		src := sources[rng.IntN(len(sources))]
		s.Record(src, refs[rng.IntN(len(refs))], "Normal", []string{"A", "B"}[rng.IntN(2)], fmt.Sprintf("m%d", rng.IntN(14)))
		check(s.index(), fmt.Sprintf("event %d", i))
	}
	if len(s.eventIndex.byMessage) == 0 {
		t.Fatal("no event was displaced: the test does not exercise byMessage")
	}
	s.eventIndex = eventIndex{}
	check(s.index(), "rebuilt")
}
