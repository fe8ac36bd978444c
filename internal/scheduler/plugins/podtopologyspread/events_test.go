package podtopologyspread

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestSpreadHints(t *testing.T) {
	const zone = "topology.kubernetes.io/zone"
	pl := New(plugintest.NewHandle(nil, nil))
	pod := plugintest.Pod("default", "p", "", map[string]string{"app": "web"})
	pod.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: zone, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	pi := framework.NewPodInfo(pod, false)
	web := plugintest.Pod("default", "w", "n1", map[string]string{"app": "web"})
	webElsewhere := plugintest.Pod("prod", "w", "n1", map[string]string{"app": "web"})
	db := plugintest.Pod("default", "d", "n1", map[string]string{"app": "db"})
	pendingWeb := plugintest.Pod("default", "w2", "", map[string]string{"app": "web"})
	tolerant := pod.DeepCopy()
	tolerant.Spec.Tolerations = []v1.Toleration{{Key: "x", Operator: v1.TolerationOpExists}}
	zoneA := plugintest.Node("n2", map[string]string{zone: "a"})
	zoneB := plugintest.Node("n2", map[string]string{zone: "b"})
	noZone := plugintest.Node("n2", nil)
	taintedA := plugintest.Node("n2", map[string]string{zone: "a"}, v1.Taint{Key: "x", Effect: v1.TaintEffectNoSchedule})
	tests := []struct {
		name     string
		hint     framework.QueueingHintFn
		old, new any
		want     framework.QueueingHint
	}{
		{"matching pod added", pl.afterPodChange, nil, web, framework.Queue},
		{"matching pod deleted", pl.afterPodChange, web, nil, framework.Queue},
		{"other pod added", pl.afterPodChange, nil, db, framework.QueueSkip},
		{"matching pod in another namespace", pl.afterPodChange, nil, webElsewhere, framework.QueueSkip},
		{"unscheduled matching pod", pl.afterPodChange, nil, pendingWeb, framework.QueueSkip},
		{"label change into the selector", pl.afterPodChange, db, web, framework.Queue},
		{"toleration change without Honor", pl.afterPodChange, pod, tolerant, framework.QueueSkip},
		{"node with the key added", pl.afterNodeChange, nil, zoneA, framework.Queue},
		{"node without the key added", pl.afterNodeChange, nil, noZone, framework.QueueSkip},
		{"node with the key deleted", pl.afterNodeChange, zoneA, nil, framework.Queue},
		{"node gains the key", pl.afterNodeChange, noZone, zoneA, framework.Queue},
		{"node's zone changes", pl.afterNodeChange, zoneA, zoneB, framework.Queue},
		{"node's taints change", pl.afterNodeChange, zoneA, taintedA, framework.Queue},
		{"node unchanged", pl.afterNodeChange, zoneA, zoneA.DeepCopy(), framework.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.hint(pi, tt.old, tt.new); got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}
