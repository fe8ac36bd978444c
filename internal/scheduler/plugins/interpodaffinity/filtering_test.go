package interpodaffinity

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

const ns = "default"

func withAffinity(p *v1.Pod, aff *v1.Affinity) *v1.Pod {
	p.Spec.Affinity = aff
	return p
}

func antiAffinity(terms ...v1.PodAffinityTerm) *v1.Affinity {
	return &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}}
}

func affinity(terms ...v1.PodAffinityTerm) *v1.Affinity {
	return &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}}
}

var (
	pass     = pt.Verdict{Code: framework.Success}
	affFail  = pt.Verdict{Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonAffinityRulesNotMatch}
	antiFail = pt.Verdict{Code: framework.Unschedulable, Reason: ErrReasonAntiAffinityRulesNotMatch}
	exFail   = pt.Verdict{Code: framework.Unschedulable, Reason: ErrReasonExistingAntiAffinityRulesNotMatch}
	web      = map[string]string{"app": "web"}
	db       = map[string]string{"app": "db"}
	zoneA    = map[string]string{pt.ZoneLabel: "z1"}
	zoneB    = map[string]string{pt.ZoneLabel: "z2"}
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name       string
		nodes      []*v1.Node
		pods       []*v1.Pod
		namespaces []*v1.Namespace
		pod        *v1.Pod
		wantPre    framework.Code
		want       map[string]pt.Verdict
	}{
		{
			// S09: the tainted n3 is TaintToleration's business; here it passes.
			name:  "S09 required anti-affinity on hostname",
			nodes: []*v1.Node{pt.Node("n1", nil), pt.Node("n2", nil), pt.Node("n3", nil, pt.NoExecute("k", "v"))},
			pods:  []*v1.Pod{pt.Pod(ns, "w1", "n1", web), pt.Pod(ns, "w2", "n2", web)},
			pod:   withAffinity(pt.Pod(ns, "new", "", web), antiAffinity(pt.Term(pt.HostLabel, web))),
			want:  map[string]pt.Verdict{"n1": antiFail, "n2": antiFail, "n3": pass},
		},
		{
			name:  "S10 required affinity with no matching pod anywhere",
			nodes: []*v1.Node{pt.Node("n1", nil), pt.Node("n2", nil)},
			pod:   withAffinity(pt.Pod(ns, "p", "", web), affinity(pt.Term(pt.HostLabel, db))),
			want:  map[string]pt.Verdict{"n1": affFail, "n2": affFail},
		},
		{
			name:  "S11 first pod of a self-selecting group passes where the key exists",
			nodes: []*v1.Node{pt.Node("n1", zoneA), pt.Node("n2", nil)},
			pod:   withAffinity(pt.Pod(ns, "p", "", db), affinity(pt.Term(pt.ZoneLabel, db))),
			want:  map[string]pt.Verdict{"n1": pass, "n2": affFail},
		},
		{
			name:  "first-pod rule does not apply once a matching pod exists",
			nodes: []*v1.Node{pt.Node("a1", zoneA), pt.Node("b1", zoneB)},
			pods:  []*v1.Pod{pt.Pod(ns, "d", "a1", db)},
			pod:   withAffinity(pt.Pod(ns, "p", "", db), affinity(pt.Term(pt.ZoneLabel, db))),
			want:  map[string]pt.Verdict{"a1": pass, "b1": affFail},
		},
		{
			name:  "affinity is checked on the zone, not the node",
			nodes: []*v1.Node{pt.Node("a1", zoneA), pt.Node("a2", zoneA), pt.Node("b1", zoneB)},
			pods:  []*v1.Pod{pt.Pod(ns, "d", "a1", db)},
			pod:   withAffinity(pt.Pod(ns, "p", "", web), affinity(pt.Term(pt.ZoneLabel, db))),
			want:  map[string]pt.Verdict{"a1": pass, "a2": pass, "b1": affFail},
		},
		{
			name:  "a pod in another namespace does not satisfy the default namespace scope",
			nodes: []*v1.Node{pt.Node("a1", zoneA)},
			pods:  []*v1.Pod{pt.Pod("other", "d", "a1", db)},
			pod:   withAffinity(pt.Pod(ns, "p", "", web), affinity(pt.Term(pt.ZoneLabel, db))),
			want:  map[string]pt.Verdict{"a1": affFail},
		},
		{
			name:  "S12 existing pod's anti-affinity is symmetric",
			nodes: []*v1.Node{pt.Node("n1", nil), pt.Node("n2", nil, pt.NoSchedule("k", "v"))},
			pods: []*v1.Pod{withAffinity(pt.Pod(ns, "e", "n1", nil),
				antiAffinity(pt.Term(pt.HostLabel, map[string]string{"app": "foo"})))},
			pod:  pt.Pod(ns, "p", "", map[string]string{"app": "foo"}),
			want: map[string]pt.Verdict{"n1": exFail, "n2": pass},
		},
		{
			name:  "existing anti-affinity on zone blocks the whole zone",
			nodes: []*v1.Node{pt.Node("a1", zoneA), pt.Node("a2", zoneA), pt.Node("b1", zoneB)},
			pods:  []*v1.Pod{withAffinity(pt.Pod(ns, "e", "a1", nil), antiAffinity(pt.Term(pt.ZoneLabel, web)))},
			pod:   pt.Pod(ns, "p", "", web),
			want:  map[string]pt.Verdict{"a1": exFail, "a2": exFail, "b1": pass},
		},
		{
			name:    "nothing to check is Skip",
			nodes:   []*v1.Node{pt.Node("n1", nil)},
			pods:    []*v1.Pod{withAffinity(pt.Pod(ns, "e", "n1", nil), antiAffinity(pt.Term(pt.HostLabel, db)))},
			pod:     pt.Pod(ns, "p", "", web),
			wantPre: framework.Skip,
		},
		{
			name:  "affinity is reported before anti-affinity",
			nodes: []*v1.Node{pt.Node("n1", nil)},
			pods:  []*v1.Pod{pt.Pod(ns, "w", "n1", web)},
			pod: withAffinity(pt.Pod(ns, "p", "", nil), &v1.Affinity{
				PodAffinity:     affinity(pt.Term(pt.HostLabel, db)).PodAffinity,
				PodAntiAffinity: antiAffinity(pt.Term(pt.HostLabel, web)).PodAntiAffinity,
			}),
			want: map[string]pt.Verdict{"n1": affFail},
		},
		{
			name:  "incoming namespaceSelector is resolved against namespaces",
			nodes: []*v1.Node{pt.Node("n1", nil), pt.Node("n2", nil), pt.Node("n3", nil)},
			namespaces: []*v1.Namespace{
				{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"team": "a"}}},
				{ObjectMeta: metav1.ObjectMeta{Name: "team-b", Labels: map[string]string{"team": "b"}}},
			},
			pods: []*v1.Pod{pt.Pod("team-a", "w1", "n1", web), pt.Pod("team-b", "w2", "n2", web), pt.Pod(ns, "w3", "n3", web)},
			pod: withAffinity(pt.Pod(ns, "p", "", nil), antiAffinity(v1.PodAffinityTerm{
				LabelSelector:     &metav1.LabelSelector{MatchLabels: web},
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
				TopologyKey:       pt.HostLabel,
			})),
			// The pod's own namespace is not included once a selector is given.
			want: map[string]pt.Verdict{"n1": antiFail, "n2": pass, "n3": pass},
		},
		{
			name:  "empty namespaceSelector means every namespace",
			nodes: []*v1.Node{pt.Node("n1", nil), pt.Node("n2", nil)},
			pods:  []*v1.Pod{pt.Pod("x", "w1", "n1", web)},
			pod: withAffinity(pt.Pod(ns, "p", "", nil), antiAffinity(v1.PodAffinityTerm{
				LabelSelector:     &metav1.LabelSelector{MatchLabels: web},
				NamespaceSelector: &metav1.LabelSelector{},
				TopologyKey:       pt.HostLabel,
			})),
			want: map[string]pt.Verdict{"n1": antiFail, "n2": pass},
		},
		{
			name:  "existing pod's namespaceSelector is matched against the incoming pod's namespace labels",
			nodes: []*v1.Node{pt.Node("n1", nil), pt.Node("n2", nil)},
			namespaces: []*v1.Namespace{
				{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"team": "a"}}},
			},
			pods: []*v1.Pod{
				withAffinity(pt.Pod("other", "e1", "n1", nil), antiAffinity(v1.PodAffinityTerm{
					LabelSelector:     &metav1.LabelSelector{MatchLabels: web},
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
					TopologyKey:       pt.HostLabel,
				})),
				withAffinity(pt.Pod("other", "e2", "n2", nil), antiAffinity(v1.PodAffinityTerm{
					LabelSelector:     &metav1.LabelSelector{MatchLabels: web},
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}},
					TopologyKey:       pt.HostLabel,
				})),
			},
			pod:  pt.Pod("team-a", "p", "", web),
			want: map[string]pt.Verdict{"n1": exFail, "n2": pass},
		},
		{
			name:  "nil labelSelector matches no pod",
			nodes: []*v1.Node{pt.Node("n1", nil)},
			pods:  []*v1.Pod{pt.Pod(ns, "w", "n1", web)},
			pod:   withAffinity(pt.Pod(ns, "p", "", nil), antiAffinity(v1.PodAffinityTerm{TopologyKey: pt.HostLabel})),
			want:  map[string]pt.Verdict{"n1": pass},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := pt.NewHandle(tt.nodes, tt.pods)
			h.NamespaceObjs = tt.namespaces
			pre, got := pt.RunFilter(New(h), h, tt.pod)
			if pre.Code() != tt.wantPre {
				t.Fatalf("PreFilter code = %v (%q), want %v", pre.Code(), pre.Message(), tt.wantPre)
			}
			if !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("verdicts = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPreFilterParseError(t *testing.T) {
	h := pt.NewHandle([]*v1.Node{pt.Node("n1", nil)}, nil)
	pod := withAffinity(pt.Pod(ns, "p", "", nil), antiAffinity(v1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}},
		TopologyKey:   pt.HostLabel,
	}))
	pre, _ := pt.RunFilter(New(h), h, pod)
	if pre.Code() != framework.UnschedulableAndUnresolvable || len(pre.Message()) < len("parsing pod: ") || pre.Message()[:13] != "parsing pod: " {
		t.Fatalf("PreFilter = %v %q, want U&U parsing pod: ...", pre.Code(), pre.Message())
	}
}

// AddPod/RemovePod (used by preemption) must move verdicts, and Clone must
// keep the copy independent.
func TestAddRemovePodAndClone(t *testing.T) {
	nodes := []*v1.Node{pt.Node("n1", nil), pt.Node("n2", nil)}
	victim := pt.Pod(ns, "w1", "n1", web)
	h := pt.NewHandle(nodes, []*v1.Pod{victim})
	pl := New(h)
	pod := withAffinity(pt.Pod(ns, "p", "", web), antiAffinity(pt.Term(pt.HostLabel, web)))
	pi := framework.NewPodInfo(pod, true)
	cs := framework.NewCycleState()
	if _, st := pl.PreFilter(cs, pi, h.Nodes()); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	n1, n2 := h.Node("n1"), h.Node("n2")
	if got := pt.VerdictOf(pl.Filter(cs, pi, n1)); got != antiFail {
		t.Fatalf("before removal n1 = %v", got)
	}
	copyState := cs.Clone()
	if st := pl.RemovePod(cs, pi, framework.NewPodInfo(victim, true), n1); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	if got := pt.VerdictOf(pl.Filter(cs, pi, n1)); got != pass {
		t.Errorf("after removal n1 = %v, want pass", got)
	}
	if got := pt.VerdictOf(pl.Filter(copyState, pi, n1)); got != antiFail {
		t.Errorf("clone was changed by RemovePod: n1 = %v", got)
	}
	// Adding a pod with anti-affinity against the incoming pod blocks n2 by symmetry.
	guard := withAffinity(pt.Pod(ns, "g", "n2", nil), antiAffinity(pt.Term(pt.HostLabel, web)))
	if st := pl.AddPod(cs, pi, framework.NewPodInfo(guard, true), n2); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	if got := pt.VerdictOf(pl.Filter(cs, pi, n2)); got != exFail {
		t.Errorf("after AddPod n2 = %v, want %v", got, exFail)
	}
}

func TestFilterWithoutPreFilterIsError(t *testing.T) {
	h := pt.NewHandle([]*v1.Node{pt.Node("n1", nil)}, nil)
	st := New(h).Filter(framework.NewCycleState(), framework.NewPodInfo(pt.Pod(ns, "p", "", nil), true), h.Node("n1"))
	if st.Code() != framework.Error {
		t.Fatalf("code = %v, want Error", st.Code())
	}
}
