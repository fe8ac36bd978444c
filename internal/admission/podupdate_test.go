package admission

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/version"
)

func TestValidatePodUpdate(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	base := func() *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{{Name: "a", Image: "nginx:1"}},
			TerminationGracePeriodSeconds: i64(-5),
			Tolerations:                   []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: i64(10)}},
			SchedulingGates:               []corev1.PodSchedulingGate{{Name: "g"}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "a", Operator: corev1.NodeSelectorOpExists}}}},
			}}},
		}}
	}
	tests := []struct {
		name   string
		change func(p *corev1.Pod)
		want   string // "" when legal
	}{
		{"grace period negative to 1", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = i64(1) }, ""},
		{"grace period negative to 2", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = i64(2) }, "spec: Forbidden: pod updates may not change fields other than"},
		{"tolerationSeconds may change", func(p *corev1.Pod) { p.Spec.Tolerations[0].TolerationSeconds = i64(99) }, ""},
		{"gate removed", func(p *corev1.Pod) { p.Spec.SchedulingGates = nil }, ""},
		{"gated: affinity requirement added", func(p *corev1.Pod) {
			term := &p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0]
			term.MatchExpressions = append(term.MatchExpressions, corev1.NodeSelectorRequirement{Key: "b", Operator: corev1.NodeSelectorOpExists})
		}, ""},
		{"gated: affinity term added", func(p *corev1.Pod) {
			ns := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
			ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, corev1.NodeSelectorTerm{})
		}, "no additions/deletions to non-empty NodeSelectorTerms list are allowed"},
		{"deadline out of range", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = i64(-1) }, "must be between 0 and 2147483647, inclusive"},
		{"mirror annotation", func(p *corev1.Pod) { p.Annotations = map[string]string{"kubernetes.io/config.mirror": "x"} }, "may not add mirror pod annotation"},
		{"ephemeral containers only by subresource", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg", Image: "busybox"}}}
		}, "pod updates may not change fields other than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := base()
			tc.change(p)
			err := ValidatePodUpdate(p, base(), version.Version{Major: 1, Minor: 36, Patch: -1})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestPodUpdateMessageByVersion(t *testing.T) {
	old := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "x"}}}}
	changed := old.DeepCopy()
	changed.Spec.HostNetwork = true
	for minor, want := range map[int]string{
		26: "(only additions to existing tolerations) or `spec.terminationGracePeriodSeconds`",
		27: "`spec.containers[*].image`,`spec.initContainers[*].image`,",
	} {
		err := ValidatePodUpdate(changed, old, version.Version{Major: 1, Minor: minor, Patch: -1})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("1.%d: error = %v, want it to contain %q", minor, err, want)
		}
	}
}
