package instancetype

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// Zone is an availability zone and its zone ID (topology.k8s.aws/zone-id);
// an empty ID is unknown and leaves the zone-id label out.
type Zone struct {
	Name string
	ID   string
}

// ZonesOf names zones of a region with berth's fixed zone IDs
// (aws.ZoneID): ZonesOf("us-west-2a") is {us-west-2a, usw2-az1}.
func ZonesOf(names ...string) []Zone {
	out := make([]Zone, 0, len(names))
	for _, n := range names {
		id, _ := aws.ZoneID(n) // a malformed name keeps an unknown ID
		out = append(out, Zone{Name: n, ID: id})
	}
	return out
}

// AMI families in Karpenter's spelling (EC2NodeClass amiSelectorTerms alias
// / amiFamily).
const (
	AMIFamilyAL2023       = "AL2023"
	AMIFamilyAL2          = "AL2"
	AMIFamilyBottlerocket = "Bottlerocket"
	AMIFamilyWindows2019  = "Windows2019"
	AMIFamilyWindows2022  = "Windows2022"
	AMIFamilyWindows2025  = "Windows2025"
	AMIFamilyCustom       = "Custom"
)

// InstanceStorePolicyRAID0 is the one instanceStorePolicy value.
const InstanceStorePolicyRAID0 = "RAID0"

// NodeClassOptions is what of an EC2NodeClass (and the operator flags)
// changes instance types: the AMI family, subnet zones, kubelet settings and
// volumes. Zero values are Karpenter's defaults. The API object lives
// elsewhere; callers translate it into this.
type NodeClassOptions struct {
	// AMIFamily is one of the AMIFamily* constants; "" means AL2023.
	AMIFamily string
	// SubnetZones are the zones of the NodeClass's subnets (status.subnets);
	// nil means every zone passed to List.
	SubnetZones []Zone
	// Kubelet settings (spec.kubelet); 0 / nil means unset.
	MaxPods, PodsPerCore         int
	KubeReserved, SystemReserved corev1.ResourceList
	EvictionHard, EvictionSoft   map[string]string
	// RootVolumeSize is the blockDeviceMappings root volume (or the family's
	// data device) size; zero means the family default.
	RootVolumeSize resource.Quantity
	// InstanceStorePolicy is "" or InstanceStorePolicyRAID0.
	InstanceStorePolicy string
	// Operator options: RESERVED_ENIS and VM_MEMORY_OVERHEAD_PERCENT.
	ReservedENIs            int
	VMMemoryOverheadPercent float64
}

func (o NodeClassOptions) amiFamily() string {
	if o.AMIFamily == "" {
		return AMIFamilyAL2023
	}
	return o.AMIFamily
}

// karpenterOptions maps the NodeClass onto internal/aws's resource model.
func (o NodeClassOptions) karpenterOptions() aws.KarpenterOptions {
	return aws.KarpenterOptions{
		AMIFamily:               o.amiFamily(),
		MaxPods:                 o.MaxPods,
		PodsPerCore:             o.PodsPerCore,
		ReservedENIs:            o.ReservedENIs,
		VMMemoryOverheadPercent: o.VMMemoryOverheadPercent,
		EphemeralStorage:        o.RootVolumeSize,
		InstanceStoreRAID0:      o.InstanceStorePolicy == InstanceStorePolicyRAID0,
		KubeReserved:            o.KubeReserved,
		SystemReserved:          o.SystemReserved,
		EvictionHard:            o.EvictionHard,
		EvictionSoft:            o.EvictionSoft,
	}
}

// capacityTypes is the order offerings are built in.
var capacityTypes = []string{scheduling.CapacityTypeOnDemand, scheduling.CapacityTypeSpot}

// List returns every catalog instance type for a NodeClass in region,
// sorted by name (upstream GetInstanceTypes returns all types, even those
// with nothing available). zones are the region's zones, each of which
// offers every type; a type gets an offering per zone and capacity type
// where it has a price, available if the zone is a subnet zone and the
// offering is not in the unavailable cache at now.
// docs/karpenter-instance-types.md#offerings
func List(region string, zones []Zone, nodeClass NodeClassOptions, pricing *Pricing, unavailable *UnavailableOfferings, now time.Time) InstanceTypes {
	zones = sortedZones(zones)
	typeZones := zones
	if nodeClass.SubnetZones != nil {
		subnet := map[string]Zone{}
		for _, z := range nodeClass.SubnetZones {
			subnet[z.Name] = z
		}
		typeZones = nil
		for _, z := range zones {
			if s, ok := subnet[z.Name]; ok {
				if s.ID == "" {
					s.ID = z.ID
				}
				typeZones = append(typeZones, s)
			}
		}
	}
	// Offerings carry a zone-id only for subnet zones, as upstream.
	inTypeZones := map[string]bool{}
	zoneIDs := map[string]string{}
	for _, z := range typeZones {
		inTypeZones[z.Name] = true
		zoneIDs[z.Name] = z.ID
	}
	shared := offeringRequirements(zones, zoneIDs)
	opts := nodeClass.karpenterOptions()
	all := aws.All()
	out := make(InstanceTypes, 0, len(all))
	for _, it := range all {
		kube, system, eviction := aws.KarpenterOverhead(it, opts)
		out = append(out, &InstanceType{
			Name:         it.Name,
			Requirements: computeRequirements(it, region, typeZones, opts.AMIFamily),
			Offerings:    offerings(it, region, zones, shared, inTypeZones, pricing, unavailable, now),
			Capacity:     aws.KarpenterCapacity(it, opts),
			Overhead:     Overhead{KubeReserved: kube, SystemReserved: system, EvictionThreshold: eviction},
		})
	}
	return out
}

// offeringRequirements builds each zone x capacity type's requirements once:
// they do not depend on the type, and sharing them (read-only) makes List
// cheap. Order follows zones, then capacityTypes.
func offeringRequirements(zones []Zone, zoneIDs map[string]string) []scheduling.Requirements {
	out := make([]scheduling.Requirements, 0, len(zones)*len(capacityTypes))
	for _, z := range zones {
		for _, ct := range capacityTypes {
			reqs := scheduling.NewRequirements(
				in(scheduling.CapacityTypeLabelKey, ct),
				in(corev1.LabelTopologyZone, z.Name),
				doesNotExist(scheduling.LabelCapacityReservationID),
				doesNotExist(scheduling.LabelCapacityReservationType),
			)
			if id := zoneIDs[z.Name]; id != "" {
				reqs.Add(in(scheduling.LabelTopologyZoneID, id))
			}
			out = append(out, reqs)
		}
	}
	return out
}

// offerings builds one offering per zone x capacity type that has a price
// (upstream also keeps priceless ones, never available; berth drops them).
func offerings(it *aws.InstanceType, region string, zones []Zone, shared []scheduling.Requirements, inTypeZones map[string]bool,
	pricing *Pricing, unavailable *UnavailableOfferings, now time.Time) Offerings {
	if _, ok := it.OnDemandPrice(region); !ok {
		return nil
	}
	out := make(Offerings, 0, len(shared))
	for zi, z := range zones {
		for ci, ct := range capacityTypes {
			price, ok := pricing.OnDemandPrice(it, region)
			if ct == scheduling.CapacityTypeSpot {
				price, ok = pricing.SpotPrice(it, region, z.Name)
			}
			if !ok {
				continue
			}
			out = append(out, &Offering{
				Requirements: shared[zi*len(capacityTypes)+ci],
				Price:        price,
				Available:    inTypeZones[z.Name] && !unavailable.IsUnavailable(it.Name, z.Name, ct, now),
				zone:         z.Name,
				capacityType: ct,
			})
		}
	}
	return out
}
