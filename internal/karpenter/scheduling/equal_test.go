package scheduling

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestSameValues(t *testing.T) {
	in := func(v ...string) *Requirement { return NewRequirement("k", corev1.NodeSelectorOpIn, v...) }
	notIn := func(v ...string) *Requirement { return NewRequirement("k", corev1.NodeSelectorOpNotIn, v...) }
	for _, tc := range []struct {
		name string
		a, b *Requirement
		want bool
	}{
		{"same set, other order", in("a", "b"), in("b", "a"), true},
		{"different value", in("a", "b"), in("a", "c"), false},
		{"subset", in("a"), in("a", "b"), false},
		{"both empty", NewRequirement("k", corev1.NodeSelectorOpDoesNotExist), in(), true},
		{"excluded values compared", notIn("a"), notIn("a"), true},
		{"excluded values differ", notIn("a"), notIn("b"), false},
		{"exists and empty in", NewRequirement("k", corev1.NodeSelectorOpExists), in(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.SameValues(tc.b); got != tc.want {
				t.Errorf("SameValues = %v, want %v", got, tc.want)
			}
			// The definition it replaces: sorted value lists compared.
			if got := slices.Equal(tc.a.Values(), tc.b.Values()); got != tc.want {
				t.Errorf("Values() comparison = %v, want %v", got, tc.want)
			}
		})
	}
}
