// Package schedtest has small builders for scheduler tests: nodes, pods and a
// fake framework.Handle over a fixed list of NodeInfos.
package schedtest

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/version"
)

// Node builds a node with allocatable cpu, memory and pods (e.g. "4", "8Gi", 110).
func Node(name, cpu, memory string, pods int64) *v1.Node {
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

// Pod builds a pod with one container requesting cpu and memory ("" = none).
func Pod(name, cpu, memory string) *v1.Pod {
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

// NodeInfos builds NodeInfos for nodes and places the bound pods on them.
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

// Handle is a fake framework.Handle over fixed NodeInfos.
type Handle struct {
	NodeInfos []*framework.NodeInfo
	Feats     version.Features
	NSs       []*v1.Namespace
	Svcs      []*v1.Service
	RSs       []*appsv1.ReplicaSet
}

var _ framework.Handle = (*Handle)(nil)

// NewHandle returns a fake handle for the given Kubernetes version.
func NewHandle(kubeVersion string, nodes []*framework.NodeInfo) *Handle {
	return &Handle{NodeInfos: nodes, Feats: version.MustFeatures(kubeVersion)}
}

func (h *Handle) Nodes() []*framework.NodeInfo { return h.NodeInfos }

func (h *Handle) Node(name string) *framework.NodeInfo {
	for _, n := range h.NodeInfos {
		if n.Name() == name {
			return n
		}
	}
	return nil
}

func (h *Handle) HavePodsWithAffinity() []*framework.NodeInfo {
	var out []*framework.NodeInfo
	for _, n := range h.NodeInfos {
		if len(n.PodsWithAffinity) > 0 {
			out = append(out, n)
		}
	}
	return out
}

func (h *Handle) HavePodsWithRequiredAntiAffinity() []*framework.NodeInfo {
	var out []*framework.NodeInfo
	for _, n := range h.NodeInfos {
		if len(n.PodsWithRequiredAntiAffinity) > 0 {
			out = append(out, n)
		}
	}
	return out
}

func (h *Handle) Namespace(name string) *v1.Namespace {
	for _, ns := range h.NSs {
		if ns.Name == name {
			return ns
		}
	}
	return nil
}

func (h *Handle) Namespaces() []*v1.Namespace { return h.NSs }

func (h *Handle) Services(namespace string) []*v1.Service {
	var out []*v1.Service
	for _, s := range h.Svcs {
		if s.Namespace == namespace {
			out = append(out, s)
		}
	}
	return out
}

func (h *Handle) ReplicaSet(namespace, name string) *appsv1.ReplicaSet {
	for _, rs := range h.RSs {
		if rs.Namespace == namespace && rs.Name == name {
			return rs
		}
	}
	return nil
}

func (h *Handle) StatefulSet(namespace, name string) *appsv1.StatefulSet { return nil }

func (h *Handle) ReplicationController(namespace, name string) *v1.ReplicationController { return nil }

func (h *Handle) Features() version.Features { return h.Feats }
