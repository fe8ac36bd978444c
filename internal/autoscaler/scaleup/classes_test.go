package scaleup

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestClassesMatchJSONKey: pods share a class exactly when they share an
// owner and their specs (less the node name) encode alike — structurally
// equal specs, and specs that differ in form only.
func TestClassesMatchJSONKey(t *testing.T) {
	base := func(owner string) *corev1.Pod { return testPods(owner, 1, 100, 128)[0] }
	for _, tc := range []struct {
		name string
		b    func() *corev1.Pod
		same bool
	}{
		{"same owner and spec", func() *corev1.Pod { return base("a") }, true},
		{"node name ignored", func() *corev1.Pod { p := base("a"); p.Spec.NodeName = "n1"; return p }, true},
		{"empty against nil tolerations", func() *corev1.Pod { p := base("a"); p.Spec.Tolerations = []corev1.Toleration{}; return p }, true},
		{"other requests", func() *corev1.Pod { return testPods("a", 1, 200, 128)[0] }, false},
		{"other selector", func() *corev1.Pod {
			p := base("a")
			p.Spec.NodeSelector = map[string]string{"pool": "x"}
			return p
		}, false},
		{"other owner", func() *corev1.Pod { return base("b") }, false},
		{"no owner", func() *corev1.Pod { p := base("a"); p.OwnerReferences = nil; return p }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c classes
			a, b := base("a"), tc.b()
			ka, kb := c.key(a), c.key(b)
			if ka == "" {
				t.Fatalf("owned pod got no class")
			}
			if (ka == kb) != tc.same {
				t.Fatalf("classes %q and %q, want same=%v", ka, kb, tc.same)
			}
			if c.key(a) != ka || c.key(b) != kb {
				t.Fatalf("class changed on a second look")
			}
		})
	}
}
