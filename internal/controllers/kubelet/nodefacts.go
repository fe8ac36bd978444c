package kubelet

import corev1 "k8s.io/api/core/v1"

// nodeFacts is what every pod's sync reads of its node. Nodes do not change
// while the sync walks the pods (heartbeats come first), so at 100,000 pods
// on 5,000 nodes the node's conditions and timing are looked at once per
// node rather than two or three times per pod.
type nodeFacts struct {
	node      *corev1.Node
	reporting bool
	timing    Timing
}

// facts returns the node named name with what the sync reads of it, or nil
// when there is no such node.
func (n *nodeInfos) facts(name string) *nodeFacts {
	if f, ok := n.nodes[name]; ok {
		return f
	}
	var f *nodeFacts
	if node, ok := n.s.Nodes[name]; ok {
		f = &nodeFacts{node: node, reporting: nodeReporting(node), timing: timingOf(node)}
	}
	if n.nodes == nil {
		n.nodes = map[string]*nodeFacts{}
	}
	n.nodes[name] = f
	return f
}

// timing is timingOf(node) for a node facts has seen.
func (n *nodeInfos) timing(node *corev1.Node) Timing {
	if f := n.facts(node.Name); f != nil && f.node == node {
		return f.timing
	}
	return timingOf(node)
}
