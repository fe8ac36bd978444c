package instancetype

import (
	"fmt"
	"math"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// allowWellKnown is how upstream matches requirements against offerings:
// well-known keys may be absent from the offering.
var allowWellKnown = scheduling.AllowUndefinedWellKnownLabels(scheduling.AWSVocabulary)

// InstanceType is one instance type as the provisioner sees it (upstream
// cloudprovider.InstanceType). Treat it as read-only once built.
type InstanceType struct {
	Name string
	// Requirements has every well-known key, DoesNotExist where the type
	// has no value. docs/karpenter-instance-types.md#requirements
	Requirements scheduling.Requirements
	Offerings    Offerings
	Capacity     corev1.ResourceList
	Overhead     Overhead

	once        sync.Once
	allocatable corev1.ResourceList
	ints        AllocatableInts
}

// AllocatableInts is the allocatable of the four resources every fit check
// compares, as integers: milli-CPU, bytes of memory and ephemeral storage,
// pods. Exact says the integers are the quantities exactly (no fractional
// milli-CPU or bytes), so comparing them decides as comparing the
// quantities would; Negative says some allocatable resource, of any name,
// is below zero. The provisioning solve asks this for every candidate type
// of every NodeClaim a pod is tried on
// (docs/karpenter-provisioning.md#speed-without-different-answers).
type AllocatableInts struct {
	CPUMilli, Memory, Pods, Ephemeral int64
	Exact, Negative                   bool
}

// Overhead is what kubelet and system daemons keep from capacity.
type Overhead struct {
	KubeReserved      corev1.ResourceList
	SystemReserved    corev1.ResourceList
	EvictionThreshold corev1.ResourceList
}

// Total sums the three lists (upstream resources.Merge).
func (o Overhead) Total() corev1.ResourceList {
	total := corev1.ResourceList{}
	for _, l := range []corev1.ResourceList{o.KubeReserved, o.SystemReserved, o.EvictionThreshold} {
		for name, q := range l {
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	return total
}

// Allocatable is capacity minus the overhead total, computed once: it is
// asked for on every fit check. Like upstream it is not floored at zero.
func (i *InstanceType) Allocatable() corev1.ResourceList {
	i.once.Do(func() {
		total := i.Overhead.Total()
		out := make(corev1.ResourceList, len(i.Capacity))
		for name, q := range i.Capacity {
			a := q.DeepCopy()
			if o, ok := total[name]; ok {
				a.Sub(o)
			}
			out[name] = a
		}
		i.allocatable = out
		i.ints = allocatableInts(out)
	})
	return i.allocatable
}

// AllocatableInts is Allocatable's integer form, computed with it.
func (i *InstanceType) AllocatableInts() AllocatableInts {
	i.Allocatable()
	return i.ints
}

func allocatableInts(l corev1.ResourceList) AllocatableInts {
	v := AllocatableInts{Exact: true}
	for name, q := range l {
		if q.Sign() < 0 {
			v.Negative = true
		}
		switch name {
		case corev1.ResourceCPU:
			v.CPUMilli = q.MilliValue()
			v.Exact = v.Exact && q.Cmp(*resource.NewMilliQuantity(v.CPUMilli, resource.DecimalSI)) == 0
		case corev1.ResourceMemory:
			v.Memory = q.Value()
			v.Exact = v.Exact && q.Cmp(*resource.NewQuantity(v.Memory, resource.DecimalSI)) == 0
		case corev1.ResourcePods:
			v.Pods = q.Value()
			v.Exact = v.Exact && q.Cmp(*resource.NewQuantity(v.Pods, resource.DecimalSI)) == 0
		case corev1.ResourceEphemeralStorage:
			v.Ephemeral = q.Value()
			v.Exact = v.Exact && q.Cmp(*resource.NewQuantity(v.Ephemeral, resource.DecimalSI)) == 0
		}
	}
	return v
}

// InstanceTypes is a list of instance types.
type InstanceTypes []*InstanceType

// cheapestCompatible is the lowest price of an available offering
// compatible with reqs, or MaxFloat64.
func (i *InstanceType) cheapestCompatible(reqs scheduling.Requirements) float64 {
	price := math.MaxFloat64
	for _, of := range i.Offerings {
		if of.Available && of.Price < price && reqs.IsCompatible(of.Requirements, allowWellKnown) {
			price = of.Price
		}
	}
	return price
}

// OrderByPrice sorts in place by the cheapest available offering compatible
// with reqs (types without one last). Upstream's sort is unstable; berth
// breaks ties by name so runs repeat.
func (its InstanceTypes) OrderByPrice(reqs scheduling.Requirements) InstanceTypes {
	prices := make(map[*InstanceType]float64, len(its))
	for _, it := range its {
		prices[it] = it.cheapestCompatible(reqs)
	}
	sort.Slice(its, func(a, b int) bool {
		pa, pb := prices[its[a]], prices[its[b]]
		if pa != pb {
			return pa < pb
		}
		return its[a].Name < its[b].Name
	})
	return its
}

// Compatible keeps the types with an available offering compatible with
// requirements (zone and capacity type are decided by offerings).
func (its InstanceTypes) Compatible(requirements scheduling.Requirements) InstanceTypes {
	var out InstanceTypes
	for _, it := range its {
		if it.Offerings.Available().HasCompatible(requirements) {
			out = append(out, it)
		}
	}
	return out
}

// SatisfiesMinValues walks the (already ordered) list and returns how many
// leading types are needed to meet every minValues of requirements. If the
// whole list falls short it returns its length, the keys still short with
// the number of values reached, and an error naming every such key, sorted
// (upstream v1.6 lists them in map order). docs/karpenter-instance-types.md#offerings
func (its InstanceTypes) SatisfiesMinValues(requirements scheduling.Requirements) (int, map[string]int, error) {
	if !requirements.HasMinValues() {
		return 0, nil, nil
	}
	var keys []string
	for _, key := range requirements.SortedKeys() {
		if requirements[key].MinValues != nil {
			keys = append(keys, key)
		}
	}
	values := make(map[string]sets.Set[string], len(keys))
	for _, key := range keys {
		values[key] = sets.New[string]()
	}
	short := map[string]int{}
	for i, it := range its {
		for _, key := range keys {
			values[key].Insert(it.Requirements.Get(key).Values()...)
		}
		clear(short)
		for _, key := range keys {
			if n := values[key].Len(); n < *requirements[key].MinValues {
				short[key] = n
			}
		}
		if len(short) == 0 {
			return i + 1, nil, nil
		}
	}
	if len(short) == 0 {
		// Only an empty list gets here; upstream reports no error for it.
		return len(its), nil, nil
	}
	var unmet []string
	for _, key := range keys {
		if _, ok := short[key]; ok {
			unmet = append(unmet, key)
		}
	}
	return len(its), short, fmt.Errorf("minValues requirement is not met for label(s) (label(s)=%v)", unmet)
}

// Truncate orders by price and keeps the first maxItems; if requirements
// carry minValues the kept types must still meet them, else the original
// list comes back with the error (upstream v1.0–v1.5; v1.6's BestEffort
// policy would keep the truncated list).
func (its InstanceTypes) Truncate(requirements scheduling.Requirements, maxItems int) (InstanceTypes, error) {
	ordered := its.OrderByPrice(requirements)
	truncated := ordered[:min(max(maxItems, 0), len(ordered))]
	if requirements.HasMinValues() {
		if _, _, err := truncated.SatisfiesMinValues(requirements); err != nil {
			return its, fmt.Errorf("validating minValues, %w", err)
		}
	}
	return truncated, nil
}
