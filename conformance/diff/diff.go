// Package diff compares two scenario.Schedulers pod by pod: berth first, then
// upstream aligned to berth's node, so that both clusters stay identical as
// long as they agree.
package diff

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/conformance/scenario"
)

// Mode says what can be compared.
type Mode int

const (
	// Exact (percentageOfNodesToScore 100): outcome, message, nodes
	// examined, top set, and per node the filter verdict and the scores.
	Exact Mode = iota
	// Outcome (adaptive percentage on large clusters, where upstream's
	// parallel filter examines a nondeterministic subset): scheduled or not,
	// the message, and how many nodes were examined when the pod failed
	// (all of them) or how many feasible nodes were kept when it did not.
	Outcome
)

// Disagreement is the first difference found for a pod.
type Disagreement struct {
	Scenario string
	Pod      string
	// Node and Plugin narrow the difference down when it is per node.
	Node, Plugin string
	// What names the compared field; Berth and Upstream are its values.
	What, Berth, Upstream string
}

func (d *Disagreement) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %s, pod %s", d.Scenario, d.Pod)
	if d.Node != "" {
		fmt.Fprintf(&b, ", node %s", d.Node)
	}
	if d.Plugin != "" {
		fmt.Fprintf(&b, ", plugin %s", d.Plugin)
	}
	fmt.Fprintf(&b, ": %s differs\n  berth:    %s\n  upstream: %s", d.What, d.Berth, d.Upstream)
	return b.String()
}

// Report is the outcome of one scenario.
type Report struct {
	Scenario string
	// Compared pods were scheduled on both sides; Agreed of them agreed. The
	// comparison stops at the first disagreement (the clusters may differ
	// from then on).
	Compared, Agreed int
	// Scheduled and Unschedulable count the agreed pods by outcome.
	Scheduled, Unschedulable int
	First                    *Disagreement
}

// Follower is a scheduler whose bound pod can be moved to another node,
// so that it can follow the other side's choice.
type Follower interface {
	Rebind(podKey, node string) error
}

// PreemptionFollower can redo its last preemption with the other side's victims.
type PreemptionFollower interface {
	FollowPreemption(victims []string) error
}

// EquivalentPreemption reports whether two preemptions are equally good by
// every criterion upstream decides deterministically: as many victims with
// the same priorities. Without PDBs such candidates tie on every criterion
// but start time, and upstream takes the start time of a pod that has none
// from the wall clock at the moment of each comparison.
func EquivalentPreemption(b, u scenario.PodResult, priority map[string]int32) bool {
	if len(b.Victims) != len(u.Victims) || len(b.Victims) == 0 {
		return false
	}
	prios := func(keys []string) []int32 {
		out := make([]int32, len(keys))
		for i, k := range keys {
			out[i] = priority[k]
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	return reflect.DeepEqual(prios(b.Victims), prios(u.Victims))
}

// priorities maps every pod of the scenario to its priority.
func priorities(sc *scenario.Scenario) map[string]int32 {
	out := map[string]int32{}
	for _, list := range [][]*v1.Pod{sc.Existing, sc.Pending} {
		for _, p := range list {
			ns := p.Namespace
			if ns == "" {
				ns = metav1.NamespaceDefault
			}
			var prio int32
			if p.Spec.Priority != nil {
				prio = *p.Spec.Priority
			}
			out[ns+"/"+p.Name] = prio
		}
	}
	return out
}

// Run loads sc into both schedulers and compares every pending pod in order.
// An error means a runner failed, not that they disagreed.
func Run(sc *scenario.Scenario, berth, upstream scenario.Scheduler, mode Mode) (Report, error) {
	rep := Report{Scenario: sc.Name}
	if err := berth.Load(sc); err != nil {
		return rep, fmt.Errorf("berth: load %s: %w", sc.Name, err)
	}
	if err := upstream.Load(sc); err != nil {
		return rep, fmt.Errorf("upstream: load %s: %w", sc.Name, err)
	}
	prio := priorities(sc)
	for _, pod := range sc.Pending {
		b, err := berth.Schedule(pod, "")
		if err != nil {
			return rep, fmt.Errorf("berth: %s: %w", sc.Name, err)
		}
		u, err := upstream.Schedule(pod, b.Node)
		if err != nil {
			return rep, fmt.Errorf("upstream: %s: %w", sc.Name, err)
		}
		rep.Compared++
		if f, ok := berth.(PreemptionFollower); ok && b.Message == u.Message &&
			!reflect.DeepEqual(b.Victims, u.Victims) && EquivalentPreemption(b, u, prio) {
			// Upstream picked another of the equally good preemptions: follow it.
			if err := f.FollowPreemption(u.Victims); err != nil {
				return rep, fmt.Errorf("berth: %s: %w", sc.Name, err)
			}
			b.NominatedNode, b.Victims = u.NominatedNode, u.Victims
		}
		if d := Compare(b, u, mode); d != nil {
			d.Scenario = sc.Name
			rep.First = d
			return rep, nil
		}
		rep.Agreed++
		if f, ok := berth.(Follower); ok && b.Node != "" && u.Node != "" && b.Node != u.Node {
			// Upstream chose outside berth's top set (possible only when they
			// examined different subsets): follow it so both clusters stay equal.
			if err := f.Rebind(b.Pod, u.Node); err != nil {
				return rep, fmt.Errorf("berth: %s: %w", sc.Name, err)
			}
		}
		if b.Node != "" {
			rep.Scheduled++
		} else {
			rep.Unschedulable++
		}
	}
	return rep, nil
}

// Compare returns the first difference between berth's and upstream's
// results for one pod, or nil when they agree.
func Compare(b, u scenario.PodResult, mode Mode) *Disagreement {
	d := &Disagreement{Pod: b.Pod}
	differ := func(what string, bv, uv any) *Disagreement {
		d.What, d.Berth, d.Upstream = what, fmt.Sprint(bv), fmt.Sprint(uv)
		return d
	}
	switch {
	case (b.Node == "") != (u.Node == ""):
		return differ("outcome", outcome(b), outcome(u))
	case b.Message != u.Message:
		return differ("FailedScheduling message", b.Message, u.Message)
	case b.NominatedNode != u.NominatedNode:
		return differ("nominated node", b.NominatedNode, u.NominatedNode)
	case !reflect.DeepEqual(nonNil(b.Victims), nonNil(u.Victims)):
		return differ("preemption victims", b.Victims, u.Victims)
	case mode == Outcome && b.Node != "" && feasibleCount(b) != feasibleCount(u):
		// Upstream's 16 filter workers run past the point where enough
		// feasible nodes were found and from a start index that drifts with
		// that, so only the number of feasible nodes kept is comparable.
		return differ("feasible nodes found", feasibleCount(b), feasibleCount(u))
	case (mode == Exact || b.Node == "") && b.Examined != u.Examined:
		return differ("nodes examined", b.Examined, u.Examined)
	}
	if mode == Outcome {
		return nil
	}
	for _, name := range unionKeys(b.Nodes, u.Nodes) {
		bv, bok := b.Nodes[name]
		uv, uok := u.Nodes[name]
		d.Node = name
		switch {
		case !bok || !uok:
			return differ("node reported", bok, uok)
		case bv.Plugin != uv.Plugin:
			return differ("rejecting plugin", verdictString(bv), verdictString(uv))
		case bv.Code != uv.Code || !reflect.DeepEqual(nonNil(bv.Reasons), nonNil(uv.Reasons)):
			d.Plugin = bv.Plugin
			return differ("filter verdict", verdictString(bv), verdictString(uv))
		}
		for _, pl := range unionKeys(bv.Scores, uv.Scores) {
			bs, bok := bv.Scores[pl]
			us, uok := uv.Scores[pl]
			if bok != uok || bs != us {
				d.Plugin = pl
				return differ("weighted score", scoreString(bs, bok), scoreString(us, uok))
			}
		}
		if bv.Total != uv.Total {
			return differ("total score", bv.Total, uv.Total)
		}
	}
	d.Node = ""
	if b.Node != "" && b.Node != u.Node {
		// Upstream binds to berth's node whenever it is in its top set.
		return differ("selected node (berth's is not in upstream's top set)", fmt.Sprintf("%s (top %v)", b.Node, b.TopNodes), fmt.Sprintf("%s (top %v)", u.Node, u.TopNodes))
	}
	if !reflect.DeepEqual(b.TopNodes, u.TopNodes) && (len(b.TopNodes) > 0 || len(u.TopNodes) > 0) {
		return differ("top-scoring nodes", b.TopNodes, u.TopNodes)
	}
	return nil
}

// feasibleCount is how many nodes passed Filter (reported without a code).
func feasibleCount(r scenario.PodResult) int {
	n := 0
	for _, v := range r.Nodes {
		if v.Code == "" {
			n++
		}
	}
	return n
}

func outcome(r scenario.PodResult) string {
	if r.Node != "" {
		return "scheduled on " + r.Node
	}
	return "unschedulable: " + r.Message
}

func verdictString(v scenario.NodeVerdict) string {
	if v.Plugin == "" && v.Code == "" {
		return "feasible"
	}
	return fmt.Sprintf("%s %s %q", v.Plugin, v.Code, v.Reasons)
}

func scoreString(v int64, ok bool) string {
	if !ok {
		return "(not scored)"
	}
	return fmt.Sprint(v)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func unionKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Summary adds up reports.
type Summary struct {
	Scenarios, ScenariosAgreed int
	Compared, Agreed           int
	Scheduled, Unschedulable   int
	// Disagreements holds the first disagreement of each scenario that had one.
	Disagreements []*Disagreement
}

// Add accounts one report.
func (s *Summary) Add(r Report) {
	s.Scenarios++
	s.Compared += r.Compared
	s.Agreed += r.Agreed
	s.Scheduled += r.Scheduled
	s.Unschedulable += r.Unschedulable
	if r.First == nil {
		s.ScenariosAgreed++
	} else {
		s.Disagreements = append(s.Disagreements, r.First)
	}
}

// String is the one-paragraph summary the tests log.
func (s *Summary) String() string {
	rate := func(a, n int) float64 {
		if n == 0 {
			return 100
		}
		return 100 * float64(a) / float64(n)
	}
	return fmt.Sprintf("%d/%d scenarios agree (%.2f%%); %d/%d pods agree (%.2f%%): %d scheduled, %d unschedulable",
		s.ScenariosAgreed, s.Scenarios, rate(s.ScenariosAgreed, s.Scenarios), s.Agreed, s.Compared, rate(s.Agreed, s.Compared),
		s.Scheduled, s.Unschedulable)
}

// ForEach calls fn(i) for i in [0, n) on workers goroutines (each scenario
// gets its own clusters and upstream scheduler) and returns when all are done.
func ForEach(workers, n int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
