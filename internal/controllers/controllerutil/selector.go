package controllerutil

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// SelectorMatcher is LabelSelectorAsSelector's Matches as a function of a
// label map (docs/simulation-speed.md#label-selectors-made-of-matchlabels-session-22).
// A selector of matchLabels only — what workload templates almost always
// carry — becomes a plain lookup per label: each of its requirements is
// "key present with exactly this value", and the generic requirement
// machinery cost more than the rest of a settled ReplicaSet pass at 100,000
// pods. Any other selector (nil, empty, with expressions) uses the generic
// one. Invalid selectors fail as LabelSelectorAsSelector fails.
func SelectorMatcher(ls *metav1.LabelSelector) (func(map[string]string) bool, error) {
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, err
	}
	if ls == nil || len(ls.MatchExpressions) > 0 || len(ls.MatchLabels) == 0 {
		return func(l map[string]string) bool { return sel.Matches(labels.Set(l)) }, nil
	}
	want := ls.MatchLabels
	return func(l map[string]string) bool { return HasLabels(l, want) }, nil
}

// HasLabels reports whether l carries every label of want with its value:
// what labels.Set(want).AsSelectorPreValidated() matches (an empty want
// matches everything, as that selector does).
func HasLabels(l, want map[string]string) bool {
	for k, v := range want {
		if got, ok := l[k]; !ok || got != v {
			return false
		}
	}
	return true
}
