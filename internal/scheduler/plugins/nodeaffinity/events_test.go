package nodeaffinity

import (
	"testing"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestNodeAffinityHints(t *testing.T) {
	pod := plugintest.Pod("default", "p", "", nil)
	pod.Spec.NodeSelector = map[string]string{"pool": "gpu"}
	pi := framework.NewPodInfo(pod, false)
	gpu := plugintest.Node("n", map[string]string{"pool": "gpu"})
	cpu := plugintest.Node("n", map[string]string{"pool": "cpu"})
	gpuRelabelled := plugintest.Node("n", map[string]string{"pool": "gpu", "team": "a"})
	tests := []struct {
		name     string
		old, new any
		want     framework.QueueingHint
	}{
		{"matching node added", nil, gpu, framework.Queue},
		{"other node added", nil, cpu, framework.QueueSkip},
		{"label change now matches", cpu, gpu, framework.Queue},
		{"label change no longer matches", gpu, cpu, framework.QueueSkip},
		{"already matched", gpu, gpuRelabelled, framework.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := afterNodeChange(pi, tt.old, tt.new); got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}
