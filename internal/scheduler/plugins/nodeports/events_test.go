package nodeports

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func hostPort(p *v1.Pod, port int32) *v1.Pod {
	p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "c", Ports: []v1.ContainerPort{{HostPort: port, ContainerPort: port, Protocol: v1.ProtocolTCP}}})
	return p
}

func TestPortHints(t *testing.T) {
	pi := framework.NewPodInfo(hostPort(plugintest.Pod("default", "p", "", nil), 8080), false)
	tests := []struct {
		name string
		gone *v1.Pod
		want framework.QueueingHint
	}{
		{"same port freed", hostPort(plugintest.Pod("default", "q", "n", nil), 8080), framework.Queue},
		{"other port freed", hostPort(plugintest.Pod("default", "q", "n", nil), 9090), framework.QueueSkip},
		{"no ports", plugintest.Pod("default", "q", "n", nil), framework.QueueSkip},
		{"pending pod deleted", hostPort(plugintest.Pod("default", "q", "", nil), 8080), framework.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := afterPodDeleted(pi, tt.gone, nil); got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}
