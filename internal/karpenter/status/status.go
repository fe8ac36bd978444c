// Package status keeps the status of Karpenter's pool objects as its
// controllers do: an EC2NodeClass resolves its subnets, security group and
// AMIs and becomes Ready; a NodePool sums its nodes' capacity, counts them
// and is Ready when its node class is; a v1alpha5 Provisioner sums its
// nodes' capacity (docs/karpenter-apis.md#status).
package status

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/pools"
)

// Controller implements sim.Controller.
type Controller struct{}

// New returns the status controller.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return "karpenter-status" }

// Sync writes the statuses that changed.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	changed := false
	for _, name := range cluster.SortedKeys(s.EC2NodeClasses) {
		changed = nodeClass(s, s.EC2NodeClasses[name]) || changed
	}
	all := pools.List(s)
	for _, p := range all {
		res, count := usage(s, p)
		switch p.Kind {
		case "NodePool":
			np := s.NodePools[p.Name]
			st := np.Status // fields are replaced, not mutated; conditions are copied
			st.Conditions = append([]metav1.Condition(nil), np.Status.Conditions...)
			st.Resources = res
			st.Nodes = &count
			nodeClassReady := p.NotReady == ""
			setCondition(s, &st.Conditions, "ValidationSucceeded", true, np.Generation)
			setCondition(s, &st.Conditions, "NodeClassReady", nodeClassReady, np.Generation)
			setCondition(s, &st.Conditions, "Ready", nodeClassReady, np.Generation)
			if !equality.Semantic.DeepEqual(st, np.Status) {
				np.Status = st
				np.ResourceVersion = s.Bump()
				changed = true
			}
		case "Provisioner":
			pr := s.Provisioners[p.Name]
			if !equality.Semantic.DeepEqual(res, pr.Status.Resources) {
				pr.Status.Resources = res
				pr.ResourceVersion = s.Bump()
				changed = true
			}
		}
	}
	return changed, nil
}

// nodeClass resolves what berth can: the cluster's private subnet in each
// zone, one security group and the AMIs of the family.
func nodeClass(s *cluster.State, nc *karpv1.EC2NodeClass) bool {
	st := nc.Status // fields are replaced, not mutated; conditions are copied
	st.Conditions = append([]metav1.Condition(nil), nc.Status.Conditions...)
	region := pools.Region(s)
	st.Subnets = nil
	for _, zone := range pools.Zones(s) {
		id, _ := aws.ZoneID(zone)
		st.Subnets = append(st.Subnets, karpv1.Subnet{ID: aws.SubnetID(s.Info.Name, zone), Zone: zone, ZoneID: id})
	}
	st.SecurityGroups = []karpv1.SecurityGroup{{ID: aws.SecurityGroupID(s.Info.Name)}}
	family := ""
	for _, t := range nc.Spec.AMISelectorTerms {
		if t.Alias != "" {
			family, _, _ = strings.Cut(t.Alias, "@")
		}
	}
	st.AMIs = nil
	if family != "" {
		for _, arch := range []string{"amd64", "arm64"} {
			st.AMIs = append(st.AMIs, karpv1.AMI{ID: aws.AMIID(region, family, arch), Requirements: []corev1.NodeSelectorRequirement{
				{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{arch}}}})
		}
	}
	for _, typ := range []string{"SecurityGroupsReady", "AMIsReady", "InstanceProfileReady", "ValidationSucceeded"} {
		setCondition(s, &st.Conditions, typ, true, nc.Generation)
	}
	// A cluster berth knows no region or zones of (kind, on-premises
	// nodes) has no subnets to select: the class is not ready, with the
	// AWS provider's texts (docs/karpenter-apis.md#status).
	if len(st.Subnets) > 0 {
		setCondition(s, &st.Conditions, "SubnetsReady", true, nc.Generation)
		setCondition(s, &st.Conditions, "Ready", true, nc.Generation)
	} else {
		setConditionWhy(s, &st.Conditions, "SubnetsReady", false, "SubnetsNotFound", "SubnetSelector did not match any Subnets", nc.Generation)
		setConditionWhy(s, &st.Conditions, "Ready", false, "UnhealthyDependents", "SubnetsReady=False", nc.Generation)
	}
	if equality.Semantic.DeepEqual(st, nc.Status) {
		return false
	}
	nc.Status = st
	nc.ResourceVersion = s.Bump()
	return true
}

// usage is the pool's usage as its status shows it: nothing without
// nodes, and no node count for a v1alpha5 Provisioner.
func usage(s *cluster.State, p *pools.Pool) (corev1.ResourceList, int64) {
	res, count := pools.Usage(s, p)
	if count == 0 {
		return nil, 0
	}
	if p.Kind != "NodePool" {
		delete(res, "nodes")
	}
	return res, count
}

// setCondition sets a condition, keeping its transition time when the
// status does not change.
func setCondition(s *cluster.State, conds *[]metav1.Condition, typ string, ok bool, generation int64) {
	reason := typ
	if !ok {
		reason = "Not" + typ
	}
	setConditionWhy(s, conds, typ, ok, reason, "", generation)
}

// setConditionWhy is setCondition with the reason and message given.
func setConditionWhy(s *cluster.State, conds *[]metav1.Condition, typ string, ok bool, reason, message string, generation int64) {
	status := metav1.ConditionTrue
	if !ok {
		status = metav1.ConditionFalse
	}
	for i := range *conds {
		c := &(*conds)[i]
		if c.Type != typ {
			continue
		}
		if c.Status != status {
			c.Status, c.LastTransitionTime = status, metav1.NewTime(s.Now)
		}
		c.Reason, c.Message, c.ObservedGeneration = reason, message, generation
		return
	}
	*conds = append(*conds, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message,
		ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(s.Now)})
}
