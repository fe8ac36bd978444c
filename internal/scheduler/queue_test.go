package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestNumFeasibleNodesToFind(t *testing.T) {
	for n, want := range map[int]int{0: 0, 50: 50, 99: 99, 100: 100, 200: 100, 500: 230, 1000: 420, 5000: 500, 5625: 281, 15000: 750} {
		if got := NumFeasibleNodesToFind(n); got != want {
			t.Errorf("NumFeasibleNodesToFind(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestNodeTreeOrder(t *testing.T) {
	mk := func(name, region, zone string) *v1.Node {
		n := plugintest.SizedNode(name, "1", "1Gi", 10)
		if zone != "" {
			n.Labels[v1.LabelTopologyZone] = zone
		}
		if region != "" {
			n.Labels[v1.LabelTopologyRegion] = region
		}
		return n
	}
	beta := mk("beta1", "", "")
	beta.Labels[v1.LabelFailureDomainBetaZone] = "zb"
	tests := []struct {
		name  string
		nodes []*v1.Node
		want  string
	}{
		{"round robin by first appearance", []*v1.Node{mk("a1", "r", "a"), mk("a2", "r", "a"), mk("b1", "r", "b"), mk("a3", "r", "a"), mk("c1", "r", "c")}, "a1 b1 c1 a2 a3"},
		{"no zone is its own zone", []*v1.Node{mk("x", "", ""), mk("a1", "r", "a"), mk("y", "", "")}, "x a1 y"},
		{"beta label counts", []*v1.Node{mk("a1", "", "a"), beta, mk("a2", "", "a")}, "a1 beta1 a2"},
		{"region distinguishes zones", []*v1.Node{mk("r1a", "r1", "a"), mk("r1a2", "r1", "a"), mk("r2a", "r2", "a")}, "r1a r2a r1a2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			for _, n := range NodeTreeOrder(tt.nodes) {
				names = append(names, n.Name)
			}
			if got := strings.Join(names, " "); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPreFilterRejection covers the PreFilter message path and the DRA
// "not found" quirk of 1.34+ (docs/scheduler.md).
func TestPreFilterRejection(t *testing.T) {
	conflict := func() *v1.Pod {
		p := plugintest.SizedPod("p", "", "")
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
				{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n1"}},
				{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n2"}},
			}}}}}}
		return p
	}
	for ver, want := range map[string]string{
		"1.36": "0/2 nodes are available: pod affinity terms conflict. not found",
		"1.34": "0/2 nodes are available: pod affinity terms conflict. not found",
		"1.33": "0/2 nodes are available: pod affinity terms conflict. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
	} {
		t.Run(ver, func(t *testing.T) {
			pod := conflict()
			s := newState(ver, []*v1.Node{plugintest.SizedNode("n1", "1", "1Gi", 10), plugintest.SizedNode("n2", "1", "1Gi", 10)}, pod)
			d := runOne(t, s, pod)
			if d.Message != want || scheduledCondition(pod).Message != want {
				t.Fatalf("got %q, want %q", d.Message, want)
			}
		})
	}
}

func TestEventTruncation(t *testing.T) {
	long := strings.Repeat("x", 2000)
	s := newState("1.36", nil)
	pod := plugintest.SizedPod("p", "", "")
	s.Pods["default/p"] = pod
	sc := New()
	sc.ensureFramework(s)
	sc.buildSnapshot(s)
	sc.recordFailure(s, pendingPod{key: "default/p", pod: pod, q: &cluster.QueuedPod{}},
		cycleResult{status: framework.NewStatus(framework.Unschedulable, long), diag: &Diagnosis{Message: long}})
	ev := s.EventsFor("Pod", "default", "p")
	if len(ev) != 1 || len(ev[0].Message) != 1024 || !strings.HasSuffix(ev[0].Message, "x ...") {
		t.Fatalf("event note length %d", len(ev[0].Message))
	}
	if c := scheduledCondition(pod); len(c.Message) != 2000 {
		t.Fatalf("condition message truncated to %d", len(c.Message))
	}
}

func TestBindAndEvents(t *testing.T) {
	pod := plugintest.SizedPod("web-0", "100m", "")
	s := newState("1.36", []*v1.Node{plugintest.SizedNode("node-1", "1", "1Gi", 10)}, pod)
	sc := New()
	changed, err := sc.Sync(s)
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	if pod.Spec.NodeName != "node-1" {
		t.Fatalf("nodeName %q", pod.Spec.NodeName)
	}
	if c := scheduledCondition(pod); c == nil || c.Status != v1.ConditionTrue {
		t.Fatalf("condition %+v", c)
	}
	ev := s.EventsFor("Pod", "default", "web-0")
	if len(ev) != 1 || ev[0].Type != v1.EventTypeNormal || ev[0].Reason != "Scheduled" || ev[0].Message != "Successfully assigned default/web-0 to node-1" {
		t.Fatalf("events %+v", ev)
	}
	if s.SchedulingGeneration == 0 || len(s.Scheduler.Queue) != 0 {
		t.Fatalf("generation %d queue %v", s.SchedulingGeneration, s.Scheduler.Queue)
	}
	if changed, _ := sc.Sync(s); changed {
		t.Fatal("second Sync changed something")
	}
}

// TestBackoffAndRetry: a failed pod waits for a cluster change and then its
// backoff; the 5-minute flush retries it anyway.
func TestBackoffAndRetry(t *testing.T) {
	pod := plugintest.SizedPod("p", "2", "")
	s := newState("1.36", []*v1.Node{plugintest.SizedNode("n1", "1", "8Gi", 110)}, pod)
	sc := New()
	sync := func() bool {
		ch, err := sc.Sync(s)
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	if !sync() || pod.Spec.NodeName != "" {
		t.Fatal("first attempt should fail and change state")
	}
	q := s.Scheduler.Queue["default/p"]
	if q.Attempts != 1 || !q.Unschedulable || !q.BackoffUntil.Equal(s.Now.Add(time.Second)) {
		t.Fatalf("queue entry %+v", q)
	}
	if sync() {
		t.Fatal("retried without a cluster change")
	}
	// A change arrives; still inside backoff: a settling timer is added.
	big := plugintest.SizedNode("n2", "4", "8Gi", 110)
	s.Nodes["n2"] = big
	s.NodeAdded(big)
	if sync() {
		t.Fatal("retried inside backoff")
	}
	at, ok := s.NextTimer(true)
	if !ok || !at.Equal(q.BackoffUntil) {
		t.Fatalf("settling timer %v %v, want %v", at, ok, q.BackoffUntil)
	}
	s.Now = at
	if !sync() || pod.Spec.NodeName != "n2" {
		t.Fatalf("not scheduled after backoff: %q", pod.Spec.NodeName)
	}

	// Flush: no change at all, but 5 minutes later the pod is tried again.
	pod2 := plugintest.SizedPod("q", "8", "")
	s.Pods["default/q"] = pod2
	sync()
	if ev := s.EventsFor("Pod", "default", "q"); len(ev) != 1 {
		t.Fatalf("events %d", len(ev))
	}
	flush := s.Now.Add(5 * time.Minute)
	found := false
	for _, tm := range s.Timers {
		found = found || (tm.Object == "default/q" && tm.At.Equal(flush) && !tm.Settling)
	}
	if !found {
		t.Fatalf("no flush timer in %+v", s.Timers)
	}
	s.Now = flush
	sync()
	if q2 := s.Scheduler.Queue["default/q"]; q2.Attempts != 2 || !q2.BackoffUntil.Equal(s.Now.Add(2*time.Second)) {
		t.Fatalf("after flush %+v", q2)
	}
}

func TestBackoffDurations(t *testing.T) {
	want := []time.Duration{1, 2, 4, 8, 10, 10}
	for i, w := range want {
		if got := backoffFor(i + 1); got != w*time.Second {
			t.Errorf("attempt %d: %v", i+1, got)
		}
	}
}

func TestQueueOrderAndScope(t *testing.T) {
	// One slot: the higher-priority pod gets it even though it is newer.
	low := plugintest.SizedPod("a-low", "600m", "")
	high := plugintest.WithPriority(plugintest.SizedPod("z-high", "600m", ""), 10)
	high.CreationTimestamp.Time = cluster.Epoch.Add(time.Second)
	other := plugintest.SizedPod("other", "", "")
	other.Spec.SchedulerName = "fargate-scheduler"
	gated := plugintest.SizedPod("gated", "", "")
	gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "wait"}}
	s := newState("1.36", []*v1.Node{plugintest.SizedNode("n1", "1", "8Gi", 110)}, low, high, other, gated)
	s.Now = cluster.Epoch.Add(2 * time.Second)
	if _, err := New().Sync(s); err != nil {
		t.Fatal(err)
	}
	if high.Spec.NodeName != "n1" || low.Spec.NodeName != "" {
		t.Fatalf("high=%q low=%q", high.Spec.NodeName, low.Spec.NodeName)
	}
	if other.Spec.NodeName != "" || len(s.EventsFor("Pod", "default", "other")) != 0 {
		t.Fatal("touched another scheduler's pod")
	}
	if gated.Spec.NodeName != "" || len(s.EventsFor("Pod", "default", "gated")) != 0 {
		t.Fatal("attempted a gated pod")
	}
}

// TestNextStartNodeIndex: with 200 nodes, 100 feasible are looked for and the
// next search starts where this one stopped.
func TestNextStartNodeIndex(t *testing.T) {
	var nodes []*v1.Node
	for i := 0; i < 200; i++ {
		n := plugintest.SizedNode(fmt.Sprintf("n%03d", i), "4", "8Gi", 110)
		if i%2 == 1 {
			n.Spec.Unschedulable = true
		}
		nodes = append(nodes, n)
	}
	pod := plugintest.SizedPod("p", "100m", "")
	s := newState("1.36", nodes, pod)
	d := runOne(t, s, pod)
	// Every second node is cordoned: 199 nodes are examined to find 100.
	if len(d.Feasible) != 100 || len(d.NodeToStatus.Statuses) != 99 || s.Scheduler.NextStartNodeIndex != 199 {
		t.Fatalf("feasible %d rejected %d next %d", len(d.Feasible), len(d.NodeToStatus.Statuses), s.Scheduler.NextStartNodeIndex)
	}
	fe := helper.FitError{NumAllNodes: 200, NodeToStatus: d.NodeToStatus}
	_ = fe.Error()
}
