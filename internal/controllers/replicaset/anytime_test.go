package replicaset

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/sim"
)

// TestClockFreePassHoldsLater checks the claim behind DoneAnyTime: when a
// pass that changed nothing says the clock did not matter to it, a pass at
// any later instant over the same objects changes nothing and queues no
// timer. Worlds are sets of random sizes and minReadySeconds, stopped at
// random instants of their rollout (some pods ready but not yet available).
func TestClockFreePassHoldsLater(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	outcomes := map[bool]int{}
	for world := 0; world < 60; world++ {
		s := controllertest.NewState()
		controllertest.AddNode(s, "n1", "64", "256Gi", nil)
		for i := rng.Intn(3); i >= 0; i-- {
			rs := newRS(int32(rng.Intn(4)))
			rs.Name = fmt.Sprintf("web%d", i)
			rs.Spec.MinReadySeconds = []int32{0, 5, 30}[rng.Intn(3)]
			if err := admission.Create(s, rs); err != nil {
				t.Fatal(err)
			}
		}
		if err := sim.Advance(s, ctrls(), time.Duration(rng.Intn(40))*time.Second); err != nil {
			t.Fatal(err)
		}
		c := New()
		for round := 0; ; round++ {
			changed, err := c.Sync(s)
			if err != nil {
				t.Fatal(err)
			}
			if !changed {
				break
			}
			if round > 10 {
				t.Fatal("the ReplicaSet controller does not settle")
			}
		}
		rv, timers := s.ResourceVersion, len(s.Timers)
		s.Now = s.Now.Add(time.Duration(1+rng.Intn(120)) * time.Second)
		// Skipped at a later instant: the last pass was clock-free.
		anyTime := c.quiet.Skip(s)
		outcomes[anyTime]++
		if !anyTime {
			continue
		}
		changed, err := New().Sync(s)
		if err != nil || changed || s.ResourceVersion != rv || len(s.Timers) != timers {
			t.Fatalf("world %d: a later pass changed %v (err %v, rv %d -> %d, timers %d -> %d) after a clock-free one",
				world, changed, err, rv, s.ResourceVersion, timers, len(s.Timers))
		}
	}
	if outcomes[true] == 0 || outcomes[false] == 0 {
		t.Fatalf("worlds gave one outcome only: %v", outcomes)
	}
}
