package scheduler

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// failOnce runs one Sync in which pod fails, and returns its queue entry.
func failOnce(t *testing.T, sc *Scheduler, s *cluster.State, key string) *cluster.QueuedPod {
	t.Helper()
	if _, err := sc.Sync(s); err != nil {
		t.Fatal(err)
	}
	q := s.Scheduler.Queue[key]
	if q == nil || !q.Unschedulable {
		t.Fatalf("%s not parked: %+v", key, q)
	}
	return q
}

// TestRejectorsDecideWakeUps: a parked pod leaves the unschedulable pool
// only for an event one of its rejecting plugins registered and hinted
// Queue for, and only if the event came after its failure.
func TestRejectorsDecideWakeUps(t *testing.T) {
	tainted := func() *v1.Node {
		return plugintest.WithTaints(plugintest.SizedNode("n1", "4", "8Gi", 110), v1.Taint{Key: "dedicated", Effect: v1.TaintEffectNoSchedule})
	}
	tests := []struct {
		name    string
		version string
		nodes   []*v1.Node
		pod     *v1.Pod
		plugins []string
		event   func(s *cluster.State)
		moved   bool
	}{{
		name: "bound pod does not help a pod short of cpu", version: "1.36",
		nodes: []*v1.Node{plugintest.SizedNode("n1", "1", "8Gi", 110)}, pod: plugintest.SizedPod("p", "2", ""),
		plugins: []string{"NodeResourcesFit"},
		event: func(s *cluster.State) {
			q := plugintest.OnNode(plugintest.SizedPod("q", "100m", ""), "n1")
			s.Pods["default/q"] = q
			s.AssignedPodAdded(q)
		},
	}, {
		name: "a bound pod's removal helps it", version: "1.36",
		nodes: []*v1.Node{plugintest.SizedNode("n1", "1", "8Gi", 110)}, pod: plugintest.SizedPod("p", "2", ""),
		plugins: []string{"NodeResourcesFit"},
		event: func(s *cluster.State) {
			s.PodDeleted(plugintest.OnNode(plugintest.SizedPod("gone", "1", ""), "n1"))
		},
		moved: true,
	}, {
		name: "removing the taint helps a pod that does not tolerate it", version: "1.36",
		nodes: []*v1.Node{tainted()}, pod: plugintest.SizedPod("p", "1", ""),
		plugins: []string{"TaintToleration"},
		event: func(s *cluster.State) {
			n := s.Nodes["n1"]
			old := n.DeepCopy()
			n.Spec.Taints = nil
			s.NodeUpdated(old, n)
		},
		moved: true,
	}, {
		name: "a label change does not help a taint rejection", version: "1.36",
		nodes: []*v1.Node{tainted()}, pod: plugintest.SizedPod("p", "1", ""),
		plugins: []string{"TaintToleration"},
		event: func(s *cluster.State) {
			n := s.Nodes["n1"]
			old := n.DeepCopy()
			n.Labels["team"] = "a"
			s.NodeUpdated(old, n)
		},
	}, {
		name: "without hints (1.31) a new node must pass the pre-check", version: "1.31",
		nodes: []*v1.Node{tainted()}, pod: plugintest.SizedPod("p", "1", ""),
		plugins: []string{"TaintToleration"},
		event: func(s *cluster.State) {
			n := tainted()
			n.Name = "n2"
			s.Nodes["n2"] = n
			s.NodeAdded(n)
		},
	}, {
		name: "without hints (1.31) a registered event is enough", version: "1.31",
		nodes: []*v1.Node{plugintest.SizedNode("n1", "1", "8Gi", 110)}, pod: plugintest.SizedPod("p", "2", ""),
		plugins: []string{"NodeResourcesFit"},
		event: func(s *cluster.State) {
			s.PodDeleted(plugintest.OnNode(plugintest.SizedPod("gone", "100m", ""), "n1"))
		},
		moved: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newState(tt.version, tt.nodes, tt.pod)
			sc := New()
			q := failOnce(t, sc, s, "default/p")
			if !reflect.DeepEqual(q.Plugins, tt.plugins) || !q.Recorded {
				t.Fatalf("rejectors %v (recorded %v), want %v", q.Plugins, q.Recorded, tt.plugins)
			}
			tt.event(s)
			s.Now = s.Now.Add(time.Minute) // well past the backoff
			if _, err := sc.Sync(s); err != nil {
				t.Fatal(err)
			}
			if moved := q.Attempts == 2 || s.Pods["default/p"].Spec.NodeName != ""; moved != tt.moved {
				t.Fatalf("retried = %v, want %v (entry %+v)", moved, tt.moved, q)
			}
		})
	}
}

// TestEventsBeforeTheFailureDoNotCount: a pod parked later in the same
// Sync than an event does not hear of it, one parked earlier does.
func TestEventsBeforeTheFailureDoNotCount(t *testing.T) {
	s := newState("1.36", []*v1.Node{plugintest.SizedNode("n1", "1", "8Gi", 110)}, plugintest.SizedPod("p", "2", ""))
	sc := New()
	q := failOnce(t, sc, s, "default/p")
	sc.parkedSeq["default/p"] = s.EventSeq() + 1 // as if it failed after the next event
	s.PodDeleted(plugintest.OnNode(plugintest.SizedPod("gone", "1", ""), "n1"))
	s.Now = s.Now.Add(time.Minute)
	if _, err := sc.Sync(s); err != nil {
		t.Fatal(err)
	}
	if q.Attempts != 1 || !q.Unschedulable {
		t.Fatalf("moved by an event before its failure: %+v", q)
	}
}

// TestErrorRetriesOnItsBackoff: a failure no plugin rejected (no nodes)
// records no rejector; the pod is retried when its own backoff timer fires
// (not settling), or by any event of interest.
func TestErrorRetriesOnItsBackoff(t *testing.T) {
	s := newState("1.36", nil, plugintest.SizedPod("p", "1", ""))
	sc := New()
	q := failOnce(t, sc, s, "default/p")
	if len(q.Plugins) != 0 || !failedWithError(q) {
		t.Fatalf("entry %+v", q)
	}
	found := false
	for _, tm := range s.Timers {
		found = found || tm.Object == "default/p" && tm.At.Equal(q.BackoffUntil) && !tm.Settling
	}
	if !found {
		t.Fatalf("no backoff timer in %+v", s.Timers)
	}
	sync := func(at time.Time) {
		t.Helper()
		s.Now = at
		if _, err := sc.Sync(s); err != nil {
			t.Fatal(err)
		}
	}
	sync(q.BackoffUntil)
	if q.Attempts != 2 {
		t.Fatal("not retried when its backoff timer fired")
	}
	sync(q.BackoffUntil.Add(time.Second))
	if q.Attempts != 2 {
		t.Fatal("retried between its timers without an event")
	}
	n := plugintest.SizedNode("n1", "4", "8Gi", 110)
	s.Nodes["n1"] = n
	s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, "n1")
	s.NodeAdded(n)
	s.Now = s.Now.Add(time.Minute)
	if _, err := sc.Sync(s); err != nil {
		t.Fatal(err)
	}
	if s.Pods["default/p"].Spec.NodeName != "n1" {
		t.Fatal("the new node did not bring the pod back")
	}
}

// TestLegacyEntries: entries saved before rejectors were recorded; one the
// older rule had already moved (generation behind) stays moved, one still
// parked waits for any event of interest.
func TestLegacyEntries(t *testing.T) {
	s := newState("1.36", []*v1.Node{plugintest.SizedNode("n1", "1", "8Gi", 110)},
		plugintest.SizedPod("moved", "2", ""), plugintest.SizedPod("parked", "2", ""))
	s.SchedulingGeneration = 10
	past := s.Now.Add(-time.Minute)
	s.Scheduler.Queue = map[string]*cluster.QueuedPod{
		"default/moved":  {Timestamp: past, Attempts: 1, Unschedulable: true, BackoffUntil: past, ParkedAt: past, Generation: 9, Seq: 1},
		"default/parked": {Timestamp: past, Attempts: 1, Unschedulable: true, BackoffUntil: past, ParkedAt: past, Generation: 10, Seq: 2},
	}
	s.Scheduler.QueueSeq = 2
	sc := New()
	if _, err := sc.Sync(s); err != nil {
		t.Fatal(err)
	}
	if a := s.Scheduler.Queue["default/moved"].Attempts; a != 2 {
		t.Fatalf("moved entry attempts %d, want 2", a)
	}
	parked := s.Scheduler.Queue["default/parked"]
	if parked.Attempts != 1 {
		t.Fatalf("parked entry retried without an event")
	}
}

// TestProfilesShareTheQueue: another profile's Sync neither moves nor
// misreads the default scheduler's parked pods.
func TestProfilesShareTheQueue(t *testing.T) {
	nodes := []*v1.Node{plugintest.WithTaints(plugintest.SizedNode("n1", "4", "8Gi", 110), v1.Taint{Key: "x", Effect: v1.TaintEffectNoSchedule})}
	s := newState("1.36", nodes, plugintest.SizedPod("p", "1", ""))
	def, other := New(), NewWithProfile("other-scheduler", nil)
	q := failOnce(t, def, s, "default/p")
	s.PodDeleted(plugintest.OnNode(plugintest.SizedPod("gone", "1", ""), "n1"))
	s.Now = s.Now.Add(time.Minute)
	if _, err := other.Sync(s); err != nil {
		t.Fatal(err)
	}
	if !q.Unschedulable {
		t.Fatal("the other profile moved the default scheduler's pod")
	}
}
