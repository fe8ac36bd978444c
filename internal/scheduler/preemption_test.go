package scheduler

import (
	"fmt"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
	"github.com/berth-sim/berth/internal/sim"
)

func eventsWithReason(s *cluster.State, name, reason string) []string {
	var out []string
	for _, e := range s.EventsFor("Pod", "default", name) {
		if e.Reason == reason {
			out = append(out, e.Message)
		}
	}
	return out
}

// TestPreemptionS03 plays the verified upstream case S03 forward: the first attempt fails
// without PostFilter text, the priority-0 pod on n1 is preempted (n1 has
// the lower highest-victim priority), hi is nominated to n1 and then lands
// there through the nominated-node fast path.
func TestPreemptionS03(t *testing.T) {
	for _, ver := range []string{"1.33", "1.36"} {
		t.Run(ver, func(t *testing.T) {
			hi := plugintest.WithPriority(plugintest.SizedPod("hi", "1", ""), 100)
			lo := plugintest.OnNode(plugintest.WithPriority(plugintest.SizedPod("lo", "1", ""), 0), "n1")
			mid := plugintest.OnNode(plugintest.WithPriority(plugintest.SizedPod("mid", "1", ""), 10), "n2")
			s := newState(ver, []*v1.Node{plugintest.SizedNode("n1", "1", "8Gi", 110), plugintest.SizedNode("n2", "1", "8Gi", 110)}, lo, mid, hi)
			sc := New()
			sc.RecordScores = true
			if _, err := sc.Sync(s); err != nil {
				t.Fatal(err)
			}
			if got, want := sc.LastDiagnosis("default/hi").Message, "0/2 nodes are available: 2 Insufficient cpu."; got != want {
				t.Fatalf("first attempt %q, want %q", got, want)
			}
			if hi.Status.NominatedNodeName != "n1" || hi.Spec.NodeName != "" {
				t.Fatalf("nominated %q bound %q", hi.Status.NominatedNodeName, hi.Spec.NodeName)
			}
			if _, ok := s.Pods["default/lo"]; ok {
				t.Fatal("victim lo was not deleted")
			}
			if _, ok := s.Pods["default/mid"]; !ok {
				t.Fatal("mid was deleted")
			}
			if got := eventsWithReason(s, "lo", "Preempted"); len(got) != 1 || got[0] != "Preempted by pod pod-hi on node n1" {
				t.Fatalf("victim events %q", got)
			}
			if c := lo.Status.Conditions; len(c) != 1 || c[0].Type != v1.DisruptionTarget || c[0].Reason != "PreemptionByScheduler" ||
				c[0].Message != "default-scheduler: preempting to accommodate a higher priority pod" {
				t.Fatalf("victim conditions %+v", c)
			}
			if err := sim.Settle(s, []sim.Controller{sc}, sim.DefaultSettleHorizon); err != nil {
				t.Fatal(err)
			}
			wantNominated := "n1" // kept after binding before 1.35, cleared by the binding since
			if ver == "1.36" {
				wantNominated = ""
			}
			if hi.Spec.NodeName != "n1" || hi.Status.NominatedNodeName != wantNominated {
				t.Fatalf("hi bound to %q nominated %q", hi.Spec.NodeName, hi.Status.NominatedNodeName)
			}
			if got := eventsWithReason(s, "hi", "Scheduled"); len(got) != 1 || got[0] != "Successfully assigned default/hi to n1" {
				t.Fatalf("scheduled events %q", got)
			}
			if d := sc.LastDiagnosis("default/hi"); d != nil && d.Totals != nil {
				t.Fatal("fast path scored nodes")
			}
		})
	}
}

// TestPreemptionNotPossible covers S17 (preemptionPolicy Never) and the
// nested FitError when no node can be helped.
func TestPreemptionNotPossible(t *testing.T) {
	never := v1.PreemptNever
	tests := []struct {
		name, ver string
		policy    *v1.PreemptionPolicy
		bound     []*v1.Pod
		want      string
	}{
		{name: "S17 1.36", ver: "1.36", policy: &never,
			bound: []*v1.Pod{plugintest.OnNode(plugintest.SizedPod("e", "1", ""), "n1")},
			want:  "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never."},
		{name: "S17 1.33", ver: "1.33", policy: &never,
			bound: []*v1.Pod{plugintest.OnNode(plugintest.SizedPod("e", "1", ""), "n1")},
			want:  "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."},
		{name: "equal priority", ver: "1.36",
			bound: []*v1.Pod{plugintest.OnNode(plugintest.WithPriority(plugintest.SizedPod("e", "1", ""), 100), "n1")},
			want:  "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := plugintest.WithPriority(plugintest.SizedPod("p", "1", ""), 100)
			pod.Spec.PreemptionPolicy = tt.policy
			s := newState(tt.ver, []*v1.Node{plugintest.SizedNode("n1", "1", "8Gi", 110)}, append(tt.bound, pod)...)
			d := runOne(t, s, pod)
			if d.Message != tt.want {
				t.Fatalf("got %q\nwant %q", d.Message, tt.want)
			}
			if pod.Status.NominatedNodeName != "" || len(s.Pods) != len(tt.bound)+1 {
				t.Fatalf("nominated %q, %d pods left", pod.Status.NominatedNodeName, len(s.Pods))
			}
		})
	}
}

// TestFilterWithNominatedPods: pods nominated to a node with at least the
// incoming pod's priority take their room there; lower ones and the pod
// itself do not.
func TestFilterWithNominatedPods(t *testing.T) {
	tests := []struct {
		name     string
		nomPrio  int32
		samePod  bool
		wantCode framework.Code
	}{
		{name: "higher priority nominated pod blocks", nomPrio: 200, wantCode: framework.Unschedulable},
		{name: "equal priority nominated pod blocks", nomPrio: 100, wantCode: framework.Unschedulable},
		{name: "lower priority nominated pod ignored", nomPrio: 50, wantCode: framework.Success},
		{name: "the pod itself is ignored", nomPrio: 100, samePod: true, wantCode: framework.Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := plugintest.WithPriority(plugintest.SizedPod("p", "1", ""), 100)
			nom := plugintest.WithPriority(plugintest.SizedPod("nom", "1", ""), tt.nomPrio)
			nom.Status.NominatedNodeName = "n1"
			if tt.samePod {
				nom.UID = pod.UID
			}
			s := newState("1.36", []*v1.Node{plugintest.SizedNode("n1", "1500m", "8Gi", 110)}, nom)
			sc := New()
			if err := sc.ensureFramework(s); err != nil {
				t.Fatal(err)
			}
			sc.buildSnapshot(s)
			pi := framework.NewPodInfo(pod, true)
			state := framework.NewCycleState()
			if _, st, _ := sc.fw.runPreFilterPlugins(state, pi, sc.handle.snap.nodes); !st.IsSuccess() {
				t.Fatal(st.Message())
			}
			st := sc.filterWithNominated(state, pi, sc.handle.snap.byName["n1"], nil, nil, -1)
			if st.Code() != tt.wantCode {
				t.Fatalf("got %v %q, want %v", st.Code(), st.Message(), tt.wantCode)
			}
			if n := len(sc.handle.snap.byName["n1"].Pods); n != 0 {
				t.Fatalf("nominated pod leaked into the snapshot (%d pods)", n)
			}
		})
	}
}

// TestNominatedFastPath: a nominated node that passes Filter is taken
// without scoring; a nomination to a
// node that no longer fits is cleared when the pod binds elsewhere.
func TestNominatedFastPath(t *testing.T) {
	tests := []struct {
		name          string
		n2CPU         string
		wantNode      string
		wantNominated string
		wantScored    bool
	}{
		{name: "nominated node fits", n2CPU: "4", wantNode: "n2", wantNominated: ""},
		{name: "nominated node full", n2CPU: "500m", wantNode: "n1", wantNominated: "", wantScored: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := plugintest.SizedPod("p", "1", "")
			pod.Status.NominatedNodeName = "n2"
			s := newState("1.36", []*v1.Node{plugintest.SizedNode("n1", "4", "8Gi", 110), plugintest.SizedNode("n2", tt.n2CPU, "8Gi", 110)}, pod)
			d := runOne(t, s, pod)
			if pod.Spec.NodeName != tt.wantNode || pod.Status.NominatedNodeName != tt.wantNominated {
				t.Fatalf("bound %q nominated %q", pod.Spec.NodeName, pod.Status.NominatedNodeName)
			}
			if (d.Totals != nil) != tt.wantScored {
				t.Fatalf("scored: %v", d.Totals)
			}
		})
	}
}

// TestPreemptionVictimsFollowCachePodOrder: victims without a start time
// and of equal priority are sorted with upstream's MoreImportantPod, which
// is no strict order for them, so the node's pod order in the scheduler
// cache decides which are reprieved. That order is the cache's history:
// pods known at start by key, then bindings appended; a removal moves the
// node's last pod into the gap and an update moves the pod to the end.
// Node: 5 CPU; a and b take 1, c 2, x 1; the preemptor needs 3.
func TestPreemptionVictimsFollowCachePodOrder(t *testing.T) {
	tests := []struct {
		name string
		// bound are on the node before the scheduler starts; bind are
		// bound by it one Sync at a time, in this order.
		bound, bind []string
		deleted     string // removed before the preemptor arrives
		updated     string // written to before the preemptor arrives
		want        []string
	}{
		// Reprieve order is the reverse of the node order (insertion sort
		// with an always-true comparator): c fits back, then neither a nor b.
		{name: "bound in key order", bind: []string{"a", "b", "c"}, want: []string{"a", "b"}},
		// b and a fit back, c does not.
		{name: "bound against key order", bind: []string{"c", "a", "b"}, want: []string{"c"}},
		{name: "known at start: key order", bound: []string{"c", "a", "b"}, want: []string{"a", "b"}},
		// [x c a b] minus x is [b c a], not [c a b].
		{name: "removal moves the last pod into the gap", bind: []string{"x", "c", "a", "b"}, deleted: "x", want: []string{"c"}},
		// [c a b] with c updated is [b a c].
		{name: "update moves the pod to the end", bind: []string{"c", "a", "b"}, updated: "c", want: []string{"a", "b"}},
	}
	cpu := map[string]string{"a": "1", "b": "1", "c": "2", "x": "1"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newPod := func(name string) *v1.Pod {
				p := plugintest.WithPriority(plugintest.SizedPod(name, cpu[name], ""), 0)
				p.UID = types.UID(name)
				return p
			}
			var pods []*v1.Pod
			for _, name := range tt.bound {
				pods = append(pods, plugintest.OnNode(newPod(name), "n1"))
			}
			s := newState("1.36", []*v1.Node{plugintest.SizedNode("n1", "5", "8Gi", 110)}, pods...)
			sc := New()
			for _, name := range tt.bind {
				p := newPod(name)
				s.Pods[cluster.Key(p.Namespace, p.Name)] = p
				if _, err := sc.Sync(s); err != nil {
					t.Fatal(err)
				}
				if p.Spec.NodeName != "n1" {
					t.Fatalf("%s not bound", name)
				}
			}
			if tt.deleted != "" {
				gone := s.Pods["default/"+tt.deleted]
				delete(s.Pods, "default/"+tt.deleted)
				s.PodDeleted(gone)
			}
			if tt.updated != "" {
				p := s.Pods["default/"+tt.updated]
				p.Labels = map[string]string{"touched": "yes"}
				p.ResourceVersion = s.Bump()
			}
			hi := plugintest.WithPriority(plugintest.SizedPod("hi", "3", ""), 1000)
			s.Pods["default/hi"] = hi
			if _, err := sc.Sync(s); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range sc.LastDiagnosis("default/hi").Victims {
				got = append(got, v.Name)
			}
			sort.Strings(got)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("victims %v, want %v", got, tt.want)
			}
		})
	}
}
