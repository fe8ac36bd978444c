package generator

import (
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/berth-sim/berth/karpenter-conformance/scenario"
)

// extras draws the node launch states, host ports, GPU requests and
// minValues from their own stream (see Features).
func (g *gen) extras(seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x6578747261))
	draw := func(p float64) bool { return p > 0 && r.Float64() < p }
	for _, n := range g.sc.Nodes {
		if !n.Managed {
			continue
		}
		switch {
		case draw(g.f.InFlight):
			n.State = scenario.NodeInFlight
			n.Pods = nil
		case draw(g.f.NotInitialized):
			n.State = scenario.NodeNotInitialized
			n.Node.Spec.Taints = append(n.Node.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
		}
	}
	for _, ds := range g.sc.DaemonSets {
		if draw(g.f.DaemonSetHostPorts) {
			c := &ds.Spec.Template.Spec.Containers[0]
			c.Ports = append(c.Ports, corev1.ContainerPort{Name: "metrics", ContainerPort: 9100, HostPort: 9100, Protocol: corev1.ProtocolTCP})
		}
	}
	var apps []string
	byApp := map[string][]*corev1.Pod{}
	for _, p := range g.sc.Pods {
		app := p.Labels["app"]
		if _, ok := byApp[app]; !ok {
			apps = append(apps, app)
		}
		byApp[app] = append(byApp[app], p)
	}
	for _, app := range apps {
		if draw(g.f.HostPorts) {
			// Two possible ports (one a DaemonSet may hold), so groups can
			// collide with each other and with the DaemonSets.
			port := []int32{8080, 9100}[r.IntN(2)]
			for _, p := range byApp[app] {
				c := &p.Spec.Containers[0]
				c.Ports = append(c.Ports, corev1.ContainerPort{Name: "http", ContainerPort: port, HostPort: port, Protocol: corev1.ProtocolTCP})
			}
		}
		if draw(g.f.GPUs) {
			gpu := resource.MustParse("1")
			for _, p := range byApp[app] {
				c := &p.Spec.Containers[0]
				c.Resources.Requests["nvidia.com/gpu"] = gpu
				c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": gpu}
			}
		}
	}
	for _, np := range g.sc.NodePools {
		if draw(g.f.MinValues) {
			key := []string{"karpenter.k8s.aws/instance-family", corev1.LabelInstanceTypeStable}[r.IntN(2)]
			mv := 2 + r.IntN(4)
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, karpv1.NodeSelectorRequirementWithMinValues{
				NodeSelectorRequirement: corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpExists},
				MinValues:               &mv,
			})
		}
	}
}
