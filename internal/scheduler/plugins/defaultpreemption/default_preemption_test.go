package defaultpreemption

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/noderesources"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fitRunner runs only NodeResourcesFit, enough to judge cpu preemption.
type fitRunner struct {
	*plugintest.Handle
	fit    framework.FilterPlugin
	pdbs   []*policyv1.PodDisruptionBudget
	draws  int
	offset int
}

func (r *fitRunner) RunFilterPluginsWithNominatedPods(state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return r.fit.Filter(state, pod, ni)
}

func (r *fitRunner) RunPreFilterExtensionRemovePod(*framework.CycleState, *framework.PodInfo, *framework.PodInfo, *framework.NodeInfo) *framework.Status {
	return nil
}

func (r *fitRunner) RunPreFilterExtensionAddPod(*framework.CycleState, *framework.PodInfo, *framework.PodInfo, *framework.NodeInfo) *framework.Status {
	return nil
}

func (r *fitRunner) PodDisruptionBudgets() []*policyv1.PodDisruptionBudget { return r.pdbs }

func (r *fitRunner) RandomInt(n int) int { r.draws++; return r.offset % n }

func (r *fitRunner) Now() time.Time { return t0 }

func newRunner(nodes []*v1.Node, pods ...*v1.Pod) *fitRunner {
	h := plugintest.NewVersionHandle("1.36", nil)
	h.NodeInfos = plugintest.NodeInfos(h.Feats, nodes, pods...)
	return &fitRunner{Handle: h, fit: noderesources.NewFit(h).(framework.FilterPlugin)}
}

func prioPod(name, cpu string, prio int32, node string, labels ...string) *v1.Pod {
	p := plugintest.WithPriority(plugintest.SizedPod(name, cpu, ""), prio)
	p.Spec.NodeName = node
	if len(labels) > 0 {
		p.Labels = map[string]string{labels[0]: labels[1]}
	}
	return p
}

func budget(ns, app string, allowed int32, disrupted ...string) *policyv1.PodDisruptionBudget {
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb-" + app, Namespace: ns},
		Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed}}
	if len(disrupted) > 0 {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
		for _, d := range disrupted {
			pdb.Status.DisruptedPods[d] = metav1.NewTime(t0)
		}
	}
	return pdb
}

func names(pods []*v1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestPostFilter(t *testing.T) {
	never := v1.PreemptNever
	tests := []struct {
		name        string
		nodes       []*v1.Node
		existing    []*v1.Pod
		pod         *v1.Pod
		policy      *v1.PreemptionPolicy
		nominated   string
		statuses    map[string]framework.Code // filter verdicts; missing nodes U&U
		wantCode    framework.Code
		wantMsg     string
		wantNode    string
		wantVictims []string
	}{
		{
			name: "preemptionPolicy Never", nodes: []*v1.Node{plugintest.SizedNode("n1", "1", "1Gi", 10)},
			pod: plugintest.SizedPod("p", "2", ""), policy: &never, statuses: map[string]framework.Code{"n1": framework.Unschedulable},
			wantCode: framework.Unschedulable, wantMsg: "preemption: not eligible due to preemptionPolicy=Never.",
		},
		{
			name: "no lower-priority pods", nodes: []*v1.Node{plugintest.SizedNode("n1", "2", "1Gi", 10), plugintest.SizedNode("n2", "2", "1Gi", 10)},
			existing: []*v1.Pod{plugintest.OnNode(plugintest.SizedPod("e1", "1500m", ""), "n1")},
			pod:      plugintest.SizedPod("p", "1", ""), statuses: map[string]framework.Code{"n1": framework.Unschedulable},
			wantCode: framework.Unschedulable, wantMsg: "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
		},
		{
			name: "still does not fit after removing victims", nodes: []*v1.Node{plugintest.SizedNode("n1", "2", "1Gi", 10)},
			existing: []*v1.Pod{prioPod("lo", "500m", 1, "n1"), prioPod("hi", "1500m", 100, "n1")},
			pod:      prioPod("p", "1", 10, ""), statuses: map[string]framework.Code{"n1": framework.Unschedulable},
			wantCode: framework.Unschedulable, wantMsg: "preemption: 0/1 nodes are available: 1 Insufficient cpu.",
		},
		{
			name: "preemption nominates the node and names the victims", nodes: []*v1.Node{plugintest.SizedNode("n1", "2", "1Gi", 10)},
			existing: []*v1.Pod{prioPod("lo", "1500m", 1, "n1")},
			pod:      prioPod("p", "1", 10, ""), statuses: map[string]framework.Code{"n1": framework.Unschedulable},
			wantCode: framework.Success, wantNode: "n1", wantVictims: []string{"lo"},
		},
		{
			name: "S03: lower highest-victim priority wins", nodes: []*v1.Node{plugintest.SizedNode("n1", "1", "1Gi", 10), plugintest.SizedNode("n2", "1", "1Gi", 10)},
			existing: []*v1.Pod{prioPod("mid", "1", 10, "n2"), prioPod("lo", "1", 0, "n1")},
			pod:      prioPod("hi", "1", 100, ""), statuses: map[string]framework.Code{"n1": framework.Unschedulable, "n2": framework.Unschedulable},
			wantCode: framework.Success, wantNode: "n1", wantVictims: []string{"lo"},
		},
		{
			name: "equal priority is no victim", nodes: []*v1.Node{plugintest.SizedNode("n1", "2", "1Gi", 10)},
			existing: []*v1.Pod{prioPod("eq", "1500m", 10, "n1")},
			pod:      prioPod("p", "1", 10, ""), statuses: map[string]framework.Code{"n1": framework.Unschedulable},
			wantCode: framework.Unschedulable, wantMsg: "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
		},
		{
			name: "terminating victim on the nominated node", nodes: []*v1.Node{plugintest.SizedNode("n1", "2", "1Gi", 10)},
			existing: func() []*v1.Pod {
				p := prioPod("lo", "1500m", 1, "n1")
				now := metav1.NewTime(t0)
				p.DeletionTimestamp = &now
				p.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}}
				return []*v1.Pod{p}
			}(),
			pod: prioPod("p", "1", 10, ""), nominated: "n1", statuses: map[string]framework.Code{"n1": framework.Unschedulable},
			wantCode: framework.Unschedulable, wantMsg: "preemption: not eligible due to a terminating pod on the nominated node.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRunner(tt.nodes, tt.existing...)
			pl := New(r).(*DefaultPreemption)
			tt.pod.Spec.PreemptionPolicy = tt.policy
			tt.pod.Status.NominatedNodeName = tt.nominated
			filtered := framework.NodeToStatus{Statuses: map[string]*framework.Status{},
				Absent: framework.NewStatus(framework.UnschedulableAndUnresolvable, "x")}
			for n, c := range tt.statuses {
				filtered.Statuses[n] = framework.NewStatus(c, "Insufficient cpu")
			}
			res, st := pl.PostFilter(framework.NewCycleState(), framework.NewPodInfo(tt.pod, true), filtered)
			if st.Code() != tt.wantCode || st.Message() != tt.wantMsg {
				t.Fatalf("got %v %q\nwant %v %q", st.Code(), st.Message(), tt.wantCode, tt.wantMsg)
			}
			var node string
			var victims []string
			if res != nil {
				node, victims = res.NominatedNodeName, names(res.Victims)
			}
			if node != tt.wantNode || (tt.wantVictims != nil && !reflect.DeepEqual(victims, tt.wantVictims)) {
				t.Fatalf("nominated %q victims %v, want %q %v", node, victims, tt.wantNode, tt.wantVictims)
			}
			if r.draws != 0 {
				t.Fatalf("drew %d random offsets for a small cluster", r.draws)
			}
		})
	}
}

// TestSelectVictimsOnNode: a 3-CPU node full with a (prio 1), b (2), c (3),
// each 1 CPU; the preemptor (prio 10) needs 2 CPU.
func TestSelectVictimsOnNode(t *testing.T) {
	tests := []struct {
		name           string
		pdbs           []*policyv1.PodDisruptionBudget
		want           []string
		wantViolations int
	}{
		{name: "no budgets: most important reprieved", want: []string{"b", "a"}},
		{name: "budget on the lowest pod reprieves it first", pdbs: []*policyv1.PodDisruptionBudget{budget("default", "a", 0)}, want: []string{"c", "b"}},
		{name: "budget with room is no violation", pdbs: []*policyv1.PodDisruptionBudget{budget("default", "a", 1)}, want: []string{"b", "a"}},
		{name: "already disrupted pod does not count", pdbs: []*policyv1.PodDisruptionBudget{budget("default", "a", 0, "a")}, want: []string{"b", "a"}},
		{name: "budget in another namespace", pdbs: []*policyv1.PodDisruptionBudget{budget("other", "a", 0)}, want: []string{"b", "a"}},
		{name: "every pod protected", pdbs: []*policyv1.PodDisruptionBudget{budget("default", "a", 0), budget("default", "b", 0), budget("default", "c", 0)},
			want: []string{"b", "a"}, wantViolations: 2},
		{name: "mixed: victims re-sorted by importance", pdbs: []*policyv1.PodDisruptionBudget{budget("default", "a", 0), budget("default", "b", 0)},
			want: []string{"c", "a"}, wantViolations: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods := []*v1.Pod{prioPod("a", "1", 1, "n1", "app", "a"), prioPod("b", "1", 2, "n1", "app", "b"), prioPod("c", "1", 3, "n1", "app", "c")}
			r := newRunner([]*v1.Node{plugintest.SizedNode("n1", "3", "1Gi", 10)}, pods...)
			pl := New(r).(*DefaultPreemption)
			ni := r.NodeInfos[0]
			victims, violations, st := pl.SelectVictimsOnNode(framework.NewCycleState(), framework.NewPodInfo(prioPod("p", "2", 10, ""), true), ni.Clone(), tt.pdbs)
			if !st.IsSuccess() {
				t.Fatal(st.Message())
			}
			if got := names(victims); !reflect.DeepEqual(got, tt.want) || violations != tt.wantViolations {
				t.Fatalf("victims %v violations %d, want %v %d", got, violations, tt.want, tt.wantViolations)
			}
			if len(ni.Pods) != 3 {
				t.Fatal("the snapshot's node was modified")
			}
		})
	}
}

func started(p *v1.Pod, minutes int) *v1.Pod {
	ts := metav1.NewTime(t0.Add(time.Duration(minutes) * time.Minute))
	p.Status.StartTime = &ts
	return p
}

func TestPickOneNode(t *testing.T) {
	c := func(node string, violations int, victims ...*v1.Pod) *Candidate {
		return &Candidate{Node: node, Victims: victims, NumPDBViolations: violations}
	}
	tests := []struct {
		name       string
		candidates []*Candidate
		want       string
	}{
		{name: "fewest PDB violations", candidates: []*Candidate{
			c("n1", 1, prioPod("a", "1", 0, "")), c("n2", 0, prioPod("b", "1", 50, ""))}, want: "n2"},
		{name: "lowest highest-victim priority", candidates: []*Candidate{
			c("n1", 0, prioPod("a", "1", 10, "")), c("n2", 0, prioPod("b", "1", 5, ""), prioPod("c", "1", 5, ""))}, want: "n2"},
		{name: "smallest sum of priorities", candidates: []*Candidate{
			c("n1", 0, prioPod("a", "1", 10, ""), prioPod("b", "1", 5, "")), c("n2", 0, prioPod("c", "1", 10, ""), prioPod("d", "1", 1, ""))}, want: "n2"},
		{name: "sum counts each victim shifted by 2^31", candidates: []*Candidate{
			c("n1", 0, prioPod("a", "1", 10, ""), prioPod("b", "1", -5, "")), c("n2", 0, prioPod("c", "1", 10, ""))}, want: "n2"},
		{name: "fewest victims", candidates: []*Candidate{
			c("n1", 0, prioPod("a", "1", 0, ""), prioPod("b", "1", 0, "")), c("n2", 0, prioPod("c", "1", 0, ""), prioPod("d", "1", 0, ""), prioPod("e", "1", 0, ""))}, want: "n1"},
		{name: "latest start of the highest-priority victims", candidates: []*Candidate{
			c("n1", 0, started(prioPod("a", "1", 5, ""), 1)), c("n2", 0, started(prioPod("b", "1", 5, ""), 9))}, want: "n2"},
		{name: "earliest of the highest priority counts", candidates: []*Candidate{
			c("n1", 0, started(prioPod("a", "1", 5, ""), 8), started(prioPod("b", "1", 5, ""), 2)),
			c("n2", 0, started(prioPod("c", "1", 5, ""), 4), started(prioPod("d", "1", 5, ""), 3))}, want: "n2"},
		{name: "full tie: first candidate", candidates: []*Candidate{
			c("n3", 0, prioPod("a", "1", 0, "")), c("n1", 0, prioPod("b", "1", 0, ""))}, want: "n3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PickOneNode(tt.candidates, t0); got == nil || got.Node != tt.want {
				t.Fatalf("got %v, want %s", got, tt.want)
			}
		})
	}
}

func TestNumCandidates(t *testing.T) {
	for _, tt := range []struct{ n, want int }{{1, 1}, {50, 50}, {100, 100}, {500, 100}, {1000, 100}, {2000, 200}} {
		if got := NumCandidates(tt.n); got != tt.want {
			t.Errorf("NumCandidates(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

// TestDryRunStopsEarly: with more potential nodes than candidates wanted,
// the search starts at the drawn offset and stops once enough are found.
func TestDryRunStopsEarly(t *testing.T) {
	var nodes []*v1.Node
	var pods []*v1.Pod
	filtered := framework.NodeToStatus{Statuses: map[string]*framework.Status{}}
	for i := 0; i < 120; i++ {
		name := "n" + string(rune('A'+i/26)) + string(rune('a'+i%26))
		nodes = append(nodes, plugintest.SizedNode(name, "1", "1Gi", 10))
		pods = append(pods, prioPod("v-"+name, "1", 0, name))
		filtered.Statuses[name] = framework.NewStatus(framework.Unschedulable, "Insufficient cpu")
	}
	r := newRunner(nodes, pods...)
	r.offset = 7
	pl := New(r).(*DefaultPreemption)
	cands, _, err := pl.findCandidates(framework.NewCycleState(), framework.NewPodInfo(prioPod("p", "1", 10, ""), true), r.NodeInfos, potentialNodes(r.NodeInfos, filtered), true)
	if err != nil || r.draws != 1 || len(cands) != 100 {
		t.Fatalf("err %v draws %d candidates %d", err, r.draws, len(cands))
	}
	if cands[0].Node != r.NodeInfos[7].Name() {
		t.Fatalf("search started at %s", cands[0].Node)
	}
}

// cloneCounter is cycle state that counts its copies.
type cloneCounter struct{ n *int }

func (c cloneCounter) Clone() framework.StateData { *c.n++; return c }

// TestDryRunSkipsNodesWithoutVictims: a node whose pods all have the
// preemptor's priority or more gets SelectVictimsOnNode's verdict without
// the state being copied; a node with a lower-priority pod still gets the
// full dry run.
func TestDryRunSkipsNodesWithoutVictims(t *testing.T) {
	nodes := []*v1.Node{plugintest.SizedNode("n1", "1", "1Gi", 10), plugintest.SizedNode("n2", "1", "1Gi", 10)}
	r := newRunner(nodes, prioPod("same", "1", 10, "n1"), prioPod("low", "1", 5, "n2"))
	pl := New(r).(*DefaultPreemption)
	pod := framework.NewPodInfo(prioPod("p", "1", 10, ""), true)
	filtered := framework.NodeToStatus{Statuses: map[string]*framework.Status{
		"n1": framework.NewStatus(framework.Unschedulable, "Insufficient cpu"),
		"n2": framework.NewStatus(framework.Unschedulable, "Insufficient cpu"),
	}}
	clones := 0
	state := framework.NewCycleState()
	state.Write("count", cloneCounter{n: &clones})
	cands, statuses, err := pl.findCandidates(state, pod, r.NodeInfos, potentialNodes(r.NodeInfos, filtered), true)
	if err != nil || len(cands) != 1 || cands[0].Node != "n2" || !reflect.DeepEqual(names(cands[0].Victims), []string{"low"}) {
		t.Fatalf("err %v candidates %+v", err, cands)
	}
	if clones != 1 {
		t.Fatalf("state copied %d times, want once (for n2 only)", clones)
	}
	_, _, want := pl.SelectVictimsOnNode(framework.NewCycleState(), pod, r.NodeInfos[0].Clone(), nil)
	var got *framework.Status
	for _, ns := range statuses {
		if ns.node.Name() == "n1" {
			got = ns.status
		}
	}
	if got.Code() != want.Code() || got.Message() != want.Message() || want.Message() != MsgNoVictims {
		t.Fatalf("n1: %v %q, SelectVictimsOnNode says %v %q", got.Code(), got.Message(), want.Code(), want.Message())
	}
}
