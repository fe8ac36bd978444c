package interpodaffinity

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func preferred(aff, anti []v1.WeightedPodAffinityTerm) *v1.Affinity {
	a := &v1.Affinity{}
	if aff != nil {
		a.PodAffinity = &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: aff}
	}
	if anti != nil {
		a.PodAntiAffinity = &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: anti}
	}
	return a
}

func TestScore(t *testing.T) {
	threeNodes := []*v1.Node{pt.Node("a1", zoneA), pt.Node("a2", zoneA), pt.Node("b1", zoneB)}
	tests := []struct {
		name     string
		nodes    []*v1.Node
		pods     []*v1.Pod
		pod      *v1.Pod
		args     *Args
		wantSkip bool
		wantRaw  map[string]int64
		wantNorm map[string]int64
	}{
		{
			// Worked example C (upstream's verbose log).
			name:  "example C: preferred affinity to db on zone, anti-affinity to web on hostname",
			nodes: threeNodes,
			pods:  []*v1.Pod{pt.Pod(ns, "db", "a1", db), pt.Pod(ns, "web", "b1", web)},
			pod: withAffinity(pt.Pod(ns, "p", "", nil), preferred(
				[]v1.WeightedPodAffinityTerm{pt.Weighted(50, pt.Term(pt.ZoneLabel, db))},
				[]v1.WeightedPodAffinityTerm{pt.Weighted(20, pt.Term(pt.HostLabel, web))})),
			wantRaw:  map[string]int64{"a1": 50, "a2": 50, "b1": -20},
			wantNorm: map[string]int64{"a1": 100, "a2": 100, "b1": 0},
		},
		{
			name:  "existing pod's required affinity adds HardPodAffinityWeight, its preferred anti-affinity subtracts",
			nodes: threeNodes,
			pods: []*v1.Pod{
				withAffinity(pt.Pod(ns, "e1", "a1", nil), affinity(pt.Term(pt.ZoneLabel, web))),
				withAffinity(pt.Pod(ns, "e2", "b1", nil), preferred(nil,
					[]v1.WeightedPodAffinityTerm{pt.Weighted(30, pt.Term(pt.HostLabel, web))})),
			},
			pod:      pt.Pod(ns, "p", "", web),
			wantRaw:  map[string]int64{"a1": 1, "a2": 1, "b1": -30},
			wantNorm: map[string]int64{"a1": 100, "a2": 100, "b1": 0},
		},
		{
			name:  "a larger HardPodAffinityWeight is used as is",
			nodes: threeNodes,
			pods: []*v1.Pod{
				withAffinity(pt.Pod(ns, "e1", "a1", nil), affinity(pt.Term(pt.HostLabel, web))),
				withAffinity(pt.Pod(ns, "e2", "b1", nil), preferred(
					[]v1.WeightedPodAffinityTerm{pt.Weighted(7, pt.Term(pt.ZoneLabel, web))}, nil)),
			},
			pod:      pt.Pod(ns, "p", "", web),
			args:     &Args{HardPodAffinityWeight: 10},
			wantRaw:  map[string]int64{"a1": 10, "a2": 0, "b1": 7},
			wantNorm: map[string]int64{"a1": 100, "a2": 0, "b1": 70},
		},
		{
			name:  "terms that cancel out: min-max over mixed signs",
			nodes: threeNodes,
			pods:  []*v1.Pod{pt.Pod(ns, "d1", "a1", db), pt.Pod(ns, "d2", "b1", db), pt.Pod(ns, "d3", "b1", db)},
			pod: withAffinity(pt.Pod(ns, "p", "", nil), preferred(
				[]v1.WeightedPodAffinityTerm{pt.Weighted(1, pt.Term(pt.HostLabel, db))},
				[]v1.WeightedPodAffinityTerm{pt.Weighted(1, pt.Term(pt.ZoneLabel, db))})),
			// a1: +1 host −1 zone = 0; a2: −1; b1: +2 −2 = 0 → all but a2 equal.
			wantRaw:  map[string]int64{"a1": 0, "a2": -1, "b1": 0},
			wantNorm: map[string]int64{"a1": 100, "a2": 0, "b1": 100},
		},
		{
			name:     "no terms anywhere is Skip",
			nodes:    threeNodes,
			pods:     []*v1.Pod{pt.Pod(ns, "d1", "a1", db)},
			pod:      pt.Pod(ns, "p", "", web),
			wantSkip: true,
		},
		{
			name:  "pods on nodes without labels are ignored",
			nodes: []*v1.Node{pt.BareNode("x", nil), pt.Node("a1", zoneA)},
			pods:  []*v1.Pod{pt.Pod(ns, "d1", "x", db)},
			pod: withAffinity(pt.Pod(ns, "p", "", nil), preferred(
				[]v1.WeightedPodAffinityTerm{pt.Weighted(5, pt.Term(pt.ZoneLabel, db))}, nil)),
			wantSkip: true,
		},
		{
			name:     "IgnorePreferredTermsOfExistingPods skips a pod without terms",
			nodes:    threeNodes,
			pods:     []*v1.Pod{withAffinity(pt.Pod(ns, "e1", "a1", nil), affinity(pt.Term(pt.ZoneLabel, web)))},
			pod:      pt.Pod(ns, "p", "", web),
			args:     &Args{HardPodAffinityWeight: 1, IgnorePreferredTermsOfExistingPods: true},
			wantSkip: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := pt.NewHandle(tt.nodes, tt.pods)
			pl := New(h)
			if tt.args != nil {
				pl = NewWithArgs(h, *tt.args)
			}
			st, raw, norm := pt.RunScore(pl, h, tt.pod, nil)
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
