package interruption

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// Notice is what `berth karpenter interrupt` sent.
type Notice struct {
	NodeClaim, Node, Instance, InstanceType, Zone string
	// Again is set when the instance already had a pending notice.
	Again bool
}

// Notify is EC2 sending the spot interruption warning for the instance
// behind ref: a node name, node/NAME or nodeclaim/NAME. Only launched
// spot instances owned by a NodeClaim get one; anything else is an error
// and the state is left as it was.
func Notify(s *cluster.State, ref string) (*Notice, error) {
	nc, node, err := resolve(s, ref)
	if err != nil {
		return nil, err
	}
	if nc.Status.ProviderID == "" {
		return nil, fmt.Errorf("nodeclaim/%s has no instance yet (not launched): there is nothing for EC2 to interrupt", nc.Name)
	}
	if ct := nc.Labels[scheduling.CapacityTypeLabelKey]; ct != scheduling.CapacityTypeSpot {
		what := "nodeclaim/" + nc.Name
		if node != nil {
			what = "node/" + node.Name
		}
		return nil, fmt.Errorf("%s is an %s instance (karpenter.sh/capacity-type=%s): EC2 sends spot interruption notices to spot instances only",
			what, ct, ct)
	}
	n := &Notice{NodeClaim: nc.Name, Instance: instanceID(nc.Status.ProviderID),
		InstanceType: nc.Labels[corev1.LabelInstanceTypeStable], Zone: nc.Labels[corev1.LabelTopologyZone]}
	if node != nil {
		n.Node = node.Name
	}
	aws := s.Karpenter.AWSState()
	for _, in := range aws.Interruptions {
		if in.ProviderID == nc.Status.ProviderID {
			n.Again = true
			return n, nil
		}
	}
	aws.Interruptions = append(aws.Interruptions, cluster.SpotInterruption{NodeClaim: nc.Name, Node: n.Node,
		ProviderID: nc.Status.ProviderID, NoticeAt: s.Now, ReclaimAt: s.Now.Add(ReclaimDelay)})
	return n, nil
}

// resolve finds the NodeClaim (and its node, if registered) ref names.
func resolve(s *cluster.State, ref string) (*karpv1.NodeClaim, *corev1.Node, error) {
	kind, name, found := strings.Cut(ref, "/")
	if !found {
		kind, name = "node", ref
	}
	switch strings.ToLower(kind) {
	case "node", "nodes", "no":
		node, ok := s.Nodes[name]
		if !ok {
			return nil, nil, fmt.Errorf("Error from server (NotFound): nodes %q not found", name)
		}
		nc := claimByProviderID(s, node.Spec.ProviderID)
		if node.Spec.ProviderID == "" || nc == nil {
			return nil, nil, fmt.Errorf("node/%s is not a Karpenter node (no NodeClaim has its provider ID %q): berth sends spot interruption notices through Karpenter's interruption controller only", name, node.Spec.ProviderID)
		}
		return nc, node, nil
	case "nodeclaim", "nodeclaims":
		nc, ok := s.NodeClaims[name]
		if !ok {
			return nil, nil, fmt.Errorf("Error from server (NotFound): nodeclaims.karpenter.sh %q not found", name)
		}
		var node *corev1.Node
		if nc.Status.ProviderID != "" {
			node = nodeByProviderID(s, nc.Status.ProviderID)
		}
		return nc, node, nil
	}
	return nil, nil, fmt.Errorf("cannot interrupt %q: name a node (NAME or node/NAME) or a NodeClaim (nodeclaim/NAME)", ref)
}

// instanceID is the last segment of aws:///<zone>/<instance-id>.
func instanceID(providerID string) string {
	if i := lastSlash(providerID); i >= 0 {
		return providerID[i+1:]
	}
	return providerID
}
