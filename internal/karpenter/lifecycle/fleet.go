package lifecycle

import (
	"fmt"
	"sort"
	"strings"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// Fleet error codes and messages EC2 answers for an override it has no
// capacity for (docs/karpenter-interruption.md#insufficient-capacity).
const (
	FleetErrorCode       = "InsufficientInstanceCapacity"
	spotNoCapacityText   = "There is no Spot capacity available that matches your request."
	onDemandNoCapacityFn = "We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). Our system will be working on provisioning additional capacity."
)

// insufficientCapacityError is CreateFleet returning no instance with
// only capacity errors: cloudprovider.InsufficientCapacityError wrapping
// the combined fleet errors.
type insufficientCapacityError struct{ fleetErrors []string }

func (e *insufficientCapacityError) Error() string {
	return "creating instance, insufficient capacity, with fleet error(s), " + strings.Join(e.fleetErrors, "; ")
}

// NoCapacity reports whether EC2 has no capacity for the offering at the
// state's clock (the user's `berth karpenter unavailable`).
func NoCapacity(s *cluster.State, instanceType, zone, capacityType string) bool {
	if s.Karpenter.AWS == nil {
		return false
	}
	for _, n := range s.Karpenter.AWS.NoCapacity {
		if n.InstanceType == instanceType && n.Zone == zone && n.CapacityType == capacityType && n.Active(s.Now) {
			return true
		}
	}
	return false
}

// fleetErrorText is the "<code>: <message>" of one failed override.
func fleetErrorText(instanceType, zone, capacityType string) string {
	if capacityType == scheduling.CapacityTypeSpot {
		return FleetErrorCode + ": " + spotNoCapacityText
	}
	return FleetErrorCode + ": " + fmt.Sprintf(onDemandNoCapacityFn, instanceType, zone)
}

// createFleet is the CreateFleet call (type instant, one instance): EC2
// tries the overrides in order and launches the first it has capacity
// for. Every override it had none for comes back as a fleet error, and
// the AWS provider puts that offering into the unavailable-offerings cache
// for 3 minutes whether or not an instance came back
// (updateUnavailableOfferingsCache). No instance at all is an
// insufficient-capacity error: the NodeClaim is deleted and its pods are
// provisioned again without those offerings.
func (c *Controller) createFleet(s *cluster.State, its instancetype.InstanceTypes, nc *karpv1.NodeClaim) (*Launch, error) {
	overrides, err := Overrides(its, Requirements(nc), nc.Spec.Resources.Requests)
	if err != nil {
		return nil, err
	}
	unique := map[string]bool{}
	var launched *Launch
	for _, o := range overrides {
		zone := o.Offering.Zone()
		if !NoCapacity(s, o.InstanceType.Name, zone, o.CapacityType) {
			launched = o
			break
		}
		unique[fleetErrorText(o.InstanceType.Name, zone, o.CapacityType)] = true
		c.catalog.MarkUnavailable(s, o.InstanceType.Name, zone, o.CapacityType)
	}
	if launched != nil {
		return launched, nil
	}
	msgs := make([]string, 0, len(unique))
	for m := range unique {
		msgs = append(msgs, m)
	}
	sort.Strings(msgs) // upstream's order is a map's; berth's is sorted
	return nil, &insufficientCapacityError{fleetErrors: msgs}
}
