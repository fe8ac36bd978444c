package podtopologyspread

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

var w = map[string]string{"app": "w"}

func ownedBy(p *v1.Pod, kind, name string) *v1.Pod {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, Controller: ptr.To(true)}}
	return p
}

func rsPod(name, node string) *v1.Pod { return ownedBy(pt.Pod(ns, name, node, w), "ReplicaSet", "rs") }

var rs = &appsv1.ReplicaSet{
	ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rs"},
	Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: w}},
}

func TestScore(t *testing.T) {
	tests := []struct {
		name     string
		nodes    []*v1.Node
		pods     []*v1.Pod
		services []*v1.Service
		pod      *v1.Pod
		feasible []string
		wantSkip bool
		wantRaw  map[string]int64
		wantNorm map[string]int64
	}{
		{
			// Worked example B (upstream's verbose log): ln(3+2) for hostname, ln(2+2) for zone.
			name:     "example B: system defaults from a ReplicaSet",
			nodes:    []*v1.Node{pt.Node("a1", zoneA), pt.Node("a2", zoneA), pt.Node("b1", zoneB)},
			pods:     []*v1.Pod{rsPod("r1", "a1"), rsPod("r2", "a1"), rsPod("r3", "b1")},
			pod:      rsPod("new", ""),
			wantRaw:  map[string]int64{"a1": 12, "a2": 9, "b1": 9},
			wantNorm: map[string]int64{"a1": 75, "a2": 100, "b1": 100},
		},
		{
			// No zone labels: every node is in the implicit zone "" (size 1), which
			// collects all pods, but the nodes themselves skip the zone term.
			name:  "system defaults from a Service, nodes without zones",
			nodes: []*v1.Node{pt.Node("n1", nil), pt.Node("n2", nil)},
			pods:  []*v1.Pod{pt.Pod(ns, "w1", "n1", web), pt.Pod("other", "o", "n2", web)},
			services: []*v1.Service{
				{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: v1.ServiceSpec{Selector: web}},
				{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "headless"}},
			},
			pod: pt.Pod(ns, "p", "", web),
			// n1: 1·ln4 + 2 = 3.39 → 3; n2: 0 + 2 = 2.
			wantRaw:  map[string]int64{"n1": 3, "n2": 2},
			wantNorm: map[string]int64{"n1": 66, "n2": 100},
		},
		{
			name:  "the \"\" zone domain counts toward the zone weight and collects its pods",
			nodes: []*v1.Node{pt.Node("a1", zoneA), pt.Node("n0", nil)},
			pods:  []*v1.Pod{rsPod("r1", "a1"), rsPod("r2", "n0"), rsPod("r3", "n0")},
			pod:   rsPod("new", ""),
			// hostname ln4, zone {z1, ""} ln4. a1: 1·ln4+2 + 1·ln4+4 = 8.77 → 9; n0: 2·ln4+2 = 4.77 → 5.
			wantRaw:  map[string]int64{"a1": 9, "n0": 5},
			wantNorm: map[string]int64{"a1": 55, "n0": 100},
		},
		{
			name:     "a pod without owners or services is not spread",
			nodes:    []*v1.Node{pt.Node("a1", zoneA)},
			pods:     []*v1.Pod{pt.Pod(ns, "w1", "a1", web)},
			services: []*v1.Service{{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "web"}, Spec: v1.ServiceSpec{Selector: web}}},
			pod:      pt.Pod(ns, "p", "", web),
			wantSkip: true,
		},
		{
			name: "own ScheduleAnyway constraint: missing key ignores the node; infeasible nodes still count",
			nodes: []*v1.Node{
				pt.Node("a1", zoneA), pt.Node("a2", zoneA), pt.Node("b1", zoneB), pt.Node("x", nil),
			},
			pods:     []*v1.Pod{pt.Pod(ns, "w1", "a1", web), pt.Pod(ns, "w2", "a1", web), pt.Pod(ns, "w3", "a2", web)},
			pod:      withSpread(pt.Pod(ns, "p", "", web), spread(pt.ZoneLabel, 1, v1.ScheduleAnyway, web)),
			feasible: []string{"a1", "b1", "x"},
			// zone {z1, z2} weight ln4; z1 holds 3 pods (a2 is infeasible but counted): 3·1.386 = 4.16 → 4.
			wantRaw:  map[string]int64{"a1": 4, "b1": 0, "x": 0},
			wantNorm: map[string]int64{"a1": 0, "b1": 100, "x": 0},
		},
		{
			name:  "hostname weight uses the number of non-ignored feasible nodes",
			nodes: []*v1.Node{pt.Node("n1", nil), pt.Node("n2", nil), pt.Node("n3", nil), pt.BareNode("bare", nil)},
			pods: []*v1.Pod{
				pt.Pod(ns, "w1", "n1", web), pt.Pod(ns, "w2", "n1", web), pt.Pod(ns, "w3", "n1", web), pt.Pod(ns, "w4", "n2", web),
			},
			pod: withSpread(pt.Pod(ns, "p", "", web), spread(pt.HostLabel, 2, v1.ScheduleAnyway, web)),
			// size 3 → ln5 = 1.609. n1: 3·1.609+1 = 5.83 → 6; n2: 2.61 → 3; n3: 1.
			wantRaw:  map[string]int64{"n1": 6, "n2": 3, "n3": 1, "bare": 0},
			wantNorm: map[string]int64{"n1": 16, "n2": 66, "n3": 100, "bare": 0},
		},
		{
			name:     "all raw scores 0 normalize to 100",
			nodes:    []*v1.Node{pt.Node("a1", zoneA), pt.Node("b1", zoneB)},
			pod:      withSpread(pt.Pod(ns, "p", "", web), spread(pt.ZoneLabel, 1, v1.ScheduleAnyway, web)),
			wantRaw:  map[string]int64{"a1": 0, "b1": 0},
			wantNorm: map[string]int64{"a1": 100, "b1": 100},
		},
		{
			name:     "DoNotSchedule constraints do not score, and do not fall back to defaults",
			nodes:    []*v1.Node{pt.Node("a1", zoneA)},
			pods:     []*v1.Pod{rsPod("r1", "a1")},
			pod:      withSpread(rsPod("new", ""), spread(pt.ZoneLabel, 1, v1.DoNotSchedule, w)),
			wantSkip: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := pt.NewHandle(tt.nodes, tt.pods)
			h.ServiceObjs = tt.services
			h.ReplicaSetObjs = []*appsv1.ReplicaSet{rs}
			st, raw, norm := pt.RunScore(New(h), h, tt.pod, tt.feasible)
			if tt.wantSkip {
				if st.Code() != framework.Skip {
					t.Fatalf("PreScore = %v, want Skip", st.Code())
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatalf("status %v %q", st.Code(), st.Message())
			}
			if got := pt.Scores(raw); !reflect.DeepEqual(got, tt.wantRaw) {
				t.Errorf("raw = %v, want %v", got, tt.wantRaw)
			}
			if got := pt.Scores(norm); !reflect.DeepEqual(got, tt.wantNorm) {
				t.Errorf("normalized = %v, want %v", got, tt.wantNorm)
			}
		})
	}
}
