package nodevolumelimits

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestLimitsHints(t *testing.T) {
	pi := framework.NewPodInfo(plugintest.Pod("default", "p", "", nil), false)
	withVolume := func(p *v1.Pod) *v1.Pod {
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}
		return p
	}
	tests := []struct {
		name string
		gone *v1.Pod
		want framework.QueueingHint
	}{
		{"bound pod with a volume", withVolume(plugintest.Pod("default", "q", "n1", nil)), framework.Queue},
		{"bound pod without volumes", plugintest.Pod("default", "q", "n1", nil), framework.QueueSkip},
		{"pending pod with a volume", withVolume(plugintest.Pod("default", "q", "", nil)), framework.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := afterPodDeleted(pi, tt.gone, nil); got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}
