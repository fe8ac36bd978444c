package generator

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/conformance/scenario"
)

// Small returns the quick differential test's scenario for seed: 5–30 nodes,
// 0–2 bound pods per node, 10–40 pending pods, every feature in play,
// Kubernetes 1.36 and percentageOfNodesToScore 100.
func Small(seed uint64) *scenario.Scenario {
	g := newGen(fmt.Sprintf("seed-%d", seed), seed)
	g.sc.PercentageOfNodesToScore = 100
	nodes := 5 + g.r.IntN(26)
	g.build(nodes, g.r.IntN(2*nodes+1), 10+g.r.IntN(31), variedNodes, allFeatures)
	return g.sc
}

// Large returns a scenario of 100–250 nodes at the adaptive default
// percentage, for the comparison of outcomes, messages and nodes examined.
func Large(seed uint64) *scenario.Scenario {
	g := newGen(fmt.Sprintf("large-seed-%d", seed), seed)
	nodes := 100 + g.r.IntN(151)
	g.build(nodes, g.r.IntN(nodes), 20+g.r.IntN(21), variedNodes, allFeatures)
	return g.sc
}

// Profiles names the benchmark profiles.
var Profiles = []string{"basic", "affinity", "spread", "taints", "mixed"}

// Profile returns a benchmark scenario: nodes nodes, pods pending pods, no
// bound pods, and only the features the profile exercises. The percentage
// is left adaptive; callers set it.
func Profile(name string, nodes, pods int, seed uint64) (*scenario.Scenario, error) {
	plain := nodeShape{}
	f := features{resources: 0.9, owned: 0.6}
	shape := plain
	switch name {
	case "basic":
	case "affinity":
		f.requiredNodeAffinity, f.preferredNodeAffinity, f.nodeSelector = 0.3, 0.4, 0.2
		f.podAffinity, f.podAntiAffinity, f.preferredPod = 0.15, 0.2, 0.3
	case "spread":
		f.spread = 0.9
	case "taints":
		shape = nodeShape{taintP: 0.4, unschedulableP: 0.02}
		f.tolerations = 0.7
	case "mixed":
		shape, f = variedNodes, allFeatures
	default:
		return nil, fmt.Errorf("unknown profile %q (want one of %v)", name, Profiles)
	}
	g := newGen(fmt.Sprintf("%s-%dx%d-seed-%d", name, nodes, pods, seed), seed)
	g.build(nodes, 0, pods, shape, f)
	return g.sc, nil
}

// startedBase is the earliest start time of bound pods (before berth's epoch).
var startedBase = time.Date(2025, time.June, 1, 0, 0, 0, 0, time.UTC)

// build fills the scenario: nodes, workloads, existing and pending pods.
func (g *gen) build(nodes, existing, pending int, shape nodeShape, f features) {
	g.addNamespaces()
	g.addPriorityClasses()
	g.addNodes(nodes, shape)
	g.addWorkloads()
	if f.statefulSet > 0 {
		g.addStatefulSets()
	}
	if f == allFeatures {
		g.addStorage()
	}
	for i := 0; i < existing; i++ {
		pod := g.newPod(fmt.Sprintf("existing-%03d", i), pick(g, namespaces), f, true)
		g.addPodVolumes(pod, true)
		pod.Spec.NodeName = pick(g, g.nodeNames)
		g.admit(pod, pick(g, classes))
		pod.Status.Phase = v1.PodRunning
		// Running pods have started, at distinct times: preemption orders
		// victims of equal priority by start time (upstream takes the wall
		// clock for pods without one, which no simulator can reproduce).
		started := metav1.NewTime(startedBase.Add(time.Duration(g.r.IntN(100000)) * time.Second))
		pod.Status.StartTime = &started
		g.sc.Existing = append(g.sc.Existing, pod)
	}
	for i := 0; i < pending; i++ {
		pod := g.newPod(fmt.Sprintf("pod-%03d", i), pick(g, namespaces), f, false)
		g.addPodVolumes(pod, false)
		g.admit(pod, g.pendingPriority(f))
		pod.Status.Phase = v1.PodPending
		g.sc.Pending = append(g.sc.Pending, pod)
	}
}
