package noderesources

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// Quantities beyond int64 do not saturate upstream: Quantity.Value() and
// MilliValue() return 0 for an int64 amount that overflows when scaled
// (1e100), the low 64 bits for a big decimal (10E), and binary suffixes are
// capped at math.MaxInt64 when parsed. kube-scheduler adds these int64s as
// they are. These outcomes were checked against the genuine scheduler
// (conformance/diff TestExtremeQuantities, regressions/huge-quantities.yaml).
func TestFitAtInt64Limits(t *testing.T) {
	node := plugintest.SizedNode("n", "2", "8Gi", 110)
	tests := []struct {
		name, cpu, memory string
		wantMsg           string // "" when the pod fits
	}{
		{name: "memory 1e100 reads as 0", memory: "1e100"},
		{name: "cpu 1e100 reads as 0", cpu: "1e100"},
		{name: "memory 1e30 reads as 0", memory: "1e30"},
		{name: "memory 10E wraps negative", memory: "1e19"},
		{name: "memory MaxInt64", memory: "9223372036854775807", wantMsg: "Insufficient memory"},
		{name: "memory 100Ei is capped at MaxInt64", memory: "100Ei", wantMsg: "Insufficient memory"},
		{name: "memory MaxInt64+1 wraps to MinInt64", memory: "9223372036854775808"},
		{name: "cpu 1E: its milli value overflows to 0", cpu: "1E"},
		{name: "cpu MaxInt64 millicores", cpu: "9223372036854775807m", wantMsg: "Insufficient cpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := plugintest.NewVersionHandle("1.36", nil)
			ni := plugintest.NodeInfos(h.Feats, []*v1.Node{node})[0]
			pl := NewFit(h).(*Fit)
			cs := framework.NewCycleState()
			pi := framework.NewPodInfo(plugintest.SizedPod("p", tt.cpu, tt.memory), true)
			pl.PreFilter(cs, pi, nil)
			if st := pl.Filter(cs, pi, ni); st.Message() != tt.wantMsg {
				t.Fatalf("filter: %q, want %q", st.Message(), tt.wantMsg)
			}
		})
	}
}

var extremeValues = []string{
	"9223372036854775807", "9223372036854775808", "4611686018427387904", "5e18", "1e19", "1e100",
	"8Ei", "100Ei", "9223372036854775807m", "1E", "1", "100m", "1Gi",
}

func randomExtremePod(r *rand.Rand, i int) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p", i), Namespace: "default", UID: types.UID(fmt.Sprint("u", i))}}
	for c := 0; c < 1+r.Intn(3); c++ {
		req := v1.ResourceList{}
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, "example.com/gpu"} {
			if r.Intn(2) == 0 {
				req[name] = resource.MustParse(extremeValues[r.Intn(len(extremeValues))])
			}
		}
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: fmt.Sprint("c", c), Resources: v1.ResourceRequirements{Requests: req}})
	}
	return p
}

// TestExtremeSumsProperties: with several huge pods on a node, the sums wrap
// as int64 sums do (no panic, no saturation), removing the pods restores the
// node exactly, Filter agrees with upstream's fitsRequest comparison on the
// wrapped values, and Score either lands in [0, 100] or is the out-of-range
// value upstream reports.
func TestExtremeSumsProperties(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	h := plugintest.NewVersionHandle("1.36", nil)
	for round := 0; round < 300; round++ {
		node := plugintest.SizedNode("n", extremeValues[r.Intn(len(extremeValues))], extremeValues[r.Intn(len(extremeValues))], 110)
		ni := plugintest.NodeInfos(h.Feats, []*v1.Node{node})[0]
		var pods []*v1.Pod
		var wantMem, wantCPU int64
		for i := 0; i < 1+r.Intn(5); i++ {
			p := randomExtremePod(r, i)
			pi := framework.NewPodInfo(p, true)
			wantMem += pi.Requests.Memory // int64 wrap-around, as upstream's Resource.Add
			wantCPU += pi.Requests.MilliCPU
			ni.AddPod(pi)
			pods = append(pods, p)
		}
		if ni.Requested.Memory != wantMem || ni.Requested.MilliCPU != wantCPU {
			t.Fatalf("round %d: requested %d/%d, want the wrapped sums %d/%d", round, ni.Requested.MilliCPU, ni.Requested.Memory, wantCPU, wantMem)
		}
		incoming := framework.NewPodInfo(randomExtremePod(r, 99), true)
		pl := NewFit(h).(*Fit)
		cs := framework.NewCycleState()
		pl.PreFilter(cs, incoming, nil)
		st := pl.Filter(cs, incoming, ni)
		req, alloc, used := incoming.Requests, ni.Allocatable, ni.Requested
		// upstream's fitsRequest: want > 0 && want > allocatable - requested, on int64s.
		var want []string
		short := func(name string, w, capacity, inUse int64) {
			if w > 0 && w > capacity-inUse {
				want = append(want, "Insufficient "+name)
			}
		}
		short("cpu", req.MilliCPU, alloc.MilliCPU, used.MilliCPU)
		short("memory", req.Memory, alloc.Memory, used.Memory)
		short("example.com/gpu", req.ScalarResources["example.com/gpu"], 0, used.ScalarResources["example.com/gpu"])
		if got := st.Message(); got != strings.Join(want, ", ") {
			t.Fatalf("round %d: filter %q, want %q", round, got, strings.Join(want, ", "))
		}
		if score, _ := pl.Score(cs, incoming, ni); score < framework.MinNodeScore || score > framework.MaxNodeScore {
			cpu, mem := scoreRequest(incoming)
			want := leastAllocated([2]int64{ni.NonZeroRequested.MilliCPU + cpu, ni.NonZeroRequested.Memory + mem},
				[2]int64{alloc.MilliCPU, alloc.Memory})
			if score != want {
				t.Fatalf("round %d: out-of-range score %d, want upstream's %d", round, score, want)
			}
		}
		for _, p := range pods {
			ni.RemovePod(p)
		}
		if ni.Requested.Memory != 0 || ni.Requested.MilliCPU != 0 || ni.NonZeroRequested.Memory != 0 ||
			ni.NonZeroRequested.MilliCPU != 0 || ni.Requested.ScalarResources["example.com/gpu"] != 0 {
			t.Fatalf("round %d: removing every pod left %+v / %+v", round, ni.Requested, ni.NonZeroRequested)
		}
	}
}
