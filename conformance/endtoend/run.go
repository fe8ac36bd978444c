package endtoend

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"

	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/conformance/berthrun"
	"github.com/berth-sim/berth/conformance/diff"
	"github.com/berth-sim/berth/conformance/upstream"
	"github.com/berth-sim/berth/internal/app"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler"
)

// Run applies the manifest file (named name in reports) to a new berth
// state in dir, as `berth apply -f` does, with the Kubernetes version given,
// and compares every pod's first scheduling attempt with upstream's. An
// error means a side failed to run, not that they disagreed.
func Run(name string, file []byte, kubernetesVersion, dir string) (diff.Report, error) {
	rep := diff.Report{Scenario: name}
	up := upstream.New()
	defer up.Close()
	if err := up.StartEmpty(0); err != nil {
		return rep, err
	}
	path := filepath.Join(dir, "scenario.yaml")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		return rep, err
	}
	weights, err := scoreWeights(kubernetesVersion)
	if err != nil {
		return rep, err
	}
	obs := &observer{name: name, up: up, rep: &rep, weights: weights, attempted: map[string]bool{}}
	var out, errOut bytes.Buffer
	a, err := app.Open(app.Options{StateDir: filepath.Join(dir, "state"), KubernetesVersion: kubernetesVersion, Seed: berthrun.Seed,
		Out: &out, ErrOut: &errOut, SchedulerObserver: obs})
	if err != nil {
		return rep, err
	}
	defer a.Close() // releases the state's lock (and its file descriptor)
	applyErr := a.Apply(app.ApplyRequest{Files: []string{path}})
	if obs.err != nil {
		return rep, obs.err
	}
	if applyErr != nil {
		return rep, fmt.Errorf("berth apply: %w (stderr: %s)", applyErr, errOut.String())
	}
	return rep, nil
}

// scoreWeights asks a scheduler of the version for its plugin weights.
func scoreWeights(version string) (map[string]int64, error) {
	sc := scheduler.New()
	if _, err := sc.Sync(cluster.New(version, 1)); err != nil {
		return nil, err
	}
	return sc.ScoreWeights(), nil
}

// observer runs upstream in step with berth's scheduler: before each first
// attempt it mirrors berth's cluster into upstream, after it it runs one
// upstream cycle and compares.
type observer struct {
	name      string
	up        *upstream.Runner
	rep       *diff.Report
	weights   map[string]int64
	attempted map[string]bool
	// done stops the comparison at the first disagreement or error.
	done bool
	err  error
	last *cluster.State
}

func (o *observer) BeforeAttempt(s *cluster.State, key string, first bool) {
	if o.done || !first {
		return
	}
	if err := o.up.Mirror(world(s, o.attempted)); err != nil {
		o.err, o.done = fmt.Errorf("%s: before %s: %w", o.name, key, err), true
	}
}

func (o *observer) AfterAttempt(s *cluster.State, key string, first bool, d *scheduler.Diagnosis) {
	if o.done || !first {
		return
	}
	o.attempted[key] = true
	o.last = s
	b := berthrun.Result(s, o.weights, key, d)
	u, err := o.up.ScheduleNext(b.Node)
	if err != nil {
		o.err, o.done = fmt.Errorf("%s: upstream after %s: %w", o.name, key, err), true
		return
	}
	o.rep.Compared++
	if u.Pod != key {
		o.disagree(&diff.Disagreement{Pod: key, What: "pod popped from the queue", Berth: key, Upstream: u.Pod})
		return
	}
	if b.Message == u.Message && !reflect.DeepEqual(b.Victims, u.Victims) && diff.EquivalentPreemption(b, u, priorities(s, d)) {
		// An equally good preemption: the next mirror puts berth's choice into upstream.
		u.NominatedNode, u.Victims = b.NominatedNode, b.Victims
	}
	if dis := diff.Compare(b, u, diff.Exact); dis != nil {
		o.disagree(dis)
		return
	}
	o.rep.Agreed++
	if b.Node != "" {
		o.rep.Scheduled++
	} else {
		o.rep.Unschedulable++
	}
}

func (o *observer) disagree(d *diff.Disagreement) {
	d.Scenario = o.name
	o.rep.First, o.done = d, true
	if os.Getenv("BERTH_E2E_DEBUG") != "" {
		o.dump()
	}
}

// dump prints, per node, where berth's and upstream's pods and nominations
// differ (BERTH_E2E_DEBUG set).
func (o *observer) dump() {
	s := o.last
	berth := map[string][]string{}
	for k, p := range s.Pods {
		if cluster.IsTerminal(p) {
			continue
		}
		switch {
		case p.Spec.NodeName != "":
			berth[p.Spec.NodeName] = append(berth[p.Spec.NodeName], k)
		case p.Status.NominatedNodeName != "" && p.DeletionTimestamp == nil:
			berth[p.Status.NominatedNodeName] = append(berth[p.Status.NominatedNodeName], "nominated:"+k)
		}
	}
	up := o.up.NodePods()
	for _, n := range cluster.SortedKeys(s.Nodes) {
		b := berth[n]
		sort.Strings(b)
		if !reflect.DeepEqual(b, up[n]) && (len(b) > 0 || len(up[n]) > 0) {
			fmt.Fprintf(os.Stderr, "%s node %s:\n  berth    %v\n  upstream %v\n", o.name, n, b, up[n])
		}
		fmt.Fprintf(os.Stderr, "%s node %s upstream host ports: %s\n", o.name, n, o.up.UsedPorts(n))
	}
}

// priorities knows the priority of every pod a preemption may name: the
// living ones and berth's victims.
func priorities(s *cluster.State, d *scheduler.Diagnosis) map[string]int32 {
	out := map[string]int32{}
	for k, p := range s.Pods {
		out[k] = corev1helpers.PodPriority(p)
	}
	for _, v := range d.Victims {
		out[cluster.Key(v.Namespace, v.Name)] = corev1helpers.PodPriority(v)
	}
	return out
}

// inKeyOrder lists a state map's objects by key.
func inKeyOrder[V any](m map[string]V) []V {
	out := make([]V, 0, len(m))
	for _, k := range cluster.SortedKeys(m) {
		out = append(out, m[k])
	}
	return out
}

// world is berth's cluster as upstream's mirror needs it.
func world(s *cluster.State, attempted map[string]bool) *upstream.World {
	w := &upstream.World{Attempted: attempted}
	w.Namespaces = inKeyOrder(s.Namespaces)
	w.PriorityClasses = inKeyOrder(s.PriorityClasses)
	for _, name := range s.Scheduler.NodeOrder {
		if n := s.Nodes[name]; n != nil {
			w.Nodes = append(w.Nodes, n)
		}
	}
	// Nodes the scheduler has not seen yet follow in creation order.
	seen := map[string]bool{}
	for _, n := range w.Nodes {
		seen[n.Name] = true
	}
	for _, k := range cluster.CreationOrder(s, s.Nodes) {
		if !seen[k] {
			w.Nodes = append(w.Nodes, s.Nodes[k])
		}
	}
	w.StorageClasses = inKeyOrder(s.StorageClasses)
	w.PersistentVolumes = inKeyOrder(s.PersistentVolumes)
	w.PersistentVolumeClaims = inKeyOrder(s.PersistentVolumeClaims)
	w.CSINodes = inKeyOrder(s.CSINodes)
	w.Services = inKeyOrder(s.Services)
	w.ReplicaSets = inKeyOrder(s.ReplicaSets)
	w.StatefulSets = inKeyOrder(s.StatefulSets)
	// Bound pods that are terminating still hold their room until they are
	// gone, in berth's cache as in upstream's; pending ones are never
	// scheduled.
	for _, k := range cluster.CreationOrder(s, s.Pods) {
		if p := s.Pods[k]; !cluster.IsTerminal(p) && (p.DeletionTimestamp == nil || p.Spec.NodeName != "") {
			w.Pods = append(w.Pods, p)
		}
	}
	return w
}
