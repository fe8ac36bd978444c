// Package why answers "why is this pod Pending, and what would fix it"
// across every layer that places pods: kube-scheduler (each Filter
// plugin's verdict on each node, grouped), Karpenter (each NodePool), the
// cluster-autoscaler (each node group) and Fargate (each profile); then it
// tries small changes to the pod or the capacity on throw-away copies and
// keeps those that make the pod schedule (docs/why.md).
//
// Nothing here writes to the cluster: every question goes through the
// side-effect-free seams (scheduler.Simulate, the provisioning solve on a
// prepared input, the autoscaler's Plan on a copied state).
package why

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	autoscaler "github.com/berth-sim/berth/internal/autoscaler/controller"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/fargate"
	"github.com/berth-sim/berth/internal/karpenter/provisioner"
)

// Report is the whole answer for one pod.
type Report struct {
	Pod       string `json:"pod"`
	Phase     string `json:"phase"`
	Scheduler string `json:"schedulerName"`
	// Node is where the pod is bound ("" while Pending).
	Node string `json:"node,omitempty"`
	// LastFailedScheduling is the newest FailedScheduling event's message
	// from the pod's scheduler, as `kubectl describe` shows it.
	LastFailedScheduling string `json:"lastFailedScheduling,omitempty"`
	// SchedulerLayer is kube-scheduler's view (nil for Fargate pods, which
	// fargate-scheduler places).
	SchedulerLayer *SchedulerLayer `json:"scheduler,omitempty"`
	Karpenter      []PoolVerdict   `json:"karpenter,omitempty"`
	// KarpenterLastEvent and AutoscalerLastEvent are the newest
	// FailedScheduling from Karpenter and NotTriggerScaleUp from
	// cluster-autoscaler, beside which the per-pool and per-group answers
	// can be read.
	KarpenterLastEvent  string           `json:"karpenterLastEvent,omitempty"`
	AutoscalerLastEvent string           `json:"autoscalerLastEvent,omitempty"`
	NodeGroups          []GroupVerdict   `json:"nodeGroups,omitempty"`
	Fargate             []ProfileVerdict `json:"fargate,omitempty"`
	// Fixes are the verified suggestions, smallest change first.
	Fixes []Fix `json:"fixes,omitempty"`
	// AlsoPending names the other pending pods of the same workload that
	// share this pod's spec (when asked about a workload).
	AlsoPending []string `json:"alsoPending,omitempty"`
}

// Options tune one question.
type Options struct {
	// NoFixes skips the suggestions (they re-run the simulation per
	// candidate).
	NoFixes bool
}

// Pod explains one pod.
func Pod(s *cluster.State, pod *corev1.Pod, o Options) (*Report, error) {
	r := &Report{
		Pod:       cluster.Key(pod.Namespace, pod.Name),
		Phase:     string(pod.Status.Phase),
		Scheduler: schedulerName(pod),
		Node:      pod.Spec.NodeName,
	}
	if r.Phase == "" {
		r.Phase = string(corev1.PodPending)
	}
	r.LastFailedScheduling = lastFailedScheduling(s, pod)
	if r.Scheduler != fargateScheduler {
		layer, err := schedulerLayer(s, pod)
		if err != nil {
			return nil, err
		}
		r.SchedulerLayer = layer
	}
	if pod.Spec.NodeName != "" {
		return r, nil
	}
	var err error
	if r.Karpenter, err = karpenterLayer(s, pod); err != nil {
		return nil, err
	}
	if r.NodeGroups, err = autoscalerLayer(s, pod); err != nil {
		return nil, err
	}
	if len(r.Karpenter) > 0 {
		r.KarpenterLastEvent = lastEvent(s, pod, provisioner.Name, "FailedScheduling")
	}
	if len(r.NodeGroups) > 0 {
		r.AutoscalerLastEvent = lastEvent(s, pod, autoscaler.Name, "NotTriggerScaleUp")
	}
	r.Fargate = fargateLayer(s, pod)
	if !o.NoFixes && r.Scheduler != fargateScheduler {
		if r.Fixes, err = fixes(s, pod, r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Workload explains the pending pods of a Deployment or StatefulSet: the
// first pending pod of each distinct spec in full, the others by name.
func Workload(s *cluster.State, kind, namespace, name string, o Options) ([]*Report, error) {
	pods, err := workloadPods(s, kind, namespace, name)
	if err != nil {
		return nil, err
	}
	var out []*Report
	bySpec := map[string]*Report{}
	for _, p := range pods {
		if p.Spec.NodeName != "" || cluster.IsTerminal(p) || p.DeletionTimestamp != nil {
			continue
		}
		sig := specSignature(p)
		if r := bySpec[sig]; r != nil {
			r.AlsoPending = append(r.AlsoPending, p.Name)
			continue
		}
		r, err := Pod(s, p, o)
		if err != nil {
			return nil, err
		}
		bySpec[sig] = r
		out = append(out, r)
	}
	return out, nil
}

// workloadPods lists the pods a Deployment (through its ReplicaSets) or a
// StatefulSet owns, by name.
func workloadPods(s *cluster.State, kind, namespace, name string) ([]*corev1.Pod, error) {
	owners := map[string]bool{}
	switch kind {
	case "deployment", "deployments", "deploy":
		d := s.Deployments[cluster.Key(namespace, name)]
		if d == nil {
			return nil, fmt.Errorf(`deployments.apps %q not found`, name)
		}
		for _, rs := range s.ReplicaSets {
			if rs.Namespace == namespace && ownedBy(rs.OwnerReferences, d.UID) {
				owners[string(rs.UID)] = true
			}
		}
	case "statefulset", "statefulsets", "sts":
		ss := s.StatefulSets[cluster.Key(namespace, name)]
		if ss == nil {
			return nil, fmt.Errorf(`statefulsets.apps %q not found`, name)
		}
		owners[string(ss.UID)] = true
	default:
		return nil, fmt.Errorf("why: %s is not a pod, deployment or statefulset", kind)
	}
	var out []*corev1.Pod
	for _, key := range cluster.SortedKeys(s.Pods) {
		p := s.Pods[key]
		if p.Namespace != namespace {
			continue
		}
		for _, ref := range p.OwnerReferences {
			if ref.Controller != nil && *ref.Controller && owners[string(ref.UID)] {
				out = append(out, p)
				break
			}
		}
	}
	return out, nil
}

func ownedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid && r.Controller != nil && *r.Controller {
			return true
		}
	}
	return false
}

// specSignature groups pods that share everything placement reads:
// pods of one ReplicaSet differ only in name. StatefulSet pods carry
// their own claims, so each is asked about separately.
func specSignature(p *corev1.Pod) string {
	for _, ref := range p.OwnerReferences {
		if ref.Kind == "ReplicaSet" {
			return "rs/" + string(ref.UID)
		}
	}
	return "pod/" + p.Name
}

const fargateScheduler = fargate.SchedulerName

func schedulerName(p *corev1.Pod) string {
	if p.Spec.SchedulerName == "" {
		return corev1.DefaultSchedulerName
	}
	return p.Spec.SchedulerName
}

// lastFailedScheduling is the newest FailedScheduling message the pod's
// own scheduler recorded (Karpenter records its own under that reason).
func lastFailedScheduling(s *cluster.State, pod *corev1.Pod) string {
	return lastEvent(s, pod, schedulerName(pod), "FailedScheduling")
}

// lastEvent is the newest message component recorded about the pod with
// reason, "" when there is none.
func lastEvent(s *cluster.State, pod *corev1.Pod, component, reason string) string {
	msg := ""
	for _, e := range s.Events {
		if e.Reason == reason && e.InvolvedObject.Kind == "Pod" && e.InvolvedObject.UID == pod.UID &&
			e.Source.Component == component {
			msg = e.Message
		}
	}
	return msg
}
