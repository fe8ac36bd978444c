package provisioning

import (
	"cmp"
	"slices"
)

// Before each pod the solver orders its NodeClaims by pod count, as
// Karpenter does with sort.Slice. That sort is unstable, so claims with
// equal counts end in an order that depends on the algorithm (Go's
// pdqsort), and berth must reproduce it exactly: the first claim that takes
// the pod wins. slices.SortFunc runs the same pdqsort as sort.Slice (both
// are generated from one template), on the same keys, so it gives the same
// order. Sorting a thousand claims for each of ten thousand pods was a
// fifth of the solve, though, and between two pods at most one claim has
// changed (it took the last pod), so the list is almost always in order
// but for one claim. For those lists pdqsort's outcome is known without
// running it; sortByPods computes it directly and runs the real sort in
// every other case (docs/karpenter-provisioning.md#speed-without-different-answers).

// claimRef is a NodeClaim's pod count and its index in the solver's
// claims (creation order). The ordering compares integers in one array
// rather than reaching into each claim, and moves no pointers, so the
// garbage collector neither scans the array nor is told of each move.
type claimRef struct {
	pods, index int
}

// sortByPods orders the claims by pod count exactly as sort.Slice would.
//
// pdqsort starts by sampling positions to choose a pivot: a quarter, a half
// and three quarters of the way in, each with its neighbours when the list
// has 50 or more elements. When every sampled pair is already in order it
// takes the list for nearly sorted and first tries a bounded insertion
// pass: at most five out-of-order neighbours, each swapped and the pair's
// elements shifted left and right to their places. If that leaves the list
// in order, pdqsort is done, and this function applies the same pass; in
// any other case (shorter lists, a sampled pair out of order, a pass that
// does not finish) it runs the sort itself. A list already in order is
// left as it is in both.
// The pass is tried on a copy in *scratch (a buffer kept between calls), so
// the real sort still sees the list as it was when the pass fails.
func sortByPods(claims []claimRef, scratch *[]claimRef) {
	if inOrder(claims) {
		return
	}
	if len(claims) >= 50 && samplesInOrder(claims) {
		*scratch = append((*scratch)[:0], claims...)
		if boundedInsertionPass(*scratch) {
			copy(claims, *scratch)
			return
		}
	}
	slices.SortFunc(claims, func(a, b claimRef) int { return cmp.Compare(a.pods, b.pods) })
}

func inOrder(claims []claimRef) bool {
	for i := 1; i < len(claims); i++ {
		if claims[i].pods < claims[i-1].pods {
			return false
		}
	}
	return true
}

// samplesInOrder tells whether pdqsort's pivot sampling on a list of 50 or
// more finds every pair it compares in order: each sampled position with
// its neighbours, then the three samples.
func samplesInOrder(c []claimRef) bool {
	q := len(c) / 4
	for _, x := range []int{q, q * 2, q * 3} {
		if c[x].pods < c[x-1].pods || c[x+1].pods < c[x].pods {
			return false
		}
	}
	return c[q].pods <= c[q*2].pods && c[q*2].pods <= c[q*3].pods
}

// boundedInsertionPass is pdqsort's pass for nearly sorted lists of 50 or
// more: up to five times, find the next pair out of order, swap it, move
// the smaller element left and the larger one right while they are out of
// order; true when the list ends in order. It changes c either way.
func boundedInsertionPass(c []claimRef) bool {
	i := 1
	for range 5 {
		for i < len(c) && c[i].pods >= c[i-1].pods {
			i++
		}
		if i == len(c) {
			return true
		}
		c[i], c[i-1] = c[i-1], c[i]
		if i >= 2 {
			for j := i - 1; j >= 1 && c[j].pods < c[j-1].pods; j-- {
				c[j], c[j-1] = c[j-1], c[j]
			}
		}
		if len(c)-i >= 2 {
			for j := i + 1; j < len(c) && c[j].pods < c[j-1].pods; j++ {
				c[j], c[j-1] = c[j-1], c[j]
			}
		}
	}
	return false
}
