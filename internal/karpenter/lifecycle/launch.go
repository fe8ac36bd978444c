package lifecycle

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// MaxLaunchInstanceTypes is how many types CreateFleet is offered
// (aws/karpenter-provider-aws pkg/providers/instance maxInstanceTypes).
const MaxLaunchInstanceTypes = 60

// errAllUnavailable is the launch filters' insufficient-capacity error, as
// cloudprovider.Create wraps it ("creating instance, insufficient capacity,
// ...").
var errAllUnavailable = errors.New("creating instance, insufficient capacity, all requested instance types were unavailable during launch")

// Launch is the instance EC2 gave a NodeClaim.
type Launch struct {
	InstanceType *instancetype.InstanceType
	Offering     *instancetype.Offering
	CapacityType string
}

// Requirements are the NodeClaim's spec.requirements in the algebra.
func Requirements(nc *karpv1.NodeClaim) scheduling.Requirements {
	reqs := make([]scheduling.NodeSelectorRequirementWithMinValues, 0, len(nc.Spec.Requirements))
	for _, r := range nc.Spec.Requirements {
		reqs = append(reqs, scheduling.NodeSelectorRequirementWithMinValues{
			NodeSelectorRequirement: corev1.NodeSelectorRequirement{Key: r.Key, Operator: r.Operator, Values: r.Values},
			MinValues:               r.MinValues,
		})
	}
	return scheduling.NewNodeSelectorRequirementsWithMinValues(reqs...)
}

// SelectInstance is the AWS provider's choice for a NodeClaim among its
// pool's instance types (docs/karpenter-lifecycle.md#instance-selection)
// when EC2 has capacity for every offering: the first of Overrides.
func SelectInstance(its instancetype.InstanceTypes, reqs scheduling.Requirements, requests corev1.ResourceList) (*Launch, error) {
	overrides, err := Overrides(its, reqs, requests)
	if err != nil {
		return nil, err
	}
	return overrides[0], nil
}

// Overrides are the CreateFleet overrides in the order EC2 tries them:
// the launch filters in upstream order, truncation to 60 by price, the
// capacity type (spot when allowed and offered, else on-demand), then
// every compatible available offering of that capacity type, cheapest
// first. EC2's lowest-price on-demand strategy tries exactly that order;
// for spot its price-capacity-optimized strategy may prefer a deeper,
// slightly dearer pool, which berth does not model. Ties keep the price
// order of the types, then the zones' order. its is not modified.
func Overrides(its instancetype.InstanceTypes, reqs scheduling.Requirements, requests corev1.ResourceList) ([]*Launch, error) {
	remaining := filterInstanceTypes(its, reqs, requests)
	if len(remaining) == 0 {
		return nil, errAllUnavailable
	}
	remaining, err := remaining.Truncate(reqs, MaxLaunchInstanceTypes)
	if err != nil {
		// CreateError "InstanceTypeFilteringFailed": the launch is retried.
		return nil, fmt.Errorf("truncating instance types, %w", err)
	}
	capacityType := capacityTypeFor(remaining, reqs)
	launchReqs := reqs.DeepCopy()
	launchReqs.Add(scheduling.NewRequirement(scheduling.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityType))
	var out []*Launch
	for _, it := range remaining {
		for _, of := range it.Offerings.Available().Compatible(launchReqs) {
			out = append(out, &Launch{InstanceType: it, Offering: of, CapacityType: capacityType})
		}
	}
	if len(out) == 0 {
		return nil, errAllUnavailable
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Offering.Price < out[j].Offering.Price })
	return out, nil
}

// filterInstanceTypes runs the launch filters of upstream
// instance.filterInstanceTypes (v1.6) that berth's offerings can exercise:
// compatible-available, exotic-instance and spot-offering (the capacity
// reservation filters have nothing to act on). A filter that would leave
// nothing leaves nothing: the launch fails.
func filterInstanceTypes(its instancetype.InstanceTypes, reqs scheduling.Requirements, requests corev1.ResourceList) instancetype.InstanceTypes {
	var compatible instancetype.InstanceTypes
	// Claims list their types by name: rule the others out cheaply first.
	names := reqs.Get(corev1.LabelInstanceTypeStable)
	for _, it := range its {
		if !names.Has(it.Name) || !reqs.IsCompatible(it.Requirements, allowWellKnown) || !fits(requests, it.Allocatable()) {
			continue
		}
		if len(it.Offerings.Compatible(reqs).Available()) != 0 {
			compatible = append(compatible, it)
		}
	}
	if len(compatible) == 0 {
		return nil
	}
	return spotFilter(exoticFilter(compatible, reqs), reqs)
}

var allowWellKnown = scheduling.AllowUndefinedWellKnownLabels(scheduling.AWSVocabulary)

// fits is upstream resources.Fits: no negative total, every request within.
func fits(requests, total corev1.ResourceList) bool {
	var zero resource.Quantity
	for _, q := range total {
		if q.Cmp(zero) < 0 {
			return false
		}
	}
	for name, q := range requests {
		t := total[name]
		if q.Cmp(t) > 0 {
			return false
		}
	}
	return true
}

// exoticResources are the accelerators that make a type "exotic".
var exoticResources = []corev1.ResourceName{
	"aws.amazon.com/neuron", "aws.amazon.com/neuroncore", aws.ResourceAMDGPU, aws.ResourceNVIDIAGPU, "habana.ai/gaudi",
}

// exoticFilter drops metal sizes and accelerated types unless that drops
// everything; it stands aside when minValues is used.
func exoticFilter(its instancetype.InstanceTypes, reqs scheduling.Requirements) instancetype.InstanceTypes {
	if reqs.HasMinValues() {
		return its
	}
	var generic instancetype.InstanceTypes
	for _, it := range its {
		if !exotic(it) {
			generic = append(generic, it)
		}
	}
	if len(generic) == 0 {
		return its
	}
	return generic
}

func exotic(it *instancetype.InstanceType) bool {
	if size := it.Requirements.Get(scheduling.LabelInstanceSize); size != nil {
		for _, v := range size.Values() {
			if strings.Contains(v, "metal") {
				return true
			}
		}
	}
	for _, name := range exoticResources {
		if q, ok := it.Capacity[name]; ok && !q.IsZero() {
			return true
		}
	}
	return false
}

// spotFilter: when both spot and on-demand are allowed and offered, a type
// is kept only if one of its spot offerings costs no more than the cheapest
// on-demand offering, or it has no spot offering at all. Skipped with
// minValues.
func spotFilter(its instancetype.InstanceTypes, reqs scheduling.Requirements) instancetype.InstanceTypes {
	if reqs.HasMinValues() {
		return its
	}
	ct := reqs.Get(scheduling.CapacityTypeLabelKey)
	if !ct.Has(scheduling.CapacityTypeOnDemand) || !ct.Has(scheduling.CapacityTypeSpot) {
		return its
	}
	cheapestOD := math.MaxFloat64
	hasSpot, hasOD := false, false
	for _, it := range its {
		for _, of := range it.Offerings.Compatible(reqs).Available() {
			switch of.CapacityType() {
			case scheduling.CapacityTypeOnDemand:
				hasOD = true
				cheapestOD = min(cheapestOD, of.Price)
			case scheduling.CapacityTypeSpot:
				hasSpot = true
			}
		}
	}
	if !hasOD || !hasSpot {
		return its
	}
	var out instancetype.InstanceTypes
	for _, it := range its {
		keep, spot := false, false
		for _, of := range it.Offerings.Compatible(reqs).Available() {
			if of.CapacityType() == scheduling.CapacityTypeSpot {
				spot = true
				if of.Price <= cheapestOD {
					keep = true
				}
			}
		}
		if keep || !spot {
			out = append(out, it)
		}
	}
	return out
}

// capacityTypeFor is upstream getCapacityType: reserved, then spot, if the
// requirements allow it and an available compatible offering has it; else
// on-demand.
func capacityTypeFor(its instancetype.InstanceTypes, reqs scheduling.Requirements) string {
	for _, ct := range []string{scheduling.CapacityTypeReserved, scheduling.CapacityTypeSpot} {
		if !reqs.Get(scheduling.CapacityTypeLabelKey).Has(ct) {
			continue
		}
		r := reqs.DeepCopy()
		r.Add(scheduling.NewRequirement(scheduling.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, ct))
		for _, it := range its {
			if len(it.Offerings.Available().Compatible(r)) != 0 {
				return ct
			}
		}
	}
	return scheduling.CapacityTypeOnDemand
}

// launch creates the instance for nc and fills in its status. It reports
// whether nc was launched, and whether it changed anything (a failed launch
// deletes the NodeClaim or marks it for a retry).
func (c *Controller) launch(s *cluster.State, nc *karpv1.NodeClaim, list []*pools.Pool) (launched, changed bool) {
	pool := pools.Of(list, nc.Labels)
	if pool == nil || pool.NotReady != "" {
		// Upstream resolves the node class from spec.nodeClassRef alone;
		// berth lists instance types per pool, so a claim whose pool is
		// gone fails the same way (docs/karpenter-lifecycle.md#launch).
		why := fmt.Sprintf("nodepools.karpenter.sh %q not found", nc.Labels[scheduling.NodePoolLabelKey])
		if pool != nil {
			why = pool.NotReady
		}
		failLaunch(s, nc, fmt.Errorf("insufficient capacity, resolving nodeclass, %s", why))
		return false, true
	}
	// The catalog's list is shared; selection sorts a copy.
	its := append(instancetype.InstanceTypes(nil), c.catalog.InstanceTypes(s, pool)...)
	l, err := c.createFleet(s, its, nc)
	var ice *insufficientCapacityError
	if errors.Is(err, errAllUnavailable) || errors.As(err, &ice) {
		failLaunch(s, nc, err)
		return false, true
	}
	if err != nil {
		// A CreateError: Launched stays Unknown with the reason, and the
		// launch is tried again (the liveness timeout is not modelled).
		if SetCondition(s, nc, ConditionLaunched, metav1.ConditionUnknown, "InstanceTypeFilteringFailed", "Error truncating instance types based on the passed-in requirements") {
			write(s, nc)
			changed = true
		}
		next := s.Now.Add(LaunchRetryInterval)
		if ttl := FindCondition(nc, ConditionRegistered).LastTransitionTime.Add(RegistrationTTL); ttl.Before(next) {
			next = ttl // the liveness check deletes it then
		}
		wake(s, next, nc.Name)
		return false, changed
	}
	populate(s, nc, pool, l)
	setTrue(s, nc, ConditionLaunched)
	write(s, nc)
	return true, true
}

// failLaunch publishes InsufficientCapacityError and deletes the NodeClaim
// (nothing was launched, so its finalizer goes with it).
func failLaunch(s *cluster.State, nc *karpv1.NodeClaim, err error) {
	publish(s, cluster.Regarding("NodeClaim", karpv1.SchemeGroupVersion.String(), nc), corev1.EventTypeWarning,
		ReasonInsufficientCapacityError, fmt.Sprintf("NodeClaim %s event: %s", nc.Name, truncateMessage(err.Error())))
	removeClaim(s, nc)
	wakeForRequeue(s)
}

// wakeForRequeue keeps the running command going until the next periodic
// requeue of a provisionable pod: the pods of a claim whose launch failed
// are provisioned again then, without the offerings that failed, and a
// user expects the command that caused the launch to show the fallback
// (docs/karpenter-interruption.md#insufficient-capacity).
func wakeForRequeue(s *cluster.State) {
	var next time.Time
	for _, due := range s.Karpenter.Requeue {
		if due.After(s.Now) && (next.IsZero() || due.Before(next)) {
			next = due
		}
	}
	if !next.IsZero() {
		controllerutil.AddTimerOnce(s, cluster.Timer{At: next, Owner: Name, Object: "requeue", Settling: true})
	}
}

// truncateMessage is upstream's 300-character cut.
func truncateMessage(msg string) string {
	if len(msg) < 300 {
		return msg
	}
	return msg[:300] + "..."
}

// removeClaim deletes a NodeClaim object for good.
func removeClaim(s *cluster.State, nc *karpv1.NodeClaim) {
	delete(s.NodeClaims, nc.Name)
	s.Bump()
}

// populate writes what CreateFleet and the cloud provider return
// (cloudprovider.instanceToNodeClaim, lifecycle.PopulateNodeClaimDetails):
// provider ID, image, capacity and allocatable of the type (zero and
// unrequested EFA left out), and labels: every single-valued requirement
// of the type, the zone, its zone ID and the capacity type, under the
// NodeClaim's own labels.
func populate(s *cluster.State, nc *karpv1.NodeClaim, pool *pools.Pool, l *Launch) {
	it, zone := l.InstanceType, l.Offering.Zone()
	labels := map[string]string{}
	for _, key := range it.Requirements.SortedKeys() {
		req := it.Requirements.Get(key)
		if req.Len() == 1 && key != scheduling.LabelCapacityReservationID && key != scheduling.LabelCapacityReservationType {
			if v := req.Values(); len(v) == 1 {
				labels[key] = v[0]
			}
		}
	}
	labels[corev1.LabelTopologyZone] = zone
	if id := l.Offering.Requirements.Get(scheduling.LabelTopologyZoneID); id != nil && id.Len() == 1 {
		labels[scheduling.LabelTopologyZoneID] = id.Values()[0]
	} else if id, err := aws.ZoneID(zone); err == nil {
		labels[scheduling.LabelTopologyZoneID] = id
	}
	labels[scheduling.CapacityTypeLabelKey] = l.CapacityType
	for k, v := range nc.Labels {
		labels[k] = v
	}
	nc.Labels = labels
	_, efa := nc.Spec.Resources.Requests[aws.ResourceEFA]
	keep := func(name corev1.ResourceName, q resource.Quantity) bool {
		return !q.IsZero() && (name != aws.ResourceEFA || efa)
	}
	nc.Status.Capacity = pick(it.Capacity, keep)
	nc.Status.Allocatable = pick(it.Allocatable(), keep)
	nc.Status.ProviderID = aws.ProviderID(zone, aws.InstanceID(s))
	arch := labels[corev1.LabelArchStable]
	nc.Status.ImageID = aws.AMIID(pools.Region(s), awsAMIFamily(pool.NodeClass.AMIFamily), arch)
}

func pick(in corev1.ResourceList, keep func(corev1.ResourceName, resource.Quantity) bool) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range in {
		if keep(name, q) {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// awsAMIFamily maps Karpenter's AMI family spelling onto internal/aws's
// (eksctl's), which names images and the nodes' OS details.
func awsAMIFamily(family string) string {
	switch family {
	case instancetype.AMIFamilyAL2:
		return aws.AMIFamilyAmazonLinux2
	case instancetype.AMIFamilyBottlerocket:
		return aws.AMIFamilyBottlerocket
	case instancetype.AMIFamilyWindows2019:
		return "WindowsServer2019FullContainer"
	case instancetype.AMIFamilyWindows2022:
		return aws.AMIFamilyWindows2022
	case instancetype.AMIFamilyWindows2025:
		return "WindowsServer2025FullContainer"
	}
	return aws.AMIFamilyAmazonLinux2023
}
