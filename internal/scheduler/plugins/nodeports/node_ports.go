// Package nodeports rejects nodes where a host port the pod asks for is taken.
package nodeports

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Name is the plugin's name in the profile.
const Name = "NodePorts"

// ErrReason is the Filter reason for a port conflict.
const ErrReason = "node(s) didn't have free ports for the requested pod ports"

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// NodePorts is the plugin.
type NodePorts struct{}

// New builds the plugin.
func New(framework.Handle) framework.Plugin { return &NodePorts{} }

func (*NodePorts) Name() string { return Name }

type preFilterState []v1.ContainerPort

func (s preFilterState) Clone() framework.StateData { return s }

// PreFilter collects the wanted host ports; a pod without any skips Filter.
func (pl *NodePorts) PreFilter(state *framework.CycleState, pod *framework.PodInfo, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	ports := framework.HostPorts(pod.Pod) // order is moot: Conflict asks of any
	if len(ports) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, preFilterState(ports))
	return nil, nil
}

// PreFilterExtensions: ports are read from the NodeInfo itself.
func (pl *NodePorts) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter fails when any wanted port clashes with one in use on the node.
func (pl *NodePorts) Filter(state *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	ports, ok := state.Read(preFilterStateKey).(preFilterState)
	if !ok {
		return framework.AsStatus(fmt.Errorf("reading %q from cycleState: not found", preFilterStateKey))
	}
	if Conflict(ports, nodeInfo) {
		return framework.NewStatus(framework.Unschedulable, ErrReason)
	}
	return nil
}

// Conflict reports whether any of ports is in use on the node (the kubelet's
// admission asks the same).
func Conflict(ports []v1.ContainerPort, nodeInfo *framework.NodeInfo) bool {
	for _, p := range ports {
		if nodeInfo.UsedPorts.CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			return true
		}
	}
	return false
}
