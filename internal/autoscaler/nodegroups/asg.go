// Package nodegroups is cluster-autoscaler's view of an EKS cluster's
// capacity: one Auto Scaling group per eksctl node group, with the name and
// tags EKS and eksctl give it, discovered by --node-group-auto-discovery or
// listed by --nodes, and the template node cluster-autoscaler imagines for
// it when it plans a scale-up (docs/cluster-autoscaler.md#node-groups).
package nodegroups

import (
	"crypto/sha256"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/autoscaler/config"
	"github.com/berth-sim/berth/internal/capacity/nodegroups"
	"github.com/berth-sim/berth/internal/cluster"
)

// Tags cluster-autoscaler reads on an Auto Scaling group.
const (
	TagEnabled           = "k8s.io/cluster-autoscaler/enabled"
	TagClusterPrefix     = "k8s.io/cluster-autoscaler/"
	TagTemplateLabel     = "k8s.io/cluster-autoscaler/node-template/label/"
	TagTemplateTaint     = "k8s.io/cluster-autoscaler/node-template/taint/"
	TagTemplateResources = "k8s.io/cluster-autoscaler/node-template/resources/"
	TagEKSClusterName    = "eks:cluster-name"
	TagEKSNodeGroupName  = "eks:nodegroup-name"
)

// Group is one Auto Scaling group as cluster-autoscaler sees it.
type Group struct {
	// Name is the ASG name (the node group's id in cluster-autoscaler).
	Name string
	// NodeGroup is the eksctl node group's name.
	NodeGroup string
	Managed   bool
	// MinSize and MaxSize are the limits cluster-autoscaler respects: the
	// ASG's own, or those of the --nodes flag that lists it.
	MinSize, MaxSize int
	// Desired is the ASG's desired capacity.
	Desired int
	Tags    map[string]string
	Source  cluster.NodeGroup
}

// ASGName is the Auto Scaling group's name: EKS names a managed group's ASG
// eks-<nodegroup>-<uuid>; eksctl's CloudFormation stack names a
// self-managed one eksctl-<cluster>-nodegroup-<name>-NodeGroup-<suffix>.
// The uuid and suffix are derived from the names, so that they are stable.
func ASGName(clusterName string, ng cluster.NodeGroup) string {
	h := sha256.Sum256([]byte("asg/" + clusterName + "/" + ng.Name))
	if ng.Managed {
		return fmt.Sprintf("eks-%s-%x-%x-%x-%x-%x", ng.Name, h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	suffix := make([]byte, 12)
	for i := range suffix {
		suffix[i] = alphabet[int(h[i])%len(alphabet)]
	}
	return fmt.Sprintf("eksctl-%s-nodegroup-%s-NodeGroup-%s", clusterName, ng.Name, suffix)
}

// ASGTags are the tags of the group's ASG. EKS tags every managed group's
// ASG for cluster-autoscaler discovery and with eks:cluster-name and
// eks:nodegroup-name; eksctl adds the discovery tags to a self-managed
// group only with iam.withAddonPolicies.autoScaler, and the node-template
// label and taint tags with propagateASGTags. eksctl writes a propagated
// taint's value alone (without ":Effect"), which cluster-autoscaler then
// ignores; berth keeps that quirk (docs/cluster-autoscaler.md#node-groups).
func ASGTags(clusterName string, ng cluster.NodeGroup) map[string]string {
	tags := map[string]string{}
	for k, v := range ng.Tags {
		tags[k] = v
	}
	if ng.Managed {
		tags[TagEKSClusterName] = clusterName
		tags[TagEKSNodeGroupName] = ng.Name
	}
	if ng.Managed || ng.AutoScaler {
		tags[TagEnabled] = "true"
		tags[TagClusterPrefix+clusterName] = "owned"
	}
	if ng.PropagateASGTags {
		for k, v := range ng.Labels {
			if _, set := tags[TagTemplateLabel+k]; !set {
				tags[TagTemplateLabel+k] = v
			}
		}
		for _, t := range ng.Taints {
			if _, set := tags[TagTemplateTaint+t.Key]; !set {
				tags[TagTemplateTaint+t.Key] = t.Value
			}
		}
	}
	return tags
}

// All returns every node group of the state as an ASG, in the state's order.
func All(s *cluster.State) []Group {
	out := make([]Group, 0, len(s.NodeGroups))
	for _, ng := range s.NodeGroups {
		out = append(out, Group{
			Name: ASGName(s.Info.Name, ng), NodeGroup: ng.Name, Managed: ng.Managed,
			MinSize: ng.MinSize, MaxSize: ng.MaxSize, Desired: ng.DesiredSize,
			Tags: ASGTags(s.Info.Name, ng), Source: ng,
		})
	}
	return out
}

// Discover returns the groups cluster-autoscaler manages under opts: those
// listed by --nodes (with the flag's limits), then those an auto-discovery
// spec matches (with the ASG's limits), sorted by ASG name as the AWS
// provider lists them. A --nodes name that no ASG has is returned in missing.
func Discover(s *cluster.State, opts config.Options) (groups []Group, missing []string) {
	all := All(s)
	byName := map[string]int{}
	for i, g := range all {
		byName[g.Name] = i
	}
	chosen := map[string]bool{}
	for _, spec := range opts.NodeGroups {
		i, ok := byName[spec.Name]
		if !ok {
			missing = append(missing, spec.Name)
			continue
		}
		if chosen[spec.Name] {
			continue
		}
		g := all[i]
		g.MinSize, g.MaxSize = spec.Min, spec.Max
		groups = append(groups, g)
		chosen[g.Name] = true
	}
	for _, g := range all {
		if chosen[g.Name] {
			continue
		}
		for _, d := range opts.AutoDiscovery {
			if d.Matches(g.Tags) {
				groups = append(groups, g)
				chosen[g.Name] = true
				break
			}
		}
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].Name < groups[j].Name })
	return groups, missing
}

// Nodes returns the group's registered nodes, sorted by name.
func (g Group) Nodes(s *cluster.State) []*corev1.Node {
	return nodegroups.GroupNodes(s, g.NodeGroup)
}

// GroupOf returns the name of the eksctl node group a node belongs to, or
// "" for nodes of no group (Karpenter's, Fargate's, hand-made ones), which
// cluster-autoscaler leaves alone.
func GroupOf(n *corev1.Node) string {
	if g := n.Labels[nodegroups.LabelEksctlNodeGroupName]; g != "" {
		return g
	}
	return n.Labels[nodegroups.LabelNodeGroup]
}
