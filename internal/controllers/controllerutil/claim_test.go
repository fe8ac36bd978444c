package controllerutil

import (
	"testing"

	"github.com/berth-sim/berth/internal/cluster"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Three orphans to adopt and one owned pod to release, the latter first in
// key order: the merged write list used to share the adopt list's array,
// so sorting it turned the release into an adoption and one adoption into
// a release. Both claim paths must adopt b, c, d and release a.
func TestClaimPodsAdoptAndRelease(t *testing.T) {
	owner := &metav1.ObjectMeta{Name: "o", Namespace: "ns", UID: "uid-o"}
	world := func() *cluster.State {
		s := cluster.New("", 1)
		for _, n := range []string{"b", "c", "d"} {
			s.Pods[cluster.Key("ns", n)] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "ns", Labels: map[string]string{"app": "x"}}}
		}
		a := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"app": "y"}}}
		a.OwnerReferences = []metav1.OwnerReference{NewControllerRef(owner, "apps/v1", "DaemonSet")}
		s.Pods[cluster.Key("ns", "a")] = a
		return s
	}
	sel := labels.SelectorFromSet(labels.Set{"app": "x"})
	all := func(*corev1.Pod) bool { return true }
	for name, claim := range map[string]func(*cluster.State) bool{
		"walk": func(s *cluster.State) bool { return ClaimPods(s, owner, "apps/v1", "DaemonSet", sel, all) },
		"among": func(s *cluster.State) bool {
			return ClaimPodsAmong(s, []string{"ns/d", "ns/a", "ns/b", "ns/c", "ns/b"}, owner, "apps/v1", "DaemonSet", sel, all)
		},
	} {
		s := world()
		if !claim(s) {
			t.Fatalf("%s: no change reported", name)
		}
		for _, k := range []string{"ns/a", "ns/b", "ns/c", "ns/d"} {
			p := s.Pods[k]
			owned := IsControlledBy(p, "uid-o")
			if owned != (k != "ns/a") || len(p.OwnerReferences) > 1 {
				t.Errorf("%s: %s owned=%v refs=%d", name, k, owned, len(p.OwnerReferences))
			}
		}
		// Writes in key order: a, b, c, d get increasing resourceVersions.
		if !(s.Pods["ns/a"].ResourceVersion < s.Pods["ns/b"].ResourceVersion && s.Pods["ns/c"].ResourceVersion < s.Pods["ns/d"].ResourceVersion) {
			t.Errorf("%s: writes out of key order", name)
		}
	}
}
