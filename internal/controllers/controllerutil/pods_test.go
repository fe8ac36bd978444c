package controllerutil

import (
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIsPodAvailable(t *testing.T) {
	readyAt := cluster.Epoch
	pod := func(status corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.NewTime(readyAt)}}}}
	}
	cases := []struct {
		name     string
		pod      *corev1.Pod
		minReady int32
		now      time.Duration
		want     bool
	}{
		{"ready, no minReady", pod(corev1.ConditionTrue), 0, 0, true},
		{"not ready", pod(corev1.ConditionFalse), 0, time.Hour, false},
		{"exactly minReady is not enough", pod(corev1.ConditionTrue), 10, 10 * time.Second, false},
		{"past minReady", pod(corev1.ConditionTrue), 10, 11 * time.Second, true},
		{"no condition", &corev1.Pod{}, 0, 0, false},
	}
	for _, c := range cases {
		if got := IsPodAvailable(c.pod, c.minReady, readyAt.Add(c.now)); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAddTimerOnce(t *testing.T) {
	s := cluster.New("", 1)
	tm := cluster.Timer{At: cluster.Epoch.Add(time.Second), Owner: "x", Object: "a", Settling: true}
	AddTimerOnce(s, tm)
	AddTimerOnce(s, tm)
	tm.Object = "b"
	AddTimerOnce(s, tm)
	if len(s.Timers) != 2 {
		t.Fatalf("want 2 distinct timers, got %d", len(s.Timers))
	}
}
