package provisioning

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// sortByPods must leave claims in exactly the order Karpenter's sort.Slice
// leaves them, equal pod counts included: random lists, sorted ones, and
// the solve's usual case, a sorted list where a claim or a few just took a
// pod or a new claim was appended; short lists and lists of 50 and more
// (where pdqsort's nearly-sorted pass can apply).
func TestSortByPodsMatchesSortSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		n := 1 + rng.IntN(300)
		if trial%2 == 0 {
			n = 1 + rng.IntN(60)
		}
		counts := make([]int, n)
		for i := range counts {
			counts[i] = rng.IntN(1 + rng.IntN(1+n/2))
		}
		switch trial % 5 {
		case 1: // sorted
			sort.Ints(counts)
		case 2: // sorted, then one claim takes a pod
			sort.Ints(counts)
			counts[rng.IntN(n)]++
		case 3: // sorted, then a few claims take pods
			sort.Ints(counts)
			for range 1 + rng.IntN(8) {
				counts[rng.IntN(n)]++
			}
		case 4: // sorted, then a new claim with one pod at the end
			sort.Ints(counts)
			counts[n-1] = 1
		}
		a, b := claimsWithCounts(counts), claimsWithCounts(counts)
		sort.Slice(a, func(i, j int) bool { return len(a[i].pods) < len(a[j].pods) })
		refs := make([]claimRef, len(b))
		for i, n := range b {
			refs[i] = claimRef{pods: len(n.pods), index: i}
		}
		sortByPods(refs, new([]claimRef))
		for i := range a {
			if got := b[refs[i].index].hostname; a[i].hostname != got {
				t.Fatalf("trial %d, counts %v: position %d is %s after sort.Slice, %s after sortByPods", trial, counts, i, a[i].hostname, got)
			}
		}
	}
}

func claimsWithCounts(counts []int) []*nodeClaim {
	out := make([]*nodeClaim, len(counts))
	for i, c := range counts {
		out[i] = &nodeClaim{hostname: fmt.Sprintf("claim-%d", i), pods: make([]*corev1.Pod, c)}
	}
	return out
}

// The solve's usual list takes the nearly-sorted path rather than the sort.
func TestSortByPodsNearlySortedPath(t *testing.T) {
	counts := make([]int, 100)
	for i := range counts {
		counts[i] = i / 10 // runs of ten equal counts
	}
	counts[41]++ // claim 41 took a pod: it now belongs after claims 42-49
	refs := make([]claimRef, len(counts))
	for i, c := range counts {
		refs[i] = claimRef{pods: c}
	}
	if !samplesInOrder(refs) {
		t.Fatal("pivot samples should all be in order")
	}
	if !boundedInsertionPass(refs) || !inOrder(refs) {
		t.Fatal("the bounded insertion pass should order the list")
	}
}
