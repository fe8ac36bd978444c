package replicaset

import (
	"strconv"
	"testing"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClaimWritesInKeyOrder: orphans the selector matches are adopted, and
// owned pods it no longer matches released, with resourceVersions in key
// order whatever order the state's map yields them in; pods that need
// nothing are left alone (claimPods skips ordering a group with no write).
func TestClaimWritesInKeyOrder(t *testing.T) {
	names := []string{"web-e", "web-b", "web-d", "web-a", "web-c"}
	rv := func(p *corev1.Pod) int64 { n, _ := strconv.ParseInt(p.ResourceVersion, 10, 64); return n }
	for _, tc := range []struct {
		name     string
		labels   map[string]string // labels of every pod but the last two, which keep app=web
		wantOwns []string          // pods controlled by the set after the second sync
	}{
		{"all still match", map[string]string{"app": "web"}, []string{"web-a", "web-b", "web-c", "web-d", "web-e"}},
		{"three released", map[string]string{"app": "other"}, []string{"web-a", "web-c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := controllertest.NewState()
			for _, n := range names {
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "default", Labels: map[string]string{"app": "web"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}}}
				if err := admission.CreatePod(s, p); err != nil {
					t.Fatal(err)
				}
			}
			stray := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: "default", Labels: map[string]string{"app": "db"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "postgres:17"}}}}
			if err := admission.CreatePod(s, stray); err != nil {
				t.Fatal(err)
			}
			strayRV := stray.ResourceVersion
			if err := admission.Create(s, newRS(5)); err != nil {
				t.Fatal(err)
			}
			rs := s.ReplicaSets["default/web"]
			if _, err := New().Sync(s); err != nil {
				t.Fatal(err)
			}
			keys := cluster.SortedKeys(s.Pods)
			var last int64
			for _, k := range keys {
				p := s.Pods[k]
				if p == stray {
					continue
				}
				if !controllerutil.IsControlledBy(p, string(rs.UID)) {
					t.Fatalf("%s not adopted", p.Name)
				}
				if rv(p) <= last {
					t.Errorf("%s adopted with resourceVersion %d after %d: not in key order", p.Name, rv(p), last)
				}
				last = rv(p)
			}
			if stray.ResourceVersion != strayRV || metav1.GetControllerOf(stray) != nil {
				t.Errorf("the pod the selector does not match was written")
			}
			// Relabel all but web-a and web-c, then sync again.
			before := map[string]string{}
			for _, k := range keys {
				p := s.Pods[k]
				if p != stray && p.Name != "web-a" && p.Name != "web-c" {
					p.Labels = tc.labels
				}
				before[p.Name] = p.ResourceVersion
			}
			if _, err := New().Sync(s); err != nil {
				t.Fatal(err)
			}
			var owns []string
			last = 0
			for _, k := range keys {
				p := s.Pods[k]
				if controllerutil.IsControlledBy(p, string(rs.UID)) {
					owns = append(owns, p.Name)
					if p.ResourceVersion != before[p.Name] {
						t.Errorf("%s still owned but written", p.Name)
					}
					continue
				}
				if p == stray {
					continue
				}
				if rv(p) <= last {
					t.Errorf("%s released with resourceVersion %d after %d: not in key order", p.Name, rv(p), last)
				}
				last = rv(p)
			}
			if len(owns) != len(tc.wantOwns) {
				t.Fatalf("owned after the second sync: %v, want %v", owns, tc.wantOwns)
			}
			for i := range owns {
				if owns[i] != tc.wantOwns[i] {
					t.Fatalf("owned after the second sync: %v, want %v", owns, tc.wantOwns)
				}
			}
		})
	}
}
