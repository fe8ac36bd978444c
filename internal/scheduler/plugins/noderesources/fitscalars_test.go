package noderesources

import (
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// TestScalarFilterMatchesFits checks Filter's bit-set path for requests
// with scalar resources against filterWithScalars (Fits, reasons in Fits'
// order) on random nodes and requests: resources missing on the node or in
// the request, zero requests, used up, over allocatable, pod slots full,
// both unresolvable settings; statuses reused across nodes must still
// carry the right reasons.
func TestScalarFilterMatchesFits(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	names := []v1.ResourceName{"example.com/gpu", "hugepages-2Mi", "a.io/fpga", "z.io/x"}
	scalars := func(max int64, p float64) map[v1.ResourceName]int64 {
		var m map[v1.ResourceName]int64
		for _, n := range names {
			if r.Float64() < p {
				if m == nil {
					m = map[v1.ResourceName]int64{}
				}
				m[n] = r.Int64N(max)
			}
		}
		return m
	}
	res := func(max int64, p float64) framework.Resource {
		return framework.Resource{MilliCPU: r.Int64N(max), Memory: r.Int64N(max), EphemeralStorage: r.Int64N(max),
			AllowedPodNumber: int(r.Int64N(4)), ScalarResources: scalars(max, p)}
	}
	var nodes []*framework.NodeInfo
	for i := 0; i < 50; i++ {
		ni := &framework.NodeInfo{Allocatable: res(8, 0.6), Requested: res(6, 0.5)}
		for j := r.IntN(4); j > 0; j-- {
			ni.Pods = append(ni.Pods, &framework.PodInfo{})
		}
		nodes = append(nodes, ni)
	}
	checked := 0
	for i, ni := range nodes {
		ni.Index, ni.Generation = int32(i), 1
	}
	for _, withList := range []bool{false, true} {
		for _, unresolvable := range []bool{false, true} {
			f := &Fit{unresolvable: unresolvable}
			if withList {
				// Amounts by position: the list is the handle's; nodes
				// change between rounds (their Generation moves), and
				// one position gets another NodeInfo.
				f.handle = &listHandle{nodes: nodes}
			}
			checked += scalarRounds(t, r, f, nodes, res, names)
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}

// listHandle is a Handle that only lists nodes.
type listHandle struct {
	framework.Handle
	nodes []*framework.NodeInfo
}

func (h *listHandle) Nodes() []*framework.NodeInfo { return h.nodes }

func scalarRounds(t *testing.T, r *rand.Rand, f *Fit, nodes []*framework.NodeInfo, res func(int64, float64) framework.Resource, names []v1.ResourceName) int {
	checked := 0
	unresolvable := f.unresolvable
	{
		for round := 0; round < 400; round++ {
			if round%10 == 5 {
				k := r.IntN(len(nodes))
				ni := nodes[k]
				if r.IntN(3) == 0 {
					// Another NodeInfo at the position, at the same Generation.
					nodes[k] = &framework.NodeInfo{Allocatable: res(8, 0.6), Requested: res(6, 0.5), Index: ni.Index, Generation: ni.Generation}
				} else {
					ni.Requested = res(6, 0.5)
					ni.Generation++
				}
			}
			req := res(5, 0.5)
			if len(req.ScalarResources) == 0 {
				req.ScalarResources = map[v1.ResourceName]int64{names[r.IntN(len(names))]: r.Int64N(3)}
			}
			pi := &framework.PodInfo{Pod: &v1.Pod{}, Requests: req}
			cs := framework.NewCycleState()
			f.PreFilter(cs, pi, nil)
			for _, ni := range nodes {
				got, want := f.Filter(cs, pi, ni), f.filterWithScalars(&req, ni)
				if got.Code() != want.Code() || got.Message() != want.Message() {
					t.Fatalf("unresolvable=%v round %d: request %+v node alloc %+v used %+v pods %d: got %v %q, Fits %v %q",
						unresolvable, round, req, ni.Allocatable, ni.Requested, len(ni.Pods), got.Code(), got.Message(), want.Code(), want.Message())
				}
				checked++
			}
		}
	}
	return checked
}
