package provisioner

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioning"
)

// Simulation is a provisioning solve over the cluster without some nodes:
// Karpenter's SimulateScheduling, which disruption runs to see where a
// candidate's pods would go (docs/karpenter-disruption.md#simulation).
type Simulation struct {
	Round *Round
	// Moved are the pods taken off the removed nodes, by key; Karpenter
	// only requires these (not the pending pods) to fit.
	Moved map[string]*corev1.Pod
	// Placed tells where each pod went: a node or NodeClaim name, or ""
	// for a new NodeClaim; pods missing from it did not fit.
	Placed map[string]*provisioning.StateNode
}

// Simulate solves the pending pods plus the moved ones against the
// state's nodes without those named in without, and the ready pools. It
// writes nothing to the state: the placeholder hostname counter is copied.
func Simulate(s *cluster.State, catalog *pools.Catalog, without map[string]bool, moved []*corev1.Pod) (*Simulation, error) {
	sim := &Simulation{Moved: map[string]*corev1.Pod{}, Placed: map[string]*provisioning.StateNode{}}
	pending := provisionablePods(s)
	for _, p := range moved {
		sim.Moved[cluster.Key(p.Namespace, p.Name)] = p
	}
	round, in := Prepare(s, catalog, append(pending, moved...))
	sim.Round = round
	if in == nil {
		return sim, nil
	}
	seq := s.Karpenter.HostnameSeq
	in.HostnameSeq = &seq
	var nodes []*provisioning.StateNode
	for _, n := range in.Nodes {
		if !without[n.Name] && !without[n.NodeClaimName] {
			nodes = append(nodes, n)
		}
	}
	in.Nodes = nodes
	res, err := provisioning.Solve(in)
	if err != nil {
		return nil, fmt.Errorf("simulating scheduling, %w", err)
	}
	truncate(res)
	round.Results = res
	for _, e := range res.ExistingNodes {
		for _, p := range e.Pods {
			sim.Placed[cluster.Key(p.Namespace, p.Name)] = e.Node
		}
	}
	for _, nc := range res.NewNodeClaims {
		for _, p := range nc.Pods {
			sim.Placed[cluster.Key(p.Namespace, p.Name)] = nil
		}
	}
	return sim, nil
}

// CreateNodeClaim creates a NodeClaim the solve decided on, as a
// provisioning round would (disruption launches replacements with it);
// it returns the new claim's name.
func CreateNodeClaim(s *cluster.State, p *pools.Pool, nc *provisioning.NewNodeClaim) (string, error) {
	return (&Controller{}).create(s, p, nc)
}
