package noderesources

import (
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// maxScalarBits is how many scalar resources the bit-set path handles; a
// pod asking for more goes through Fits.
const maxScalarBits = 58

// scalarRequest is one extended resource the pod asks for.
type scalarRequest struct {
	name v1.ResourceName
	want int64
}

// scalarFilter is Filter's per-cycle view of a request with scalar
// resources (docs/scheduler.md#failed-cycles-by-position): the scalars
// in Fits' order (by name), sorted once per cycle rather than once per
// node, and the statuses made so far by set of failing resources.
type scalarFilter struct {
	scalars []scalarRequest
	// list is the handle's node list and cols[i] the column of scalars[i]
	// over it (nil without a handle).
	list []*framework.NodeInfo
	cols []*scalarColumn
	// rejections is keyed by the failing set: bits 0-3 the common reasons
	// (commonReasons' index), bit 4+i the i-th scalar, bit 63 U&U.
	rejections map[uint64]*framework.Status
}

// newScalarFilter returns nil when the request has no scalar resource or
// too many for the bit set.
func newScalarFilter(req *framework.Resource) *scalarFilter {
	if len(req.ScalarResources) == 0 || len(req.ScalarResources) > maxScalarBits {
		return nil
	}
	sf := &scalarFilter{scalars: make([]scalarRequest, 0, len(req.ScalarResources))}
	for n, v := range req.ScalarResources {
		sf.scalars = append(sf.scalars, scalarRequest{n, v})
	}
	sort.Slice(sf.scalars, func(i, j int) bool { return sf.scalars[i].name < sf.scalars[j].name })
	return sf
}

// filter is filterWithScalars(req, nodeInfo) for the request sf was made
// from: the same code and reasons, the status shared by every node that
// fails the same way (statuses are never changed but for the plugin name).
func (f *Fit) filterScalars(sf *scalarFilter, req *framework.Resource, nodeInfo *framework.NodeInfo) *framework.Status {
	alloc, used := &nodeInfo.Allocatable, &nodeInfo.Requested
	var mask uint64
	unresolvable := false
	if len(nodeInfo.Pods)+1 > alloc.AllowedPodNumber {
		mask |= 1 << reasonPods
	}
	check := func(bit int, want, capacity, inUse int64) {
		if want > 0 && want > capacity-inUse {
			mask |= 1 << bit
			unresolvable = unresolvable || want > capacity
		}
	}
	check(reasonCPU, req.MilliCPU, alloc.MilliCPU, used.MilliCPU)
	check(reasonMemory, req.Memory, alloc.Memory, used.Memory)
	check(reasonEphemeralStorage, req.EphemeralStorage, alloc.EphemeralStorage, used.EphemeralStorage)
	p := int(nodeInfo.Index)
	listed := sf.cols != nil && p >= 0 && p < len(sf.list) && sf.list[p] == nodeInfo
	for i, s := range sf.scalars {
		if s.want <= 0 {
			continue
		}
		if listed {
			e := &sf.cols[i].at[p]
			if e.node != nodeInfo || e.gen != nodeInfo.Generation {
				*e = scalarAmounts{nodeInfo, nodeInfo.Generation, alloc.ScalarResources[s.name], used.ScalarResources[s.name]}
			}
			check(4+i, s.want, e.alloc, e.used)
			continue
		}
		check(4+i, s.want, alloc.ScalarResources[s.name], used.ScalarResources[s.name])
	}
	if mask == 0 {
		return nil
	}
	code := framework.Unschedulable
	if f.unresolvable && unresolvable {
		code = framework.UnschedulableAndUnresolvable
		mask |= 1 << 63
	}
	if st := sf.rejections[mask]; st != nil {
		return st
	}
	reasons := append([]string(nil), commonReasons[mask&15]...)
	for i, s := range sf.scalars {
		if mask&(1<<(4+i)) != 0 {
			reasons = append(reasons, insufficient(s.name))
		}
	}
	st := framework.NewStatus(code, reasons...)
	if sf.rejections == nil {
		sf.rejections = map[uint64]*framework.Status{}
	}
	sf.rejections[mask] = st
	return st
}

// scalarColumn holds one scalar resource's allocatable and requested
// amounts for each node of a list, by position, as last read: the amounts
// stand while the position holds the same NodeInfo at the same Generation
// (every change to a NodeInfo's pods or node moves it). A failed cycle
// reads them on every node; two string-keyed map reads per resource and
// node become one slot read.
type scalarColumn struct {
	at []scalarAmounts
}

type scalarAmounts struct {
	node        *framework.NodeInfo
	gen         int64
	alloc, used int64
}

// scalarColumns keeps the columns for the handle's current node list.
type scalarColumns struct {
	list []*framework.NodeInfo
	cols map[v1.ResourceName]*scalarColumn
}

// columnsFor fills sf.list and sf.cols from the handle's node list,
// starting afresh for another list.
func (f *Fit) columnsFor(sf *scalarFilter) {
	if f.handle == nil || sf == nil {
		return
	}
	list := f.handle.Nodes()
	c := &f.columns
	if c.cols == nil || len(c.list) != len(list) || (len(list) > 0 && &c.list[0] != &list[0]) {
		c.list, c.cols = list, map[v1.ResourceName]*scalarColumn{}
	}
	sf.list, sf.cols = list, make([]*scalarColumn, len(sf.scalars))
	for i, s := range sf.scalars {
		col := c.cols[s.name]
		if col == nil {
			col = &scalarColumn{at: make([]scalarAmounts, len(list))}
			c.cols[s.name] = col
		}
		sf.cols[i] = col
	}
}
