package controller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/fargate"
	"github.com/berth-sim/berth/internal/scheduler"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/noderesources"
	"github.com/berth-sim/berth/internal/scheduler/plugins/queuesort"
	"github.com/berth-sim/berth/internal/version"
)

// PluginName is the fargate-scheduler profile's own plugin.
const PluginName = "FargateNode"

// waitingReason keeps a pod out of the queue until its node registered.
const waitingReason = "waiting for the pod's Fargate node"

// Scheduler is fargate-scheduler: berth's scheduler with a second profile
// (the same framework, queue and binding as default-scheduler), whose
// plugins admit exactly the node the controller brought up for the pod.
// state returns the cluster the sim runs.
func Scheduler(state func() *cluster.State) *scheduler.Scheduler {
	return scheduler.NewWithProfile(fargate.SchedulerName, Plugins(state))
}

// Plugins is the fargate-scheduler profile: PrioritySort, FargateNode
// (PreEnqueue until the node exists, PreFilter and Filter to that node) and
// NodeResourcesFit, which the node's size always passes.
func Plugins(state func() *cluster.State) func(version.Features) []scheduler.PluginSpec {
	return func(version.Features) []scheduler.PluginSpec {
		return []scheduler.PluginSpec{
			{Name: queuesort.Name, New: queuesort.New},
			{Name: PluginName, New: func(framework.Handle) framework.Plugin { return &nodePlugin{state: state} }},
			{Name: noderesources.FitName, New: noderesources.NewFit},
		}
	}
}

type nodePlugin struct {
	state func() *cluster.State
}

func (*nodePlugin) Name() string { return PluginName }

// nodeOf is the registered node of the pod, or "".
func (pl *nodePlugin) nodeOf(uid string) string {
	s := pl.state()
	if s == nil {
		return ""
	}
	rec := s.Fargate.Pods[types.UID(uid)]
	if rec == nil || !rec.NodeCreated || rec.Rejected {
		return ""
	}
	if _, ok := s.Nodes[rec.Node]; !ok {
		return ""
	}
	return rec.Node
}

// PreEnqueue gates the pod until its node registered.
func (pl *nodePlugin) PreEnqueue(pod *corev1.Pod) *framework.Status {
	if pl.nodeOf(string(pod.UID)) == "" {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, waitingReason)
	}
	return nil
}

// PreFilter narrows the cycle to the pod's node.
func (pl *nodePlugin) PreFilter(_ *framework.CycleState, pod *framework.PodInfo, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	node := pl.nodeOf(string(pod.Pod.UID))
	if node == "" {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, waitingReason)
	}
	return &framework.PreFilterResult{NodeNames: map[string]struct{}{node: {}}}, nil
}

func (*nodePlugin) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter admits only the pod's node.
func (pl *nodePlugin) Filter(_ *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	if ni.Name() != pl.nodeOf(string(pod.Pod.UID)) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) were not the pod's Fargate node")
	}
	return nil
}
