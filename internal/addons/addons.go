// Package addons builds the workloads EKS and eksctl install in kube-system
// (docs/eks.md, add-on workloads): the CoreDNS Deployment and its PodDisruptionBudget, the
// aws-node (VPC CNI) and kube-proxy DaemonSets, and, when asked for, the EBS
// CSI driver. Only what placement depends on is modelled: labels,
// selectors, priority classes, tolerations, affinity, topology spread and
// requests.
package addons

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
)

// Add-on names as eksctl's addons[].name spells them.
const (
	VPCCNI    = "vpc-cni"
	KubeProxy = "kube-proxy"
	CoreDNS   = "coredns"
	EBSCSI    = "aws-ebs-csi-driver"
)

// Namespace is where every add-on runs.
const Namespace = "kube-system"

// defaultAddons are installed on every new cluster unless disabled.
var defaultAddons = []string{VPCCNI, KubeProxy, CoreDNS}

// AddonsSelection says which add-ons a ClusterConfig asks for.
type AddonsSelection struct {
	// Addons are the names listed under addons:, in file order.
	Addons []string
	// DisableDefaultAddons is addonsConfig.disableDefaultAddons.
	DisableDefaultAddons bool
}

// Selected returns the add-ons that will run, in a fixed order (defaults
// first, then the listed ones), each once. Names berth does not model are left out.
func (sel AddonsSelection) Selected() []string {
	want := map[string]bool{}
	if !sel.DisableDefaultAddons {
		for _, n := range defaultAddons {
			want[n] = true
		}
	}
	for _, n := range sel.Addons {
		want[n] = true
	}
	var out []string
	for _, n := range []string{VPCCNI, KubeProxy, CoreDNS, EBSCSI} {
		if want[n] {
			out = append(out, n)
		}
	}
	return out
}

// Objects returns the kube-system objects of the selected add-ons, ready for
// admission.Create (DaemonSets, Deployments and PodDisruptionBudgets).
func Objects(info cluster.Info, cfg AddonsSelection) []runtime.Object {
	var out []runtime.Object
	for _, name := range cfg.Selected() {
		switch name {
		case VPCCNI:
			out = append(out, awsNode(info))
		case KubeProxy:
			out = append(out, kubeProxy(info))
		case CoreDNS:
			out = append(out, coreDNS(info), coreDNSBudget())
		case EBSCSI:
			out = append(out, ebsCSIController(info), ebsCSINode(info))
		}
	}
	return out
}

// image is the add-on image in the regional EKS ECR registry.
func image(info cluster.Info, repo, tag string) string {
	region := info.Region
	if region == "" {
		region = "us-west-2"
	}
	return fmt.Sprintf("602401143452.dkr.ecr.%s.amazonaws.com/%s:%s", region, repo, tag)
}

func requests(cpu, memory string) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	if memory != "" {
		r.Requests[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return r
}

// linuxNodeAffinity requires Linux on amd64/arm64 and, when notIn is given,
// keeps off nodes whose eks.amazonaws.com/compute-type is one of them
// (NotIn matches EC2 nodes, which lack the label).
func linuxNodeAffinity(notIn ...string) *corev1.NodeAffinity {
	exprs := []corev1.NodeSelectorRequirement{
		{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"linux"}},
		{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64", "arm64"}},
	}
	if len(notIn) > 0 {
		exprs = append(exprs, corev1.NodeSelectorRequirement{Key: aws.LabelComputeType, Operator: corev1.NodeSelectorOpNotIn, Values: notIn})
	}
	return &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: exprs}}}}
}

var tolerateEverything = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}

func daemonSet(name string, labels, selector map[string]string, spec corev1.PodSpec, maxUnavailable *intstr.IntOrString) *appsv1.DaemonSet {
	ds := &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: copyLabels(labels)}, Spec: spec},
		},
	}
	if maxUnavailable != nil {
		ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: maxUnavailable}}
	}
	return ds
}

func copyLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// awsNode is the VPC CNI DaemonSet (docs/eks.md).
func awsNode(info cluster.Info) *appsv1.DaemonSet {
	labels := map[string]string{"k8s-app": "aws-node"}
	return daemonSet("aws-node", labels, map[string]string{"k8s-app": "aws-node"}, corev1.PodSpec{
		PriorityClassName:  "system-node-critical",
		HostNetwork:        true,
		ServiceAccountName: "aws-node",
		Tolerations:        tolerateEverything,
		Affinity:           &corev1.Affinity{NodeAffinity: linuxNodeAffinity("fargate", "hybrid", "auto")},
		Containers: []corev1.Container{{Name: "aws-node", Image: image(info, "amazon-k8s-cni", "v1.19.2-eksbuild.1"),
			Resources: requests("25m", "")}},
	}, ptr(intstr.FromString("10%")))
}

// kubeProxy is the kube-proxy DaemonSet (docs/eks.md).
func kubeProxy(info cluster.Info) *appsv1.DaemonSet {
	labels := map[string]string{"eks.amazonaws.com/component": "kube-proxy", "k8s-app": "kube-proxy"}
	return daemonSet("kube-proxy", labels, map[string]string{"k8s-app": "kube-proxy"}, corev1.PodSpec{
		PriorityClassName:  "system-node-critical",
		HostNetwork:        true,
		ServiceAccountName: "kube-proxy",
		Tolerations:        tolerateEverything,
		Affinity:           &corev1.Affinity{NodeAffinity: linuxNodeAffinity("fargate")},
		Containers: []corev1.Container{{Name: "kube-proxy", Image: image(info, "eks/kube-proxy", "v"+info.KubernetesVersion+".0-minimal-eksbuild.1"),
			Resources: requests("100m", "")}},
	}, nil)
}

// coreDNS is the CoreDNS Deployment (docs/eks.md).
func coreDNS(info cluster.Info) *appsv1.Deployment {
	labels := map[string]string{"eks.amazonaws.com/component": "coredns", "k8s-app": "kube-dns"}
	dnsSelector := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "k8s-app", Operator: metav1.LabelSelectorOpIn, Values: []string{"kube-dns"}}}}
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: Namespace, Labels: map[string]string{
			"eks.amazonaws.com/component": "coredns", "k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(2)),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr(intstr.FromInt32(1))}},
			Selector: &metav1.LabelSelector{MatchLabels: copyLabels(labels)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: copyLabels(labels),
					Annotations: map[string]string{aws.LabelComputeType: "ec2"}},
				Spec: corev1.PodSpec{
					PriorityClassName:  "system-cluster-critical",
					ServiceAccountName: "coredns",
					Affinity: &corev1.Affinity{
						NodeAffinity: linuxNodeAffinity(),
						PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
							Weight:          100,
							PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: dnsSelector, TopologyKey: corev1.LabelHostname},
						}}},
					},
					Tolerations: []corev1.Toleration{
						{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
						{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule},
					},
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
						MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway,
						LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
					}},
					Containers: []corev1.Container{{
						Name: "coredns", Image: image(info, "eks/coredns", "v1.11.4-eksbuild.2"),
						Resources: corev1.ResourceRequirements{
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("170Mi")},
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("70Mi")},
						},
					}},
				},
			},
		},
	}
}

// coreDNSBudget is the add-on's PodDisruptionBudget (maxUnavailable 1).
func coreDNSBudget() *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: Namespace,
			Labels: map[string]string{"eks.amazonaws.com/component": "coredns", "k8s-app": "kube-dns"}},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{
				"eks.amazonaws.com/component": "coredns", "k8s-app": "kube-dns"}},
		},
	}
}

// ebsCSIController is the EBS CSI controller Deployment (Helm chart defaults, docs/eks.md).
func ebsCSIController(info cluster.Info) *appsv1.Deployment {
	labels := map[string]string{"app": "ebs-csi-controller", "app.kubernetes.io/name": "aws-ebs-csi-driver"}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "ebs-csi-controller", Namespace: Namespace, Labels: copyLabels(labels)},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: copyLabels(labels)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: copyLabels(labels)},
				Spec: corev1.PodSpec{
					PriorityClassName:  "system-cluster-critical",
					ServiceAccountName: "ebs-csi-controller-sa",
					NodeSelector:       map[string]string{corev1.LabelOSStable: "linux"},
					Tolerations: []corev1.Toleration{
						{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
						{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
					},
					Containers: []corev1.Container{{Name: "ebs-plugin", Image: image(info, "eks/aws-ebs-csi-driver", "v1.38.1"),
						Resources: requests("10m", "40Mi")}},
				},
			},
		},
	}
}

// ebsCSINode is the EBS CSI node DaemonSet (docs/eks.md).
func ebsCSINode(info cluster.Info) *appsv1.DaemonSet {
	labels := map[string]string{"app": "ebs-csi-node", "app.kubernetes.io/name": "aws-ebs-csi-driver"}
	return daemonSet("ebs-csi-node", labels, copyLabels(labels), corev1.PodSpec{
		PriorityClassName:  "system-node-critical",
		ServiceAccountName: "ebs-csi-node-sa",
		NodeSelector:       map[string]string{corev1.LabelOSStable: "linux"},
		Tolerations:        tolerateEverything,
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: aws.LabelComputeType, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"fargate", "auto", "hybrid"}}}}}}}},
		Containers: []corev1.Container{{Name: "ebs-plugin", Image: image(info, "eks/aws-ebs-csi-driver", "v1.38.1"),
			Resources: requests("10m", "40Mi")}},
	}, ptr(intstr.FromString("10%")))
}
