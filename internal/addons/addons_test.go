package addons

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/berth-sim/berth/internal/cluster"
)

var info = cluster.Info{Name: "c", Region: "eu-west-1", KubernetesVersion: "1.34"}

func names(objs []runtime.Object) []string {
	var out []string
	for _, o := range objs {
		switch v := o.(type) {
		case *appsv1.DaemonSet:
			out = append(out, "ds/"+v.Name)
		case *appsv1.Deployment:
			out = append(out, "deploy/"+v.Name)
		case *policyv1.PodDisruptionBudget:
			out = append(out, "pdb/"+v.Name)
		}
	}
	return out
}

func TestSelection(t *testing.T) {
	tests := []struct {
		name string
		sel  AddonsSelection
		want []string
	}{
		{"defaults", AddonsSelection{}, []string{"ds/aws-node", "ds/kube-proxy", "deploy/coredns", "pdb/coredns"}},
		{"defaults plus ebs", AddonsSelection{Addons: []string{"aws-ebs-csi-driver", "vpc-cni"}},
			[]string{"ds/aws-node", "ds/kube-proxy", "deploy/coredns", "pdb/coredns", "deploy/ebs-csi-controller", "ds/ebs-csi-node"}},
		{"defaults disabled", AddonsSelection{DisableDefaultAddons: true}, nil},
		{"disabled, explicit coredns only", AddonsSelection{DisableDefaultAddons: true, Addons: []string{"coredns", "eks-pod-identity-agent"}},
			[]string{"deploy/coredns", "pdb/coredns"}},
	}
	for _, tc := range tests {
		if got := names(Objects(info, tc.sel)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The objects must select their own pods, and their node affinity must
// admit EC2 nodes (no compute-type label) and refuse Fargate nodes.
func TestPlacementFacts(t *testing.T) {
	ec2 := &corev1.Node{}
	ec2.Labels = map[string]string{corev1.LabelOSStable: "linux", corev1.LabelArchStable: "arm64"}
	fargate := ec2.DeepCopy()
	fargate.Labels["eks.amazonaws.com/compute-type"] = "fargate"
	for _, o := range Objects(info, AddonsSelection{Addons: []string{EBSCSI}}) {
		var tmpl *corev1.PodTemplateSpec
		var selLabels map[string]string
		switch v := o.(type) {
		case *appsv1.DaemonSet:
			tmpl, selLabels = &v.Spec.Template, v.Spec.Selector.MatchLabels
			if v.Spec.Template.Spec.PriorityClassName != "system-node-critical" {
				t.Errorf("%s: priority class %q", v.Name, v.Spec.Template.Spec.PriorityClassName)
			}
		case *appsv1.Deployment:
			tmpl, selLabels = &v.Spec.Template, v.Spec.Selector.MatchLabels
			if v.Spec.Template.Spec.PriorityClassName != "system-cluster-critical" {
				t.Errorf("%s: priority class %q", v.Name, v.Spec.Template.Spec.PriorityClassName)
			}
		default:
			continue
		}
		for k, v := range selLabels {
			if tmpl.Labels[k] != v {
				t.Errorf("selector %v does not match template labels %v", selLabels, tmpl.Labels)
			}
		}
		pod := &corev1.Pod{Spec: tmpl.Spec}
		if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(ec2); !ok {
			t.Errorf("template with labels %v does not fit an EC2 node", tmpl.Labels)
		}
		daemon := tmpl.Spec.HostNetwork || tmpl.Labels["app"] == "ebs-csi-node"
		if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(fargate); ok && daemon {
			t.Errorf("daemon template with labels %v fits a Fargate node", tmpl.Labels)
		}
		if tmpl.Spec.Containers[0].Resources.Requests.Cpu().IsZero() {
			t.Errorf("template with labels %v has no cpu request", tmpl.Labels)
		}
	}
}

func TestCoreDNSFacts(t *testing.T) {
	d := coreDNS(info)
	if *d.Spec.Replicas != 2 || d.Spec.Template.Labels["k8s-app"] != "kube-dns" {
		t.Fatalf("coredns: replicas %d labels %v", *d.Spec.Replicas, d.Spec.Template.Labels)
	}
	req := d.Spec.Template.Spec.Containers[0].Resources.Requests
	if req.Cpu().String() != "100m" || req.Memory().String() != "70Mi" {
		t.Errorf("coredns requests %v", req)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/coredns:v1.11.4-eksbuild.2" {
		t.Errorf("image %q", got)
	}
}
