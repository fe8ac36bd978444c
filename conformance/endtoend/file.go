// Package endtoend is the conformance harness's end-to-end mode: a
// generated scenario is written as one multi-document manifest, applied to
// berth exactly as `berth apply -f` applies it (decoding, validation,
// admission, every controller, the kubelet, settling in virtual time), and
// every pod's first scheduling attempt is compared with the genuine
// kube-scheduler's, which is fed the same objects in the same creation
// order and pops pods from its own queue.
package endtoend

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/conformance/generator"
	"github.com/berth-sim/berth/conformance/scenario"
)

// deploymentP is the share of pending pods that become a Deployment.
const deploymentP = 0.35

// deployLabel makes each generated Deployment's selector its own.
const deployLabel = "e2e.berth.dev/deployment"

// File writes sc as a user would: the objects in the order a cluster needs
// them, without server-owned fields, bound pods as pods with spec.nodeName,
// and about a third of the pending pods as Deployments of one to three
// replicas (so a ReplicaSet creates them). The scenario's ReplicaSets are
// left out (their pods are plain pods here); seed draws the Deployments.
func File(sc *scenario.Scenario, seed uint64) ([]byte, error) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var objs []any
	for _, o := range sc.Namespaces {
		if o.Name != metav1.NamespaceDefault {
			objs = append(objs, user(o))
		}
	}
	for _, o := range sc.PriorityClasses {
		objs = append(objs, user(o))
	}
	for _, o := range sc.Nodes {
		objs = append(objs, user(o))
	}
	for _, o := range sc.StorageClasses {
		objs = append(objs, user(o))
	}
	for _, o := range sc.PersistentVolumes {
		c := user(o)
		if ref := c.Spec.ClaimRef; ref != nil {
			// The claim gets its uid when it is created.
			ref.UID, ref.ResourceVersion = "", ""
		}
		c.Status = v1.PersistentVolumeStatus{}
		objs = append(objs, c)
	}
	for _, o := range sc.PersistentVolumeClaims {
		c := user(o)
		c.Status = v1.PersistentVolumeClaimStatus{}
		objs = append(objs, c)
	}
	for _, o := range sc.CSINodes {
		objs = append(objs, user(o))
	}
	for _, o := range sc.Services {
		c := user(o)
		c.Spec.ClusterIP, c.Spec.ClusterIPs = "", nil
		objs = append(objs, c)
	}
	for _, o := range sc.Existing {
		objs = append(objs, userPod(o))
	}
	for _, o := range sc.Pending {
		p := userPod(o)
		if r.Float64() >= deploymentP {
			objs = append(objs, p)
			continue
		}
		objs = append(objs, deploymentOf(p, int32(1+r.IntN(3))))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s: generated end-to-end scenario (Kubernetes %s)\n", sc.Name, sc.KubernetesVersion)
	if err := generator.AppendDocs(&b, objs); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// user returns a copy without what the API server owns.
func user[T interface {
	metav1.Object
	DeepCopyObject() runtime.Object
}](o T) T {
	c := o.DeepCopyObject().(T)
	clearServerFields(c)
	return c
}

func clearServerFields(m metav1.Object) {
	m.SetUID("")
	m.SetResourceVersion("")
	m.SetCreationTimestamp(metav1.Time{})
	m.SetOwnerReferences(nil)
	m.SetManagedFields(nil)
}

// userPod is the pod as its author wrote it: no status, no owner, priority
// left to admission.
func userPod(o *v1.Pod) *v1.Pod {
	p := o.DeepCopy()
	clearServerFields(p)
	p.Status = v1.PodStatus{}
	p.Spec.Priority = nil
	p.Spec.PreemptionPolicy = nil
	delete(p.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	if p.Namespace == "" {
		p.Namespace = metav1.NamespaceDefault
	}
	return p
}

func deploymentOf(p *v1.Pod, replicas int32) *appsv1.Deployment {
	labels := map[string]string{deployLabel: p.Name}
	for k, v := range p.Labels {
		labels[k] = v
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{Kind: "Deployment", APIVersion: "apps/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{deployLabel: p.Name}},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: p.Annotations}, Spec: p.Spec},
		},
	}
}
