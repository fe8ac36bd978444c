package provisioning

import (
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// The instance-type filter asks two questions of every type that only
// depend on the requirement set: does the type meet it, and does it have an
// available offering that does. Pods of one workload ask them with the same
// requirements over and over, so the answers are kept per exact requirement
// set; only the resource check depends on the claim's pods. The answers are
// the filter's own, so the decisions are unchanged.

// typeVerdict caches one type's answers: bit 0 set when known, bit 1 when
// compatible, bit 2 when it has a compatible available offering.
type typeVerdict uint8

const (
	verdictKnown typeVerdict = 1 << iota
	verdictCompatible
	verdictOffering
)

// filterCache holds the answers per requirement set, and for the shared
// lists new NodeClaims start from, the same answers by position.
type filterCache struct {
	byReqs map[string]map[*instancetype.InstanceType]typeVerdict
	byList map[listKey][]typeVerdict
}

// listKey names a requirement set and a list of types by its first
// element's address and length. The address is a real pointer, so the list
// stays alive while the cache holds it; the lists cached are never changed
// during a solve.
type listKey struct {
	reqs  string
	first *(*instancetype.InstanceType)
	n     int
}

func newFilterCache() *filterCache {
	return &filterCache{byReqs: map[string]map[*instancetype.InstanceType]typeVerdict{}, byList: map[listKey][]typeVerdict{}}
}

// verdicts returns the answer table for a requirement set and, when shared
// is set and the list is not empty, its answers by position in its.
func (c *filterCache) verdicts(reqs scheduling.Requirements, its instancetype.InstanceTypes, shared bool) (map[*instancetype.InstanceType]typeVerdict, []typeVerdict) {
	if c == nil {
		return nil, nil
	}
	key := requirementsKey(reqs)
	m, ok := c.byReqs[key]
	if !ok {
		m = map[*instancetype.InstanceType]typeVerdict{}
		c.byReqs[key] = m
	}
	if !shared || len(its) == 0 {
		return m, nil
	}
	lk := listKey{reqs: key, first: &its[0], n: len(its)}
	pos, ok := c.byList[lk]
	if !ok {
		pos = make([]typeVerdict, len(its))
		c.byList[lk] = pos
	}
	return m, pos
}

// verdictAt is verdictOf for position i of a list with positional answers
// (pos may be nil).
func verdictAt(m map[*instancetype.InstanceType]typeVerdict, pos []typeVerdict, i int, it *instancetype.InstanceType,
	reqs scheduling.Requirements) (compatible, offering bool) {
	if pos == nil {
		return verdictOf(m, it, reqs)
	}
	if v := pos[i]; v&verdictKnown != 0 {
		return v&verdictCompatible != 0, v&verdictOffering != 0
	}
	compatible, offering = verdictOf(m, it, reqs)
	v := verdictKnown
	if compatible {
		v |= verdictCompatible
	}
	if offering {
		v |= verdictOffering
	}
	pos[i] = v
	return compatible, offering
}

// verdict answers for one type, computing it on first use.
func verdictOf(m map[*instancetype.InstanceType]typeVerdict, it *instancetype.InstanceType, reqs scheduling.Requirements) (compatible, offering bool) {
	if v, ok := m[it]; ok {
		return v&verdictCompatible != 0, v&verdictOffering != 0
	}
	compatible = intersectsOK(it.Requirements, reqs)
	for _, o := range it.Offerings {
		if o.Available && compatibleOK(reqs, o.Requirements, allowWellKnown) {
			offering = true
			break
		}
	}
	if m != nil {
		v := verdictKnown
		if compatible {
			v |= verdictCompatible
		}
		if offering {
			v |= verdictOffering
		}
		m[it] = v
	}
	return compatible, offering
}

// requirementsKey writes a requirement set exactly: keys in order, each
// with its complement flag, sorted values, bounds and minValues. The
// hostname is left out: no instance type or offering defines it, so it
// cannot change an answer, and every new NodeClaim has its own.
func requirementsKey(reqs scheduling.Requirements) string {
	return requirementsKeyWithout(reqs, corev1.LabelHostname)
}

// requirementsKeyWithout writes the set exactly but for the skipped key
// ("" skips none).
func requirementsKeyWithout(reqs scheduling.Requirements, skip string) string {
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		if k != skip {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		r := reqs[k]
		b.WriteString(k)
		if r.Complement() {
			b.WriteString("!")
		}
		b.WriteByte('[')
		for i, v := range r.Values() {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(v)
		}
		b.WriteByte(']')
		if gt, ok := r.GreaterThan(); ok {
			b.WriteString(">" + strconv.Itoa(gt))
		}
		if lt, ok := r.LessThan(); ok {
			b.WriteString("<" + strconv.Itoa(lt))
		}
		if r.MinValues != nil {
			b.WriteString("#" + strconv.Itoa(*r.MinValues))
		}
		b.WriteByte(0)
	}
	return b.String()
}

// resourceVec holds the common resources as integers (milli-CPU, bytes,
// counts); anything else stays in the list.
type resourceVec struct {
	cpu, memory, pods, ephemeral int64
	other                        corev1.ResourceList
	negative                     bool
}

func toVec(l corev1.ResourceList) resourceVec {
	var v resourceVec
	for name, q := range l {
		if q.Sign() < 0 {
			v.negative = true
		}
		switch name {
		case corev1.ResourceCPU:
			v.cpu = q.MilliValue()
		case corev1.ResourceMemory:
			v.memory = q.Value()
		case corev1.ResourcePods:
			v.pods = q.Value()
		case corev1.ResourceEphemeralStorage:
			v.ephemeral = q.Value()
		default:
			if v.other == nil {
				v.other = corev1.ResourceList{}
			}
			v.other[name] = q
		}
	}
	return v
}

// exact tells whether the integer forms are exact for this list (no
// fractional milli-CPU, no sub-unit bytes), so the vector comparison
// decides as the Quantity comparison would.
func exact(l corev1.ResourceList) bool {
	for name, q := range l {
		switch name {
		case corev1.ResourceCPU:
			if q.Cmp(*resource.NewMilliQuantity(q.MilliValue(), resource.DecimalSI)) != 0 {
				return false
			}
		case corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage:
			if q.Cmp(*resource.NewQuantity(q.Value(), resource.DecimalSI)) != 0 {
				return false
			}
		}
	}
	return true
}

// requestVec is a request list prepared for many fit checks; ok is false
// when its integer form would not be exact.
type requestVec struct {
	list corev1.ResourceList
	vec  resourceVec
	ok   bool
}

func newRequestVec(l corev1.ResourceList) requestVec {
	return requestVec{list: l, vec: toVec(l), ok: exact(l)}
}

// fitsType is fits(requests, it.Allocatable()), on integers when both
// sides allow it. The type's integers are kept on the type itself
// (instancetype.AllocatableInts): this runs for every candidate type of
// every claim a pod is tried on, where a map lookup per type cost more than
// the comparison.
func (c *filterCache) fitsType(r requestVec, it *instancetype.InstanceType) bool {
	if c != nil && r.ok {
		if a := it.AllocatableInts(); a.Exact {
			if a.Negative {
				return false
			}
			v := r.vec
			if v.cpu > a.CPUMilli || v.memory > a.Memory || v.pods > a.Pods || v.ephemeral > a.Ephemeral {
				return false
			}
			if len(v.other) == 0 {
				return true
			}
			alloc := it.Allocatable()
			for name, q := range v.other {
				if q.Cmp(alloc[name]) > 0 {
					return false
				}
			}
			return true
		}
	}
	return fits(r.list, it.Allocatable())
}

// typeBounds are, per resource over CPU, memory, pods and ephemeral
// storage, the most and the least a list of types offers. ceiling leaves
// out types with a negative allocatable and other resources, so it only
// ever rules a pod out; floor is usable (floorOK) only when no type is
// negative, and then every type holds whatever fits the floor. ok is false
// when some type's allocatable has no exact integer form.
type typeBounds struct {
	ceiling, floor resourceVec
	ok, floorOK    bool
}

func boundsOf(its instancetype.InstanceTypes) typeBounds {
	b := typeBounds{ok: true, floorOK: len(its) > 0}
	for i, it := range its {
		v := it.AllocatableInts()
		if !v.Exact {
			return typeBounds{}
		}
		if v.Negative {
			b.floorOK = false
			continue
		}
		c := &b.ceiling
		c.cpu, c.memory = max(c.cpu, v.CPUMilli), max(c.memory, v.Memory)
		c.pods, c.ephemeral = max(c.pods, v.Pods), max(c.ephemeral, v.Ephemeral)
		f := &b.floor
		if i == 0 {
			*f = resourceVec{cpu: v.CPUMilli, memory: v.Memory, pods: v.Pods, ephemeral: v.Ephemeral}
			continue
		}
		f.cpu, f.memory = min(f.cpu, v.CPUMilli), min(f.memory, v.Memory)
		f.pods, f.ephemeral = min(f.pods, v.Pods), min(f.ephemeral, v.Ephemeral)
	}
	return b
}

// plus is the request vector of merged, the merge of r's and o's lists:
// the sum of the two vectors when both are exact and hold only the four
// common resources, else computed from the list.
func (r requestVec) plus(o requestVec, merged corev1.ResourceList) requestVec {
	if !r.ok || !o.ok || r.vec.negative || o.vec.negative || r.vec.other != nil || o.vec.other != nil {
		return newRequestVec(merged)
	}
	return requestVec{list: merged, vec: addMain(r.vec, o.vec), ok: true}
}

// fitsMain compares only CPU, memory, pods and ephemeral storage.
func fitsMain(c, total resourceVec) bool {
	return c.cpu <= total.cpu && c.memory <= total.memory && c.pods <= total.pods && c.ephemeral <= total.ephemeral
}

// addMain sums CPU, memory, pods and ephemeral storage (the resources
// fitsMain compares).
func addMain(a, b resourceVec) resourceVec {
	return resourceVec{cpu: a.cpu + b.cpu, memory: a.memory + b.memory, pods: a.pods + b.pods, ephemeral: a.ephemeral + b.ephemeral}
}
