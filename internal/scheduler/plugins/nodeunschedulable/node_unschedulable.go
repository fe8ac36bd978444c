// Package nodeunschedulable filters out cordoned nodes (spec.unschedulable)
// unless the pod tolerates the node.kubernetes.io/unschedulable:NoSchedule taint.
package nodeunschedulable

import (
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// Name is the plugin's name in the profile.
const Name = "NodeUnschedulable"

// ErrReasonUnschedulable is the Filter reason for a cordoned node.
const ErrReasonUnschedulable = "node(s) were unschedulable"

// NodeUnschedulable is the plugin. It keeps the current snapshot's
// spec.unschedulable flags by position (docs/scheduler.md#per-snapshot-tables):
// the other static plugins answer snapshot nodes from their own tables, so
// reading the flag there spares the Filter loop a visit to each Node object.
type NodeUnschedulable struct {
	handle framework.Handle
	snap   *helper.SnapshotNodes
	flags  []bool
}

// New builds the plugin.
func New(h framework.Handle) framework.Plugin { return &NodeUnschedulable{handle: h} }

func (*NodeUnschedulable) Name() string { return Name }

// StaticFilter marks the verdict as depending only on the node and the pod's tolerations.
func (*NodeUnschedulable) StaticFilter() {}

// unschedulableTaint is checked even when the node lacks the taint object:
// cordoning sets spec.unschedulable before the controller adds the taint.
var unschedulableTaint = v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}

// Filter rejects a cordoned node the pod does not tolerate.
func (pl *NodeUnschedulable) Filter(_ *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	if !pl.unschedulable(nodeInfo) {
		return nil
	}
	if corev1helpers.TolerationsTolerateTaint(logr.Discard(), pod.Pod.Spec.Tolerations, &unschedulableTaint, false) {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnschedulable)
}

// unschedulable is nodeInfo.Node.Spec.Unschedulable, read from the
// snapshot's flags when they describe the node.
func (pl *NodeUnschedulable) unschedulable(nodeInfo *framework.NodeInfo) bool {
	if pl.handle != nil {
		list := pl.handle.Nodes()
		if !pl.snap.Same(list) {
			pl.snap, pl.flags = helper.NewSnapshotNodes(list), make([]bool, len(list))
			for i, ni := range list {
				pl.flags[i] = ni.Node != nil && ni.Node.Spec.Unschedulable
			}
		}
		if p := pl.snap.Position(nodeInfo); p >= 0 {
			return pl.flags[p]
		}
	}
	return nodeInfo.Node.Spec.Unschedulable
}
