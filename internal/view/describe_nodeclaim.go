package view

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/divergence"
	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// describeExtras are berth's sections added to kubectl's generic describe
// output of custom resources, before the events.
var describeExtras = map[schema.GroupKind]func(*cluster.State, runtime.Object, prefixWriter){
	{Group: karpv1.Group, Kind: "NodeClaim"}: describeNodeClaimExtras,
}

// describeNodeClaimExtras adds the launched offering with its price and
// where the price came from, and how kube-scheduler's bindings followed
// Karpenter's nominations (docs/karpenter-interruption.md#describe-nodeclaim).
func describeNodeClaimExtras(s *cluster.State, obj runtime.Object, w prefixWriter) {
	nc, ok := obj.(*karpv1.NodeClaim)
	if !ok {
		return
	}
	w.write(level0, "Offering (berth):\n")
	it, zone, ct := nc.Labels[corev1.LabelInstanceTypeStable], nc.Labels[corev1.LabelTopologyZone], nc.Labels[scheduling.CapacityTypeLabelKey]
	if nc.Status.ProviderID == "" || it == "" {
		w.write(level1, "<not launched>\n")
	} else {
		w.write(level1, "Instance Type:\t%s\n", it)
		w.write(level1, "Zone:\t%s\n", zone)
		w.write(level1, "Capacity Type:\t%s\n", ct)
		price, source := offeringPrice(s, it, zone, ct)
		w.write(level1, "Price:\t%s\n", price)
		w.write(level1, "Price Source:\t%s\n", source)
	}
	describePlacement(s, nc, w)
}

// offeringPrice is the hourly price Karpenter sees for the offering now,
// and where it comes from.
func offeringPrice(s *cluster.State, instanceType, zone, capacityType string) (string, string) {
	region := pools.Region(s)
	t, ok := aws.Lookup(instanceType)
	if !ok {
		return "<unknown>", "instance type not in berth's catalog"
	}
	od, odOK := t.OnDemandPrice(region)
	if capacityType == scheduling.CapacityTypeSpot {
		p := instancetype.PricingFromState(s.Karpenter.AWS)
		if price, at, ok := p.SpotPriceObserved(instanceType, zone); ok {
			when := "no timestamp"
			if !at.IsZero() {
				when = at.UTC().Format(time.RFC3339)
			}
			return usd(price), "spot price from describe-spot-price-history, " + when
		}
		if !odOK {
			return "<unknown>", "no on-demand price for " + region
		}
		return usd(od * instancetype.DefaultSpotFraction),
			fmt.Sprintf("spot price: %.1f × on-demand (berth default; no offline source)", instancetype.DefaultSpotFraction)
	}
	if !odOK {
		return "<unknown>", "no on-demand price for " + region
	}
	return usd(od), "on-demand price of berth's EC2 catalog for " + region
}

func usd(p float64) string { return fmt.Sprintf("$%.4f/hour", p) }

// describePlacement shows the pods Karpenter nominated for the claim and
// where kube-scheduler bound them.
func describePlacement(s *cluster.State, nc *karpv1.NodeClaim, w prefixWriter) {
	var here, elsewhere, pending []string
	for _, n := range divergence.Nominations(s) {
		if n.NodeClaim != nc.Name {
			continue
		}
		name := n.Pod.Namespace + "/" + n.Pod.Name
		switch {
		case n.Pod.Spec.NodeName == "":
			pending = append(pending, name)
		case n.Diverged(s):
			elsewhere = append(elsewhere, name+" on "+n.Pod.Spec.NodeName)
		default:
			here = append(here, name)
		}
	}
	w.write(level0, "Placement (berth):\n")
	w.write(level1, "Nominated Pods:\t%d\n", len(here)+len(elsewhere)+len(pending))
	w.write(level1, "Bound Here:\t%s\n", list(here))
	w.write(level1, "Bound Elsewhere:\t%s\n", list(elsewhere))
	w.write(level1, "Pending:\t%s\n", list(pending))
}

// list names the first five, as Karpenter's logs do, then counts the rest.
func list(names []string) string {
	const show = 5
	switch {
	case len(names) == 0:
		return "<none>"
	case len(names) > show:
		return fmt.Sprintf("%s and %d other(s)", strings.Join(names[:show], ", "), len(names)-show)
	}
	return strings.Join(names, ", ")
}
