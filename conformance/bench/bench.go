// Package bench runs berth and the genuine kube-scheduler side by side on the
// generator's benchmark profiles: it times each scheduler alone and then
// checks, in a separate un-timed pass, that berth decides what upstream did.
//
// How each side is timed, the way it really runs:
//
//   - upstream schedules the pods one at a time through its own queue and
//     ScheduleOne (upstream.Runner). Its figure counts only the time spent
//     inside ScheduleOne (Runner.CycleTime): the harness's per-pod work —
//     creating the pod in the fake API, waiting for the informer to put it in
//     activeQ, waiting for the asynchronous binding cycle and for the cache to
//     confirm it — is excluded. That is the rate a real scheduler reaches when
//     binding overlaps the next cycle; the wall time of the whole loop is
//     reported too. Per-node verdicts are not collected.
//   - berth gets every pending pod at once and runs its scheduler
//     controller's Sync a single time, as berth apply's settle loop does:
//     one attempt per pod in queue order, without per-node score records.
//
// The comparison pass replays upstream's decisions: berth schedules each pod
// alone (berthrun.Runner.Schedule) aligned to upstream's node, and follows
// upstream (Rebind) when that node was outside berth's top set, so both
// clusters stay identical. A pod agrees when both scheduled it or both
// reported the identical FailedScheduling message; with
// percentageOfNodesToScore 100 berth's top-scoring set must also equal
// upstream's (so any node berth picks is one upstream could have picked).
package bench

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/berth-sim/berth/conformance/berthrun"
	"github.com/berth-sim/berth/conformance/diff"
	"github.com/berth-sim/berth/conformance/generator"
	"github.com/berth-sim/berth/conformance/scenario"
	"github.com/berth-sim/berth/conformance/upstream"
)

// Case is one generated scenario to run on both sides.
type Case struct {
	Profile    string
	Nodes      int
	Pods       int
	Percentage int32 // percentageOfNodesToScore: 0 adaptive, 100 all nodes
	Seed       uint64
}

func (c Case) String() string {
	return fmt.Sprintf("%s %d nodes / %d pods at %s", c.Profile, c.Nodes, c.Pods, c.PercentageString())
}

// PercentageString is "adaptive" or the percentage.
func (c Case) PercentageString() string {
	if c.Percentage == 0 {
		return "adaptive"
	}
	return fmt.Sprintf("%d%%", c.Percentage)
}

// Options tune a run.
type Options struct {
	// CPUProfile, when not empty, is the file that receives the CPU profile
	// of berth's timed Sync.
	CPUProfile string
	// SkipCompare leaves out the comparison pass.
	SkipCompare bool
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Result is what one case measured.
type Result struct {
	Case
	// UpstreamCycle is upstream's time inside ScheduleOne; UpstreamWall the
	// wall time of its whole per-pod loop, harness waits included.
	UpstreamCycle, UpstreamWall time.Duration
	// Berth is the time of berth's single Sync over all pending pods.
	Berth time.Duration
	// UpstreamScheduled and BerthScheduled count the pods each timed pass bound.
	UpstreamScheduled, BerthScheduled int
	// Compared pods went through the comparison pass; Agreed of them agreed.
	Compared, Agreed int
	// First is the first disagreement, nil when all agreed.
	First *diff.Disagreement
}

// UpstreamRate is upstream's pods per second of scheduling cycle.
func (r Result) UpstreamRate() float64 { return rate(r.Pods, r.UpstreamCycle) }

// UpstreamWallRate is upstream's pods per second of harness wall time.
func (r Result) UpstreamWallRate() float64 { return rate(r.Pods, r.UpstreamWall) }

// BerthRate is berth's pods per second.
func (r Result) BerthRate() float64 { return rate(r.Pods, r.Berth) }

// Ratio is berth's rate over upstream's.
func (r Result) Ratio() float64 {
	if r.UpstreamRate() == 0 {
		return 0
	}
	return r.BerthRate() / r.UpstreamRate()
}

func rate(pods int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(pods) / d.Seconds()
}

// decision is what upstream's timed pass decided for one pod.
type decision struct {
	node, message string
	top           []string
}

// Run generates the case's scenario and runs the three passes: upstream
// timed, berth timed, then the comparison.
func Run(c Case, opt Options) (Result, error) {
	res := Result{Case: c}
	logf := func(format string, args ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, "%s: "+format+"\n", append([]any{c}, args...)...)
		}
	}
	sc, err := generator.Profile(c.Profile, c.Nodes, c.Pods, c.Seed)
	if err != nil {
		return res, err
	}
	sc.PercentageOfNodesToScore = c.Percentage

	decisions, err := timeUpstream(sc, &res)
	if err != nil {
		return res, err
	}
	logf("upstream %.0f pods/s (cycle), %.0f pods/s (wall), %d scheduled", res.UpstreamRate(), res.UpstreamWallRate(), res.UpstreamScheduled)
	runtime.GC()

	if err := timeBerth(sc, opt.CPUProfile, &res); err != nil {
		return res, err
	}
	logf("berth %.0f pods/s, %d scheduled", res.BerthRate(), res.BerthScheduled)
	runtime.GC()

	if opt.SkipCompare {
		return res, nil
	}
	if err := compare(sc, decisions, &res); err != nil {
		return res, err
	}
	logf("agreement %d/%d", res.Agreed, res.Compared)
	return res, nil
}

// timeUpstream schedules every pending pod with upstream, one at a time.
func timeUpstream(sc *scenario.Scenario, res *Result) ([]decision, error) {
	up := upstream.New()
	up.SkipNodeVerdicts = true
	defer up.Close()
	if err := up.Load(sc); err != nil {
		return nil, err
	}
	runtime.GC()
	decisions := make([]decision, 0, len(sc.Pending))
	start := time.Now()
	for _, pod := range sc.Pending {
		r, err := up.Schedule(pod, "")
		if err != nil {
			return nil, err
		}
		d := decision{node: r.Node, message: r.Message}
		if sc.PercentageOfNodesToScore == 100 {
			d.top = r.TopNodes
		}
		if r.Node != "" {
			res.UpstreamScheduled++
		}
		decisions = append(decisions, d)
	}
	res.UpstreamWall = time.Since(start)
	res.UpstreamCycle = up.CycleTime
	return decisions, nil
}

// timeBerth creates every pending pod and times one scheduler Sync.
func timeBerth(sc *scenario.Scenario, cpuProfile string, res *Result) error {
	br := berthrun.New()
	br.SkipScores = true
	if err := br.Load(sc); err != nil {
		return err
	}
	if err := br.Enqueue(sc.Pending); err != nil {
		return err
	}
	runtime.GC()
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	start := time.Now()
	err := br.Sync()
	res.Berth = time.Since(start)
	if cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return err
	}
	outcomes := br.Outcomes()
	for _, pod := range sc.Pending {
		o, ok := outcomes[pod.Namespace+"/"+pod.Name]
		switch {
		case !ok:
			return fmt.Errorf("berth: pod %s/%s disappeared", pod.Namespace, pod.Name)
		case o.Node != "":
			res.BerthScheduled++
		case o.Message == "":
			return fmt.Errorf("berth: pod %s/%s was not attempted", pod.Namespace, pod.Name)
		}
	}
	return nil
}

// compare replays upstream's decisions through berth, pod by pod.
func compare(sc *scenario.Scenario, decisions []decision, res *Result) error {
	exact := sc.PercentageOfNodesToScore == 100
	br := berthrun.New()
	// Scores are needed only for the top set, compared at 100%.
	br.SkipScores = !exact
	if err := br.Load(sc); err != nil {
		return err
	}
	for i, pod := range sc.Pending {
		u := decisions[i]
		b, err := br.Schedule(pod, u.node)
		if err != nil {
			return err
		}
		res.Compared++
		if d := disagreement(b, u, exact); d != nil {
			if res.First == nil {
				d.Scenario = sc.Name
				res.First = d
			}
		} else {
			res.Agreed++
		}
		// Follow upstream so that the next pod meets the same cluster.
		if b.Node != "" && u.node != "" && b.Node != u.node {
			if err := br.Rebind(b.Pod, u.node); err != nil {
				return err
			}
		}
	}
	return nil
}

func disagreement(b scenario.PodResult, u decision, exact bool) *diff.Disagreement {
	d := &diff.Disagreement{Pod: b.Pod}
	differ := func(what string, bv, uv any) *diff.Disagreement {
		d.What, d.Berth, d.Upstream = what, fmt.Sprint(bv), fmt.Sprint(uv)
		return d
	}
	switch {
	case (b.Node == "") != (u.node == ""):
		return differ("outcome", outcome(b.Node, b.Message), outcome(u.node, u.message))
	case b.Message != u.message:
		return differ("FailedScheduling message", b.Message, u.message)
	case exact && b.Node != "" && !slices.Equal(b.TopNodes, u.top):
		return differ("top-scoring nodes", b.TopNodes, u.top)
	}
	return nil
}

func outcome(node, message string) string {
	if node != "" {
		return "scheduled on " + node
	}
	return "unschedulable: " + message
}
