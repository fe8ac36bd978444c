package generator

import "testing"

// A fair share of small scenarios carry storage, and their pods use it.
func TestVolumesGenerated(t *testing.T) {
	scenarios, pods, kinds := 0, 0, map[string]bool{}
	for seed := uint64(0); seed < 100; seed++ {
		sc := Small(seed)
		if len(sc.PersistentVolumeClaims) == 0 {
			continue
		}
		scenarios++
		for _, pv := range sc.PersistentVolumes {
			switch {
			case pv.Spec.AWSElasticBlockStore != nil:
				kinds["in-tree"] = true
			case pv.Spec.CSI != nil:
				kinds["csi"] = true
			case pv.Spec.Local != nil:
				kinds["local"] = true
			}
		}
		for _, p := range sc.Pending {
			for _, v := range p.Spec.Volumes {
				if v.PersistentVolumeClaim != nil {
					pods++
					break
				}
			}
		}
	}
	if scenarios < 20 || pods < 50 || len(kinds) != 3 {
		t.Fatalf("%d scenarios with storage, %d pending pods with claims, volume kinds %v", scenarios, pods, kinds)
	}
	// Volumes come from their own random source: the rest is unchanged.
	a, b := Small(7), Small(7)
	if len(a.PersistentVolumes) != len(b.PersistentVolumes) || len(a.Pending) != len(b.Pending) {
		t.Fatal("generation is not deterministic")
	}
}
