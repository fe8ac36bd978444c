package cluster

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// step records one event at an offset from the start.
type step struct {
	at      time.Duration
	src     EventSource
	ref     corev1.ObjectReference
	typ     string
	reason  string
	message string
}

// logLine is what a recorded event shows in the log.
func logLine(e *corev1.Event) string {
	return fmt.Sprintf("%s %s %s x%d", e.InvolvedObject.Name, e.Reason, e.Message, e.Count)
}

func TestCorrelator(t *testing.T) {
	rs := corev1.ObjectReference{Kind: "ReplicaSet", APIVersion: "apps/v1", Namespace: "default", Name: "web", UID: "u1"}
	pod := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "p", UID: "u2"}
	cm := corev1.ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: "kube-system", Name: "cluster-autoscaler-status", UID: "u3"}
	rsc := EventSource{Component: "replicaset-controller"}
	ca := EventSource{Component: "cluster-autoscaler", Correlator: CorrelatorAutoscaler}
	creates := func(n int, at time.Duration) []step {
		var out []step
		for i := range n {
			out = append(out, step{at, rsc, rs, "Normal", "SuccessfulCreate", fmt.Sprintf("Created pod: web-%d", i)})
		}
		return out
	}
	tests := []struct {
		name  string
		steps []step
		// want is the log afterwards, oldest first.
		want []string
	}{{
		name:  "nine distinct messages stay apart",
		steps: creates(9, 0),
		want: []string{"web SuccessfulCreate Created pod: web-0 x1", "web SuccessfulCreate Created pod: web-1 x1",
			"web SuccessfulCreate Created pod: web-2 x1", "web SuccessfulCreate Created pod: web-3 x1",
			"web SuccessfulCreate Created pod: web-4 x1", "web SuccessfulCreate Created pod: web-5 x1",
			"web SuccessfulCreate Created pod: web-6 x1", "web SuccessfulCreate Created pod: web-7 x1",
			"web SuccessfulCreate Created pod: web-8 x1"},
	}, {
		name:  "the tenth and later distinct messages are combined",
		steps: creates(12, 0),
		want: []string{"web SuccessfulCreate Created pod: web-0 x1", "web SuccessfulCreate Created pod: web-1 x1",
			"web SuccessfulCreate Created pod: web-2 x1", "web SuccessfulCreate Created pod: web-3 x1",
			"web SuccessfulCreate Created pod: web-4 x1", "web SuccessfulCreate Created pod: web-5 x1",
			"web SuccessfulCreate Created pod: web-6 x1", "web SuccessfulCreate Created pod: web-7 x1",
			"web SuccessfulCreate Created pod: web-8 x1",
			"web SuccessfulCreate (combined from similar events): Created pod: web-11 x3"},
	}, {
		name: "a repeat of one of the first nine is still its own event",
		steps: append(creates(10, 0),
			step{time.Second, rsc, rs, "Normal", "SuccessfulCreate", "Created pod: web-3"}),
		want: []string{"web SuccessfulCreate Created pod: web-0 x1", "web SuccessfulCreate Created pod: web-1 x1",
			"web SuccessfulCreate Created pod: web-2 x1", "web SuccessfulCreate Created pod: web-3 x2",
			"web SuccessfulCreate Created pod: web-4 x1", "web SuccessfulCreate Created pod: web-5 x1",
			"web SuccessfulCreate Created pod: web-6 x1", "web SuccessfulCreate Created pod: web-7 x1",
			"web SuccessfulCreate Created pod: web-8 x1",
			"web SuccessfulCreate (combined from similar events): Created pod: web-9 x1"},
	}, {
		name: "the record expires 600 s after the key was last seen",
		steps: append(append(creates(9, 0),
			step{600 * time.Second, rsc, rs, "Normal", "SuccessfulCreate", "Created pod: web-9"}),
			step{1201 * time.Second, rsc, rs, "Normal", "SuccessfulCreate", "Created pod: web-10"}),
		want: []string{"web SuccessfulCreate Created pod: web-0 x1", "web SuccessfulCreate Created pod: web-1 x1",
			"web SuccessfulCreate Created pod: web-2 x1", "web SuccessfulCreate Created pod: web-3 x1",
			"web SuccessfulCreate Created pod: web-4 x1", "web SuccessfulCreate Created pod: web-5 x1",
			"web SuccessfulCreate Created pod: web-6 x1", "web SuccessfulCreate Created pod: web-7 x1",
			"web SuccessfulCreate Created pod: web-8 x1",
			"web SuccessfulCreate (combined from similar events): Created pod: web-9 x1",
			"web SuccessfulCreate Created pod: web-10 x1"},
	}, {
		name:  "25 events, then the bucket is empty",
		steps: creates(30, 0),
		want: []string{"web SuccessfulCreate Created pod: web-0 x1", "web SuccessfulCreate Created pod: web-1 x1",
			"web SuccessfulCreate Created pod: web-2 x1", "web SuccessfulCreate Created pod: web-3 x1",
			"web SuccessfulCreate Created pod: web-4 x1", "web SuccessfulCreate Created pod: web-5 x1",
			"web SuccessfulCreate Created pod: web-6 x1", "web SuccessfulCreate Created pod: web-7 x1",
			"web SuccessfulCreate Created pod: web-8 x1",
			"web SuccessfulCreate (combined from similar events): Created pod: web-24 x16"},
	}, {
		name: "the spam key has no reason; a token comes back after 300 s, and the count includes the dropped",
		steps: append(append(append(creates(25, 0),
			step{time.Second, rsc, rs, "Normal", "SuccessfulDelete", "Deleted pod: web-0"}),
			step{299 * time.Second, rsc, rs, "Normal", "SuccessfulCreate", "Created pod: web-25"}),
			step{300 * time.Second, rsc, rs, "Normal", "SuccessfulCreate", "Created pod: web-26"}),
		want: []string{"web SuccessfulCreate Created pod: web-0 x1", "web SuccessfulCreate Created pod: web-1 x1",
			"web SuccessfulCreate Created pod: web-2 x1", "web SuccessfulCreate Created pod: web-3 x1",
			"web SuccessfulCreate Created pod: web-4 x1", "web SuccessfulCreate Created pod: web-5 x1",
			"web SuccessfulCreate Created pod: web-6 x1", "web SuccessfulCreate Created pod: web-7 x1",
			"web SuccessfulCreate Created pod: web-8 x1",
			"web SuccessfulCreate (combined from similar events): Created pod: web-26 x18"},
	}, {
		name: "within a second: the buckets are kept, not derived",
		steps: func() []step {
			out := creates(30, 500*time.Millisecond)
			return append(out, step{300500 * time.Millisecond, rsc, rs, "Normal", "SuccessfulCreate", "Created pod: web-30"})
		}(),
		want: []string{"web SuccessfulCreate Created pod: web-0 x1", "web SuccessfulCreate Created pod: web-1 x1",
			"web SuccessfulCreate Created pod: web-2 x1", "web SuccessfulCreate Created pod: web-3 x1",
			"web SuccessfulCreate Created pod: web-4 x1", "web SuccessfulCreate Created pod: web-5 x1",
			"web SuccessfulCreate Created pod: web-6 x1", "web SuccessfulCreate Created pod: web-7 x1",
			"web SuccessfulCreate Created pod: web-8 x1",
			"web SuccessfulCreate (combined from similar events): Created pod: web-30 x22"},
	}, {
		name: "a warning has its own bucket",
		steps: append(creates(25, 0),
			step{time.Second, rsc, rs, "Warning", "FailedCreate", "quota"}),
		want: []string{"web SuccessfulCreate Created pod: web-0 x1", "web SuccessfulCreate Created pod: web-1 x1",
			"web SuccessfulCreate Created pod: web-2 x1", "web SuccessfulCreate Created pod: web-3 x1",
			"web SuccessfulCreate Created pod: web-4 x1", "web SuccessfulCreate Created pod: web-5 x1",
			"web SuccessfulCreate Created pod: web-6 x1", "web SuccessfulCreate Created pod: web-7 x1",
			"web SuccessfulCreate Created pod: web-8 x1",
			"web SuccessfulCreate (combined from similar events): Created pod: web-24 x16",
			"web FailedCreate quota x1"},
	}, {
		name: "cluster-autoscaler: one per reason and object every 300 s",
		steps: []step{
			{0, ca, pod, "Normal", "NotTriggerScaleUp", "no"}, {10 * time.Second, ca, pod, "Normal", "NotTriggerScaleUp", "no"},
			{10 * time.Second, ca, pod, "Normal", "TriggeredScaleUp", "yes"}, {300 * time.Second, ca, pod, "Normal", "NotTriggerScaleUp", "no"},
		},
		want: []string{"p NotTriggerScaleUp no x3", "p TriggeredScaleUp yes x1"},
	}, {
		name: "cluster-autoscaler: its status ConfigMap is limited per message",
		steps: []step{
			{0, ca, cm, "Normal", "ScaleDown", "a"}, {0, ca, cm, "Normal", "ScaleDown", "b"}, {time.Second, ca, cm, "Normal", "ScaleDown", "a"},
		},
		want: []string{"cluster-autoscaler-status ScaleDown a x1", "cluster-autoscaler-status ScaleDown b x1"},
	}, {
		name: "berth's own notes are not correlated",
		steps: []step{
			{0, EventSource{Component: "berth", Plain: true}, pod, "Normal", "Defaulted", "a"},
			{0, EventSource{Component: "berth", Plain: true}, pod, "Normal", "Defaulted", "a"},
		},
		want: []string{"p Defaulted a x2"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The same steps, once in one process and once saved and
			// loaded (JSON of the memory; events keep whole seconds)
			// between every two steps, give the same log.
			for _, reload := range []bool{false, true} {
				s := New("1.36", 1)
				start := s.Now
				for _, st := range tt.steps {
					if reload {
						s = reloaded(t, s)
					}
					s.Now = start.Add(st.at)
					s.Record(st.src, st.ref, st.typ, st.reason, st.message)
				}
				var got []string
				for _, e := range s.Events {
					got = append(got, logLine(e))
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("reload %v: log\n%q\nwant\n%q", reload, got, tt.want)
				}
			}
		})
	}
}

// reloaded is s after its events and correlator memory went through JSON,
// with a fresh event index, as a later command would see them.
func reloaded(t *testing.T, s *State) *State {
	t.Helper()
	data, err := json.Marshal(struct {
		E []*corev1.Event
		C CorrelatorState
	}{s.Events, s.EventCorrelator})
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		E []*corev1.Event
		C CorrelatorState
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	n := New("1.36", 1)
	n.Now, n.ResourceVersion = s.Now, s.ResourceVersion
	n.Events, n.EventCorrelator = back.E, back.C
	return n
}

// TestCorrelatorMemoryIsSmall: what the log implies is not kept.
func TestCorrelatorMemoryIsSmall(t *testing.T) {
	s := New("1.36", 1)
	for i := range 50 {
		pod := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: fmt.Sprint("p", i), UID: "u"}
		for _, reason := range []string{"Pulled", "Created", "Started"} {
			s.Record(EventSource{Component: "kubelet"}, pod, "Normal", reason, reason+" container")
		}
	}
	if c := s.EventCorrelator; len(c.Aggregates) != 0 || len(c.Unsent) != 0 || len(c.Buckets) != 0 {
		t.Fatalf("memory: %d aggregates, %d unsent, %d buckets", len(c.Aggregates), len(c.Unsent), len(c.Buckets))
	}
	// A bucket used within a second is kept (the log keeps whole seconds);
	// once full again, a sweep forgets it.
	s.Now = s.Now.Add(500 * time.Millisecond)
	s.Record(EventSource{Component: "kubelet"}, corev1.ObjectReference{Kind: "Node", Name: "n"}, "Normal", "Starting", "x")
	if n := len(s.EventCorrelator.Buckets); n != 1 {
		t.Fatalf("%d buckets kept after a sub-second event", n)
	}
	s.Now = s.Now.Add(300 * time.Second)
	s.EventCorrelator.sweepAt = 0
	s.Record(EventSource{Component: "kubelet"}, corev1.ObjectReference{Kind: "Node", Name: "m"}, "Normal", "Starting", "x")
	if n := len(s.EventCorrelator.Buckets); n != 1 {
		t.Fatalf("%d buckets after the sweep", n)
	}
	if _, ok := s.EventCorrelator.Buckets[defaultSpamKey(s.Events[len(s.Events)-1])]; !ok {
		t.Fatal("the full bucket was kept, the new one not")
	}
}

// TestTokenBucketRefill checks the float arithmetic at the edges of a
// refill: a token exactly 300 s after an empty bucket's last use.
func TestTokenBucketRefill(t *testing.T) {
	p := spamPolicies[CorrelatorDefault]
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := &liveBucket{TokenBucket: TokenBucket{Tokens: 25}}
	for i := range 25 {
		if !b.take(p, start) {
			t.Fatalf("token %d refused", i)
		}
	}
	tests := []struct {
		at   time.Duration
		want bool
	}{{0, false}, {299 * time.Second, false}, {300 * time.Second, true}, {301 * time.Second, false}, {600 * time.Second, true}}
	for _, tt := range tests {
		if got := b.take(p, start.Add(tt.at)); got != tt.want {
			t.Errorf("at %v: allowed %v, want %v", tt.at, got, tt.want)
		}
	}
}

// TestLiveBucketCollision puts another key's bucket under the hash of a
// pod's spam key, as a hash collision would, and checks that the pod's
// events still get a budget of their own: the log is the same as without
// the collision.
func TestLiveBucketCollision(t *testing.T) {
	p := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "p", UID: "u1"}
	q := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "q", UID: "u2"}
	kubelet := EventSource{Component: "kubelet"}
	run := func(collide bool) []string {
		s := New("1.36", 1)
		s.Record(kubelet, p, "Normal", "Pulled", "image")
		if collide {
			c := &s.EventCorrelator
			id := spamIDOf(&corev1.Event{InvolvedObject: q, Source: corev1.EventSource{Component: "kubelet"}, Type: "Normal"})
			var foreign *liveBucket
			for _, lb := range c.live.hashed {
				foreign = lb
			}
			c.live.hashed[c.live.hash(id)] = foreign
		}
		for range 30 {
			s.Record(kubelet, q, "Normal", "Started", "started")
			s.Record(kubelet, p, "Normal", "Started", "started")
		}
		var out []string
		for _, e := range s.Events {
			out = append(out, logLine(e))
		}
		return out
	}
	want, got := run(false), run(true)
	// Each pod has a budget of 25: p spent one on Pulled.
	if !slices.Equal(want, []string{"p Pulled image x1", "q Started started x25", "p Started started x24"}) {
		t.Fatalf("without a collision: %v", want)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("with a collision the log differs:\n%v\nwant\n%v", got, want)
	}
}
