package replicaset

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
)

// settledSets is a state of sets ReplicaSets of replicas running, ready
// pods each, with their status already written: what a pass at 100,000
// pods finds once the pods have started.
func settledSets(b *testing.B, sets, replicas int) *cluster.State {
	b.Helper()
	s := controllertest.NewState("shop")
	for i := 0; i < sets; i++ {
		labels := map[string]string{"app": fmt.Sprintf("app-%03d", i), "pod-template-hash": "abc"}
		n := int32(replicas)
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: fmt.Sprintf("app-%03d-abc", i), UID: types.UID(fmt.Sprintf("rs-%d", i))},
			Spec: appsv1.ReplicaSetSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}},
		}
		s.ReplicaSets[cluster.Key(rs.Namespace, rs.Name)] = rs
	}
	// Pods of all sets interleaved, as the scheduler and kubelet leave
	// them in memory.
	for r := 0; r < replicas; r++ {
		for _, rs := range s.ReplicaSets {
			p := PodFromTemplate(rs)
			p.Name = fmt.Sprintf("%s-%05d", rs.Name, r)
			p.UID = types.UID(p.Name)
			p.Spec.NodeName = "n1"
			p.Status.Phase = corev1.PodRunning
			for _, c := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(s.Now)})
			}
			s.Pods[cluster.Key(p.Namespace, p.Name)] = p
		}
	}
	s.Now = s.Now.Add(time.Minute)
	if _, err := New().Sync(s); err != nil { // writes the status
		b.Fatal(err)
	}
	return s
}

// BenchmarkSettledPass100k is one ReplicaSet pass over 200 sets of 500
// ready pods that changes nothing (the state's version moved, so the pass
// is not skipped).
func BenchmarkSettledPass100k(b *testing.B) {
	s := settledSets(b, 200, 500)
	c := New()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Bump()
		changed, err := c.Sync(s)
		if err != nil || changed {
			b.Fatalf("changed %v, err %v", changed, err)
		}
	}
}
