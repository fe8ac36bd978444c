package aws

import (
	"encoding/csv"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func mustType(t *testing.T, name string) *InstanceType {
	t.Helper()
	it, ok := Lookup(name)
	if !ok {
		t.Fatalf("instance type %s not in catalog", name)
	}
	return it
}

func TestKubeReservedCPUMilli(t *testing.T) {
	// Karpenter's published overhead per vCPU count.
	tests := map[int64]int64{1: 60, 2: 70, 4: 80, 8: 90, 16: 110, 48: 190, 96: 310, 192: 550}
	for vcpu, want := range tests {
		if got := KubeReservedCPUMilli(vcpu * 1000); got != want {
			t.Errorf("%d vCPU: reserved %dm, want %dm", vcpu, got, want)
		}
	}
}

// checkList compares the listed resources by value and by printed form.
func checkList(t *testing.T, what string, got corev1.ResourceList, want map[corev1.ResourceName]string) {
	t.Helper()
	for name, w := range want {
		q, ok := got[name]
		if !ok {
			t.Errorf("%s: no %s", what, name)
			continue
		}
		if wq := resource.MustParse(w); q.Cmp(wq) != 0 || q.String() != w {
			t.Errorf("%s %s = %s, want %s", what, name, q.String(), w)
		}
	}
}

func TestNodeResources(t *testing.T) {
	tests := []struct {
		name     string
		instance string
		opts     NodeOptions
		capacity map[corev1.ResourceName]string
		alloc    map[corev1.ResourceName]string
	}{
		{
			// docs/eks.md: 70m reserved, 574Mi kube-reserved, 29 pods.
			name: "m5.large managed", instance: "m5.large", opts: NodeOptions{Managed: true},
			capacity: map[corev1.ResourceName]string{"cpu": "2", "memory": "7577Mi", "pods": "29", "ephemeral-storage": "80Gi", "hugepages-2Mi": "0"},
			alloc:    map[corev1.ResourceName]string{"cpu": "1930m", "memory": "6903Mi", "pods": "29", "ephemeral-storage": "71Gi"},
		},
		{
			// arm64: 4096-64 = 4032, minus ceil(302.4) = 3729; 11*17+255 = 442.
			name: "t4g.medium managed", instance: "t4g.medium", opts: NodeOptions{Managed: true},
			capacity: map[corev1.ResourceName]string{"cpu": "2", "memory": "3729Mi", "pods": "17"},
			alloc:    map[corev1.ResourceName]string{"cpu": "1930m", "memory": "3187Mi", "pods": "17"},
		},
		{
			// 4096 - ceil(307.2) = 3788; minus 442 and 100.
			name: "t3.medium self-managed", instance: "t3.medium", opts: NodeOptions{},
			alloc: map[corev1.ResourceName]string{"cpu": "1930m", "memory": "3246Mi", "pods": "17"},
		},
		{
			// 16384 - ceil(1228.8) = 15155; minus 893 and 100.
			name: "m5.xlarge", instance: "m5.xlarge", opts: NodeOptions{Managed: true},
			alloc: map[corev1.ResourceName]string{"cpu": "3920m", "memory": "14162Mi", "pods": "58"},
		},
		{
			name: "m5.2xlarge", instance: "m5.2xlarge", opts: NodeOptions{Managed: true},
			alloc: map[corev1.ResourceName]string{"cpu": "7910m", "pods": "58"},
		},
		{
			// Managed cap 110 below 30 vCPUs; kube-reserved still from 234:
			// 65536 - ceil(4915.2) = 60620; minus 11*234+255 = 2829 and 100.
			name: "m5.4xlarge managed cap", instance: "m5.4xlarge", opts: NodeOptions{Managed: true},
			capacity: map[corev1.ResourceName]string{"memory": "60620Mi", "pods": "110"},
			alloc:    map[corev1.ResourceName]string{"cpu": "15890m", "memory": "57691Mi", "pods": "110"},
		},
		{
			name: "m5.4xlarge self-managed has no cap", instance: "m5.4xlarge", opts: NodeOptions{},
			alloc: map[corev1.ResourceName]string{"pods": "234", "memory": "57691Mi"},
		},
		{
			// 96 vCPUs: cap 250 below the ENI value 737.
			name: "m5.24xlarge managed cap 250", instance: "m5.24xlarge", opts: NodeOptions{Managed: true},
			alloc: map[corev1.ResourceName]string{"pods": "250"},
		},
		{
			name: "maxPodsPerNode override", instance: "m5.large", opts: NodeOptions{Managed: true, MaxPodsPerNode: 20},
			alloc: map[corev1.ResourceName]string{"pods": "20", "memory": "6903Mi"},
		},
		{
			// Bottlerocket reserves memory for the pods in force: 11*20+255 = 475.
			name: "bottlerocket override", instance: "m5.large", opts: NodeOptions{AMIFamily: AMIFamilyBottlerocket, MaxPodsPerNode: 20},
			alloc: map[corev1.ResourceName]string{"pods": "20", "memory": "7002Mi"},
		},
		{
			name: "volume size", instance: "m5.large", opts: NodeOptions{VolumeSizeGiB: 20},
			capacity: map[corev1.ResourceName]string{"ephemeral-storage": "20Gi"},
			alloc:    map[corev1.ResourceName]string{"ephemeral-storage": "17Gi"},
		},
		{
			name: "nvidia gpu", instance: "g4dn.xlarge", opts: NodeOptions{Managed: true},
			capacity: map[corev1.ResourceName]string{"nvidia.com/gpu": "1"},
			alloc:    map[corev1.ResourceName]string{"nvidia.com/gpu": "1", "cpu": "3920m"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			capacity, alloc := NodeResources(mustType(t, tt.instance), tt.opts)
			checkList(t, "capacity", capacity, tt.capacity)
			checkList(t, "allocatable", alloc, tt.alloc)
		})
	}
}

func TestNodeResourcesWindowsHasNoHugepages(t *testing.T) {
	capacity, alloc := NodeResources(mustType(t, "m5.large"), NodeOptions{AMIFamily: AMIFamilyWindows2022, Managed: true})
	if _, ok := capacity["hugepages-2Mi"]; ok {
		t.Error("windows node reports hugepages")
	}
	// Windows VPC CNI uses the primary ENI only: 10 IPs - 1.
	checkList(t, "allocatable", alloc, map[corev1.ResourceName]string{"pods": "9"})
}

func TestKarpenterWorkedExamples(t *testing.T) {
	// Karpenter's allocatable formula.
	tests := []struct {
		instance string
		opts     KarpenterOptions
		want     map[corev1.ResourceName]string
	}{
		{"m5.large", KarpenterOptions{}, map[corev1.ResourceName]string{"cpu": "1930m", "memory": "6903Mi", "ephemeral-storage": "17Gi", "pods": "29"}},
		{"c7g.large", KarpenterOptions{}, map[corev1.ResourceName]string{"cpu": "1930m", "memory": "3055Mi", "pods": "29"}},
		{"m5.24xlarge", KarpenterOptions{}, map[corev1.ResourceName]string{"pods": "737"}},
		// maxPods overrides capacity but AL2023 reserves for the ENI count.
		{"m5.large", KarpenterOptions{MaxPods: 10}, map[corev1.ResourceName]string{"pods": "10", "memory": "6903Mi"}},
		{"m5.large", KarpenterOptions{PodsPerCore: 4}, map[corev1.ResourceName]string{"pods": "8"}},
		// One reserved ENI: 2*9+2.
		{"m5.large", KarpenterOptions{ReservedENIs: 1}, map[corev1.ResourceName]string{"pods": "20"}},
		{"m5.large", KarpenterOptions{AMIFamily: "Windows2022"}, map[corev1.ResourceName]string{"pods": "110", "ephemeral-storage": "44Gi"}},
	}
	for _, tt := range tests {
		t.Run(tt.instance, func(t *testing.T) {
			checkList(t, "allocatable", KarpenterAllocatable(mustType(t, tt.instance), tt.opts), tt.want)
		})
	}
}

// TestKarpenterAllocatableOracle checks every catalog row against the
// allocatable values Karpenter's own docs page prints (generated testdata).
func TestKarpenterAllocatableOracle(t *testing.T) {
	f, err := os.Open("testdata/karpenter-al2023-allocatable.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := recs[0]
	columns := map[string]corev1.ResourceName{
		"cpu": "cpu", "memory": "memory", "ephemeral_storage": "ephemeral-storage", "pods": "pods",
		"nvidia_gpu": ResourceNVIDIAGPU, "pod_eni": ResourcePodENI, "efa": ResourceEFA,
	}
	if len(recs)-1 != len(All()) {
		t.Fatalf("oracle has %d rows, catalog %d", len(recs)-1, len(All()))
	}
	for _, rec := range recs[1:] {
		it := mustType(t, rec[0])
		got := KarpenterAllocatable(it, KarpenterOptions{})
		for i, col := range header[1:] {
			name := columns[col]
			want := rec[i+1]
			q, ok := got[name]
			if want == "" {
				if ok {
					t.Errorf("%s: %s = %s, want none", it.Name, name, q.String())
				}
				continue
			}
			if !ok || q.Cmp(resource.MustParse(want)) != 0 {
				t.Errorf("%s: %s = %s, want %s", it.Name, name, q.String(), want)
			}
		}
	}
}

// TestKarpenterOverrides covers the NodeClass settings that move
// allocatable: kubelet reservations, eviction signals, volumes.
func TestKarpenterOverrides(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name     string
		instance string
		opts     KarpenterOptions
		capacity map[corev1.ResourceName]string
		alloc    map[corev1.ResourceName]string
	}{
		{
			// 7577 - 574 - 100 (system) - max(5% = 378.9Mi, soft 500Mi).
			name: "reservations and eviction", instance: "m5.large",
			opts: KarpenterOptions{
				KubeReserved:   corev1.ResourceList{"cpu": q("200m")},
				SystemReserved: corev1.ResourceList{"memory": q("100Mi")},
				EvictionHard:   map[string]string{EvictionMemoryAvailable: "5%", EvictionNodeFSAvailable: "100%"},
				EvictionSoft:   map[string]string{EvictionMemoryAvailable: "500Mi"},
			},
			alloc: map[corev1.ResourceName]string{"cpu": "1800m", "memory": "6403Mi", "ephemeral-storage": "19Gi"},
		},
		{
			// Bottlerocket ignores evictionSoft: 5% of 7577Mi rounds up to 397253018 bytes.
			name: "bottlerocket ignores soft", instance: "m5.large",
			opts: KarpenterOptions{AMIFamily: "Bottlerocket",
				EvictionHard: map[string]string{EvictionMemoryAvailable: "5%"},
				EvictionSoft: map[string]string{EvictionMemoryAvailable: "900Mi"}},
			alloc: map[corev1.ResourceName]string{"memory": "6945924710"},
		},
		{
			// 75 GB NVMe: 75e9 - 1Gi - 7.5e9.
			name: "raid0", instance: "m5d.large", opts: KarpenterOptions{InstanceStoreRAID0: true},
			capacity: map[corev1.ResourceName]string{"ephemeral-storage": "75G"},
			alloc:    map[corev1.ResourceName]string{"ephemeral-storage": "66426258176"},
		},
		{
			name: "raid0 without nvme keeps the volume", instance: "m5.large", opts: KarpenterOptions{InstanceStoreRAID0: true},
			capacity: map[corev1.ResourceName]string{"ephemeral-storage": "20Gi"},
		},
		{
			name: "block device size", instance: "m5.large", opts: KarpenterOptions{EphemeralStorage: q("100Gi"), EphemeralStorageGiB: 40},
			capacity: map[corev1.ResourceName]string{"ephemeral-storage": "100Gi"},
			alloc:    map[corev1.ResourceName]string{"ephemeral-storage": "89Gi"},
		},
		{
			name: "windows private IPv4", instance: "m5.large", opts: KarpenterOptions{AMIFamily: "Windows2022"},
			capacity: map[corev1.ResourceName]string{ResourcePrivateIPv4Address: "9", "ephemeral-storage": "50Gi", "pods": "110"},
		},
		{
			name: "reservation beyond capacity floors at zero", instance: "t3.nano",
			opts:  KarpenterOptions{SystemReserved: corev1.ResourceList{"cpu": q("4")}},
			alloc: map[corev1.ResourceName]string{"cpu": "0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			capacity, alloc := KarpenterResources(mustType(t, tt.instance), tt.opts)
			checkList(t, "capacity", capacity, tt.capacity)
			checkList(t, "allocatable", alloc, tt.alloc)
		})
	}
}

func TestKarpenterOverheadDefaults(t *testing.T) {
	kube, system, eviction := KarpenterOverhead(mustType(t, "m5.large"), KarpenterOptions{})
	checkList(t, "kube-reserved", kube, map[corev1.ResourceName]string{"cpu": "70m", "memory": "574Mi", "ephemeral-storage": "1Gi"})
	checkList(t, "eviction", eviction, map[corev1.ResourceName]string{"memory": "100Mi", "ephemeral-storage": "2147483648"})
	if len(system) != 0 {
		t.Errorf("system-reserved = %v, want empty", system)
	}
}
