package scheduler

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// runOne schedules pod in a fresh state and returns the diagnosis.
func runOne(t *testing.T, s *cluster.State, pod *v1.Pod) *Diagnosis {
	t.Helper()
	sc := New()
	sc.RecordScores = true
	if _, err := sc.Sync(s); err != nil {
		t.Fatal(err)
	}
	d := sc.LastDiagnosis(cluster.Key(pod.Namespace, pod.Name))
	if d == nil {
		t.Fatal("no diagnosis")
	}
	return d
}

func totalsByNode(d *Diagnosis) map[string]int64 {
	out := map[string]int64{}
	for i, n := range d.Feasible {
		out[n] = d.Totals[i]
	}
	return out
}

func pluginScores(d *Diagnosis, plugin string) map[string]int64 {
	out := map[string]int64{}
	for _, ns := range d.Scores[plugin] {
		out[ns.Name] = ns.Score
	}
	return out
}

// TestWorkedExampleA is worked example A (scores read from upstream's verbose log): totals per version.
func TestWorkedExampleA(t *testing.T) {
	tests := []struct {
		version string
		want    map[string]int64
	}{
		{"1.36", map[string]int64{"a": 437, "b": 162, "c": 641}},
		{"1.34", map[string]int64{"a": 462, "b": 187, "c": 655}},
		{"1.33", map[string]int64{"a": 462, "b": 187, "c": 655}},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			a := zoned(plugintest.SizedNode("a", "4", "8Gi", 110), "z1")
			b := plugintest.WithTaints(plugintest.SizedNode("b", "4", "8Gi", 110), taint("soft", "x", v1.TaintEffectPreferNoSchedule))
			c := plugintest.WithLabels(zoned(plugintest.SizedNode("c", "8", "8Gi", 110), "z2"), "disk", "ssd")
			pod := plugintest.SizedPod("p", "500m", "1Gi")
			pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
				Weight: 10, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "disk", Operator: v1.NodeSelectorOpIn, Values: []string{"ssd"}}}}}}}}
			s := newState(tt.version, []*v1.Node{a, b, c},
				plugintest.OnNode(plugintest.SizedPod("pa", "1", "2Gi"), "a"), plugintest.OnNode(plugintest.SizedPod("pc", "3", "1Gi"), "c"), pod)
			d := runOne(t, s, pod)
			got := totalsByNode(d)
			for n, w := range tt.want {
				if got[n] != w {
					t.Errorf("total %s = %d, want %d (all %v)", n, got[n], w, got)
				}
			}
			if pod.Spec.NodeName != "c" {
				t.Fatalf("scheduled to %q, want c", pod.Spec.NodeName)
			}
		})
	}
}

// TestWorkedExampleB is worked example B (upstream's verbose log): system
// default spreading of a ReplicaSet, run through the real handle for each
// owner the default selector reads from the state (ReplicaSet, StatefulSet,
// a Service).
func TestWorkedExampleB(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w"}}
	tests := []struct {
		name  string
		owner *metav1.OwnerReference
		add   func(s *cluster.State)
		// want is the PodTopologySpread score; nil means no default constraints.
		want     map[string]int64
		wantNode string
	}{
		{name: "ReplicaSet",
			owner: &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: boolPtr(true)},
			add: func(s *cluster.State) {
				s.ReplicaSets["default/rs"] = &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "default", UID: "rs-uid"},
					Spec: appsv1.ReplicaSetSpec{Selector: sel}}
			},
			want: map[string]int64{"a1": 75, "a2": 100, "b1": 100}, wantNode: "a2"},
		{name: "StatefulSet",
			owner: &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "ss", UID: "ss-uid", Controller: boolPtr(true)},
			add: func(s *cluster.State) {
				s.StatefulSets["default/ss"] = &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "ss", Namespace: "default", UID: "ss-uid"},
					Spec: appsv1.StatefulSetSpec{Selector: sel}}
			},
			want: map[string]int64{"a1": 75, "a2": 100, "b1": 100}, wantNode: "a2"},
		{name: "Service",
			add: func(s *cluster.State) {
				s.Services["default/svc"] = &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "default"},
					Spec: v1.ServiceSpec{Selector: map[string]string{"app": "w"}}}
			},
			want: map[string]int64{"a1": 75, "a2": 100, "b1": 100}, wantNode: "a2"},
		{name: "StatefulSet missing from the state",
			owner: &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "ss", UID: "ss-uid", Controller: boolPtr(true)},
			add:   func(*cluster.State) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ownedPod := func(name, node string) *v1.Pod {
				p := labelled(plugintest.SizedPod(name, "100m", "128Mi"), "app", "w")
				if tt.owner != nil {
					p.OwnerReferences = []metav1.OwnerReference{*tt.owner}
				}
				if node != "" {
					plugintest.OnNode(p, node)
				}
				return p
			}
			nodes := []*v1.Node{zoned(plugintest.SizedNode("a1", "4", "8Gi", 110), "z1"), zoned(plugintest.SizedNode("a2", "4", "8Gi", 110), "z1"), zoned(plugintest.SizedNode("b1", "4", "8Gi", 110), "z2")}
			pod := ownedPod("new", "")
			s := newState("1.36", nodes, ownedPod("e1", "a1"), ownedPod("e2", "a1"), ownedPod("e3", "b1"), pod)
			tt.add(s)
			d := runOne(t, s, pod)
			got := pluginScores(d, "PodTopologySpread")
			if tt.want == nil {
				for n, v := range got {
					if v != 0 {
						t.Errorf("PodTopologySpread %s = %d, want 0 (no default constraints)", n, v)
					}
				}
				return
			}
			for n, w := range tt.want {
				if got[n] != w {
					t.Errorf("PodTopologySpread %s = %d, want %d", n, got[n], w)
				}
			}
			if pod.Spec.NodeName != tt.wantNode {
				t.Fatalf("scheduled to %q, want %s (totals %v)", pod.Spec.NodeName, tt.wantNode, totalsByNode(d))
			}
		})
	}
}

// TestWorkedExampleC is worked example C (upstream's verbose log): preferred pod (anti-)affinity.
func TestWorkedExampleC(t *testing.T) {
	nodes := []*v1.Node{zoned(plugintest.SizedNode("a1", "4", "8Gi", 110), "z1"), zoned(plugintest.SizedNode("a2", "4", "8Gi", 110), "z1"), zoned(plugintest.SizedNode("b1", "4", "8Gi", 110), "z2")}
	pod := plugintest.SizedPod("p", "100m", "128Mi")
	pod.Spec.Affinity = &v1.Affinity{
		PodAffinity:     &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 50, PodAffinityTerm: appTerm("db", v1.LabelTopologyZone)}}},
		PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 20, PodAffinityTerm: appTerm("web", v1.LabelHostname)}}},
	}
	s := newState("1.36", nodes, plugintest.OnNode(labelled(plugintest.SizedPod("db", "", ""), "app", "db"), "a1"),
		plugintest.OnNode(labelled(plugintest.SizedPod("web", "", ""), "app", "web"), "b1"), pod)
	d := runOne(t, s, pod)
	got := pluginScores(d, "InterPodAffinity")
	for n, w := range map[string]int64{"a1": 100, "a2": 100, "b1": 0} {
		if got[n] != w {
			t.Errorf("InterPodAffinity %s = %d, want %d", n, got[n], w)
		}
	}
	if pod.Spec.NodeName == "b1" {
		t.Fatal("scheduled to b1")
	}
}

// TestWorkedExampleD is worked example D (upstream's verbose log): a best-effort pod.
func TestWorkedExampleD(t *testing.T) {
	for _, ver := range []string{"1.33", "1.36"} {
		t.Run(ver, func(t *testing.T) {
			pod := plugintest.SizedPod("p", "", "")
			s := newState(ver, []*v1.Node{plugintest.SizedNode("a", "4", "8Gi", 110), plugintest.SizedNode("b", "4", "8Gi", 110)},
				plugintest.OnNode(plugintest.SizedPod("e1", "", ""), "a"), plugintest.OnNode(plugintest.SizedPod("e2", "", ""), "a"), pod)
			d := runOne(t, s, pod)
			if _, ok := d.Scores["NodeResourcesBalancedAllocation"]; ok {
				t.Error("BalancedAllocation was not skipped")
			}
			fit := pluginScores(d, "NodeResourcesFit")
			if fit["a"] != 92 || fit["b"] != 97 {
				t.Errorf("fit = %v", fit)
			}
			totals := totalsByNode(d)
			if totals["a"] != 392 || totals["b"] != 397 {
				t.Errorf("totals = %v", totals)
			}
			if pod.Spec.NodeName != "b" {
				t.Fatalf("scheduled to %q", pod.Spec.NodeName)
			}
		})
	}
}

func boolPtr(b bool) *bool { return &b }
