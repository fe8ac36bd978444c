package nodeports

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func withPort(p *v1.Pod, ip string, proto v1.Protocol, port int32) *v1.Pod {
	p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, v1.ContainerPort{ContainerPort: port, HostPort: port, HostIP: ip, Protocol: proto})
	return p
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name     string
		pod      *v1.Pod
		existing *v1.Pod
		wantSkip bool
		want     framework.Code
	}{
		{name: "no host ports", pod: plugintest.SizedPod("p", "", ""), wantSkip: true},
		{name: "free port", pod: withPort(plugintest.SizedPod("p", "", ""), "", v1.ProtocolTCP, 8080), existing: withPort(plugintest.SizedPod("e", "", ""), "", v1.ProtocolTCP, 9090), want: framework.Success},
		{name: "taken port", pod: withPort(plugintest.SizedPod("p", "", ""), "", v1.ProtocolTCP, 8080), existing: withPort(plugintest.SizedPod("e", "", ""), "", "", 8080), want: framework.Unschedulable},
		{name: "other protocol", pod: withPort(plugintest.SizedPod("p", "", ""), "", v1.ProtocolUDP, 8080), existing: withPort(plugintest.SizedPod("e", "", ""), "", v1.ProtocolTCP, 8080), want: framework.Success},
		{name: "different specific IPs", pod: withPort(plugintest.SizedPod("p", "", ""), "10.0.0.1", v1.ProtocolTCP, 8080), existing: withPort(plugintest.SizedPod("e", "", ""), "10.0.0.2", v1.ProtocolTCP, 8080), want: framework.Success},
		{name: "wildcard clashes with specific", pod: withPort(plugintest.SizedPod("p", "", ""), "", v1.ProtocolTCP, 8080), existing: withPort(plugintest.SizedPod("e", "", ""), "10.0.0.2", v1.ProtocolTCP, 8080), want: framework.Unschedulable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pods []*v1.Pod
			if tt.existing != nil {
				pods = append(pods, plugintest.OnNode(tt.existing, "n1"))
			}
			ni := plugintest.NodeInfos(plugintest.NewVersionHandle("1.36", nil).Feats, []*v1.Node{plugintest.SizedNode("n1", "1", "1Gi", 10)}, pods...)[0]
			pl := New(nil).(*NodePorts)
			cs := framework.NewCycleState()
			pi := framework.NewPodInfo(tt.pod, true)
			_, st := pl.PreFilter(cs, pi, nil)
			if st.IsSkip() != tt.wantSkip {
				t.Fatalf("skip = %v", st.IsSkip())
			}
			if tt.wantSkip {
				return
			}
			fs := pl.Filter(cs, pi, ni)
			if fs.Code() != tt.want {
				t.Fatalf("code %v, want %v", fs.Code(), tt.want)
			}
			if !fs.IsSuccess() && fs.Message() != ErrReason {
				t.Fatalf("message %q", fs.Message())
			}
		})
	}
}
