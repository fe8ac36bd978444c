// Package tainttoleration filters nodes by NoSchedule/NoExecute taints the pod
// does not tolerate and scores nodes by their untolerated PreferNoSchedule taints.
package tainttoleration

import (
	"fmt"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// Name is the plugin's name in the profile.
const Name = "TaintToleration"

// ErrReasonUntolerated is the reason from 1.34.2 on; older releases name the
// taint (see untoleratedReason).
const ErrReasonUntolerated = "node(s) had untolerated taint(s)"

const preScoreStateKey framework.StateKey = "PreScore" + Name

// TaintToleration is the plugin.
type TaintToleration struct {
	keyValueText bool
}

// New builds the plugin; the reason text follows the cluster's version.
func New(h framework.Handle) framework.Plugin {
	return &TaintToleration{keyValueText: h.Features().TaintKeyValueText}
}

func (*TaintToleration) Name() string { return Name }

// StaticFilter marks the verdict as depending only on the node and the pod's tolerations.
func (*TaintToleration) StaticFilter() {}

// Filter rejects the node on its first untolerated NoSchedule/NoExecute taint.
func (pl *TaintToleration) Filter(_ *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	taint, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logr.Discard(), nodeInfo.Node.Spec.Taints, pod.Pod.Spec.Tolerations, helper.DoNotScheduleTaints, false)
	if !untolerated {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, pl.untoleratedReason(&taint))
}

func (pl *TaintToleration) untoleratedReason(taint *v1.Taint) string {
	if pl.keyValueText {
		return fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value)
	}
	return ErrReasonUntolerated
}

type preScoreState struct {
	tolerationsPreferNoSchedule []v1.Toleration
}

func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore keeps the tolerations that can tolerate PreferNoSchedule taints.
func (pl *TaintToleration) PreScore(state *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo) *framework.Status {
	if len(nodes) == 0 {
		return nil
	}
	var tols []v1.Toleration
	for _, t := range pod.Pod.Spec.Tolerations {
		if t.Effect == "" || t.Effect == v1.TaintEffectPreferNoSchedule {
			tols = append(tols, t)
		}
	}
	state.Write(preScoreStateKey, &preScoreState{tolerationsPreferNoSchedule: tols})
	return nil
}

// Score counts the node's PreferNoSchedule taints the pod does not tolerate.
func (pl *TaintToleration) Score(state *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, ok := state.Read(preScoreStateKey).(*preScoreState)
	if !ok {
		return 0, framework.AsStatus(fmt.Errorf("reading %q from cycleState: not found", preScoreStateKey))
	}
	var n int64
	for i := range nodeInfo.Node.Spec.Taints {
		taint := &nodeInfo.Node.Spec.Taints[i]
		if taint.Effect != v1.TaintEffectPreferNoSchedule {
			continue
		}
		if !corev1helpers.TolerationsTolerateTaint(logr.Discard(), s.tolerationsPreferNoSchedule, taint, false) {
			n++
		}
	}
	return n, nil
}

// ScoreExtensions normalizes so that fewer untolerated taints score higher.
func (pl *TaintToleration) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore reverses the counts onto 0..100.
func (pl *TaintToleration) NormalizeScore(_ *framework.CycleState, _ *framework.PodInfo, scores framework.NodeScoreList) *framework.Status {
	helper.DefaultNormalizeScore(framework.MaxNodeScore, true, scores)
	return nil
}
