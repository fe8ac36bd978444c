package admission

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTokenVolumeSharedAndUnchanged: pods admitted one after another carry
// their own volume names and one shared projection, which equals a freshly
// built one after admission and defaulting ran over both pods; a copy of a
// pod has a projection of its own.
func TestTokenVolumeSharedAndUnchanged(t *testing.T) {
	s := newState(t)
	var pods []*corev1.Pod
	for _, name := range []string{"a", "b"} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
		}
		if err := CreatePod(s, p); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p)
	}
	token := func(p *corev1.Pod) corev1.Volume {
		for _, v := range p.Spec.Volumes {
			if v.Projected != nil {
				return v
			}
		}
		t.Fatalf("pod %s has no token volume: %+v", p.Name, p.Spec.Volumes)
		return corev1.Volume{}
	}
	a, b := token(pods[0]), token(pods[1])
	if a.Name == b.Name {
		t.Errorf("both pods' token volumes are named %s", a.Name)
	}
	if a.Projected != b.Projected {
		t.Errorf("the pods' projections are separate copies")
	}
	if !equality.Semantic.DeepEqual(a.Projected, newTokenProjection()) {
		t.Errorf("the shared projection changed: %+v", a.Projected)
	}
	if c := token(pods[0].DeepCopy()); c.Projected == a.Projected || !equality.Semantic.DeepEqual(c.Projected, a.Projected) {
		t.Errorf("a copy of the pod should have an equal projection of its own")
	}
}
