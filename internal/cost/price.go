// Package cost prices the simulated cluster: dollars per hour of every node
// from berth's catalogs, node-hours over virtual time from the live nodes
// and the state's ledger of deleted ones, and roll-ups by node group /
// NodePool / Fargate profile, namespace and workload (docs/cost.md).
package cost

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/capacity/nodegroups"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/fargate"
	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// Capacity types as `berth cost` prints them.
const (
	OnDemand = "on-demand"
	Spot     = "spot"
	Fargate  = "fargate"
)

// Price is a node's hourly price, or why it has none.
type Price struct {
	// Known is false for nodes berth cannot price; PerHour is then 0 and
	// must never be added to a total (docs/cost.md#unknown-prices).
	Known   bool
	PerHour float64
	// CapacityType is on-demand, spot or fargate ("" when unknown).
	CapacityType string
	// Source says where the price came from, or why it is unknown.
	Source string
}

// Pricer prices nodes with one source of prices: the EC2 catalog's
// on-demand prices and the state's spot prices exactly as Karpenter's
// launch and `describe nodeclaim` see them (instancetype.Pricing), and
// Fargate's per vCPU / GB-hour rates (fargate.HourlyPrice).
type Pricer struct {
	pricing *instancetype.Pricing
	// region is where the cluster runs, for nodes whose labels name none.
	region string
}

// NewPricer prices nodes of s at its current spot prices.
func NewPricer(s *cluster.State) *Pricer {
	return &Pricer{pricing: instancetype.PricingFromState(s.Karpenter.AWS), region: pools.Region(s)}
}

// NodePrice prices a live node.
func (p *Pricer) NodePrice(n *corev1.Node) Price {
	return p.price(n.Labels, n.Spec.ProviderID, n.Status.Capacity)
}

// price prices a machine from what is known of it: labels, provider ID
// and capacity (a live node, or a ledger record of a deleted one).
func (p *Pricer) price(labels map[string]string, providerID string, capacity corev1.ResourceList) Price {
	n := &corev1.Node{}
	n.Labels, n.Spec.ProviderID = labels, providerID
	if fargate.IsFargateNode(n) {
		return p.fargatePrice(labels, capacity)
	}
	if !aws.IsEC2Node(n) {
		return Price{Source: "not an EC2 instance (no aws:// provider ID or catalog instance type)"}
	}
	it, ok := aws.NodeInstanceType(n)
	if !ok {
		name := labels[corev1.LabelInstanceTypeStable]
		if name == "" {
			return Price{Source: "no instance-type label"}
		}
		return Price{Source: fmt.Sprintf("instance type %q not in berth's EC2 catalog", name)}
	}
	zone := labels[corev1.LabelTopologyZone]
	region := p.regionOf(labels)
	if region == "" {
		return Price{Source: "no region: the node has no region or zone label and the cluster names none"}
	}
	if isSpot(labels) {
		price, ok := p.pricing.SpotPrice(it, region, zone)
		if !ok {
			return Price{CapacityType: Spot, Source: fmt.Sprintf("no price for %s in %s", it.Name, region)}
		}
		if _, _, observed := p.pricing.SpotPriceObserved(it.Name, zone); observed {
			return Price{Known: true, PerHour: price, CapacityType: Spot, Source: "spot price from describe-spot-price-history"}
		}
		return Price{Known: true, PerHour: price, CapacityType: Spot,
			Source: fmt.Sprintf("spot: %.1f x on-demand (berth default)", instancetype.DefaultSpotFraction)}
	}
	price, ok := p.pricing.OnDemandPrice(it, region)
	if !ok {
		return Price{CapacityType: OnDemand, Source: fmt.Sprintf("no on-demand price for %s in %s", it.Name, region)}
	}
	return Price{Known: true, PerHour: price, CapacityType: OnDemand, Source: "on-demand price of berth's EC2 catalog for " + region}
}

// fargatePrice bills a Fargate node's size, which is its capacity (the pod's
// CapacityProvisioned; docs/fargate.md#the-node), at the region's rates.
func (p *Pricer) fargatePrice(labels map[string]string, capacity corev1.ResourceList) Price {
	size := fargate.Size{MilliCPU: capacity.Cpu().MilliValue(), MemoryMiB: capacity.Memory().Value() >> 20}
	if _, ok := fargate.ParseSize(size.String()); !ok {
		return Price{CapacityType: Fargate, Source: fmt.Sprintf("%s is not a Fargate size", size)}
	}
	region := p.regionOf(labels)
	price, _, ok := fargate.HourlyPrice(region, size)
	if !ok {
		return Price{CapacityType: Fargate, Source: "berth has no Fargate rate for " + region}
	}
	f, err := strconv.ParseFloat(price, 64)
	if err != nil {
		return Price{CapacityType: Fargate, Source: "bad Fargate price " + price}
	}
	return Price{Known: true, PerHour: f, CapacityType: Fargate,
		Source: fmt.Sprintf("Fargate %s at %s rates (%s)", size, region, fargate.PriceDate)}
}

// regionOf is the node's region label, else its zone's region, else the
// region Karpenter launches in.
func (p *Pricer) regionOf(labels map[string]string) string {
	if r := labels[corev1.LabelTopologyRegion]; r != "" {
		return r
	}
	if z := labels[corev1.LabelTopologyZone]; z != "" {
		return aws.RegionOfZone(z)
	}
	return p.region
}

// isSpot reads the capacity type labels Karpenter and EKS managed node
// groups put on their nodes.
func isSpot(labels map[string]string) bool {
	return labels[scheduling.CapacityTypeLabelKey] == scheduling.CapacityTypeSpot ||
		labels[nodegroups.LabelCapacityType] == nodegroups.CapacityTypeSpot
}
