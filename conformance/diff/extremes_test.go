package diff

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/berth-sim/berth/conformance/generator"
)

// extremeQuantities are values at and beyond int64's limits, in the forms a
// manifest can take: plain integers around math.MaxInt64, decimal exponents
// (int64 amounts that overflow when scaled), binary suffixes (capped at
// math.MaxInt64 when parsed), milli values whose milli form overflows.
var extremeQuantities = []string{
	"9223372036854775807", "9223372036854775806", "9223372036854775808", "9300000000000000000",
	"4611686018427387904", "4611686018427387903", "5e18", "1e18", "1e19", "10e18", "1e30", "1e100",
	"8Ei", "7Ei", "100Ei", "9223372036854775807m", "9223372036854775k", "1P", "1E", "2E", "0.5", "1", "100m", "1Gi",
}

// extremeScenario is one node and several pods, each with one to three
// containers drawn from extremeQuantities: the pods that bind add their
// requests up on the node. One node because with several, which node's
// out-of-range score upstream reports first is a race of its goroutines.
func extremeScenario(seed int64) string {
	r := rand.New(rand.NewSource(seed))
	q := func() string { return extremeQuantities[r.Intn(len(extremeQuantities))] }
	var b strings.Builder
	fmt.Fprintf(&b, "# berth-conformance: name=extremes-%d kubernetesVersion=1.3%d percentageOfNodesToScore=100\n", seed, 4+r.Intn(3))
	b.WriteString("---\napiVersion: v1\nkind: Namespace\nmetadata: {name: default, labels: {kubernetes.io/metadata.name: default}}\n")
	alloc := fmt.Sprintf("{cpu: %q, memory: %q, pods: \"110\"}", q(), q())
	fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-000, labels: {kubernetes.io/hostname: node-000}}\n"+
		"status:\n  allocatable: %s\n  capacity: %s\n  conditions: [{type: Ready, status: \"True\"}]\n", alloc, alloc)
	for p := 0; p < 2+r.Intn(5); p++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: default}\nspec:\n  containers:\n", p)
		for c := 0; c < 1+r.Intn(3); c++ {
			var req []string
			if r.Intn(3) > 0 {
				req = append(req, fmt.Sprintf("cpu: %q", q()))
			}
			if r.Intn(3) > 0 {
				req = append(req, fmt.Sprintf("memory: %q", q()))
			}
			fmt.Fprintf(&b, "  - {name: c%d, image: nginx, resources: {requests: {%s}}}\n", c, strings.Join(req, ", "))
		}
	}
	return b.String()
}

// TestExtremeQuantities compares berth with the genuine kube-scheduler on
// requests and allocatable at int64's limits: placements, filter verdicts,
// scores and messages must agree (upstream wraps; it does not saturate).
func TestExtremeQuantities(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 8
	}
	var compared, scheduled, unschedulable int
	defer func() {
		t.Logf("%d pods compared: %d scheduled, %d unschedulable", compared, scheduled, unschedulable)
		if compared == 0 || scheduled == 0 || unschedulable == 0 {
			t.Error("the scenarios should both bind and refuse pods")
		}
	}()
	for seed := int64(0); seed < int64(n); seed++ {
		sc, err := generator.Read([]byte(extremeScenario(seed)))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		rep, err := runScenario(sc, Exact)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		compared, scheduled, unschedulable = compared+rep.Compared, scheduled+rep.Scheduled, unschedulable+rep.Unschedulable
		if rep.First != nil {
			t.Errorf("seed %d: %v\n%s", seed, rep.First, extremeScenario(seed))
		}
	}
}
