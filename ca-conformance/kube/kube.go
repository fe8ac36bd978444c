// Package kube turns a neutral scenario into Kubernetes objects, the same
// way for every implementation under test (berth's runner and the genuine
// cluster-autoscaler runner), so that a disagreement is never an artefact of
// two different translations.
//
// Conventions (ca-conformance/README.md, "How a scenario becomes objects"):
//   - every node gets the kubernetes.io/hostname label (its name) unless the
//     scenario sets one; Ready unless notReady; allocatable = capacity when
//     not given;
//   - a pod's controller is identified by its namespace, owner kind and its
//     "app" label: pods sharing all three share one controller (and so one
//     UID), which is what equivalence grouping keys on;
//   - a Mirror pod carries the kubernetes.io/config.mirror annotation and a
//     Node owner; localStorage is an emptyDir "scratch"; hostPort a TCP port;
//   - pending pods are PodScheduled=False/Unschedulable and created one
//     second apart in scenario order; bound pods are Running.
package kube

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/ca-conformance/scenario"
)

// Epoch is the instant every scenario happens at (pods are created before it).
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Objects is a scenario as Kubernetes objects.
type Objects struct {
	// Nodes in scenario order.
	Nodes []*corev1.Node
	// Bound are the pods on the nodes, node by node.
	Bound []*corev1.Pod
	// Pending are the unschedulable pods in creation order.
	Pending []*corev1.Pod
	PDBs    []*policyv1.PodDisruptionBudget
	// GroupNodes are each group's nodes, in scenario order.
	GroupNodes map[string][]*corev1.Node
	// Templates are the scale-from-zero template nodes of the groups that
	// declare one (a group with a Ready node uses a copy of it instead).
	Templates map[string]*corev1.Node
}

// Build converts sc.
func Build(sc *scenario.Scenario) *Objects {
	o := &Objects{GroupNodes: map[string][]*corev1.Node{}, Templates: map[string]*corev1.Node{}}
	for i := range sc.Nodes {
		sn := &sc.Nodes[i]
		n := Node(sn)
		o.Nodes = append(o.Nodes, n)
		if sn.Group != "" {
			o.GroupNodes[sn.Group] = append(o.GroupNodes[sn.Group], n)
		}
		for j := range sn.Pods {
			p := Pod(&sn.Pods[j], Epoch.Add(-time.Hour))
			p.Spec.NodeName = n.Name
			p.Status.Phase = corev1.PodRunning
			if sn.Pods[j].Owner == scenario.OwnerMirror {
				p.OwnerReferences[0].Name = n.Name
			}
			o.Bound = append(o.Bound, p)
		}
	}
	for i := range sc.Pods {
		p := Pod(&sc.Pods[i], Epoch.Add(time.Duration(i-len(sc.Pods))*time.Second))
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		}}
		o.Pending = append(o.Pending, p)
	}
	for i := range sc.PDBs {
		o.PDBs = append(o.PDBs, PDB(&sc.PDBs[i], o.Bound))
	}
	for i := range sc.NodeGroups {
		g := &sc.NodeGroups[i]
		if g.Template != nil {
			o.Templates[g.Name] = TemplateNode(g)
		}
	}
	return o
}

// Node converts one node.
func Node(sn *scenario.Node) *corev1.Node {
	n := &corev1.Node{
		TypeMeta:   metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: sn.Name, UID: types.UID("node-" + sn.Name), Labels: map[string]string{}, Annotations: map[string]string{}},
		Spec:       corev1.NodeSpec{Taints: append([]corev1.Taint(nil), sn.Taints...), ProviderID: "test://" + sn.Name},
		Status: corev1.NodeStatus{
			Capacity:    sn.Capacity.DeepCopy(),
			Allocatable: sn.Allocatable.DeepCopy(),
		},
	}
	if n.Status.Allocatable == nil {
		n.Status.Allocatable = sn.Capacity.DeepCopy()
	}
	n.Labels[corev1.LabelHostname] = sn.Name
	for k, v := range sn.Labels {
		n.Labels[k] = v
	}
	for k, v := range sn.Annotations {
		n.Annotations[k] = v
	}
	status := corev1.ConditionTrue
	if sn.NotReady {
		status = corev1.ConditionFalse
	}
	n.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: status,
		LastTransitionTime: metav1.NewTime(Epoch.Add(-2 * time.Hour)),
	}}
	return n
}

// TemplateNode is a group's declared template as a node named
// template-node-for-<group>.
func TemplateNode(g *scenario.NodeGroup) *corev1.Node {
	name := "template-node-for-" + g.Name
	sn := &scenario.Node{
		Name: name, Group: g.Name, Capacity: g.Template.Capacity, Allocatable: g.Template.Allocatable,
		Labels: g.Template.Labels, Taints: g.Template.Taints,
	}
	return Node(sn)
}

// OwnerUID is the UID of the controller the conventions give a pod.
func OwnerUID(sp *scenario.Pod) types.UID {
	return types.UID(fmt.Sprintf("%s/%s/%s", sp.NamespaceOrDefault(), sp.Owner, sp.Labels["app"]))
}

// Pod converts one pod, created at created.
func Pod(sp *scenario.Pod, created time.Time) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: sp.Name, Namespace: sp.NamespaceOrDefault(), UID: types.UID("pod-" + sp.NamespaceOrDefault() + "-" + sp.Name),
			Labels: copyMap(sp.Labels), Annotations: copyMap(sp.Annotations),
			CreationTimestamp: metav1.NewTime(created),
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "main", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: sp.Requests.DeepCopy()},
			}},
			NodeSelector:              copyMap(sp.NodeSelector),
			Affinity:                  sp.Affinity.DeepCopy(),
			Tolerations:               append([]corev1.Toleration(nil), sp.Tolerations...),
			TopologySpreadConstraints: append([]corev1.TopologySpreadConstraint(nil), sp.TopologySpread...),
			Priority:                  sp.Priority,
			SchedulerName:             corev1.DefaultSchedulerName,
		},
	}
	if sp.HostPort != 0 {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: sp.HostPort, HostPort: sp.HostPort, Protocol: corev1.ProtocolTCP}}
	}
	if sp.LocalStorage {
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}
	yes := true
	switch sp.Owner {
	case scenario.OwnerNone:
	case scenario.OwnerMirror:
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[corev1.MirrorPodAnnotationKey] = "mirror"
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Controller: &yes, UID: "mirror"}}
	default:
		apiVersion := "apps/v1"
		if sp.Owner == scenario.OwnerJob {
			apiVersion = "batch/v1"
		}
		name := sp.Labels["app"]
		if name == "" {
			name = "owner"
		}
		p.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: apiVersion, Kind: sp.Owner, Name: name, UID: OwnerUID(sp), Controller: &yes,
		}}
	}
	return p
}

// PDB converts one PodDisruptionBudget, its status computed over the bound
// pods it selects (all of them healthy), as the disruption controller would.
func PDB(sp *scenario.PDB, bound []*corev1.Pod) *policyv1.PodDisruptionBudget {
	ns := sp.Namespace
	if ns == "" {
		ns = "default"
	}
	healthy := 0
	for _, p := range bound {
		if p.Namespace == ns && matches(sp.Selector, p.Labels) {
			healthy++
		}
	}
	allowed := 0
	switch {
	case sp.MinAvailable != nil:
		min, _ := intstr.GetScaledValueFromIntOrPercent(sp.MinAvailable, healthy, true)
		allowed = healthy - min
	case sp.MaxUnavailable != nil:
		allowed, _ = intstr.GetScaledValueFromIntOrPercent(sp.MaxUnavailable, healthy, true)
	}
	if allowed < 0 {
		allowed = 0
	}
	return &policyv1.PodDisruptionBudget{
		Status: policyv1.PodDisruptionBudgetStatus{
			DisruptionsAllowed: int32(allowed), CurrentHealthy: int32(healthy), ExpectedPods: int32(healthy),
		},
		TypeMeta:   metav1.TypeMeta{Kind: "PodDisruptionBudget", APIVersion: "policy/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: sp.Name, Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: copyMap(sp.Selector)},
			MinAvailable:   sp.MinAvailable,
			MaxUnavailable: sp.MaxUnavailable,
		},
	}
}

func matches(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
