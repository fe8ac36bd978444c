package cluster

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
)

// NodeLease returns the kubelet's lease of the named node (kube-node-lease,
// named after the node), or nil when it has none yet (docs/node-lifecycle.md).
func (s *State) NodeLease(node string) *coordinationv1.Lease {
	return s.Leases[Key(corev1.NamespaceNodeLease, node)]
}
