// Package nodename rejects nodes other than the one a pod names in spec.nodeName.
package nodename

import "github.com/berth-sim/berth/internal/scheduler/framework"

// Name is the plugin's name in the profile.
const Name = "NodeName"

// ErrReason is the Filter reason for a different node.
const ErrReason = "node(s) didn't match the requested node name"

// NodeName is the plugin.
type NodeName struct{}

// New builds the plugin.
func New(framework.Handle) framework.Plugin { return &NodeName{} }

func (*NodeName) Name() string { return Name }

// StaticFilter marks the verdict as depending only on the node and the pod's nodeName.
func (*NodeName) StaticFilter() {}

// Filter passes when the pod names no node or names this one.
func (*NodeName) Filter(_ *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	if want := pod.Pod.Spec.NodeName; want != "" && want != nodeInfo.Node.Name {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)
	}
	return nil
}
