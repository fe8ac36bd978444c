package scheduler

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestPodSignature: pods that differ in a field the static filters read get
// different signatures; other differences (and map order) do not count.
func TestPodSignature(t *testing.T) {
	base := func() *v1.Pod {
		return &v1.Pod{Spec: v1.PodSpec{
			NodeSelector: map[string]string{"a": "1", "b": "2"},
			Affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "z", Operator: v1.NodeSelectorOpIn, Values: []string{"x"}}}}}}}},
			Tolerations: []v1.Toleration{{Key: "k", Operator: v1.TolerationOpExists}},
		}}
	}
	ref := podSignature(base())
	sec := int64(30)
	differ := map[string]func(p *v1.Pod){
		"node name":      func(p *v1.Pod) { p.Spec.NodeName = "n1" },
		"selector value": func(p *v1.Pod) { p.Spec.NodeSelector["b"] = "3" },
		"selector key":   func(p *v1.Pod) { p.Spec.NodeSelector["c"] = "2" },
		"selector split": func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"a": "1b", "": "2"} },
		"affinity value": func(p *v1.Pod) {
			p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values[0] = "y"
		},
		"no affinity": func(p *v1.Pod) { p.Spec.Affinity = nil },
		"empty required": func(p *v1.Pod) {
			p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = nil
		},
		"toleration effect":  func(p *v1.Pod) { p.Spec.Tolerations[0].Effect = v1.TaintEffectNoSchedule },
		"toleration seconds": func(p *v1.Pod) { p.Spec.Tolerations[0].TolerationSeconds = &sec },
		"second toleration":  func(p *v1.Pod) { p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: "k2"}) },
	}
	for name, change := range differ {
		p := base()
		change(p)
		if podSignature(p) == ref {
			t.Errorf("%s: same signature", name)
		}
	}
	same := map[string]func(p *v1.Pod){
		"labels":            func(p *v1.Pod) { p.Labels = map[string]string{"app": "x"} },
		"selector rebuilt":  func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"b": "2", "a": "1"} },
		"containers":        func(p *v1.Pod) { p.Spec.Containers = []v1.Container{{Name: "c"}} },
		"scheduling status": func(p *v1.Pod) { p.Status.NominatedNodeName = "n2" },
	}
	for name, change := range same {
		p := base()
		change(p)
		if podSignature(p) != ref {
			t.Errorf("%s: signature changed", name)
		}
	}
}
