package provisioning

import (
	"math/rand/v2"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// sortByPods must leave claims in exactly the order Karpenter's sort.Slice
// leaves them, equal pod counts included: random lists, nearly sorted lists
// (one claim just gained a pod, the solve's usual case) and sorted ones.
func TestSortByPodsMatchesSortSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		n := 1 + rng.IntN(80)
		counts := make([]int, n)
		for i := range counts {
			counts[i] = rng.IntN(1 + n/4)
		}
		switch trial % 3 {
		case 1: // sorted
			sort.Ints(counts)
		case 2: // sorted, then one claim takes a pod
			sort.Ints(counts)
			counts[rng.IntN(n)]++
		}
		a, b := claimsWithCounts(counts), claimsWithCounts(counts)
		sort.Slice(a, func(i, j int) bool { return len(a[i].pods) < len(a[j].pods) })
		refs := make([]claimRef, len(b))
		for i, n := range b {
			refs[i] = claimRef{pods: len(n.pods), claim: n}
		}
		sortByPods(refs)
		for i := range a {
			if a[i].hostname != refs[i].claim.hostname {
				t.Fatalf("trial %d, counts %v: position %d is %s after sort.Slice, %s after sortByPods", trial, counts, i, a[i].hostname, refs[i].claim.hostname)
			}
		}
	}
}

func claimsWithCounts(counts []int) []*nodeClaim {
	out := make([]*nodeClaim, len(counts))
	for i, c := range counts {
		out[i] = &nodeClaim{hostname: string(rune('A'+i%26)) + string(rune('a'+i/26)), pods: make([]*corev1.Pod, c)}
	}
	return out
}
