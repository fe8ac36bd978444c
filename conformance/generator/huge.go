package generator

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// hugeNamespaces hold the Deployments of the Huge file, round robin.
var hugeNamespaces = []string{"default", "shop", "search", "batch"}

// Huge writes the load of the 100,000-pod measurement (docs/performance.md)
// as one multi-document file: nodes Node manifests as exported from an
// existing cluster that is not on EC2 (no instance-type label and no
// providerID, so berth applies no VPC or ENI model to them; each states its
// capacity and its podCIDR), then deployments Deployments of replicas
// replicas each, of varied requests, spread over a few namespaces. The seed
// draws node sizes and requests; the nodes have room for every pod.
func Huge(nodes, deployments, replicas int, seed uint64) ([]byte, error) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %d nodes, %d Deployments x %d replicas (%d pods), seed %d\n", nodes, deployments, replicas, deployments*replicas, seed)
	var objs []any
	for _, ns := range hugeNamespaces[1:] {
		objs = append(objs, &v1.Namespace{TypeMeta: metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	for i := 0; i < nodes; i++ {
		objs = append(objs, hugeNode(r, i))
	}
	for i := 0; i < deployments; i++ {
		objs = append(objs, hugeDeployment(r, i, replicas))
	}
	if err := AppendDocs(&b, objs); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func hugeNode(r *rand.Rand, i int) *v1.Node {
	name := fmt.Sprintf("node-%04d", i)
	size := []struct{ cpu, mem string }{{"8", "32Gi"}, {"16", "64Gi"}, {"32", "128Gi"}}[r.IntN(3)]
	capacity := v1.ResourceList{v1.ResourceCPU: qty(size.cpu), v1.ResourceMemory: qty(size.mem),
		v1.ResourcePods: qty("110"), v1.ResourceEphemeralStorage: qty("100Gi")}
	// A /24 per node, as the node IPAM controller hands them out, from 10.0.0.0/8.
	cidr := fmt.Sprintf("10.%d.%d.0/24", 1+i/256, i%256)
	return &v1.Node{
		TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			v1.LabelHostname: name, v1.LabelOSStable: "linux", v1.LabelArchStable: "amd64",
			v1.LabelTopologyZone: []string{"zone-a", "zone-b", "zone-c"}[i%3],
		}},
		Spec: v1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
		Status: v1.NodeStatus{
			Capacity: capacity, Allocatable: capacity.DeepCopy(),
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady"}},
			Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: fmt.Sprintf("192.168.%d.%d", i/250, 1+i%250)},
				{Type: v1.NodeHostName, Address: name}},
		},
	}
}

func hugeDeployment(r *rand.Rand, i, replicas int) *appsv1.Deployment {
	name := fmt.Sprintf("app-%03d", i)
	labels := map[string]string{"app": name}
	cpu := []string{"100m", "250m", "500m", "1"}[r.IntN(4)]
	mem := []string{"128Mi", "256Mi", "512Mi", "1Gi", "2Gi"}[r.IntN(5)]
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{Kind: "Deployment", APIVersion: "apps/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: hugeNamespaces[i%len(hugeNamespaces)], Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{Containers: []v1.Container{{
					Name: "app", Image: fmt.Sprintf("registry.local/%s:1", name),
					Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
						v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}},
				}}},
			},
		},
	}
}
