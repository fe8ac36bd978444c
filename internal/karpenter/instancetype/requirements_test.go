package instancetype

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// listDefault is the full list for an AL2023 NodeClass in us-west-2 a-c.
func listDefault(t testing.TB) InstanceTypes {
	t.Helper()
	return List("us-west-2", ZonesOf("us-west-2a", "us-west-2b", "us-west-2c"), NodeClassOptions{}, nil, nil, t0)
}

func byName(t testing.TB, its InstanceTypes, name string) *InstanceType {
	t.Helper()
	for _, it := range its {
		if it.Name == name {
			return it
		}
	}
	t.Fatalf("%s not listed", name)
	return nil
}

// docsLabels reads a type's requirements the way Karpenter's docs page
// prints labels: single-valued In keys (hypervisor may be "").
func docsLabels(reqs scheduling.Requirements) map[string]string {
	out := map[string]string{}
	for _, r := range reqs.Values() {
		if r.Operator() == corev1.NodeSelectorOpIn && r.Len() == 1 {
			out[r.Key] = r.Values()[0]
		}
	}
	return out
}

// pageKeys are the keys Karpenter's docs page prints per type.
func pageKey(key string) bool {
	return strings.HasPrefix(key, scheduling.AWSGroup+"/instance-") ||
		key == corev1.LabelArchStable || key == corev1.LabelOSStable || key == corev1.LabelInstanceTypeStable
}

// Values from aws/karpenter-provider-aws website/content/en/docs/reference/instance-types.md.
var docsPage = map[string]string{
	"m5.large": "instance-category=m instance-cpu=2 instance-cpu-manufacturer=intel instance-cpu-sustained-clock-speed-mhz=3100 " +
		"instance-ebs-bandwidth=4750 instance-encryption-in-transit-supported=false instance-family=m5 instance-generation=5 " +
		"instance-hypervisor=nitro instance-memory=8192 instance-network-bandwidth=750 instance-size=large arch=amd64 os=linux",
	"c7g.large": "instance-category=c instance-cpu=2 instance-cpu-manufacturer=aws instance-cpu-sustained-clock-speed-mhz=2600 " +
		"instance-ebs-bandwidth=10000 instance-encryption-in-transit-supported=true instance-family=c7g instance-generation=7 " +
		"instance-hypervisor=nitro instance-memory=4096 instance-network-bandwidth=937 instance-size=large arch=arm64 os=linux",
	"g4dn.xlarge": "instance-category=g instance-cpu=4 instance-cpu-manufacturer=intel instance-cpu-sustained-clock-speed-mhz=2500 " +
		"instance-ebs-bandwidth=3500 instance-encryption-in-transit-supported=true instance-family=g4dn instance-generation=4 " +
		"instance-gpu-count=1 instance-gpu-manufacturer=nvidia instance-gpu-memory=16384 instance-gpu-name=t4 instance-hypervisor=nitro " +
		"instance-local-nvme=125 instance-memory=16384 instance-network-bandwidth=5000 instance-size=xlarge arch=amd64 os=linux",
	"p4d.24xlarge": "instance-category=p instance-cpu=96 instance-cpu-manufacturer=intel instance-cpu-sustained-clock-speed-mhz=3000 " +
		"instance-ebs-bandwidth=19000 instance-encryption-in-transit-supported=true instance-family=p4d instance-generation=4 " +
		"instance-gpu-count=8 instance-gpu-manufacturer=nvidia instance-gpu-memory=40960 instance-gpu-name=a100 instance-hypervisor=nitro " +
		"instance-local-nvme=8000 instance-memory=1179648 instance-network-bandwidth=400000 instance-size=24xlarge arch=amd64 os=linux",
	"t3.micro": "instance-category=t instance-cpu=2 instance-cpu-manufacturer=intel instance-cpu-sustained-clock-speed-mhz=2500 " +
		"instance-ebs-bandwidth=2085 instance-encryption-in-transit-supported=false instance-family=t3 instance-generation=3 " +
		"instance-hypervisor=nitro instance-memory=1024 instance-network-bandwidth=64 instance-size=micro arch=amd64 os=linux",
	"m5.metal": "instance-category=m instance-cpu=96 instance-cpu-manufacturer=intel instance-cpu-sustained-clock-speed-mhz=3100 " +
		"instance-ebs-bandwidth=19000 instance-encryption-in-transit-supported=false instance-family=m5 instance-generation=5 " +
		"instance-hypervisor= instance-memory=393216 instance-network-bandwidth=25000 instance-size=metal arch=amd64 os=linux",
	"inf2.xlarge": "instance-accelerator-count=1 instance-accelerator-manufacturer=aws instance-accelerator-name=inferentia2 " +
		"instance-category=inf instance-cpu=4 instance-cpu-manufacturer=amd instance-cpu-sustained-clock-speed-mhz=3600 " +
		"instance-ebs-bandwidth=10000 instance-encryption-in-transit-supported=true instance-family=inf2 instance-generation=2 " +
		"instance-hypervisor=nitro instance-memory=16384 instance-network-bandwidth=2083 instance-size=xlarge arch=amd64 os=linux",
	"dl2q.24xlarge": "instance-accelerator-count=8 instance-accelerator-manufacturer=qualcomm instance-accelerator-name=qualcomm-ai100 " +
		"instance-category=dl instance-cpu=96 instance-cpu-manufacturer=intel instance-cpu-sustained-clock-speed-mhz=2500 " +
		"instance-ebs-bandwidth=19000 instance-encryption-in-transit-supported=true instance-family=dl2q instance-generation=2 " +
		"instance-hypervisor=nitro instance-memory=786432 instance-network-bandwidth=100000 instance-size=24xlarge arch=amd64 os=linux",
	"g6f.large": "instance-category=g instance-cpu=2 instance-cpu-manufacturer=amd instance-cpu-sustained-clock-speed-mhz=3400 " +
		"instance-ebs-bandwidth=5000 instance-encryption-in-transit-supported=true instance-family=g6f instance-generation=6 " +
		"instance-gpu-count=0 instance-gpu-manufacturer=nvidia instance-gpu-memory=2861 instance-gpu-name=l4 instance-hypervisor=nitro " +
		"instance-local-nvme=100 instance-memory=8192 instance-network-bandwidth=1500 instance-size=large arch=amd64 os=linux",
}

// expandDocs turns "instance-cpu=2 arch=amd64" into full label keys.
func expandDocs(name, s string) map[string]string {
	out := map[string]string{corev1.LabelInstanceTypeStable: name}
	for _, kv := range strings.Fields(s) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "arch", "os":
			k = "kubernetes.io/" + k
		default:
			k = scheduling.AWSGroup + "/" + k
		}
		out[k] = v
	}
	return out
}

// checkAgainstPage compares the page's labels with the computed ones and
// requires every other page key to be DoesNotExist.
func checkAgainstPage(t *testing.T, it *InstanceType, want map[string]string) {
	t.Helper()
	got := docsLabels(it.Requirements)
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: %s = %q (%s), docs page %q", it.Name, k, g, it.Requirements.Get(k), v)
		}
	}
	for _, k := range it.Requirements.SortedKeys() {
		if _, ok := want[k]; ok || !pageKey(k) {
			continue
		}
		if op := it.Requirements[k].Operator(); op != corev1.NodeSelectorOpDoesNotExist {
			t.Errorf("%s: %s is %s, docs page has no value (want DoesNotExist)", it.Name, k, it.Requirements[k])
		}
	}
}

func TestRequirementsMatchDocsPage(t *testing.T) {
	its := listDefault(t)
	for name, labels := range docsPage {
		t.Run(name, func(t *testing.T) {
			checkAgainstPage(t, byName(t, its, name), expandDocs(name, labels))
		})
	}
}

func TestRequirementsOfferingKeys(t *testing.T) {
	its := List("us-west-2", ZonesOf("us-west-2a", "us-west-2b", "us-west-2c"),
		NodeClassOptions{SubnetZones: ZonesOf("us-west-2c", "us-west-2a", "us-east-1a")}, nil, nil, t0)
	r := byName(t, its, "m5.large").Requirements
	want := map[string]string{
		corev1.LabelTopologyZone:              "In [us-west-2a us-west-2c]",
		scheduling.LabelTopologyZoneID:        "In [usw2-az1 usw2-az3]",
		corev1.LabelTopologyRegion:            "In [us-west-2]",
		scheduling.CapacityTypeLabelKey:       "In [on-demand spot]",
		corev1.LabelWindowsBuild:              "DoesNotExist",
		scheduling.LabelCapacityReservationID: "DoesNotExist",
	}
	for k, w := range want {
		if got := r.Get(k).String(); !strings.HasSuffix(got, w) {
			t.Errorf("%s = %s, want %s", k, got, w)
		}
	}
	// Every well-known AWS key is defined, so pods selecting on it are judged.
	for _, k := range scheduling.AWSWellKnownLabels {
		if !r.Has(k) {
			t.Errorf("%s not defined", k)
		}
	}
}

func TestRequirementsWindows(t *testing.T) {
	its := List("us-west-2", ZonesOf("us-west-2a"), NodeClassOptions{AMIFamily: AMIFamilyWindows2022}, nil, nil, t0)
	m5 := byName(t, its, "m5.large").Requirements
	if got := m5.Get(corev1.LabelOSStable).String(); !strings.HasSuffix(got, "In [windows]") {
		t.Errorf("m5.large os = %s", got)
	}
	if got := m5.Get(corev1.LabelWindowsBuild).String(); !strings.HasSuffix(got, "In [10.0.20348]") {
		t.Errorf("m5.large windows-build = %s", got)
	}
	// No Windows AMI for arm64: the os key allows nothing.
	if op := byName(t, its, "c7g.large").Requirements.Get(corev1.LabelOSStable).Operator(); op != corev1.NodeSelectorOpDoesNotExist {
		t.Errorf("c7g.large os operator = %s, want empty In", op)
	}
}

// TestRequirementsWholeDocsPage compares every listed type with Karpenter's
// docs page when BERTH_KARPENTER_DOCS names a copy of
// website/content/en/docs/reference/instance-types.md. Labels newer than
// v1.6 (instance-capability-flex, instance-tenancy) are skipped.
func TestRequirementsWholeDocsPage(t *testing.T) {
	path := os.Getenv("BERTH_KARPENTER_DOCS")
	if path == "" {
		t.Skip("BERTH_KARPENTER_DOCS not set")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pages := map[string]map[string]string{}
	heading := regexp.MustCompile("^### `([^`]+)`")
	row := regexp.MustCompile(`^\s*\|([a-z0-9./-]+)\|([^|]*)\|`)
	var cur string
	inLabels := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := heading.FindStringSubmatch(line); m != nil {
			cur, inLabels = m[1], false
			pages[cur] = map[string]string{}
			continue
		}
		switch strings.TrimSpace(line) {
		case "#### Labels":
			inLabels = true
			continue
		case "#### Resources":
			inLabels = false
		}
		if m := row.FindStringSubmatch(line); m != nil && inLabels && cur != "" && strings.Contains(m[1], "/") {
			if strings.HasSuffix(m[1], "/instance-capability-flex") || strings.HasSuffix(m[1], "/instance-tenancy") {
				continue
			}
			pages[cur][m[1]] = m[2]
		}
	}
	checked := 0
	for _, it := range listDefault(t) {
		want, ok := pages[it.Name]
		if !ok {
			continue
		}
		checkAgainstPage(t, it, want)
		checked++
	}
	t.Logf("compared %d types with the docs page", checked)
	if checked < 1300 {
		t.Errorf("only %d types compared", checked)
	}
}
