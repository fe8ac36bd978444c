package berthrun

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/berth-sim/berth/conformance/generator"
	"github.com/berth-sim/berth/conformance/scenario"
	"github.com/berth-sim/berth/internal/cluster"
)

// TestSimulationDecidesAsTheRealCycle is the seam's decision-equality test:
// on the generator's scenarios, before each pending pod's real attempt
// (created in the cluster, scheduled by Sync), the side-effect-free
// simulation is asked about the same pod. Both must report the same
// decision, the same verdict and score for every node, the same victims,
// and leave the same search start and random source; the simulation must
// not have written to the cluster.
func TestSimulationDecidesAsTheRealCycle(t *testing.T) {
	var scenarios []*scenario.Scenario
	for seed := uint64(1); seed <= 150; seed++ {
		scenarios = append(scenarios, generator.Small(seed))
	}
	for seed := uint64(1); seed <= 6; seed++ {
		scenarios = append(scenarios, generator.Large(seed))
	}
	pods, preemptions := 0, 0
	for _, sc := range scenarios {
		r := load(t, sc)
		s := r.state
		for i, pod := range sc.Pending {
			p := pod.DeepCopy()
			p.Spec.NodeName = ""
			stamp(s, p)
			key := cluster.Key(p.Namespace, p.Name)
			s.Pods[key] = p

			var before []byte
			if i%5 == 0 { // the whole state is compared on a sample of attempts
				before = mustJSON(t, s)
			}
			sim, err := r.sched.Simulate(s)
			if err != nil {
				t.Fatal(err)
			}
			simulated := sim.Schedule(p)
			var carried cluster.State
			sim.Advance(&carried)
			if before != nil && string(mustJSON(t, s)) != string(before) {
				t.Fatalf("%s pod %s: the simulation wrote to the cluster", sc.Name, key)
			}

			if _, err := r.sched.Sync(s); err != nil {
				t.Fatal(err)
			}
			real := r.sched.LastDiagnosis(key)
			if real == nil {
				t.Fatalf("%s pod %s was not attempted", sc.Name, key)
			}
			got, want := Result(s, r.sched.ScoreWeights(), key, simulated), Result(s, r.sched.ScoreWeights(), key, real)
			if !reflect.DeepEqual(got, want) || simulated.Message != real.Message {
				t.Fatalf("%s pod %s:\nsimulated %+v\nreal      %+v", sc.Name, key, got, want)
			}
			if carried.Scheduler.NextStartNodeIndex != s.Scheduler.NextStartNodeIndex || carried.Rand != s.Rand {
				t.Fatalf("%s pod %s: simulated search start %d rand %v, real %d %v", sc.Name, key,
					carried.Scheduler.NextStartNodeIndex, carried.Rand, s.Scheduler.NextStartNodeIndex, s.Rand)
			}
			pods++
			if len(real.Victims) > 0 {
				preemptions++
			}
			if p.Spec.NodeName == "" { // one attempt per pod, as the harness runs them
				delete(s.Pods, key)
				delete(s.Scheduler.Queue, key)
			}
			s.Timers, s.Events = nil, nil
		}
	}
	if pods < 1000 || preemptions == 0 {
		t.Fatalf("compared %d attempts with %d preemptions; the scenarios should give more", pods, preemptions)
	}
	t.Logf("%d scenarios, %d attempts, %d with preemption: simulation and cycle agree", len(scenarios), pods, preemptions)
}

func mustJSON(t *testing.T, s *cluster.State) []byte {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
