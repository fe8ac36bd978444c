// Package nodeunschedulable filters out cordoned nodes (spec.unschedulable)
// unless the pod tolerates the node.kubernetes.io/unschedulable:NoSchedule taint.
package nodeunschedulable

import (
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Name is the plugin's name in the profile.
const Name = "NodeUnschedulable"

// ErrReasonUnschedulable is the Filter reason for a cordoned node.
const ErrReasonUnschedulable = "node(s) were unschedulable"

// NodeUnschedulable is the plugin.
type NodeUnschedulable struct{}

// New builds the plugin.
func New(framework.Handle) framework.Plugin { return &NodeUnschedulable{} }

func (*NodeUnschedulable) Name() string { return Name }

// StaticFilter marks the verdict as depending only on the node and the pod's tolerations.
func (*NodeUnschedulable) StaticFilter() {}

// unschedulableTaint is checked even when the node lacks the taint object:
// cordoning sets spec.unschedulable before the controller adds the taint.
var unschedulableTaint = v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}

// Filter rejects a cordoned node the pod does not tolerate.
func (*NodeUnschedulable) Filter(_ *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	if !nodeInfo.Node.Spec.Unschedulable {
		return nil
	}
	if corev1helpers.TolerationsTolerateTaint(logr.Discard(), pod.Pod.Spec.Tolerations, &unschedulableTaint, false) {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnschedulable)
}
