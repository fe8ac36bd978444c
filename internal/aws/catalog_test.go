package aws

import (
	"sort"
	"testing"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		name       string
		wantOK     bool
		arch       string
		vcpu       int
		memoryMiB  int64
		maxPodsENI int
		gpus       int
		price      map[string]float64
	}{
		{name: "m5.large", wantOK: true, arch: "amd64", vcpu: 2, memoryMiB: 8192, maxPodsENI: 29},
		{name: "t4g.medium", wantOK: true, arch: "arm64", vcpu: 2, memoryMiB: 4096, maxPodsENI: 17},
		{name: "c4.large", wantOK: true, arch: "amd64", vcpu: 2, memoryMiB: 3840, maxPodsENI: 29,
			price: map[string]float64{"us-east-1": 0.1, "us-west-2": 0.1, "eu-west-1": 0.113}},
		{name: "p4d.24xlarge", wantOK: true, arch: "amd64", vcpu: 96, memoryMiB: 1179648, gpus: 8},
		{name: "m5.huge"},
		{name: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it, ok := Lookup(tt.name)
			if ok != tt.wantOK {
				t.Fatalf("Lookup(%q) ok = %v, want %v", tt.name, ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if it.Name != tt.name || it.Arch != tt.arch || it.VCPU != tt.vcpu || it.MemoryMiB != tt.memoryMiB {
				t.Errorf("got %s arch=%s vcpu=%d mem=%d", it.Name, it.Arch, it.VCPU, it.MemoryMiB)
			}
			if tt.maxPodsENI != 0 && it.MaxPodsENI != tt.maxPodsENI {
				t.Errorf("MaxPodsENI = %d, want %d", it.MaxPodsENI, tt.maxPodsENI)
			}
			if it.MaxENIs > 0 && it.MaxPodsENI != it.MaxENIs*(it.IPv4PerENI-1)+2 {
				t.Errorf("MaxPodsENI %d disagrees with %d ENIs x %d IPs", it.MaxPodsENI, it.MaxENIs, it.IPv4PerENI)
			}
			if it.GPUCount != tt.gpus {
				t.Errorf("GPUCount = %d, want %d", it.GPUCount, tt.gpus)
			}
			for region, want := range tt.price {
				if got, ok := it.OnDemandPrice(region); !ok || got != want {
					t.Errorf("price in %s = %v,%v, want %v", region, got, ok, want)
				}
			}
		})
	}
}

func TestAllSortedAndComplete(t *testing.T) {
	all := All()
	if len(all) != 1325 {
		t.Fatalf("catalog has %d types, want 1325 (the shared data's row count)", len(all))
	}
	if !sort.SliceIsSorted(all, func(i, j int) bool { return all[i].Name < all[j].Name }) {
		t.Error("All() is not sorted by name")
	}
	priced := 0
	for _, it := range all {
		if got, ok := Lookup(it.Name); !ok || got != it {
			t.Errorf("Lookup(%s) does not return the All() entry", it.Name)
		}
		if it.Arch != "amd64" && it.Arch != "arm64" {
			t.Errorf("%s: arch %q", it.Name, it.Arch)
		}
		if it.Family+"."+it.Size != it.Name {
			t.Errorf("%s: family %q size %q", it.Name, it.Family, it.Size)
		}
		if _, ok := it.Price["us-east-1"]; ok {
			priced++
		}
	}
	if priced != 1307 {
		t.Errorf("%d types priced in us-east-1, want 1307 (data README)", priced)
	}
}

func TestParseCatalogErrors(t *testing.T) {
	header := "name,family,category,generation,size,arch,vcpu,memory_mib,gpu_count,gpu_name,gpu_manufacturer,gpu_memory_mib,accelerator_name,accelerator_count,max_enis,ipv4_per_eni,max_pods_eni,network_cards,total_enis,trunking_compatible,branch_enis,pod_eni,efa,hypervisor,bare_metal,cpu_manufacturer,network_bandwidth_mbps,local_nvme_gb,cpu_sustained_clock_mhz,ebs_bandwidth_mbps,encryption_in_transit,price:us-east-1\n"
	good := "m5.large,m5,m,5,large,amd64,2,8192,0,,,,,,3,10,29,1,3,true,9,9,,nitro,false,intel,750,,3100,650,true,0.096\n"
	tests := []struct {
		name    string
		data    string
		wantErr bool
	}{
		{"ok", header + good, false},
		{"duplicate", header + good + good, true},
		{"bad number", header + "m5.large,m5,m,5,large,amd64,two,8192,0,,,,,,3,10,29,1,3,true,9,9,,nitro,false,intel,750,,3100,650,true,0.096\n", true},
		{"bad price", header + "m5.large,m5,m,5,large,amd64,2,8192,0,,,,,,3,10,29,1,3,true,9,9,,nitro,false,intel,750,,3100,650,true,cheap\n", true},
		{"missing column", "name,vcpu\nm5.large,2\n", true},
		{"empty", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseCatalog([]byte(tt.data))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && (c.byName["m5.large"].EBSBandwidthMbps != 650 || !c.byName["m5.large"].EncryptionInTransit) {
				t.Errorf("label facts not parsed: %+v", c.byName["m5.large"])
			}
			if err == nil && c.byName["m5.large"].Price["us-east-1"] != 0.096 {
				t.Errorf("price not parsed: %v", c.byName["m5.large"].Price)
			}
		})
	}
}
