// Package defaultpreemption is the DefaultPreemption PostFilter. For now it
// decides whether preemption could help and produces upstream's message when
// it cannot; evicting victims and nominating a node come later.
//
// When some node would fit after removing its lower-priority pods, upstream
// would evict them and nominate that node, and its FailedScheduling message
// carries no PostFilter text. berth returns Success without a nominated
// node: the pod stays Pending with that same message (no "preemption: ...").
package defaultpreemption

import (
	"errors"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// Name is the plugin's name in the profile.
const Name = "DefaultPreemption"

// Messages as upstream prints them.
const (
	MsgNotHelpful       = "Preemption is not helpful for scheduling"
	MsgNoVictims        = "No preemption victims found for incoming pod"
	MsgPolicyNever      = "not eligible due to preemptionPolicy=Never."
	preemptionMsgPrefix = "preemption: "
)

// Runner is what preemption needs from the scheduler: re-running Filter on a
// modified node and telling PreFilter state that a pod went away. The
// scheduler's Handle implements it.
type Runner interface {
	RunFilterPlugins(state *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status
	RunPreFilterExtensionRemovePod(state *framework.CycleState, pod *framework.PodInfo, victim *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status
}

// DefaultPreemption is the plugin.
type DefaultPreemption struct {
	handle framework.Handle
	runner Runner
}

// New builds the plugin; h should also implement Runner.
func New(h framework.Handle) framework.Plugin {
	r, _ := h.(Runner)
	return &DefaultPreemption{handle: h, runner: r}
}

func (*DefaultPreemption) Name() string { return Name }

// PostFilter evaluates every node whose Filter status was exactly
// Unschedulable: U&U nodes cannot be helped by removing pods.
func (pl *DefaultPreemption) PostFilter(state *framework.CycleState, pod *framework.PodInfo, filtered framework.NodeToStatus) (*framework.PostFilterResult, *framework.Status) {
	if p := pod.Pod.Spec.PreemptionPolicy; p != nil && *p == v1.PreemptNever {
		return nil, framework.NewStatus(framework.Unschedulable, preemptionMsgPrefix+MsgPolicyNever)
	}
	if pl.runner == nil {
		return nil, framework.AsStatus(errors.New("preemption: scheduler handle cannot run filters"))
	}
	nodes := pl.handle.Nodes()
	result := framework.NodeToStatus{
		Statuses: map[string]*framework.Status{},
		Absent:   framework.NewStatus(framework.UnschedulableAndUnresolvable, MsgNotHelpful),
	}
	for _, ni := range nodes {
		if helper.StatusOf(filtered, ni.Name()).Code() != framework.Unschedulable {
			continue
		}
		st := pl.evaluateNode(state, pod, ni)
		if st.IsSuccess() {
			// A candidate exists: upstream would preempt here (see package doc).
			return &framework.PostFilterResult{}, nil
		}
		result.Statuses[ni.Name()] = st
	}
	fe := helper.FitError{NumAllNodes: len(nodes), NodeToStatus: result}
	return nil, framework.NewStatus(framework.Unschedulable, preemptionMsgPrefix+fe.Error())
}

// evaluateNode removes every pod of strictly lower priority from a copy of
// the node and re-runs Filter; Success means the pod would fit.
func (pl *DefaultPreemption) evaluateNode(state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	prio := corev1helpers.PodPriority(pod.Pod)
	var victims []*framework.PodInfo
	for _, p := range ni.Pods {
		if corev1helpers.PodPriority(p.Pod) < prio {
			victims = append(victims, p)
		}
	}
	if len(victims) == 0 {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, MsgNoVictims)
	}
	node := ni.Clone()
	cs := state.Clone()
	for _, v := range victims {
		node.RemovePod(v.Pod)
		if st := pl.runner.RunPreFilterExtensionRemovePod(cs, pod, v, node); !st.IsSuccess() {
			return st
		}
	}
	return pl.runner.RunFilterPlugins(cs, pod, node)
}
