// Package plugintest is a small in-memory framework.Handle and object
// builders for plugin unit tests.
package plugintest

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/version"
)

// Handle is a fixed snapshot: nodes with their pods, plus the objects plugins look up.
type Handle struct {
	NodeInfos              []*framework.NodeInfo
	NamespaceObjs          []*v1.Namespace
	ServiceObjs            []*v1.Service
	ReplicaSetObjs         []*appsv1.ReplicaSet
	StatefulSetObjs        []*appsv1.StatefulSet
	ReplicationControllers []*v1.ReplicationController
	Feats                  version.Features
	Storage

	withAffinity, withRequiredAnti []*framework.NodeInfo
	listed                         bool
}

var _ framework.Handle = (*Handle)(nil)

// NewHandle places every pod on the node named by its spec.nodeName (pods
// naming no known node are dropped) and keeps nodes in the given order.
func NewHandle(nodes []*v1.Node, pods []*v1.Pod) *Handle {
	h := &Handle{Feats: version.MustFeatures("1.36")}
	byName := map[string]*framework.NodeInfo{}
	for i, n := range nodes {
		ni := framework.NewNodeInfo(n)
		ni.Index = int32(i)
		h.NodeInfos = append(h.NodeInfos, ni)
		byName[n.Name] = ni
	}
	for _, p := range pods {
		if ni := byName[p.Spec.NodeName]; ni != nil {
			ni.AddPod(framework.NewPodInfo(p, true))
		}
	}
	return h
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

// Refresh recomputes the affinity node lists after NodeInfos were changed.
func (h *Handle) Refresh() {
	h.withAffinity, h.withRequiredAnti = nil, nil
	for _, n := range h.NodeInfos {
		if len(n.PodsWithAffinity) > 0 {
			h.withAffinity = append(h.withAffinity, n)
		}
		if len(n.PodsWithRequiredAntiAffinity) > 0 {
			h.withRequiredAnti = append(h.withRequiredAnti, n)
		}
	}
	h.listed = true
}

func (h *Handle) HavePodsWithAffinity() []*framework.NodeInfo {
	if !h.listed {
		h.Refresh()
	}
	return h.withAffinity
}

func (h *Handle) HavePodsWithRequiredAntiAffinity() []*framework.NodeInfo {
	if !h.listed {
		h.Refresh()
	}
	return h.withRequiredAnti
}

func (h *Handle) Namespace(name string) *v1.Namespace {
	for _, ns := range h.NamespaceObjs {
		if ns.Name == name {
			return ns
		}
	}
	return nil
}

func (h *Handle) Namespaces() []*v1.Namespace { return h.NamespaceObjs }

func (h *Handle) Services(namespace string) []*v1.Service {
	var out []*v1.Service
	for _, s := range h.ServiceObjs {
		if s.Namespace == namespace {
			out = append(out, s)
		}
	}
	return out
}

func (h *Handle) ReplicaSet(namespace, name string) *appsv1.ReplicaSet {
	for _, o := range h.ReplicaSetObjs {
		if o.Namespace == namespace && o.Name == name {
			return o
		}
	}
	return nil
}

func (h *Handle) StatefulSet(namespace, name string) *appsv1.StatefulSet {
	for _, o := range h.StatefulSetObjs {
		if o.Namespace == namespace && o.Name == name {
			return o
		}
	}
	return nil
}

func (h *Handle) ReplicationController(namespace, name string) *v1.ReplicationController {
	for _, o := range h.ReplicationControllers {
		if o.Namespace == namespace && o.Name == name {
			return o
		}
	}
	return nil
}

func (h *Handle) Features() version.Features { return h.Feats }

// Node builds a node with labels (the hostname label is added from the name
// unless given) and optional taints.
func Node(name string, lbls map[string]string, taints ...v1.Taint) *v1.Node {
	l := map[string]string{v1.LabelHostname: name}
	for k, v := range lbls {
		l[k] = v
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Spec:       v1.NodeSpec{Taints: taints},
	}
}

// BareNode builds a node with exactly the given labels (no hostname label).
func BareNode(name string, lbls map[string]string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
}

// Pod builds a pod in namespace ns with labels, bound to nodeName ("" = pending).
func Pod(ns, name, nodeName string, lbls map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name), Labels: lbls},
		Spec:       v1.PodSpec{NodeName: nodeName},
	}
}

// Term is a PodAffinityTerm selecting matchLabels on topologyKey.
func Term(topologyKey string, matchLabels map[string]string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels},
		TopologyKey:   topologyKey,
	}
}

// Weighted wraps a term with a weight.
func Weighted(w int32, t v1.PodAffinityTerm) v1.WeightedPodAffinityTerm {
	return v1.WeightedPodAffinityTerm{Weight: w, PodAffinityTerm: t}
}

// NoExecute / NoSchedule build taints.
func NoExecute(key, value string) v1.Taint {
	return v1.Taint{Key: key, Value: value, Effect: v1.TaintEffectNoExecute}
}

func NoSchedule(key, value string) v1.Taint {
	return v1.Taint{Key: key, Value: value, Effect: v1.TaintEffectNoSchedule}
}

// ZoneLabel and HostLabel are the well-known topology keys.
const (
	ZoneLabel = v1.LabelTopologyZone
	HostLabel = v1.LabelHostname
)
