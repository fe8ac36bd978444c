package interpodaffinity

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestInterPodAffinityHints(t *testing.T) {
	const zone = "topology.kubernetes.io/zone"
	// The pod wants to be with app=db and away from app=noisy.
	pod := plugintest.Pod("default", "p", "", map[string]string{"app": "web"})
	pod.Spec.Affinity = &v1.Affinity{
		PodAffinity:     &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{plugintest.Term(zone, map[string]string{"app": "db"})}},
		PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{plugintest.Term(v1.LabelHostname, map[string]string{"app": "noisy"})}},
	}
	pi := framework.NewPodInfo(pod, false)
	db := plugintest.Pod("default", "db", "n1", map[string]string{"app": "db"})
	noisy := plugintest.Pod("default", "noisy", "n1", map[string]string{"app": "noisy"})
	other := plugintest.Pod("default", "other", "n1", map[string]string{"app": "other"})
	otherNS := plugintest.Pod("prod", "db", "n1", map[string]string{"app": "db"})
	pendingDB := plugintest.Pod("default", "db2", "", map[string]string{"app": "db"})
	relabelled := db.DeepCopy()
	relabelled.Labels = map[string]string{"app": "cache"}
	// A bound pod whose own anti-affinity kept the pod away.
	repeller := plugintest.Pod("default", "rep", "n1", map[string]string{"app": "rep"})
	repeller.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{plugintest.Term(v1.LabelHostname, map[string]string{"app": "web"})}}}
	self := pod.DeepCopy()
	self.Labels = map[string]string{"app": "web", "v": "2"}
	nodeNoZone := plugintest.Node("n2", nil)
	nodeZone := plugintest.Node("n2", map[string]string{zone: "a"})
	nodeZoneB := plugintest.Node("n2", map[string]string{zone: "b"})
	tests := []struct {
		name     string
		hint     framework.QueueingHintFn
		old, new any
		want     framework.QueueingHint
	}{
		{"affinity target added", afterPodChange, nil, db, framework.Queue},
		{"unrelated pod added", afterPodChange, nil, other, framework.QueueSkip},
		{"target in another namespace", afterPodChange, nil, otherNS, framework.QueueSkip},
		{"unscheduled pod added", afterPodChange, nil, pendingDB, framework.QueueSkip},
		{"anti-affinity target deleted", afterPodChange, noisy, nil, framework.Queue},
		{"affinity target deleted", afterPodChange, db, nil, framework.QueueSkip},
		{"pod with anti-affinity to us deleted", afterPodChange, repeller, nil, framework.Queue},
		{"label change away from the target", afterPodChange, db, relabelled, framework.QueueSkip},
		{"label change onto the target", afterPodChange, relabelled, db, framework.Queue},
		{"the pod itself updated", afterPodChange, pod, self, framework.Queue},
		{"node with the affinity key added", afterNodeChange, nil, nodeZone, framework.Queue},
		{"node added: anti-affinity pods always", afterNodeChange, nil, nodeNoZone, framework.Queue},
		{"node gains the affinity key", afterNodeChange, nodeNoZone, nodeZone, framework.Queue},
		{"node's affinity key value changes", afterNodeChange, nodeZone, nodeZoneB, framework.Queue},
		{"node update unrelated", afterNodeChange, nodeZone, nodeZone.DeepCopy(), framework.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.hint(pi, tt.old, tt.new); got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}
