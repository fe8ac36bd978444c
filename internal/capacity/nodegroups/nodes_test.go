package nodegroups

import (
	"net/netip"
	"reflect"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
)

func newState(region string, seed int64) *cluster.State {
	s := cluster.New("1.34", seed)
	s.Info.Name = "eks-workshop"
	s.Info.Region = region
	return s
}

func mustCreate(t *testing.T, s *cluster.State, ng cluster.NodeGroup) []*corev1.Node {
	t.Helper()
	nodes, err := CreateNodes(s, ng)
	if err != nil {
		t.Fatalf("CreateNodes: %v", err)
	}
	return nodes
}

func TestNodeLabels(t *testing.T) {
	tests := []struct {
		name  string
		ng    cluster.NodeGroup
		extra map[string]string // labels expected beyond the common ones
	}{
		{
			name: "managed graviton",
			ng: cluster.NodeGroup{Name: "graviton", Managed: true, InstanceTypes: []string{"t4g.medium"}, DesiredSize: 1,
				Labels: map[string]string{"tainted": "yes"}},
			extra: map[string]string{
				"tainted":                        "yes",
				LabelNodeGroup:                   "graviton",
				LabelCapacityType:                "ON_DEMAND",
				LabelNodeGroupImage:              aws.AMIID("us-west-2", "AmazonLinux2023", "arm64"),
				LabelSourceLaunchTemplateID:      aws.LaunchTemplateID("eks-workshop", "graviton"),
				LabelSourceLaunchTemplateVersion: "1",
			},
		},
		{
			name: "managed spot",
			ng:   cluster.NodeGroup{Name: "graviton", Managed: true, Spot: true, InstanceTypes: []string{"t4g.medium", "m5.large"}, DesiredSize: 1},
			extra: map[string]string{
				LabelNodeGroup:                   "graviton",
				LabelCapacityType:                "SPOT",
				LabelNodeGroupImage:              aws.AMIID("us-west-2", "AmazonLinux2023", "arm64"),
				LabelSourceLaunchTemplateID:      aws.LaunchTemplateID("eks-workshop", "graviton"),
				LabelSourceLaunchTemplateVersion: "1",
			},
		},
		{
			name:  "self-managed has no eks labels",
			ng:    cluster.NodeGroup{Name: "graviton", InstanceTypes: []string{"t4g.medium"}, DesiredSize: 1, Labels: map[string]string{"tainted": "yes"}},
			extra: map[string]string{"tainted": "yes"},
		},
		{
			name: "user label cannot override system label",
			ng: cluster.NodeGroup{Name: "graviton", InstanceTypes: []string{"t4g.medium"}, DesiredSize: 1,
				Labels: map[string]string{corev1.LabelArchStable: "amd64"}},
			extra: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newState("us-west-2", 1)
			n := mustCreate(t, s, tt.ng)[0]
			want := map[string]string{
				"kubernetes.io/arch":                       "arm64",
				"beta.kubernetes.io/arch":                  "arm64",
				"kubernetes.io/os":                         "linux",
				"beta.kubernetes.io/os":                    "linux",
				"kubernetes.io/hostname":                   n.Name,
				"node.kubernetes.io/instance-type":         "t4g.medium",
				"beta.kubernetes.io/instance-type":         "t4g.medium",
				"topology.kubernetes.io/region":            "us-west-2",
				"failure-domain.beta.kubernetes.io/region": "us-west-2",
				"topology.kubernetes.io/zone":              "us-west-2a",
				"failure-domain.beta.kubernetes.io/zone":   "us-west-2a",
				"topology.k8s.aws/zone-id":                 "usw2-az1",
				"alpha.eksctl.io/cluster-name":             "eks-workshop",
				"alpha.eksctl.io/nodegroup-name":           "graviton",
			}
			for k, v := range tt.extra {
				want[k] = v
			}
			if !reflect.DeepEqual(n.Labels, want) {
				t.Errorf("labels:\n got %v\nwant %v", n.Labels, want)
			}
		})
	}
}

func TestNodeObject(t *testing.T) {
	s := newState("us-east-1", 5)
	taint := corev1.Taint{Key: "frontend", Value: "true", Effect: corev1.TaintEffectNoExecute}
	ng := cluster.NodeGroup{Name: "spot", Managed: true, InstanceTypes: []string{"c5.large"}, DesiredSize: 2, Taints: []corev1.Taint{taint}}
	before := s.SchedulingGeneration
	nodes := mustCreate(t, s, ng)
	if len(nodes) != 2 || len(s.Nodes) != 2 || !reflect.DeepEqual(s.Scheduler.NodeOrder, []string{nodes[0].Name, nodes[1].Name}) {
		t.Fatalf("created %d nodes, state has %d, node order %v", len(nodes), len(s.Nodes), s.Scheduler.NodeOrder)
	}
	if s.SchedulingGeneration <= before {
		t.Error("no NoteChange after adding nodes")
	}
	if nodes[0].ResourceVersion == "" || nodes[0].ResourceVersion == nodes[1].ResourceVersion || nodes[0].UID == nodes[1].UID {
		t.Errorf("resource versions %q %q, UIDs %q %q", nodes[0].ResourceVersion, nodes[1].ResourceVersion, nodes[0].UID, nodes[1].UID)
	}
	nameRE := regexp.MustCompile(`^ip-(\d+)-(\d+)-(\d+)-(\d+)\.ec2\.internal$`)
	for i, n := range nodes {
		zone := []string{"us-east-1a", "us-east-1b"}[i]
		if s.Nodes[n.Name] != n {
			t.Errorf("node %s not stored under its name", n.Name)
		}
		m := nameRE.FindStringSubmatch(n.Name)
		if m == nil {
			t.Fatalf("node name %q is not an us-east-1 private DNS name", n.Name)
		}
		ip := strings.Join(m[1:], ".")
		subnet, _ := aws.PrivateSubnet(s.Info, zone)
		if !netip.MustParsePrefix(subnet).Contains(netip.MustParseAddr(ip)) {
			t.Errorf("%s: IP %s outside %s's private subnet %s", n.Name, ip, zone, subnet)
		}
		wantAddrs := []corev1.NodeAddress{{Type: "InternalIP", Address: ip}, {Type: "InternalDNS", Address: n.Name}, {Type: "Hostname", Address: n.Name}}
		if !reflect.DeepEqual(n.Status.Addresses, wantAddrs) {
			t.Errorf("addresses %v", n.Status.Addresses)
		}
		wantAnn := map[string]string{"alpha.kubernetes.io/provided-node-ip": ip, "node.alpha.kubernetes.io/ttl": "0",
			"volumes.kubernetes.io/controller-managed-attach-detach": "true"}
		if !reflect.DeepEqual(n.Annotations, wantAnn) {
			t.Errorf("annotations %v", n.Annotations)
		}
		if !regexp.MustCompile(`^aws:///` + zone + `/i-0[0-9a-f]{16}$`).MatchString(n.Spec.ProviderID) {
			t.Errorf("providerID %q", n.Spec.ProviderID)
		}
		if n.Kind != "Node" || n.APIVersion != "v1" || !n.CreationTimestamp.Time.Equal(s.Now) {
			t.Errorf("type meta %v, created %v", n.TypeMeta, n.CreationTimestamp)
		}
		if !reflect.DeepEqual(n.Spec.Taints, []corev1.Taint{taint}) {
			t.Errorf("taints %v", n.Spec.Taints)
		}
		var ready *corev1.NodeCondition
		for j := range n.Status.Conditions {
			c := &n.Status.Conditions[j]
			if c.Type == corev1.NodeReady {
				ready = c
			} else if c.Status != corev1.ConditionFalse || !strings.HasPrefix(c.Reason, "KubeletHas") {
				t.Errorf("condition %s = %s (%s)", c.Type, c.Status, c.Reason)
			}
		}
		if ready == nil || ready.Status != "True" || ready.Reason != "KubeletReady" || ready.Message != "kubelet is posting ready status" {
			t.Errorf("ready condition %+v", ready)
		}
		info := n.Status.NodeInfo
		if info.Architecture != "amd64" || info.OperatingSystem != "linux" || !strings.HasPrefix(info.KubeletVersion, "v1.34.") ||
			!strings.HasPrefix(info.OSImage, "Amazon Linux 2023") || !strings.HasPrefix(info.SystemUUID, "ec2") {
			t.Errorf("node info %+v", info)
		}
	}
	// The group's taint slice is copied, not shared.
	ng.Taints[0].Value = "changed"
	if nodes[0].Spec.Taints[0].Value != "true" {
		t.Error("node shares the node group's taint slice")
	}
}

func TestZoneBalancing(t *testing.T) {
	tests := []struct {
		name    string
		zones   []string // node group zones; empty means the cluster's
		desired []int    // successive desired sizes
		want    map[string]int
	}{
		{name: "3 over 3", desired: []int{3}, want: map[string]int{"us-west-2a": 1, "us-west-2b": 1, "us-west-2c": 1}},
		{name: "4 over 3", desired: []int{4}, want: map[string]int{"us-west-2a": 2, "us-west-2b": 1, "us-west-2c": 1}},
		{name: "scale 1 then 5", desired: []int{1, 5}, want: map[string]int{"us-west-2a": 2, "us-west-2b": 2, "us-west-2c": 1}},
		{name: "group zones", zones: []string{"us-west-2c", "us-west-2b"}, desired: []int{3},
			want: map[string]int{"us-west-2c": 2, "us-west-2b": 1}},
		{name: "already at size", desired: []int{2, 2, 1}, want: map[string]int{"us-west-2a": 1, "us-west-2b": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newState("us-west-2", 9)
			// Another group's nodes must not count towards this one's balance.
			mustCreate(t, s, cluster.NodeGroup{Name: "other", Managed: true, InstanceTypes: []string{"m5.large"}, DesiredSize: 2})
			total := 0
			for _, d := range tt.desired {
				nodes := mustCreate(t, s, cluster.NodeGroup{Name: "ng", Managed: true, InstanceTypes: []string{"m5.large"}, DesiredSize: d, Zones: tt.zones})
				if wantNew := max(d-total, 0); len(nodes) != wantNew {
					t.Errorf("desired %d after %d: created %d, want %d", d, total, len(nodes), wantNew)
				}
				total = max(total, d)
			}
			got := map[string]int{}
			for _, n := range GroupNodes(s, "ng") {
				got[n.Labels[corev1.LabelTopologyZone]]++
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("zones %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAllocatable(t *testing.T) {
	// docs/eks.md: 1930m CPU, 29 / 17 pods; memory from the capacity model.
	tests := []struct {
		instance string
		want     map[corev1.ResourceName]string
	}{
		{"m5.large", map[corev1.ResourceName]string{"cpu": "1930m", "pods": "29", "memory": "6903Mi", "ephemeral-storage": "71Gi"}},
		{"t4g.medium", map[corev1.ResourceName]string{"cpu": "1930m", "pods": "17", "memory": "3187Mi", "ephemeral-storage": "71Gi"}},
	}
	for _, tt := range tests {
		t.Run(tt.instance, func(t *testing.T) {
			s := newState("us-west-2", 1)
			n := mustCreate(t, s, cluster.NodeGroup{Name: "ng", Managed: true, InstanceTypes: []string{tt.instance}, DesiredSize: 1})[0]
			for name, w := range tt.want {
				if q := n.Status.Allocatable[name]; q.Cmp(resource.MustParse(w)) != 0 {
					t.Errorf("allocatable %s = %s, want %s", name, q.String(), w)
				}
			}
			if q := n.Status.Capacity[corev1.ResourceCPU]; q.String() != "2" {
				t.Errorf("capacity cpu = %s", q.String())
			}
		})
	}
}

func TestDeterminism(t *testing.T) {
	run := func(seed int64) []string {
		s := newState("eu-west-1", seed)
		var out []string
		for _, n := range mustCreate(t, s, cluster.NodeGroup{Name: "ng", Managed: true, InstanceTypes: []string{"m5.large"}, DesiredSize: 4}) {
			out = append(out, n.Name+" "+string(n.UID)+" "+n.Spec.ProviderID)
		}
		return out
	}
	a, b, c := run(11), run(11), run(12)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different nodes:\n%v\n%v", a, b)
	}
	if reflect.DeepEqual(a, c) {
		t.Error("different seeds gave identical nodes")
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		ng   cluster.NodeGroup
		want []string
	}{
		{"unknown type", cluster.NodeGroup{Name: "big", Source: "cluster.yaml", InstanceTypes: []string{"m5.huge"}, DesiredSize: 1},
			[]string{`"big"`, "cluster.yaml", `"m5.huge"`}},
		{"zone outside cluster", cluster.NodeGroup{Name: "far", InstanceTypes: []string{"m5.large"}, Zones: []string{"us-west-2d"}, DesiredSize: 1},
			[]string{`"far"`, "us-west-2d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newState("us-west-2", 1)
			_, err := CreateNodes(s, tt.ng)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
			if len(s.Nodes) != 0 {
				t.Errorf("failed creation left %d nodes", len(s.Nodes))
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	s := cluster.New("", 1) // no name, region or zones
	n := mustCreate(t, s, cluster.NodeGroup{Name: "ng", DesiredSize: 1})[0]
	if n.Labels[corev1.LabelInstanceTypeStable] != "m5.large" || n.Labels[corev1.LabelTopologyZone] != "us-west-2a" ||
		!strings.HasSuffix(n.Name, ".us-west-2.compute.internal") || !strings.HasPrefix(n.Name, "ip-192-168-") {
		t.Errorf("defaults: %s %v", n.Name, n.Labels)
	}
	if _, ok := n.Labels[LabelEksctlClusterName]; ok {
		t.Error("cluster-name label set without a cluster name")
	}
}

func TestWindowsAndBottlerocketGroups(t *testing.T) {
	tests := []struct {
		family, wantOS, wantImage string
	}{
		{aws.AMIFamilyWindows2022, "windows", "Windows Server 2022"},
		{aws.AMIFamilyBottlerocket, "linux", "Bottlerocket OS"},
		{aws.AMIFamilyAmazonLinux2, "linux", "Amazon Linux 2"},
	}
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			s := newState("us-west-2", 1)
			n := mustCreate(t, s, cluster.NodeGroup{Name: "ng", Managed: true, AMIFamily: tt.family, InstanceTypes: []string{"m5.large"}, DesiredSize: 1})[0]
			if n.Labels[corev1.LabelOSStable] != tt.wantOS || n.Labels["beta.kubernetes.io/os"] != tt.wantOS || n.Status.NodeInfo.OperatingSystem != tt.wantOS {
				t.Errorf("os label %q, node info %q, want %q", n.Labels[corev1.LabelOSStable], n.Status.NodeInfo.OperatingSystem, tt.wantOS)
			}
			if !strings.HasPrefix(n.Status.NodeInfo.OSImage, tt.wantImage) {
				t.Errorf("osImage %q", n.Status.NodeInfo.OSImage)
			}
			if got, want := n.Labels[LabelNodeGroupImage], aws.AMIID("us-west-2", tt.family, "amd64"); got != want {
				t.Errorf("image label %q, want %q", got, want)
			}
		})
	}
}
