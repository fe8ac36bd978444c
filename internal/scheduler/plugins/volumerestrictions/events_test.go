package volumerestrictions

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestRestrictionsHints(t *testing.T) {
	pi := framework.NewPodInfo(plugintest.Pod("default", "p", "", nil), false)
	user := plugintest.Pod("default", "q", "n1", nil)
	user.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}
	if got := afterPodDeleted(pi, user, nil); got != framework.Queue {
		t.Errorf("a volume user's removal: %v, want Queue", got)
	}
	if got := afterPodDeleted(pi, plugintest.Pod("default", "q", "n1", nil), nil); got != framework.QueueSkip {
		t.Errorf("a pod without volumes: %v, want QueueSkip", got)
	}
}
