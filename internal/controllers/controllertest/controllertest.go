// Package controllertest has the small fixtures the controller tests share:
// a bootstrapped state, nodes, and a trivial binder standing in for the
// scheduler.
package controllertest

import (
	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// NewState returns a bootstrapped cluster with the given namespaces.
func NewState(namespaces ...string) *cluster.State {
	s := cluster.New("", 42)
	if err := admission.Bootstrap(s); err != nil {
		panic(err)
	}
	for _, ns := range namespaces {
		if err := admission.CreateNamespace(s, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			panic(err)
		}
	}
	return s
}

// AddNode stores a ready node with the given allocatable cpu and memory,
// labels and taints.
func AddNode(s *cluster.State, name, cpu, memory string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	l := map[string]string{corev1.LabelHostname: name}
	for k, v := range labels {
		l[k] = v
	}
	rl := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(memory),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Capacity: rl, Allocatable: rl,
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.42.0.10"}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	if err := admission.Create(s, node); err != nil {
		panic(err)
	}
	return node
}

// Binder binds each pending, unbound pod to the first node (by name) that
// matches its node selector/affinity and whose NoSchedule/NoExecute taints it
// tolerates. It ignores resources: tests that need the kubelet's resource
// check get it from the kubelet.
type Binder struct{}

// Name implements sim.Controller.
func (Binder) Name() string { return "test-binder" }

// Sync implements sim.Controller.
func (Binder) Sync(s *cluster.State) (bool, error) {
	changed := false
	for _, pk := range cluster.SortedKeys(s.Pods) {
		pod := s.Pods[pk]
		if pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending {
			continue
		}
		for _, nk := range cluster.SortedKeys(s.Nodes) {
			node := s.Nodes[nk]
			if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok {
				continue
			}
			_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, helper.DoNotScheduleTaints, false)
			if untolerated {
				continue
			}
			pod.Spec.NodeName = node.Name
			pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
				Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(s.Now)})
			pod.ResourceVersion = s.Bump()
			changed = true
			break
		}
	}
	return changed, nil
}

// ClaimBinder binds every pending claim at once to a new volume of its size,
// standing in for the PV controller and provisioner where a test only needs
// claims to be Bound (the kubelet waits for them).
type ClaimBinder struct{}

// Name implements sim.Controller.
func (ClaimBinder) Name() string { return "test-claim-binder" }

// Sync implements sim.Controller.
func (ClaimBinder) Sync(s *cluster.State) (bool, error) {
	changed := false
	for _, k := range cluster.SortedKeys(s.PersistentVolumeClaims) {
		pvc := s.PersistentVolumeClaims[k]
		if pvc.Spec.VolumeName != "" || pvc.DeletionTimestamp != nil {
			continue
		}
		now := metav1.NewTime(s.Now)
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(pvc.UID), CreationTimestamp: now, ResourceVersion: s.Bump()},
			Spec: corev1.PersistentVolumeSpec{Capacity: pvc.Spec.Resources.Requests, AccessModes: pvc.Spec.AccessModes,
				ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID}},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound, LastPhaseTransitionTime: &now},
		}
		s.PersistentVolumes[pv.Name] = pv
		s.ObjectAdded(pv)
		old := pvc.DeepCopy()
		pvc.Spec.VolumeName = pv.Name
		pvc.Status.Phase = corev1.ClaimBound
		pvc.ResourceVersion = s.Bump()
		s.ObjectUpdated(old, pvc)
		changed = true
	}
	return changed, nil
}
