package noderesources

import (
	"testing"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestFitHints(t *testing.T) {
	pod := framework.NewPodInfo(plugintest.SizedPod("p", "2", "1Gi"), false)
	small := plugintest.SizedNode("n", "1", "8Gi", 110)
	big := plugintest.SizedNode("n", "4", "8Gi", 110)
	bigger := plugintest.SizedNode("n", "8", "8Gi", 110)
	morePods := plugintest.SizedNode("n", "4", "8Gi", 220)
	bound := plugintest.OnNode(plugintest.SizedPod("q", "1", ""), "n")
	pending := plugintest.SizedPod("q", "1", "")
	nominated := plugintest.SizedPod("q", "1", "")
	nominated.Status.NominatedNodeName = "n"
	f := &Fit{}
	tests := []struct {
		name     string
		hint     framework.QueueingHintFn
		old, new any
		want     framework.QueueingHint
	}{
		{"bound pod deleted", afterPodEvent, bound, nil, framework.Queue},
		{"pending pod deleted", afterPodEvent, pending, nil, framework.QueueSkip},
		{"nominated pod deleted", afterPodEvent, nominated, nil, framework.Queue},
		{"node added that fits", f.afterNodeChange, nil, big, framework.Queue},
		{"node added too small", f.afterNodeChange, nil, small, framework.QueueSkip},
		{"node grew cpu", f.afterNodeChange, big, bigger, framework.Queue},
		{"node grew into fitting", f.afterNodeChange, small, big, framework.Queue},
		{"node grew pod count", f.afterNodeChange, big, morePods, framework.Queue},
		{"node unchanged allocatable", f.afterNodeChange, big, big.DeepCopy(), framework.QueueSkip},
		{"node shrank below the pod", f.afterNodeChange, big, small, framework.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.hint(pod, tt.old, tt.new); got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}
