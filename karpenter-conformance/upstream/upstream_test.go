package upstream_test

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/berth-sim/berth/karpenter-conformance/generator"
	"github.com/berth-sim/berth/karpenter-conformance/scenario"
	"github.com/berth-sim/berth/karpenter-conformance/upstream"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
)

// TestUpstreamRuns runs genuine Karpenter on 20 generated scenarios with every
// constraint kind and checks each outcome is sane and that the scenario
// survives its YAML round trip. Upstream breaks topology ties by
// map order, so these may have several outcomes; their number is logged.
func TestUpstreamRuns(t *testing.T) {
	var claims, existing, errs, multi int
	for seed := uint64(1); seed <= 20; seed++ {
		sc := generator.Small(seed)
		outcomes, err := upstream.Outcomes(sc, 3)
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		for _, o := range outcomes {
			checkSane(t, sc, o.Result)
		}
		if len(outcomes) > 1 {
			multi++
		}
		res := outcomes[0].Result
		// Upstream's outcome space can be large here, so the round trip is
		// checked on the scenario itself (results: TestUpstreamDeterministic).
		a, _ := scenario.Marshal(sc)
		b, _ := scenario.Marshal(roundTrip(t, sc))
		if string(a) != string(b) {
			t.Errorf("%s: scenario changes after a YAML round trip", sc.Name)
		}
		claims += len(res.NodeClaims)
		existing += len(res.Existing)
		errs += len(res.Errors)
	}
	t.Logf("20 scenarios: %d nodeclaims, %d pods on existing nodes, %d pod errors; %d scenarios with more than one outcome in 3 runs",
		claims, existing, errs, multi)
	// The generator is meant to exercise all three outcomes.
	if claims == 0 || existing == 0 || errs == 0 {
		t.Errorf("generator too narrow: %d claims, %d existing placements, %d errors", claims, existing, errs)
	}
}

// TestUpstreamDeterministic: without topology-tie constraints genuine
// Karpenter's (canonicalised) result is the same run after run.
func TestUpstreamDeterministic(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		sc := generator.SmallWith(fmt.Sprintf("notopo-seed-%d", seed), seed, generator.NoTopology)
		first, err := upstream.Run(sc)
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		checkSane(t, sc, first)
		for range 2 {
			again, err := upstream.Run(sc)
			if err != nil {
				t.Fatalf("%s: %v", sc.Name, err)
			}
			if !reflect.DeepEqual(first, again) {
				a, _ := scenario.Marshal(first)
				b, _ := scenario.Marshal(again)
				t.Fatalf("%s: two runs differ:\n%s\n---\n%s", sc.Name, a, b)
			}
		}
		if viaYAML, err := upstream.Run(roundTrip(t, sc)); err != nil || !reflect.DeepEqual(first, viaYAML) {
			t.Errorf("%s: result changes after a YAML round trip (err %v)", sc.Name, err)
		}
	}
}

func roundTrip(t *testing.T, sc *scenario.Scenario) *scenario.Scenario {
	t.Helper()
	data, err := scenario.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := scenario.Load(data)
	if err != nil {
		t.Fatalf("%s: reload: %v", sc.Name, err)
	}
	return loaded
}

func checkSane(t *testing.T, sc *scenario.Scenario, res *scenario.Result) {
	t.Helper()
	pools := map[string]bool{}
	for _, np := range sc.NodePools {
		pools[np.Name] = true
	}
	nodes := map[string]bool{}
	for _, n := range sc.Nodes {
		nodes[n.Node.Name] = true
	}
	seen := map[string]int{}
	for i, c := range res.NodeClaims {
		if !pools[c.NodePool] {
			t.Errorf("%s: claim %d from unknown pool %q", sc.Name, i, c.NodePool)
		}
		if n := len(c.InstanceTypes); n == 0 || n > scheduling.MaxInstanceTypes || n != len(c.Prices) {
			t.Errorf("%s: claim %d has %d instance types, %d prices", sc.Name, i, n, len(c.Prices))
		}
		for j := 1; j < len(c.Prices); j++ {
			if c.Prices[j] < c.Prices[j-1] {
				t.Errorf("%s: claim %d instance types not in price order at %d", sc.Name, i, j)
			}
		}
		if len(c.Pods) == 0 {
			t.Errorf("%s: claim %d has no pods", sc.Name, i)
		}
		if c.Launch.InstanceType == "" || math.IsInf(c.Launch.Price, 0) {
			t.Errorf("%s: claim %d has no launch offering", sc.Name, i)
		}
		found := false
		for _, it := range c.InstanceTypes {
			found = found || it == c.Launch.InstanceType
		}
		if !found {
			t.Errorf("%s: claim %d launches %s, not among its instance types", sc.Name, i, c.Launch.InstanceType)
		}
		for _, p := range c.Pods {
			seen[p]++
		}
	}
	for _, e := range res.Existing {
		if !nodes[e.Node] {
			t.Errorf("%s: %s placed on unknown node %s", sc.Name, e.Pod, e.Node)
		}
		seen[e.Pod]++
	}
	for _, e := range res.Errors {
		if e.Error == "" {
			t.Errorf("%s: %s has an empty error", sc.Name, e.Pod)
		}
		seen[e.Pod]++
	}
	for _, p := range sc.Pods {
		if k := scenario.PodKey(p); seen[k] != 1 {
			t.Errorf("%s: pod %s accounted for %d times", sc.Name, k, seen[k])
		}
	}
	if len(seen) != len(sc.Pods) {
		t.Errorf("%s: result names %d pods, scenario has %d pending", sc.Name, len(seen), len(sc.Pods))
	}
}

// BenchmarkSolveMixed1000 is the baseline for the side-by-side comparison:
// genuine Solve on 1,000 mixed pods over the full catalog.
func BenchmarkSolveMixed1000(b *testing.B) {
	sc := generator.Mixed(1000, 1)
	var solve, pass float64
	var claims, n int
	for b.Loop() {
		res, timing, err := upstream.RunTimed(sc)
		if err != nil {
			b.Fatal(err)
		}
		solve += float64(timing.Solve.Microseconds()) / 1000
		pass += float64(timing.Schedule.Microseconds()) / 1000
		claims += len(res.NodeClaims)
		n++
	}
	b.ReportMetric(solve/float64(n), "solve-ms")
	b.ReportMetric(pass/float64(n), "pass-ms")
	b.ReportMetric(float64(claims)/float64(n), "nodeclaims")
}
