package berthrun

import (
	"os"
	"reflect"
	"testing"

	"github.com/berth-sim/berth/karpenter-conformance/generator"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// TestDecideMatchesSplit checks the timed split (Prepare, Solve, truncate)
// is provisioner.Decide: the agreement test measures Decide's behaviour.
func TestDecideMatchesSplit(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		sc := generator.Small(seed)
		a, err := Run(sc)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Decide(sc)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("seed %d: split and Decide differ:\n%+v\n%+v", seed, a, b)
		}
		if len(a.NodeClaims)+len(a.Existing)+len(a.Errors) == 0 && len(sc.Pods) > 0 {
			t.Errorf("seed %d: empty result for %d pods", seed, len(sc.Pods))
		}
	}
}
