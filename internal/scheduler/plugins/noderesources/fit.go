// Package noderesources holds NodeResourcesFit (does the pod's request fit the
// node's free allocatable; LeastAllocated scoring) and
// NodeResourcesBalancedAllocation (prefer nodes whose cpu and memory use stay even).
package noderesources

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// FitName is NodeResourcesFit's name in the profile.
const FitName = "NodeResourcesFit"

// ErrReasonTooManyPods is the reason when the node's pod slots are used up.
const ErrReasonTooManyPods = "Too many pods"

const preFilterStateKey framework.StateKey = "PreFilter" + FitName

// Fit is the NodeResourcesFit plugin with the default LeastAllocated strategy
// over cpu and memory, weight 1 each.
type Fit struct {
	unresolvable bool
	handle       framework.Handle
	// columns keeps scalar resources' amounts by node position (fitscalars.go).
	columns scalarColumns
	// rejections shares Filter's statuses of the common resources, by code
	// (Unschedulable, U&U) and set of failing resources: a status is never
	// changed after it is made, but for being tagged with this plugin's name.
	rejections [2][16]*framework.Status
}

// NewFit builds the plugin; from 1.34 a request above the node's allocatable
// is unresolvable (preemption cannot help).
func NewFit(h framework.Handle) framework.Plugin {
	return &Fit{unresolvable: h.Features().InsufficientUnresolvable, handle: h}
}

func (*Fit) Name() string { return FitName }

type preFilterState struct {
	framework.Resource
	// scoreMilliCPU and scoreMemory are the pod's request as Score sees it.
	scoreMilliCPU, scoreMemory int64
	// scalars is Filter's view of the scalar resources (fitscalars.go);
	// nil without any.
	scalars *scalarFilter
}

func (s *preFilterState) Clone() framework.StateData { return s }

// PreFilter records the pod's effective request, and the one Score uses.
func (f *Fit) PreFilter(state *framework.CycleState, pod *framework.PodInfo, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	cpu, mem := scoreRequest(pod)
	sf := newScalarFilter(&pod.Requests)
	f.columnsFor(sf)
	state.Write(preFilterStateKey, &preFilterState{Resource: pod.Requests, scoreMilliCPU: cpu, scoreMemory: mem, scalars: sf})
	return nil, nil
}

// scoreRequest is the incoming pod's non-zero cpu and memory request for
// LeastAllocated. Upstream builds that scorer without the PodLevelResources
// switch (checked in v1.36.3: the strategy factory sets no feature flags, unlike
// BalancedAllocation), so pod-level requests are ignored here and the
// containers' sum is used, while the bound pods on the node count theirs.
func scoreRequest(pod *framework.PodInfo) (int64, int64) {
	if r := pod.Pod.Spec.Resources; r == nil || len(r.Requests) == 0 {
		return pod.NonZeroMilliCPU, pod.NonZeroMemory
	}
	req := resourcehelper.PodRequests(pod.Pod, resourcehelper.PodResourcesOptions{
		SkipPodLevelResources: true,
		NonMissingContainerRequests: v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(framework.DefaultMilliCPURequest, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(framework.DefaultMemoryRequest, resource.BinarySI),
		},
	})
	return req.Cpu().MilliValue(), req.Memory().Value()
}

// PreFilterExtensions: the fit is read from the NodeInfo itself.
func (f *Fit) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// InsufficientResource is one reason the pod does not fit.
type InsufficientResource struct {
	ResourceName v1.ResourceName
	Reason       string
	Requested    int64
	Used         int64
	Capacity     int64
	// Unresolvable: the request exceeds the node's whole allocatable.
	Unresolvable bool
}

// Filter reports every insufficient resource of the node in one status.
// It is Fits without the details: the reasons of the common resources come
// from a shared table (statuses never modify their reasons in place).
func (f *Fit) Filter(state *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	req := &pod.Requests
	if s, ok := state.Read(preFilterStateKey).(*preFilterState); ok {
		req = &s.Resource
		if s.scalars != nil {
			return f.filterScalars(s.scalars, req, nodeInfo)
		}
	}
	if len(req.ScalarResources) > 0 {
		return f.filterWithScalars(req, nodeInfo)
	}
	alloc, used := &nodeInfo.Allocatable, &nodeInfo.Requested
	mask, unresolvable := 0, false
	if len(nodeInfo.Pods)+1 > alloc.AllowedPodNumber {
		mask |= 1 << reasonPods
	}
	if req.MilliCPU != 0 || req.Memory != 0 || req.EphemeralStorage != 0 {
		for i, r := range [3][3]int64{
			{req.MilliCPU, alloc.MilliCPU, used.MilliCPU},
			{req.Memory, alloc.Memory, used.Memory},
			{req.EphemeralStorage, alloc.EphemeralStorage, used.EphemeralStorage},
		} {
			if want, capacity, inUse := r[0], r[1], r[2]; want > 0 && want > capacity-inUse {
				mask |= 1 << (reasonCPU + i)
				unresolvable = unresolvable || want > capacity
			}
		}
	}
	if mask == 0 {
		return nil
	}
	code, c := framework.Unschedulable, 0
	if f.unresolvable && unresolvable {
		code, c = framework.UnschedulableAndUnresolvable, 1
	}
	st := f.rejections[c][mask]
	if st == nil {
		st = framework.NewStatus(code, commonReasons[mask]...)
		f.rejections[c][mask] = st
	}
	return st
}

// Bits of commonReasons' index, in Fits' order.
const (
	reasonPods = iota
	reasonCPU
	reasonMemory
	reasonEphemeralStorage
)

// commonReasons holds, per set of failing common resources, Fits' reasons
// (each slice at full capacity, so appending to one copies it).
var commonReasons = func() (t [16][]string) {
	names := [4]string{ErrReasonTooManyPods, insufficient(v1.ResourceCPU), insufficient(v1.ResourceMemory),
		insufficient(v1.ResourceEphemeralStorage)}
	for mask := range t {
		var r []string
		for bit, name := range names {
			if mask&(1<<bit) != 0 {
				r = append(r, name)
			}
		}
		t[mask] = r[:len(r):len(r)]
	}
	return t
}()

// insufficient is the Filter reason for a resource the node lacks.
func insufficient(name v1.ResourceName) string { return fmt.Sprintf("Insufficient %v", name) }

// filterWithScalars is Filter for requests with scalar resources.
func (f *Fit) filterWithScalars(req *framework.Resource, nodeInfo *framework.NodeInfo) *framework.Status {
	insufficient := Fits(req, nodeInfo)
	if len(insufficient) == 0 {
		return nil
	}
	code := framework.Unschedulable
	reasons := make([]string, 0, len(insufficient))
	for _, r := range insufficient {
		reasons = append(reasons, r.Reason)
		if f.unresolvable && r.Unresolvable {
			code = framework.UnschedulableAndUnresolvable
		}
	}
	return framework.NewStatus(code, reasons...)
}

// Fits lists what does not fit: the pod count first, then cpu, memory,
// ephemeral storage and scalar resources (sorted by name).
func Fits(req *framework.Resource, nodeInfo *framework.NodeInfo) []InsufficientResource {
	var out []InsufficientResource
	alloc, used := &nodeInfo.Allocatable, &nodeInfo.Requested
	if allowed := alloc.AllowedPodNumber; len(nodeInfo.Pods)+1 > allowed {
		out = append(out, InsufficientResource{ResourceName: v1.ResourcePods, Reason: ErrReasonTooManyPods,
			Requested: 1, Used: int64(len(nodeInfo.Pods)), Capacity: int64(allowed)})
	}
	if req.MilliCPU == 0 && req.Memory == 0 && req.EphemeralStorage == 0 && len(req.ScalarResources) == 0 {
		return out
	}
	check := func(name v1.ResourceName, want, capacity, inUse int64) {
		if want > 0 && want > capacity-inUse {
			out = append(out, InsufficientResource{ResourceName: name, Reason: insufficient(name),
				Requested: want, Used: inUse, Capacity: capacity, Unresolvable: want > capacity})
		}
	}
	check(v1.ResourceCPU, req.MilliCPU, alloc.MilliCPU, used.MilliCPU)
	check(v1.ResourceMemory, req.Memory, alloc.Memory, used.Memory)
	check(v1.ResourceEphemeralStorage, req.EphemeralStorage, alloc.EphemeralStorage, used.EphemeralStorage)
	if len(req.ScalarResources) > 0 {
		names := make([]string, 0, len(req.ScalarResources))
		for n := range req.ScalarResources {
			names = append(names, string(n))
		}
		sort.Strings(names)
		for _, n := range names {
			rn := v1.ResourceName(n)
			check(rn, req.ScalarResources[rn], alloc.ScalarResources[rn], used.ScalarResources[rn])
		}
	}
	return out
}

// Score is LeastAllocated over cpu and memory with the non-zero request
// defaults: the share of each resource left free, averaged.
func (f *Fit) Score(state *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	cpu, mem := f.scoreRequestOf(state, pod)
	return leastAllocatedOn(nodeInfo, cpu, mem), nil
}

// ScoreNodes is Score over every node, reading the state once
// (framework.BatchScorePlugin).
func (f *Fit) ScoreNodes(state *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo, scores framework.NodeScoreList) *framework.Status {
	if len(nodes) == 0 {
		return nil
	}
	cpu, mem := f.scoreRequestOf(state, pod)
	for i, ni := range nodes {
		scores[i].Score = leastAllocatedOn(ni, cpu, mem)
	}
	return nil
}

// scoreRequestOf is the request PreFilter recorded, or (no PreFilter ran)
// the pod's own.
func (f *Fit) scoreRequestOf(state *framework.CycleState, pod *framework.PodInfo) (int64, int64) {
	if s, ok := state.Read(preFilterStateKey).(*preFilterState); ok {
		return s.scoreMilliCPU, s.scoreMemory
	}
	return scoreRequest(pod)
}

func leastAllocatedOn(nodeInfo *framework.NodeInfo, cpu, mem int64) int64 {
	return leastAllocated(
		[2]int64{nodeInfo.NonZeroRequested.MilliCPU + cpu, nodeInfo.NonZeroRequested.Memory + mem},
		[2]int64{nodeInfo.Allocatable.MilliCPU, nodeInfo.Allocatable.Memory})
}

// ScoreExtensions: LeastAllocated needs no normalization.
func (f *Fit) ScoreExtensions() framework.ScoreExtensions { return nil }

func leastAllocated(requested, allocatable [2]int64) int64 {
	var score, weights int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		var s int64
		if requested[i] <= allocatable[i] {
			s = (allocatable[i] - requested[i]) * framework.MaxNodeScore / allocatable[i]
		}
		score += s
		weights++
	}
	if weights == 0 {
		return 0
	}
	return score / weights
}
