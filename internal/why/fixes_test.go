package why

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestUntoleratedAndText(t *testing.T) {
	taints := []corev1.Taint{
		{Key: "frontend", Value: "true", Effect: corev1.TaintEffectNoExecute},
		{Key: "soft", Value: "x", Effect: corev1.TaintEffectPreferNoSchedule},
		{Key: "CriticalAddonsOnly", Effect: corev1.TaintEffectNoSchedule},
	}
	for _, tc := range []struct {
		name string
		tols []corev1.Toleration
		want []string
	}{
		{"none tolerated; PreferNoSchedule never blocks", nil, []string{"frontend=true:NoExecute", "CriticalAddonsOnly:NoSchedule"}},
		{"exists on key", []corev1.Toleration{{Key: "frontend", Operator: corev1.TolerationOpExists}}, []string{"CriticalAddonsOnly:NoSchedule"}},
		{"wrong value", []corev1.Toleration{{Key: "frontend", Operator: corev1.TolerationOpEqual, Value: "false"}},
			[]string{"frontend=true:NoExecute", "CriticalAddonsOnly:NoSchedule"}},
		{"tolerate everything", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := untolerated(taints, tc.tols)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if taintText(got[i]) != tc.want[i] {
					t.Errorf("[%d] = %s, want %s", i, taintText(got[i]), tc.want[i])
				}
			}
		})
	}
}

func TestRuleCandidates(t *testing.T) {
	zone := corev1.NodeSelectorRequirement{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"eu-west-1a"}}
	arch := corev1.NodeSelectorRequirement{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"role": "scaler"},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zone, arch}}}}}},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule}},
	}}
	got := ruleCandidates(pod)
	want := []string{
		"drop nodeSelector role=scaler",
		"drop required node affinity topology.kubernetes.io/zone In [eu-west-1a]",
		"drop required node affinity kubernetes.io/arch In [arm64]",
		"make topology spread on topology.kubernetes.io/zone soft (whenUnsatisfiable: ScheduleAnyway)",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d candidates, want %d", len(got), len(want))
	}
	for i, c := range got {
		if c.fix.Change != want[i] {
			t.Errorf("[%d] = %q, want %q", i, c.fix.Change, want[i])
		}
	}
	// Dropping one expression keeps the other; the original is untouched.
	terms := got[1].pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchExpressions) != 1 || terms[0].MatchExpressions[0].Key != arch.Key {
		t.Errorf("after dropping the zone: %+v", terms)
	}
	if n := len(pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions); n != 2 {
		t.Errorf("the original pod lost an expression (%d left)", n)
	}

	// The last expression of the only term takes the requirement with it:
	// an empty term would match no node.
	single := &corev1.Pod{Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}}}}}}
	c := ruleCandidates(single)
	if len(c) != 1 || c[0].pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		t.Errorf("dropping the only expression should drop the requirement: %+v", c)
	}
}

func TestRequestCandidates(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")}}},
		{Name: "b", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}},
	}}}
	r := &Report{SchedulerLayer: &SchedulerLayer{Capacity: []NodeCapacity{
		{Node: "full", Resources: []ResourceNumbers{{Resource: "cpu", Requested: 500, Used: 1930, Allocatable: 1930}}},
		{Node: "tight", Resources: []ResourceNumbers{{Resource: "cpu", Requested: 500, Used: 1730, Allocatable: 1930}}},
		{Node: "roomy", Resources: []ResourceNumbers{{Resource: "cpu", Requested: 500, Used: 1530, Allocatable: 1930}}},
		{Node: "pods", Resources: []ResourceNumbers{{Resource: "pods", Requested: 1, Used: 29, Allocatable: 29}}},
	}}}
	got := requestCandidates(pod, r)
	if len(got) != 1 {
		t.Fatalf("got %d candidates, want 1", len(got))
	}
	if want := "lower requests to cpu 400m (from 500m)"; got[0].fix.Change != want || got[0].fix.Size != 20 {
		t.Errorf("fix = %+v, want %q with size 20", got[0].fix, want)
	}
	// Each container keeps its share of the pod's request.
	a := got[0].pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
	b := got[0].pod.Spec.Containers[1].Resources.Requests[corev1.ResourceCPU]
	if a.MilliValue() != 240 || b.MilliValue() != 160 {
		t.Errorf("containers = %dm, %dm; want 240m, 160m", a.MilliValue(), b.MilliValue())
	}
}

func TestWhere(t *testing.T) {
	for _, tc := range []struct {
		line NodeGroupLine
		want string
	}{
		{NodeGroupLine{Count: 1, Nodes: []string{"n1"}, NodeGroups: []string{"graviton"}, InstanceTypes: []string{"t4g.medium"}, Zones: []string{"us-west-2a"}},
			"n1 (graviton; t4g.medium; us-west-2a)"},
		{NodeGroupLine{Count: 1, Nodes: []string{"kind-worker"}}, "kind-worker"},
		{NodeGroupLine{Count: 3, Nodes: []string{"a", "b", "c"}, Zones: []string{"a", "b", "c", "d", "e", "f"}}, "(a, b, c, d and 2 more)"},
		{NodeGroupLine{Count: 2, Nodes: []string{"a", "b"}}, ""},
	} {
		if got := where(tc.line); got != tc.want {
			t.Errorf("where(%+v) = %q, want %q", tc.line, got, tc.want)
		}
	}
}
