package plugintest

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/version"
)

// Builders for tests that care about resources rather than labels: nodes with
// allocatable cpu/memory/pods and pods with container requests.

// SizedNode builds a node with allocatable cpu, memory and pods (e.g. "4", "8Gi", 110).
func SizedNode(name, cpu, memory string, pods int64) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-" + name), Labels: map[string]string{v1.LabelHostname: name}}}
	alloc := v1.ResourceList{v1.ResourcePods: *resource.NewQuantity(pods, resource.DecimalSI)}
	if cpu != "" {
		alloc[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		alloc[v1.ResourceMemory] = resource.MustParse(memory)
	}
	n.Status.Allocatable = alloc
	n.Status.Capacity = alloc.DeepCopy()
	return n
}

// WithLabels adds labels to a node.
func WithLabels(n *v1.Node, kv ...string) *v1.Node {
	for i := 0; i+1 < len(kv); i += 2 {
		n.Labels[kv[i]] = kv[i+1]
	}
	return n
}

// WithTaints adds taints to a node.
func WithTaints(n *v1.Node, taints ...v1.Taint) *v1.Node {
	n.Spec.Taints = append(n.Spec.Taints, taints...)
	return n
}

// SizedPod builds a default-namespace pod with one container requesting cpu
// and memory ("" = none).
func SizedPod(name, cpu, memory string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("pod-" + name)}}
	req := v1.ResourceList{}
	if cpu != "" {
		req[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		req[v1.ResourceMemory] = resource.MustParse(memory)
	}
	p.Spec.Containers = []v1.Container{{Name: "c", Image: "pause", Resources: v1.ResourceRequirements{Requests: req}}}
	p.Spec.SchedulerName = v1.DefaultSchedulerName
	return p
}

// OnNode binds a pod to a node.
func OnNode(p *v1.Pod, node string) *v1.Pod {
	p.Spec.NodeName = node
	return p
}

// WithPriority sets spec.priority.
func WithPriority(p *v1.Pod, prio int32) *v1.Pod {
	p.Spec.Priority = &prio
	return p
}

// NodeInfos builds NodeInfos for nodes and places the bound pods on them,
// honouring the version's pod-level resources switch.
func NodeInfos(features version.Features, nodes []*v1.Node, pods ...*v1.Pod) []*framework.NodeInfo {
	byName := map[string]*framework.NodeInfo{}
	out := make([]*framework.NodeInfo, 0, len(nodes))
	for _, n := range nodes {
		ni := framework.NewNodeInfo(n)
		byName[n.Name] = ni
		out = append(out, ni)
	}
	for _, p := range pods {
		if ni := byName[p.Spec.NodeName]; ni != nil {
			ni.AddPod(framework.NewPodInfo(p, features.PodLevelResources))
		}
	}
	return out
}

// NewVersionHandle returns a handle over ready-made NodeInfos for the given
// Kubernetes version.
func NewVersionHandle(kubeVersion string, nodes []*framework.NodeInfo) *Handle {
	return &Handle{NodeInfos: nodes, Feats: version.MustFeatures(kubeVersion)}
}
