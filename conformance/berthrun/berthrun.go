// Package berthrun is the berth side of the conformance harness: it loads a
// scenario into a cluster.State and schedules its pending pods one at a time
// with berth's real scheduler (internal/scheduler), reporting what the
// attempt decided per node and per plugin.
//
// Objects are stored as given, without berth's admission: the generator
// already emits them as the API server would store them (defaults, priority,
// default tolerations), which is also what the upstream side receives through
// its fake clientset. Both sides therefore see byte-identical pods.
package berthrun

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/conformance/scenario"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Seed seeds the state's random source (tie-breaks among equal scores).
const Seed = 1

// Runner implements scenario.Scheduler over berth.
type Runner struct {
	// SkipScores leaves successful attempts without per-node verdicts and
	// scores, as berth apply runs the scheduler (bulk benchmarks). Set it
	// before Load.
	SkipScores bool

	state *cluster.State
	sched *scheduler.Scheduler
	// victims are the pods the last attempt's preemption deleted.
	victims []*v1.Pod
}

var _ scenario.Scheduler = (*Runner)(nil)

// New returns an empty runner; call Load.
func New() *Runner { return &Runner{} }

// State exposes the cluster for tests and debugging.
func (r *Runner) State() *cluster.State { return r.state }

// Load builds the cluster: nodes in scenario order (the scheduler's node
// tree follows that insertion order), then namespaces, priority classes,
// services, replicasets, statefulsets and the bound pods. The scenario is not modified.
func (r *Runner) Load(sc *scenario.Scenario) error {
	s := cluster.New(sc.KubernetesVersion, Seed)
	for _, ns := range sc.Namespaces {
		s.Namespaces[ns.Name] = stamp(s, ns.DeepCopy()).(*v1.Namespace)
	}
	for _, pc := range sc.PriorityClasses {
		c := pc.DeepCopy()
		stamp(s, c)
		s.PriorityClasses[c.Name] = c
	}
	loadStorage(s, sc)
	for _, n := range sc.Nodes {
		if _, dup := s.Nodes[n.Name]; dup {
			return fmt.Errorf("scenario %s: duplicate node %q", sc.Name, n.Name)
		}
		s.Nodes[n.Name] = stamp(s, n.DeepCopy()).(*v1.Node)
		s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, n.Name)
	}
	for _, svc := range sc.Services {
		c := svc.DeepCopy()
		stamp(s, c)
		s.Services[cluster.Key(c.Namespace, c.Name)] = c
	}
	for _, rs := range sc.ReplicaSets {
		c := rs.DeepCopy()
		stamp(s, c)
		s.ReplicaSets[cluster.Key(c.Namespace, c.Name)] = c
	}
	for _, ss := range sc.StatefulSets {
		c := ss.DeepCopy()
		stamp(s, c)
		s.StatefulSets[cluster.Key(c.Namespace, c.Name)] = c
	}
	for _, p := range sc.Existing {
		if p.Spec.NodeName == "" {
			return fmt.Errorf("scenario %s: existing pod %s/%s has no nodeName", sc.Name, p.Namespace, p.Name)
		}
		c := p.DeepCopy()
		stamp(s, c)
		s.Pods[cluster.Key(c.Namespace, c.Name)] = c
	}
	sched := scheduler.New()
	sched.RecordScores = !r.SkipScores
	sched.PercentageOfNodesToScore = sc.PercentageOfNodesToScore
	r.state, r.sched = s, sched
	return nil
}

// stamp fills the server-owned metadata that is still empty.
func stamp(s *cluster.State, obj metav1.Object) metav1.Object {
	if obj.GetUID() == "" {
		obj.SetUID(types.UID(s.NewUID()))
	}
	if ts := obj.GetCreationTimestamp(); ts.IsZero() {
		obj.SetCreationTimestamp(metav1.NewTime(s.Now))
	}
	obj.SetResourceVersion(s.Bump())
	return obj
}

// Schedule asks berth's scheduler, through its side-effect-free seam
// (scheduler.Simulation), what one attempt for pod decides, and carries the
// decision out on the cluster as the real cycle would: a bound pod stays, a
// failed one is not kept (the harness compares one attempt per pod, so it
// must not be retried behind later pods), preemption victims are deleted.
func (r *Runner) Schedule(pod *v1.Pod, align string) (scenario.PodResult, error) {
	s := r.state
	if s == nil {
		return scenario.PodResult{}, fmt.Errorf("berthrun: Schedule before Load")
	}
	p := pod.DeepCopy()
	p.Spec.NodeName = ""
	stamp(s, p)
	key := cluster.Key(p.Namespace, p.Name)
	if _, dup := s.Pods[key]; dup {
		return scenario.PodResult{}, fmt.Errorf("berthrun: pod %s already exists", key)
	}
	sim, err := r.sched.Simulate(s)
	if err != nil {
		return scenario.PodResult{}, err
	}
	diag := sim.Schedule(p)
	sim.Advance(s)
	if r.SkipScores && diag.SelectedNode != "" {
		diag.NodeToStatus.Statuses, diag.Feasible, diag.Scores, diag.Totals = nil, nil, nil, nil
	}
	res := Result(s, sim.ScoreWeights(), key, diag)
	r.victims = append(r.victims[:0], diag.Victims...)
	for _, v := range diag.Victims {
		// As upstream's harness: the victims stay deleted while the
		// preemptor is dropped after its one attempt.
		s.DeletePod(v)
		r.sched.Resync(s)
	}
	if diag.SelectedNode == "" {
		return res, nil
	}
	node := diag.SelectedNode
	if align != "" && align != node && contains(res.TopNodes, align) {
		node, res.Node = align, align
	}
	s.Pods[key] = p
	s.BindPod(p, node)
	r.sched.Resync(s)
	return res, nil
}

// Rebind moves a bound pod to node, as if the scheduler had picked it (the
// harness uses it to follow upstream when the two examined different nodes).
func (r *Runner) Rebind(podKey, node string) error {
	p, ok := r.state.Pods[podKey]
	if !ok || p.Spec.NodeName == "" {
		return fmt.Errorf("berthrun: rebind: pod %s is not bound", podKey)
	}
	if _, ok := r.state.Nodes[node]; !ok {
		return fmt.Errorf("berthrun: rebind: no node %q", node)
	}
	r.state.BindPod(p, node)
	r.sched.Resync(r.state)
	return nil
}

// FollowPreemption replaces the last attempt's preemption by another one
// that evicted victims (namespace/name keys): berth's victims come back and
// these are deleted, so both clusters stay equal when upstream chose
// differently among equally good candidates.
func (r *Runner) FollowPreemption(victims []string) error {
	s := r.state
	for _, v := range r.victims {
		key := cluster.Key(v.Namespace, v.Name)
		if _, ok := s.Pods[key]; ok {
			return fmt.Errorf("berthrun: follow preemption: victim %s still exists", key)
		}
		s.Pods[key] = v
	}
	r.victims = nil
	r.sched.Resync(s)
	for _, key := range victims {
		p, ok := s.Pods[key]
		if !ok {
			return fmt.Errorf("berthrun: follow preemption: no pod %s", key)
		}
		s.DeletePod(p)
		r.sched.Resync(s)
	}
	return nil
}

// Close releases nothing; the state is garbage.
func (r *Runner) Close() {}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// result turns the attempt's diagnosis into the shared report, shaped as
// the upstream runner reports: after a failure every node with its explicit
// or absent status; after a success the rejected nodes, the nodes a
// PreFilterResult excluded, and the feasible ones with their scores.
func (r *Runner) result(key string, d *scheduler.Diagnosis) scenario.PodResult {
	return Result(r.state, r.sched.ScoreWeights(), key, d)
}

// Result converts one attempt's diagnosis on s; weights are the score
// plugins' weights (Scheduler.ScoreWeights).
func Result(s *cluster.State, weights map[string]int64, key string, d *scheduler.Diagnosis) scenario.PodResult {
	res := scenario.PodResult{Pod: key, Node: d.SelectedNode, Nodes: map[string]scenario.NodeVerdict{}, NominatedNode: d.NominatedNode}
	for _, v := range d.Victims {
		res.Victims = append(res.Victims, cluster.Key(v.Namespace, v.Name))
	}
	sort.Strings(res.Victims)
	narrowing := strings.Join(d.NarrowingPlugins, ",")
	for name, st := range d.NodeToStatus.Statuses {
		res.Nodes[name] = verdict(st, narrowing)
	}
	res.Examined = len(d.NodeToStatus.Statuses) + len(d.Feasible)
	feasible := make(map[string]bool, len(d.Feasible))
	for _, name := range d.Feasible {
		feasible[name] = true
	}
	if absent := d.NodeToStatus.Absent; absent != nil {
		for _, name := range s.Scheduler.NodeOrder {
			if _, ok := res.Nodes[name]; !ok && !feasible[name] {
				res.Nodes[name] = verdict(absent, narrowing)
			}
		}
	}
	if d.SelectedNode == "" {
		res.Message = d.Message
		return res
	}
	var best int64
	for i, name := range d.Feasible {
		v := scenario.NodeVerdict{}
		if d.Totals != nil {
			v.Total = d.Totals[i]
			v.Scores = map[string]int64{}
			for plugin, list := range d.Scores {
				v.Scores[plugin] = list[i].Score * weights[plugin]
			}
			switch {
			case i == 0 || v.Total > best:
				best, res.TopNodes = v.Total, []string{name}
			case v.Total == best:
				res.TopNodes = append(res.TopNodes, name)
			}
		}
		res.Nodes[name] = v
	}
	sort.Strings(res.TopNodes)
	return res
}

// verdict converts a rejecting status; one without a plugin came from a
// PreFilterResult and is attributed to the plugins that narrowed the nodes.
func verdict(st *framework.Status, narrowing string) scenario.NodeVerdict {
	plugin := st.Plugin()
	if plugin == "" {
		plugin = narrowing
	}
	return scenario.NodeVerdict{Plugin: plugin, Reasons: append([]string(nil), st.Reasons()...), Code: st.Code().String()}
}
