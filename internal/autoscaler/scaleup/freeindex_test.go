package scaleup

import (
	"math/rand"
	"testing"
)

// TestFreeIndexNextIsPlainWalk: the index's next position is the first the
// plain walk would find among nodes that may take the pod, whatever the
// free amounts, requests and updates (block edges included).
func TestFreeIndexNextIsPlainWalk(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	var x freeIndex
	var cpu, mem []int64
	var pods []int
	for step := 0; step < 3000; step++ {
		if len(cpu) < 200 && (len(cpu) == 0 || r.Intn(4) == 0) {
			c, m, p := r.Int63n(8), r.Int63n(8), r.Intn(3)
			x.set(len(cpu), c, m, p)
			cpu, mem, pods = append(cpu, c), append(mem, m), append(pods, p)
			continue
		}
		i := r.Intn(len(cpu))
		c, m, p := r.Int63n(8), r.Int63n(8), r.Intn(3)
		x.set(i, c, m, p)
		cpu[i], mem[i], pods[i] = c, m, p
		from := r.Intn(len(cpu))
		to := from + r.Intn(len(cpu)-from+1)
		wc, wm := r.Int63n(9)-1, r.Int63n(9)-1
		want := -1
		for k := from; k < to; k++ {
			if mayFit(cpu[k], mem[k], pods[k], wc, wm) {
				want = k
				break
			}
		}
		if got := x.next(from, to, wc, wm); got != want {
			t.Fatalf("step %d: next(%d, %d, %d, %d) = %d, want %d", step, from, to, wc, wm, got, want)
		}
	}
}
