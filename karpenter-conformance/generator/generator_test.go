package generator

import (
	"bytes"
	"testing"

	"github.com/berth-sim/berth/karpenter-conformance/scenario"
)

func TestSeeded(t *testing.T) {
	a, _ := scenario.Marshal(Small(42))
	b, _ := scenario.Marshal(Small(42))
	c, _ := scenario.Marshal(Small(43))
	if !bytes.Equal(a, b) {
		t.Error("Small(42) differs between calls")
	}
	if bytes.Equal(a, c) {
		t.Error("Small(42) and Small(43) are identical")
	}
}

func TestSmallShape(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		sc := Small(seed)
		if n := len(sc.NodePools); n < 1 || n > 3 {
			t.Errorf("seed %d: %d pools", seed, n)
		}
		if n := len(sc.Pods); n < 5 || n > 50 {
			t.Errorf("seed %d: %d pods", seed, n)
		}
		names := map[string]bool{}
		for _, p := range sc.Pods {
			if names[p.Name] {
				t.Errorf("seed %d: duplicate pod %s", seed, p.Name)
			}
			names[p.Name] = true
		}
	}
}
