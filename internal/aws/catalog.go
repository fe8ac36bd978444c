// Package aws models the parts of AWS that decide where pods can run on EKS:
// the EC2 instance-type catalog and its node resource formulas, regions and
// zones, VPC subnets and private IPs, and the identifiers EC2 hands out.
package aws

//go:generate go run ./gen -in ../../../shared/data -out data/instance-types.csv -oracle testdata/karpenter-al2023-allocatable.csv

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed data/instance-types.csv
var catalogCSV []byte

// InstanceType is one EC2 instance type as berth knows it. Zero values mean
// "none" (no GPU) or "unknown" (a missing ENI limit).
type InstanceType struct {
	Name       string // m5.large
	Family     string // m5
	Category   string // m
	Generation int    // 5
	Size       string // large
	Arch       string // amd64 or arm64 (kubernetes.io/arch spelling)
	VCPU       int
	// MemoryMiB is EC2's raw MemoryInfo.SizeInMiB, before any reservation.
	MemoryMiB int64

	GPUCount         int
	GPUName          string // lower-kebab-case, e.g. t4, a10g
	GPUManufacturer  string // nvidia, amd
	GPUMemoryMiB     int64  // per GPU
	AcceleratorName  string // inferentia, trainium, ...
	AcceleratorCount int

	// MaxENIs and IPv4PerENI describe the default network card; they are 0
	// for the few types missing from Karpenter's VPC-limits table.
	MaxENIs    int
	IPv4PerENI int
	// MaxPodsENI is max_enis*(ipv4_per_eni-1)+2, EKS's eni-max-pods value.
	MaxPodsENI         int
	NetworkCards       int
	TotalENIs          int
	TrunkingCompatible bool
	BranchENIs         int
	// PodENI and EFA are the vpc.amazonaws.com/pod-eni and
	// vpc.amazonaws.com/efa amounts Karpenter advertises for the type.
	PodENI int
	EFA    int

	Hypervisor           string // nitro, xen, or "" for bare metal
	BareMetal            bool
	CPUManufacturer      string
	NetworkBandwidthMbps int
	LocalNVMeGB          int
	// CPUSustainedClockMHz and EBSBandwidthMbps are 0 when unknown (EBS
	// bandwidth is only known for types EBS-optimised by default).
	CPUSustainedClockMHz int
	EBSBandwidthMbps     int
	// EncryptionInTransit is EC2's NetworkInfo.EncryptionInTransitSupported.
	EncryptionInTransit bool

	// Price is the on-demand Linux price in USD per hour by region; only
	// regions with a known price are present.
	Price map[string]float64
}

// IsNVIDIAGPU reports whether the type carries whole NVIDIA GPUs, which the
// NVIDIA device plugin advertises as nvidia.com/gpu.
func (it *InstanceType) IsNVIDIAGPU() bool {
	return it.GPUManufacturer == "nvidia" && it.GPUCount > 0
}

// OnDemandPrice returns the hourly on-demand price in region, if known.
func (it *InstanceType) OnDemandPrice(region string) (float64, bool) {
	p, ok := it.Price[region]
	return p, ok
}

type catalog struct {
	byName map[string]*InstanceType
	sorted []*InstanceType
}

var (
	loadOnce sync.Once
	loaded   *catalog
	loadErr  error
)

func load() *catalog {
	loadOnce.Do(func() { loaded, loadErr = parseCatalog(catalogCSV) })
	if loadErr != nil {
		// The file is generated and embedded; failing to parse it is a build defect.
		panic(fmt.Sprintf("aws: embedded instance-type catalog is corrupt: %v", loadErr))
	}
	return loaded
}

// Lookup returns the instance type with the given name.
func Lookup(name string) (*InstanceType, bool) {
	it, ok := load().byName[name]
	return it, ok
}

// All returns every known instance type sorted by name. The slice is shared;
// callers must not modify it or the types.
func All() []*InstanceType { return load().sorted }

func parseCatalog(data []byte) (*catalog, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("no rows")
	}
	col := map[string]int{}
	var priceCols []string
	for i, h := range recs[0] {
		col[h] = i
		if strings.HasPrefix(h, "price:") {
			priceCols = append(priceCols, h)
		}
	}
	c := &catalog{byName: make(map[string]*InstanceType, len(recs)-1)}
	for line, rec := range recs[1:] {
		p := rowParser{rec: rec, col: col}
		it := &InstanceType{
			Name:                 p.str("name"),
			Family:               p.str("family"),
			Category:             p.str("category"),
			Generation:           p.int("generation"),
			Size:                 p.str("size"),
			Arch:                 p.str("arch"),
			VCPU:                 p.int("vcpu"),
			MemoryMiB:            int64(p.int("memory_mib")),
			GPUCount:             p.int("gpu_count"),
			GPUName:              p.str("gpu_name"),
			GPUManufacturer:      p.str("gpu_manufacturer"),
			GPUMemoryMiB:         int64(p.int("gpu_memory_mib")),
			AcceleratorName:      p.str("accelerator_name"),
			AcceleratorCount:     p.int("accelerator_count"),
			MaxENIs:              p.int("max_enis"),
			IPv4PerENI:           p.int("ipv4_per_eni"),
			MaxPodsENI:           p.int("max_pods_eni"),
			NetworkCards:         p.int("network_cards"),
			TotalENIs:            p.int("total_enis"),
			TrunkingCompatible:   p.str("trunking_compatible") == "true",
			BranchENIs:           p.int("branch_enis"),
			PodENI:               p.int("pod_eni"),
			EFA:                  p.int("efa"),
			Hypervisor:           p.str("hypervisor"),
			BareMetal:            p.str("bare_metal") == "true",
			CPUManufacturer:      p.str("cpu_manufacturer"),
			NetworkBandwidthMbps: p.int("network_bandwidth_mbps"),
			LocalNVMeGB:          p.int("local_nvme_gb"),
			CPUSustainedClockMHz: p.int("cpu_sustained_clock_mhz"),
			EBSBandwidthMbps:     p.int("ebs_bandwidth_mbps"),
			EncryptionInTransit:  p.str("encryption_in_transit") == "true",
			Price:                map[string]float64{},
		}
		for _, h := range priceCols {
			if v := p.str(h); v != "" {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					p.err = fmt.Errorf("column %s: %w", h, err)
					break
				}
				it.Price[strings.TrimPrefix(h, "price:")] = f
			}
		}
		if p.err != nil {
			return nil, fmt.Errorf("row %d (%s): %w", line+2, it.Name, p.err)
		}
		if it.Name == "" || it.VCPU <= 0 || it.MemoryMiB <= 0 || it.MaxPodsENI <= 0 {
			return nil, fmt.Errorf("row %d (%s): incomplete", line+2, it.Name)
		}
		if _, dup := c.byName[it.Name]; dup {
			return nil, fmt.Errorf("row %d: duplicate %s", line+2, it.Name)
		}
		c.byName[it.Name] = it
		c.sorted = append(c.sorted, it)
	}
	sort.Slice(c.sorted, func(i, j int) bool { return c.sorted[i].Name < c.sorted[j].Name })
	return c, nil
}

// rowParser reads typed cells from one CSV record, remembering the first error.
type rowParser struct {
	rec []string
	col map[string]int
	err error
}

func (p *rowParser) str(name string) string {
	i, ok := p.col[name]
	if !ok {
		if p.err == nil {
			p.err = fmt.Errorf("missing column %s", name)
		}
		return ""
	}
	return p.rec[i]
}

func (p *rowParser) int(name string) int {
	v := p.str(name)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("column %s: %w", name, err)
	}
	return n
}
