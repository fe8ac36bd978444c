package framework

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Non-zero defaults used only by LeastAllocated/MostAllocated scoring for
// containers that name no request (kube-scheduler pkg/scheduler/util).
const (
	DefaultMilliCPURequest int64 = 100
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024
)

// Resource is a bag of quantities in the units the scheduler compares:
// millicores, bytes, pod count, and scalar resources by name.
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	AllowedPodNumber int
	ScalarResources  map[v1.ResourceName]int64
}

// NewResource converts a ResourceList.
func NewResource(rl v1.ResourceList) *Resource {
	r := &Resource{}
	r.Add(rl)
	return r
}

// Add adds a ResourceList.
func (r *Resource) Add(rl v1.ResourceList) {
	for name, q := range rl {
		switch name {
		case v1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case v1.ResourceMemory:
			r.Memory += q.Value()
		case v1.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		case v1.ResourcePods:
			r.AllowedPodNumber += int(q.Value())
		default:
			if isScalarResource(name) {
				r.AddScalar(name, q.Value())
			}
		}
	}
}

// AddScalar adds to one scalar resource.
func (r *Resource) AddScalar(name v1.ResourceName, n int64) {
	if r.ScalarResources == nil {
		r.ScalarResources = map[v1.ResourceName]int64{}
	}
	r.ScalarResources[name] += n
}

// Plus adds another Resource in place.
func (r *Resource) Plus(o *Resource) {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	r.EphemeralStorage += o.EphemeralStorage
	r.AllowedPodNumber += o.AllowedPodNumber
	for k, v := range o.ScalarResources {
		r.AddScalar(k, v)
	}
}

// Minus subtracts another Resource in place.
func (r *Resource) Minus(o *Resource) {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	r.EphemeralStorage -= o.EphemeralStorage
	r.AllowedPodNumber -= o.AllowedPodNumber
	for k, v := range o.ScalarResources {
		r.AddScalar(k, -v)
	}
}

// Clone deep-copies.
func (r *Resource) Clone() *Resource {
	c := r.cloneValue()
	return &c
}

func (r *Resource) cloneValue() Resource {
	c := *r
	if r.ScalarResources != nil {
		c.ScalarResources = make(map[v1.ResourceName]int64, len(r.ScalarResources))
		for k, v := range r.ScalarResources {
			c.ScalarResources[k] = v
		}
	}
	return c
}

// isScalarResource: extended resources, hugepages and attachable-volume-*
// (anything with a domain prefix, or the hugepages- prefix).
func isScalarResource(name v1.ResourceName) bool {
	s := string(name)
	if len(s) > 10 && s[:10] == "hugepages-" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}

// AffinityTerm is a parsed pod (anti-)affinity term.
type AffinityTerm struct {
	Namespaces        sets.Set[string]
	Selector          labels.Selector
	TopologyKey       string
	NamespaceSelector labels.Selector
}

// Matches reports whether pod (with its namespace's labels) is selected by the term.
func (t *AffinityTerm) Matches(pod *v1.Pod, nsLabels labels.Set) bool {
	if t.Namespaces.Has(pod.Namespace) || t.NamespaceSelector.Matches(nsLabels) {
		return t.Selector.Matches(labels.Set(pod.Labels))
	}
	return false
}

// WeightedAffinityTerm is a preferred term with its weight.
type WeightedAffinityTerm struct {
	AffinityTerm
	Weight int32
}

// PodInfo is a pod with everything the scheduler derives from it once.
type PodInfo struct {
	Pod *v1.Pod
	// Requests is the effective request (docs/scheduler.md#requests); NonZero* apply the scoring defaults.
	Requests                   Resource
	NonZeroMilliCPU            int64
	NonZeroMemory              int64
	RequiredAffinityTerms      []AffinityTerm
	RequiredAntiAffinityTerms  []AffinityTerm
	PreferredAffinityTerms     []WeightedAffinityTerm
	PreferredAntiAffinityTerms []WeightedAffinityTerm
	// ParseError is set when an affinity term could not be parsed.
	ParseError error
}

// NewPodInfo computes the derived data. podLevelResources follows the version's feature gate.
func NewPodInfo(pod *v1.Pod, podLevelResources bool) *PodInfo {
	pi := &PodInfo{Pod: pod}
	opts := resourcehelper.PodResourcesOptions{SkipPodLevelResources: !podLevelResources}
	reqs := resourcehelper.PodRequests(pod, opts)
	pi.Requests = *NewResource(reqs)
	if !namesCPUAndMemory(pod) {
		opts.NonMissingContainerRequests = v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(DefaultMilliCPURequest, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(DefaultMemoryRequest, resource.BinarySI),
		}
		reqs = resourcehelper.PodRequests(pod, opts)
	}
	// Else the defaults would replace nothing: the same sums (podinfo.go).
	pi.NonZeroMilliCPU = reqs.Cpu().MilliValue()
	pi.NonZeroMemory = reqs.Memory().Value()
	pi.parseAffinity()
	return pi
}

func (pi *PodInfo) parseAffinity() {
	aff := pi.Pod.Spec.Affinity
	if aff == nil {
		return
	}
	if a := aff.PodAffinity; a != nil {
		pi.RequiredAffinityTerms = pi.parseRequired(a.RequiredDuringSchedulingIgnoredDuringExecution)
		pi.PreferredAffinityTerms = pi.parsePreferred(a.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if a := aff.PodAntiAffinity; a != nil {
		pi.RequiredAntiAffinityTerms = pi.parseRequired(a.RequiredDuringSchedulingIgnoredDuringExecution)
		pi.PreferredAntiAffinityTerms = pi.parsePreferred(a.PreferredDuringSchedulingIgnoredDuringExecution)
	}
}

func (pi *PodInfo) parseRequired(terms []v1.PodAffinityTerm) []AffinityTerm {
	var out []AffinityTerm
	for i := range terms {
		t, err := newAffinityTerm(pi.Pod, &terms[i])
		pi.noteErr(err)
		if t != nil {
			out = append(out, *t)
		}
	}
	return out
}

// parsePreferred drops zero-weight terms, as upstream does.
func (pi *PodInfo) parsePreferred(terms []v1.WeightedPodAffinityTerm) []WeightedAffinityTerm {
	var out []WeightedAffinityTerm
	for i := range terms {
		if terms[i].Weight == 0 {
			continue
		}
		t, err := newAffinityTerm(pi.Pod, &terms[i].PodAffinityTerm)
		pi.noteErr(err)
		if t != nil {
			out = append(out, WeightedAffinityTerm{*t, terms[i].Weight})
		}
	}
	return out
}

func (pi *PodInfo) noteErr(err error) {
	if err != nil && pi.ParseError == nil {
		pi.ParseError = err
	}
}

// newAffinityTerm follows upstream: nil labelSelector matches nothing, {} all;
// no namespaces and no namespaceSelector means the pod's own namespace.
func newAffinityTerm(pod *v1.Pod, term *v1.PodAffinityTerm) (*AffinityTerm, error) {
	selector, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	if err != nil {
		return nil, err
	}
	namespaces := sets.New(term.Namespaces...)
	if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
		namespaces.Insert(pod.Namespace)
	}
	nsSelector, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
	if err != nil {
		return nil, err
	}
	return &AffinityTerm{Namespaces: namespaces, Selector: selector, TopologyKey: term.TopologyKey, NamespaceSelector: nsSelector}, nil
}

// HasAffinity reports whether the pod has any (anti-)affinity term.
func (pi *PodInfo) HasAffinity() bool {
	return len(pi.RequiredAffinityTerms)+len(pi.RequiredAntiAffinityTerms)+
		len(pi.PreferredAffinityTerms)+len(pi.PreferredAntiAffinityTerms) > 0
}
