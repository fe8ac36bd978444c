package tainttoleration

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestTaintHints(t *testing.T) {
	pod := plugintest.Pod("default", "p", "", nil)
	pod.Spec.Tolerations = []v1.Toleration{{Key: "ok", Operator: v1.TolerationOpExists}}
	pi := framework.NewPodInfo(pod, false)
	clean := plugintest.Node("n", nil)
	bad := plugintest.Node("n", nil, v1.Taint{Key: "bad", Effect: v1.TaintEffectNoSchedule})
	tolerated := plugintest.Node("n", nil, v1.Taint{Key: "ok", Effect: v1.TaintEffectNoSchedule})
	prefer := plugintest.Node("n", nil, v1.Taint{Key: "bad", Effect: v1.TaintEffectPreferNoSchedule})
	other := plugintest.Pod("default", "q", "", nil)
	self := pod.DeepCopy()
	tests := []struct {
		name     string
		hint     framework.QueueingHintFn
		old, new any
		want     framework.QueueingHint
	}{
		{"untainted node added", afterNodeChange, nil, clean, framework.Queue},
		{"tolerated taint node added", afterNodeChange, nil, tolerated, framework.Queue},
		{"untolerated node added", afterNodeChange, nil, bad, framework.QueueSkip},
		{"taint removed", afterNodeChange, bad, clean, framework.Queue},
		{"taint became PreferNoSchedule", afterNodeChange, bad, prefer, framework.Queue},
		{"taint added", afterNodeChange, clean, bad, framework.QueueSkip},
		{"was already tolerated", afterNodeChange, clean, tolerated, framework.QueueSkip},
		{"own toleration added", afterPodTolerationChange, pod, self, framework.Queue},
		{"another pod's toleration", afterPodTolerationChange, other, other, framework.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.hint(pi, tt.old, tt.new); got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}
