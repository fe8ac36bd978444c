package controllerutil

import (
	"math/rand"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestSelectorMatcherAgrees compares SelectorMatcher with the generic
// selector on random selectors (nil, empty, matchLabels, expressions, empty
// values) and random label maps.
func TestSelectorMatcherAgrees(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	keys := []string{"app", "tier", "x"}
	vals := []string{"", "a", "b"}
	randMap := func() map[string]string {
		m := map[string]string{}
		for _, k := range keys {
			if r.Intn(2) == 0 {
				m[k] = vals[r.Intn(len(vals))]
			}
		}
		return m
	}
	for i := 0; i < 2000; i++ {
		var ls *metav1.LabelSelector
		if r.Intn(10) != 0 {
			ls = &metav1.LabelSelector{}
			if r.Intn(4) != 0 {
				ls.MatchLabels = randMap()
			}
			if r.Intn(4) == 0 {
				ls.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: keys[r.Intn(3)], Operator: metav1.LabelSelectorOpExists}}
			}
		}
		sel, err := metav1.LabelSelectorAsSelector(ls)
		match, err2 := SelectorMatcher(ls)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("%v: errors differ: %v / %v", ls, err, err2)
		}
		if err != nil {
			continue
		}
		for j := 0; j < 10; j++ {
			l := randMap()
			if r.Intn(5) == 0 {
				l = nil
			}
			if got, want := match(l), sel.Matches(labels.Set(l)); got != want {
				t.Fatalf("selector %v, labels %v: got %v, want %v", ls, l, got, want)
			}
			if ls != nil {
				tmpl := labels.Set(ls.MatchLabels).AsSelectorPreValidated()
				if got, want := HasLabels(l, ls.MatchLabels), tmpl.Matches(labels.Set(l)); got != want {
					t.Fatalf("template labels %v, labels %v: got %v, want %v", ls.MatchLabels, l, got, want)
				}
			}
		}
	}
	if _, err := SelectorMatcher(&metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "v"}}); err == nil {
		t.Errorf("an invalid key must fail")
	}
}
