package eksctl

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

const header = `apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata:
  name: demo
  region: us-west-2
`

func resolve(t *testing.T, doc string) (cluster.Info, []cluster.NodeGroup, error) {
	t.Helper()
	cfg, err := Decode([]byte(doc))
	if err != nil {
		return cluster.Info{}, nil, err
	}
	return cfg.Resolve("cluster.yaml: document 1")
}

func TestResolveWorkshopConfig(t *testing.T) {
	doc := header + `  version: "1.33"
  tags: {created-by: eks-workshop-v2}
availabilityZones: [us-west-2a, us-west-2b, us-west-2c]
vpc: {cidr: 10.42.0.0/16}
iam: {withOIDC: true}
addons: [{name: vpc-cni}]
managedNodeGroups:
  - name: default
    instanceType: m5.large
    desiredCapacity: 3
    minSize: 3
    maxSize: 6
    labels: {workshop-default: "yes"}
    updateConfig: {maxUnavailablePercentage: 50}
  - name: graviton
    instanceTypes: [t4g.medium]
    amiFamily: amazonlinux2023
    minSize: 1
    maxSize: 3
    desiredCapacity: 1
    volumeSize: 20
    taints:
      - {key: frontend, value: "true", effect: NoExecute}
  - name: managed-spot
    instanceTypes: [c5.large, c5d.large]
    spot: true
    minSize: 2
    maxSize: 3
    desiredCapacity: 2
    taints:
      - {key: spot, value: "yes", effect: PREFER_NO_SCHEDULE}
      - {key: batch, effect: NO_SCHEDULE}
nodeGroups:
  - name: ng-db-2a
    instanceType: r5.large
    availabilityZones: [us-west-2a]
    minSize: 0
    maxSize: 4
    labels: {workload: db}
    taints:
      workload: "db:NoSchedule"
      dedicated: ":NO_EXECUTE"
      lonely: "PreferNoSchedule"
`
	info, groups, err := resolve(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	wantInfo := cluster.Info{Name: "demo", Region: "us-west-2", KubernetesVersion: "1.33",
		Zones: []string{"us-west-2a", "us-west-2b", "us-west-2c"}, VPCCIDR: "10.42.0.0/16"}
	if !reflect.DeepEqual(info, wantInfo) {
		t.Errorf("info = %+v, want %+v", info, wantInfo)
	}
	labels := func(name string, extra map[string]string) map[string]string {
		m := map[string]string{ClusterNameLabel: "demo", NodeGroupNameLabel: name}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	zones := []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	src := "cluster.yaml: document 1"
	want := []cluster.NodeGroup{
		{Name: "ng-db-2a", InstanceTypes: []string{"r5.large"}, DesiredSize: 0, MinSize: 0, MaxSize: 4,
			Labels: labels("ng-db-2a", map[string]string{"workload": "db"}),
			Taints: []corev1.Taint{
				{Key: "dedicated", Effect: corev1.TaintEffectNoExecute},
				{Key: "lonely", Effect: corev1.TaintEffectPreferNoSchedule},
				{Key: "workload", Value: "db", Effect: corev1.TaintEffectNoSchedule},
			},
			Zones: []string{"us-west-2a"}, AMIFamily: "AmazonLinux2023", Source: src},
		{Name: "default", Managed: true, InstanceTypes: []string{"m5.large"}, DesiredSize: 3, MinSize: 3, MaxSize: 6,
			Labels: labels("default", map[string]string{"workshop-default": "yes"}),
			Zones:  zones, AMIFamily: "AmazonLinux2023", Source: src},
		{Name: "graviton", Managed: true, InstanceTypes: []string{"t4g.medium"}, DesiredSize: 1, MinSize: 1, MaxSize: 3,
			Labels: labels("graviton", nil),
			Taints: []corev1.Taint{{Key: "frontend", Value: "true", Effect: corev1.TaintEffectNoExecute}},
			Zones:  zones, AMIFamily: "AmazonLinux2023", Source: src},
		{Name: "managed-spot", Managed: true, Spot: true, InstanceTypes: []string{"c5.large", "c5d.large"}, DesiredSize: 2, MinSize: 2, MaxSize: 3,
			Labels: labels("managed-spot", nil),
			Taints: []corev1.Taint{
				{Key: "spot", Value: "yes", Effect: corev1.TaintEffectPreferNoSchedule},
				{Key: "batch", Effect: corev1.TaintEffectNoSchedule},
			},
			Zones: zones, AMIFamily: "AmazonLinux2023", Source: src},
	}
	if !reflect.DeepEqual(groups, want) {
		t.Errorf("groups:\n got %+v\nwant %+v", groups, want)
	}
}

func TestResolveDefaults(t *testing.T) {
	info, groups, err := resolve(t, header+`managedNodeGroups:
  - name: a
  - name: b
    desiredCapacity: 5
  - name: c
    minSize: 0
nodeGroups:
  - name: d
    minSize: 0
  - name: e
    maxSize: 7
`)
	if err != nil {
		t.Fatal(err)
	}
	if info.KubernetesVersion != cluster.DefaultKubernetesVersion {
		t.Errorf("version = %q, want default %q", info.KubernetesVersion, cluster.DefaultKubernetesVersion)
	}
	if want := []string{"us-west-2a", "us-west-2b", "us-west-2c"}; !reflect.DeepEqual(info.Zones, want) {
		t.Errorf("zones = %v, want %v", info.Zones, want)
	}
	if info.VPCCIDR != DefaultCIDR {
		t.Errorf("cidr = %q, want %q", info.VPCCIDR, DefaultCIDR)
	}
	type size struct{ min, max, desired int }
	want := map[string]size{
		"d": {0, 0, 0}, // self-managed: max 0 stays 0
		"e": {2, 7, 2},
		"a": {2, 2, 2},
		"b": {5, 5, 5},
		"c": {0, 1, 0}, // managed: max 0 becomes DefaultMaxSize
	}
	for _, g := range groups {
		got := size{g.MinSize, g.MaxSize, g.DesiredSize}
		if got != want[g.Name] {
			t.Errorf("group %s: size %+v, want %+v", g.Name, got, want[g.Name])
		}
		if !reflect.DeepEqual(g.InstanceTypes, []string{DefaultNodeType}) {
			t.Errorf("group %s: instance types %v, want [%s]", g.Name, g.InstanceTypes, DefaultNodeType)
		}
		if g.AMIFamily != DefaultAMIFamily {
			t.Errorf("group %s: amiFamily %q", g.Name, g.AMIFamily)
		}
	}
}

func TestResolveInstancesDistribution(t *testing.T) {
	_, groups, err := resolve(t, header+`nodeGroups:
  - name: mixed
    instancesDistribution:
      instanceTypes: [m5.large, m5a.large]
      onDemandBaseCapacity: 0
      onDemandPercentageAboveBaseCapacity: 0
`)
	if err != nil {
		t.Fatal(err)
	}
	if g := groups[0]; !g.Spot || !reflect.DeepEqual(g.InstanceTypes, []string{"m5.large", "m5a.large"}) {
		t.Errorf("got spot=%v types=%v", g.Spot, g.InstanceTypes)
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"no name", "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {region: us-west-2}\n", "metadata.name must be set"},
		{"no region", "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: x}\n", "metadata.region must be set"},
		{"bad version", header + "  version: \"1.99\"\n", `metadata.version: unsupported Kubernetes version "1.99": berth models 1.24 to 1.36`},
		{"numeric version", header + "  version: 1.30\n", `metadata.version must be a string such as "1.34" (quote it: YAML reads 1.30 as the number 1.3), got 1.3`},
		{"one zone", header + "availabilityZones: [us-west-2a]\n", "only 1 zone(s) specified [us-west-2a], 2 are required (can be non-unique)"},
		{"unnamed group", header + "managedNodeGroups: [{minSize: 1}]\n", "managedNodeGroups[0].name must be set"},
		{"duplicate group", header + "nodeGroups: [{name: a}]\nmanagedNodeGroups: [{name: a}]\n", `managedNodeGroups[0].name "a" is not unique`},
		{"both instance fields", header + "managedNodeGroups: [{name: a, instanceType: m5.large, instanceTypes: [c5.large]}]\n",
			"only one of instanceType or instanceTypes can be specified (managedNodeGroups[0])"},
		{"managed desired below min", header + "managedNodeGroups: [{name: a, minSize: 3, desiredCapacity: 1}]\n",
			"cannot use --nodes-min=3 and --nodes=1 at the same time"},
		{"managed desired above max", header + "managedNodeGroups: [{name: a, maxSize: 2, desiredCapacity: 4}]\n",
			"cannot use --nodes-max=2 and --nodes=4 at the same time"},
		{"managed max below min", header + "managedNodeGroups: [{name: a, minSize: 3, maxSize: 2}]\n",
			"cannot use --nodes-min=3 and --nodes-max=2 at the same time"},
		{"self-managed desired below min", header + "nodeGroups: [{name: a, minSize: 3, desiredCapacity: 1}]\n",
			"--nodes value (1) cannot be lower than --nodes-min value (3)"},
		{"self-managed desired above max", header + "nodeGroups: [{name: a, maxSize: 2, desiredCapacity: 4}]\n",
			"--nodes value (4) cannot be greater than --nodes-max value (2)"},
		{"self-managed max below min", header + "nodeGroups: [{name: a, minSize: 3, maxSize: 2}]\n",
			"--nodes-min value (3) cannot be greater than --nodes-max value (2)"},
		{"bad effect", header + "managedNodeGroups: [{name: a, taints: [{key: k, effect: Sometimes}]}]\n",
			"managedNodeGroups[0].taints[0]: invalid taint effect: Sometimes, unsupported taint effect. Valid taint effects are: NoSchedule, NoExecute and PreferNoSchedule"},
		{"map value with no effect", header + "nodeGroups: [{name: a, taints: {k: \"v:\"}}]\n",
			"nodeGroups[0].taints[0]: invalid taint effect: , unsupported taint effect. Valid taint effects are: NoSchedule, NoExecute and PreferNoSchedule"},
		{"empty taint key", header + "nodeGroups: [{name: a, taints: [{value: v, effect: NoSchedule}]}]\n",
			"nodeGroups[0].taints[0]: taint key must be non-empty"},
		{"bad taint key", header + "nodeGroups: [{name: a, taints: [{key: \"a b\", effect: NoSchedule}]}]\n",
			"nodeGroups[0].taints[0]: invalid taint key: a b, name part must consist of alphanumeric characters"},
		{"map form on managed", header + "managedNodeGroups: [{name: a, taints: {k: \"v:NoSchedule\"}}]\n",
			"managedNodeGroups[0].taints: managed nodegroups accept only the list form [{key, value, effect}]"},
		{"taints wrong shape", header + "nodeGroups: [{name: a, taints: [{key: k, colour: red}]}]\n",
			`nodeGroups[0].taints[0].colour: error unmarshaling JSON: while decoding JSON: json: unknown field "colour"`},
		{"spot on self-managed", header + "nodeGroups: [{name: a, spot: true}]\n",
			`nodeGroups[0].spot: error unmarshaling JSON: while decoding JSON: json: unknown field "spot" (self-managed nodeGroups take instance types and Spot through instancesDistribution)`},
		{"AL2 on new version", header + "  version: \"1.33\"\nmanagedNodeGroups: [{name: a, amiFamily: AmazonLinux2}]\n",
			"AmazonLinux2 is not supported for Kubernetes version 1.33"},
		{"unknown ami family", header + "managedNodeGroups: [{name: a, amiFamily: Gentoo}]\n",
			`managedNodeGroups[0].amiFamily: "Gentoo" is not supported`},
		{"bad label", header + "managedNodeGroups: [{name: a, labels: {\"-x\": v}}]\n",
			`managedNodeGroups[0].labels: invalid label key "-x"`},
		{"negative max pods", header + "managedNodeGroups: [{name: a, maxPodsPerNode: -1}]\n",
			"managedNodeGroups[0].maxPodsPerNode cannot be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := resolve(t, tt.doc)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\ndoes not contain %q", err, tt.want)
			}
		})
	}
}

func TestDeepCopyObject(t *testing.T) {
	cfg, err := Decode([]byte(header + "nodeGroups: [{name: a, desiredCapacity: 2, taints: {k: \"v:NoSchedule\"}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cp := cfg.DeepCopyObject().(*ClusterConfig)
	*cp.NodeGroups[0].DesiredCapacity = 9
	if *cfg.NodeGroups[0].DesiredCapacity != 2 {
		t.Errorf("copy shares memory with the original")
	}
	if !reflect.DeepEqual(cp.NodeGroups[0].Taints.Items, cfg.NodeGroups[0].Taints.Items) {
		t.Errorf("taints not copied: %+v", cp.NodeGroups[0].Taints)
	}
}
