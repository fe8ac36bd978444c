package nodeunschedulable

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestUnschedulableHints(t *testing.T) {
	pod := plugintest.Pod("default", "p", "", nil)
	pi := framework.NewPodInfo(pod, false)
	open := plugintest.Node("n", nil)
	cordoned := plugintest.Node("n", nil)
	cordoned.Spec.Unschedulable = true
	tolerant := pod.DeepCopy()
	tolerant.Spec.Tolerations = []v1.Toleration{{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists}}
	tests := []struct {
		name     string
		hint     framework.QueueingHintFn
		old, new any
		want     framework.QueueingHint
	}{
		{"schedulable node added", afterNodeChange, nil, open, framework.Queue},
		{"cordoned node added", afterNodeChange, nil, cordoned, framework.QueueSkip},
		{"uncordoned", afterNodeChange, cordoned, open, framework.Queue},
		{"cordoned now", afterNodeChange, open, cordoned, framework.QueueSkip},
		{"other update", afterNodeChange, open, open.DeepCopy(), framework.QueueSkip},
		{"pod tolerates now", afterPodTolerationChange, pod, tolerant, framework.Queue},
		{"pod update without toleration", afterPodTolerationChange, pod, pod.DeepCopy(), framework.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.hint(pi, tt.old, tt.new); got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}
