package provisioner

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioning"
)

// Labels and taints Karpenter reads on its nodes (docs/karpenter-provisioning.md#cluster-state).
const (
	LabelInitialized  = "karpenter.sh/initialized"
	LabelRegistered   = "karpenter.sh/registered"
	TaintDisrupted    = "karpenter.sh/disrupted"
	TaintUnregistered = "karpenter.sh/unregistered"
)

// ephemeralTaints are ignored on a managed node until it is initialized:
// they belong to its start-up, not to what it will be.
var ephemeralTaints = []corev1.Taint{
	{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
	{Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: corev1.TaintEffectNoSchedule},
	{Key: TaintUnregistered, Effect: corev1.TaintEffectNoExecute},
}

// stateNodes builds what Karpenter's cluster state reports: every node and
// every NodeClaim that has no node yet, minus those being deleted.
func stateNodes(s *cluster.State, all []*pools.Pool) []*provisioning.StateNode {
	claimOfNode := map[string]*karpv1.NodeClaim{}
	for _, name := range cluster.SortedKeys(s.NodeClaims) {
		if nc := s.NodeClaims[name]; nc.Status.NodeName != "" {
			claimOfNode[nc.Status.NodeName] = nc
		}
	}
	podsOn := map[string][]*corev1.Pod{}
	for _, key := range cluster.SortedKeys(s.Pods) {
		p := s.Pods[key]
		if p.Spec.NodeName != "" && !cluster.IsTerminal(p) {
			podsOn[p.Spec.NodeName] = append(podsOn[p.Spec.NodeName], p)
		}
	}
	var out []*provisioning.StateNode
	for _, name := range cluster.SortedKeys(s.Nodes) {
		n := s.Nodes[name]
		nc := claimOfNode[name]
		if markedForDeletion(n, nc) {
			continue
		}
		managed := nc != nil || pools.Of(all, n.Labels) != nil
		sn := &provisioning.StateNode{Name: name, NodeName: name, Labels: n.Labels, Capacity: n.Status.Capacity,
			Allocatable: n.Status.Allocatable, Pods: podsOn[name], Managed: managed,
			Initialized:  !managed || n.Labels[LabelInitialized] == "true",
			VolumeLimits: volumeLimits(s, name), Volumes: nodeVolumes(s, podsOn[name])}
		if nc != nil {
			sn.NodeClaimName = nc.Name
			if !sn.Initialized {
				sn.Allocatable = fillZero(n.Status.Allocatable, nc.Status.Allocatable)
				sn.Capacity = fillZero(n.Status.Capacity, nc.Status.Capacity)
			}
		}
		sn.Taints = n.Spec.Taints
		if !sn.Initialized && managed {
			var startup []corev1.Taint
			if nc != nil {
				startup = nc.Spec.StartupTaints
			}
			sn.Taints = withoutStartupTaints(n.Spec.Taints, startup)
		}
		out = append(out, sn)
	}
	for _, name := range cluster.SortedKeys(s.NodeClaims) {
		nc := s.NodeClaims[name]
		if nc.DeletionTimestamp != nil || (nc.Status.NodeName != "" && s.Nodes[nc.Status.NodeName] != nil) {
			continue
		}
		out = append(out, &provisioning.StateNode{Name: nc.Name, NodeClaimName: nc.Name, Labels: nc.Labels,
			Taints: withoutStartupTaints(nc.Spec.Taints, nc.Spec.StartupTaints), Allocatable: nc.Status.Allocatable,
			Capacity: nc.Status.Capacity, Managed: true})
	}
	return out
}

func markedForDeletion(n *corev1.Node, nc *karpv1.NodeClaim) bool {
	if n.DeletionTimestamp != nil || (nc != nil && nc.DeletionTimestamp != nil) {
		return true
	}
	for _, t := range n.Spec.Taints {
		if t.Key == TaintDisrupted {
			return true
		}
	}
	return false
}

// withoutStartupTaints drops the ephemeral taints and the startup taints.
func withoutStartupTaints(taints, startup []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for i := range taints {
		t := &taints[i]
		drop := false
		for j := range ephemeralTaints {
			drop = drop || t.MatchTaint(&ephemeralTaints[j])
		}
		for j := range startup {
			drop = drop || t.MatchTaint(&startup[j])
		}
		if !drop {
			out = append(out, *t)
		}
	}
	return out
}

// fillZero is the node's list with the NodeClaim's values where the node
// reports zero or nothing.
func fillZero(node, claim corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range node {
		out[k] = v
	}
	for k, v := range claim {
		if q, ok := out[k]; !ok || q.IsZero() {
			out[k] = v
		}
	}
	return out
}
