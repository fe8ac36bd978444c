// Package parallel spreads independent per-item work over the CPUs.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls fn(i) for every i in [0, n): one by one when n is below from
// (small inputs are not worth the goroutines) or there is one CPU, else on
// up to GOMAXPROCS goroutines taking small chunks in turn. fn must only
// write what belongs to item i (a slot of a result slice); the caller then
// reads results in index order, so nothing depends on the schedule.
func For(n, from int, fn func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < from || workers < 2 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	const chunk = 16
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(chunk)) - chunk
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+chunk, n); i++ {
					fn(i)
				}
			}
		}()
	}
	wg.Wait()
}
