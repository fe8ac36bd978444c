package main

import (
	"os"
	"runtime"
	"time"

	"github.com/berth-sim/berth/conformance/generator"
	"github.com/berth-sim/berth/conformance/upstream"
	"github.com/berth-sim/berth/internal/benchcpu"
)

// upstreamRun is the genuine kube-scheduler on a file's scenario.
type upstreamRun struct {
	// Cycle is the time spent inside ScheduleOne over every pod; Wall the
	// whole per-pod loop, the harness's waits included.
	Cycle, Wall time.Duration
	// CPU is the process's CPU time over the loop: the scheduler's and the
	// harness's (fake API, informers) together, an upper bound on the
	// scheduler's own on a shared machine where wall time is inflated.
	CPU       time.Duration
	Pods      int
	Scheduled int
	Placement map[string]string
}

// scheduleUpstream reads file as the generator wrote it and schedules its
// pending pods one at a time, in file order, with kube-scheduler in
// process, as the conformance bench does (docs/performance.md): only the
// scheduling cycles count, not loading the objects or the fake API's
// binding round trips.
func scheduleUpstream(file string) (upstreamRun, error) {
	var res upstreamRun
	data, err := os.ReadFile(file)
	if err != nil {
		return res, err
	}
	sc, err := generator.Read(data)
	if err != nil {
		return res, errUnreadable{err}
	}
	up := upstream.New()
	up.SkipNodeVerdicts = true
	defer up.Close()
	if err := up.Load(sc); err != nil {
		return res, err
	}
	runtime.GC()
	res.Pods = len(sc.Pending)
	res.Placement = make(map[string]string, len(sc.Pending))
	cpu0, _ := benchcpu.Process()
	start := time.Now()
	for _, pod := range sc.Pending {
		r, err := up.Schedule(pod, "")
		if err != nil {
			return res, err
		}
		res.Placement[pod.Namespace+"/"+pod.Name] = r.Node
		if r.Node != "" {
			res.Scheduled++
		}
		// A preemption's victims leave their nodes.
		for _, v := range r.Victims {
			if res.Placement[v] != "" {
				res.Placement[v] = ""
				res.Scheduled--
			}
		}
	}
	res.Wall = time.Since(start)
	cpu1, _ := benchcpu.Process()
	res.CPU = cpu1 - cpu0
	res.Cycle = up.CycleTime
	return res, nil
}

// errUnreadable means the upstream harness cannot read the file (it reads
// the generator's kinds: not the Deployments of huge.yaml).
type errUnreadable struct{ err error }

func (e errUnreadable) Error() string { return "not a generated scenario: " + e.err.Error() }
