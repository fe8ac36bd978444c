package controller

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-sim/berth/internal/autoscaler/nodegroups"
	capnodegroups "github.com/berth-sim/berth/internal/capacity/nodegroups"
	"github.com/berth-sim/berth/internal/cluster"
)

// NodeGroupGVK is the kind `berth get nodegroups` serves: an eksctl node
// group with its Auto Scaling group and what cluster-autoscaler thinks of
// it. Node groups are EKS objects, so berth serves them read-only under its
// own group, as it serves Fargate profiles
// (docs/cluster-autoscaler.md#node-group-views).
var NodeGroupGVK = schema.GroupVersionKind{Group: "eks.berth.dev", Version: "v1alpha1", Kind: "NodeGroup"}

// NodeGroupKind is that kind's description: computed from the state.
var NodeGroupKind = cluster.NewComputedKind(cluster.Kind{GVK: NodeGroupGVK, Resource: "nodegroups",
	ShortNames: []string{"ng"}}, listNodeGroups, &NodeGroup{})

// NodeGroup is the view of one node group.
type NodeGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              NodeGroupSpec   `json:"spec"`
	Status            NodeGroupStatus `json:"status"`
}

// NodeGroupSpec is the group as eksctl and EC2 Auto Scaling define it.
type NodeGroupSpec struct {
	// Managed is true for an EKS managed node group.
	Managed              bool              `json:"managed"`
	AutoScalingGroupName string            `json:"autoScalingGroupName"`
	InstanceTypes        []string          `json:"instanceTypes"`
	CapacityType         string            `json:"capacityType"`
	Zones                []string          `json:"zones"`
	MinSize              int               `json:"minSize"`
	DesiredCapacity      int               `json:"desiredCapacity"`
	MaxSize              int               `json:"maxSize"`
	Labels               map[string]string `json:"labels,omitempty"`
	Taints               []corev1.Taint    `json:"taints,omitempty"`
	Tags                 map[string]string `json:"tags,omitempty"`
}

// NodeGroupStatus is what the group has now.
type NodeGroupStatus struct {
	// Nodes are the group's registered nodes, ReadyNodes those Ready.
	Nodes      int `json:"nodes"`
	ReadyNodes int `json:"readyNodes"`
	// Launching are instances the ASG started that have no node yet.
	Launching int `json:"launching"`
	// Autoscaler is set when cluster-autoscaler manages the group.
	Autoscaler *GroupAutoscaling `json:"autoscaler,omitempty"`
}

// GroupAutoscaling is cluster-autoscaler's view of the group.
type GroupAutoscaling struct {
	// MinSize and MaxSize are the limits cluster-autoscaler respects (the
	// ASG's, or those of its --nodes flag).
	MinSize int `json:"minSize"`
	MaxSize int `json:"maxSize"`
	// Health, ScaleUp and ScaleDown are the group's conditions in the last
	// status cluster-autoscaler wrote; empty before its first loop.
	Health    string `json:"health,omitempty"`
	ScaleUp   string `json:"scaleUp,omitempty"`
	ScaleDown string `json:"scaleDown,omitempty"`
	// Backoff is set while the group is backed off after a failed scale-up.
	Backoff       *GroupBackoffView `json:"backoff,omitempty"`
	LastScaleUp   *metav1.Time      `json:"lastScaleUp,omitempty"`
	LastScaleDown *metav1.Time      `json:"lastScaleDown,omitempty"`
}

// GroupBackoffView is an active backoff.
type GroupBackoffView struct {
	Until        metav1.Time `json:"until"`
	ErrorCode    string      `json:"errorCode"`
	ErrorMessage string      `json:"errorMessage"`
}

// DeepCopyObject implements runtime.Object. Views are built afresh on
// every list, so a shallow copy of the maps is enough for printing.
func (n *NodeGroup) DeepCopyObject() runtime.Object {
	out := *n
	n.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// listNodeGroups builds the views in the state's group order, sorted by name.
func listNodeGroups(s *cluster.State) []runtime.Object {
	managed := map[string]nodegroups.Group{}
	if opts, ok, err := Options(s); ok && err == nil {
		groups, _ := nodegroups.Discover(s, opts)
		for _, g := range groups {
			managed[g.NodeGroup] = g
		}
	}
	all := nodegroups.All(s)
	sort.SliceStable(all, func(i, j int) bool { return all[i].NodeGroup < all[j].NodeGroup })
	out := make([]runtime.Object, 0, len(all))
	for _, g := range all {
		out = append(out, nodeGroupView(s, g, managed))
	}
	return out
}

func nodeGroupView(s *cluster.State, g nodegroups.Group, managed map[string]nodegroups.Group) *NodeGroup {
	ng := g.Source
	ct := "ON_DEMAND"
	if ng.Spot {
		ct = "SPOT"
	}
	types := ng.InstanceTypes
	if len(types) == 0 {
		if it, err := capnodegroups.InstanceType(ng); err == nil {
			types = []string{it.Name}
		}
	}
	v := &NodeGroup{
		TypeMeta: metav1.TypeMeta{Kind: NodeGroupGVK.Kind, APIVersion: NodeGroupGVK.GroupVersion().String()},
		ObjectMeta: metav1.ObjectMeta{Name: ng.Name, CreationTimestamp: metav1.NewTime(ng.CreatedAt),
			Labels: map[string]string{"alpha.eksctl.io/cluster-name": s.Info.Name}},
		Spec: NodeGroupSpec{Managed: ng.Managed, AutoScalingGroupName: g.Name, InstanceTypes: types, CapacityType: ct,
			Zones: capnodegroups.Zones(s.Info, ng), MinSize: ng.MinSize, DesiredCapacity: ng.DesiredSize, MaxSize: ng.MaxSize,
			Labels: ng.Labels, Taints: ng.Taints, Tags: g.Tags},
	}
	for _, n := range g.Nodes(s) {
		v.Status.Nodes++
		if isReady(n) {
			v.Status.ReadyNodes++
		}
	}
	v.Status.Launching = launchingOf(s, ng.Name)
	m, ok := managed[ng.Name]
	if !ok {
		return v
	}
	a := &GroupAutoscaling{MinSize: m.MinSize, MaxSize: m.MaxSize}
	if st := s.Autoscaler.Status; st != nil {
		a.Health = st.Conditions[g.Name+"/health"].Status
		a.ScaleUp = st.Conditions[g.Name+"/scaleUp"].Status
		a.ScaleDown = st.Conditions[g.Name+"/scaleDown"].Status
	}
	if b, on := backedOff(s, g.Name); on {
		a.Backoff = &GroupBackoffView{Until: metav1.NewTime(b.Until), ErrorCode: b.ErrorCode, ErrorMessage: b.ErrorMessage}
	}
	if t, ok := s.Autoscaler.LastGroupScaleUp[ng.Name]; ok {
		mt := metav1.NewTime(t)
		a.LastScaleUp = &mt
	}
	if t, ok := s.Autoscaler.LastGroupScaleDown[ng.Name]; ok {
		mt := metav1.NewTime(t)
		a.LastScaleDown = &mt
	}
	v.Status.Autoscaler = a
	return v
}
