// Package helper holds small pieces shared by the spreading and affinity
// plugins: the system-default spreading selector and the taint filter.
package helper

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

var (
	rcKind = v1.SchemeGroupVersion.WithKind("ReplicationController")
	rsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	ssKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
)

// DefaultSelector is the selector system-default spreading counts pods with:
// the union of the selectors of the Services that select pod, plus the
// selector of its controlling ReplicationController, ReplicaSet or
// StatefulSet. An empty selector means the pod has no such owners.
func DefaultSelector(pod *v1.Pod, h framework.Handle) labels.Selector {
	labelSet := make(labels.Set)
	// Everything here selects the pod, so the label sets cannot conflict.
	for _, svc := range PodServices(pod, h) {
		labelSet = labels.Merge(labelSet, svc.Spec.Selector)
	}
	selector := labelSet.AsSelector()

	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil {
		return selector
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return selector
	}
	switch gv.WithKind(owner.Kind) {
	case rcKind:
		if rc := h.ReplicationController(pod.Namespace, owner.Name); rc != nil {
			labelSet = labels.Merge(labelSet, rc.Spec.Selector)
			selector = labelSet.AsSelector()
		}
	case rsKind:
		if rs := h.ReplicaSet(pod.Namespace, owner.Name); rs != nil {
			selector = addRequirements(selector, rs.Spec.Selector)
		}
	case ssKind:
		if ss := h.StatefulSet(pod.Namespace, owner.Name); ss != nil {
			selector = addRequirements(selector, ss.Spec.Selector)
		}
	}
	return selector
}

func addRequirements(selector labels.Selector, ls *metav1.LabelSelector) labels.Selector {
	other, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return selector
	}
	if reqs, ok := other.Requirements(); ok {
		selector = selector.Add(reqs...)
	}
	return selector
}

// PodServices returns the Services in the pod's namespace whose selector
// matches the pod. A Service with a nil selector selects nothing.
func PodServices(pod *v1.Pod, h framework.Handle) []*v1.Service {
	var out []*v1.Service
	for _, svc := range h.Services(pod.Namespace) {
		if svc.Spec.Selector == nil {
			continue
		}
		if labels.Set(svc.Spec.Selector).AsSelectorPreValidated().Matches(labels.Set(pod.Labels)) {
			out = append(out, svc)
		}
	}
	return out
}

// DoNotScheduleTaints keeps the taints the scheduler refuses to ignore:
// NoSchedule and NoExecute.
func DoNotScheduleTaints(t *v1.Taint) bool {
	return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
}
