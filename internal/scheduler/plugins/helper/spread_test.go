package helper

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestDefaultSelector(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w"}}
	h := pt.NewHandle(nil, nil)
	h.ServiceObjs = []*v1.Service{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "front"}, Spec: v1.ServiceSpec{Selector: map[string]string{"tier": "front"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nil"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other"}, Spec: v1.ServiceSpec{Selector: map[string]string{"tier": "back"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: "x"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "w"}}},
	}
	h.ReplicaSetObjs = []*appsv1.ReplicaSet{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs"}, Spec: appsv1.ReplicaSetSpec{Selector: sel}}}
	h.StatefulSetObjs = []*appsv1.StatefulSet{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ss"}, Spec: appsv1.StatefulSetSpec{Selector: sel}}}
	h.ReplicationControllers = []*v1.ReplicationController{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc"}, Spec: v1.ReplicationControllerSpec{Selector: map[string]string{"app": "w"}}}}

	owned := func(apiVersion, kind, name string, controller bool, lbls map[string]string) *v1.Pod {
		p := pt.Pod("ns", "p", "", lbls)
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, Controller: ptr.To(controller)}}
		return p
	}
	both := map[string]string{"app": "w", "tier": "front"}
	tests := []struct {
		name string
		pod  *v1.Pod
		// matches / misses are label sets the selector must accept / reject.
		matches, misses []map[string]string
		empty           bool
	}{
		{name: "service only", pod: pt.Pod("ns", "p", "", map[string]string{"tier": "front"}),
			matches: []map[string]string{{"tier": "front", "x": "y"}}, misses: []map[string]string{{"app": "w"}}},
		{name: "service and ReplicaSet", pod: owned("apps/v1", "ReplicaSet", "rs", true, both),
			matches: []map[string]string{both}, misses: []map[string]string{{"app": "w"}, {"tier": "front"}}},
		{name: "StatefulSet", pod: owned("apps/v1", "StatefulSet", "ss", true, map[string]string{"app": "w"}),
			matches: []map[string]string{{"app": "w"}}, misses: []map[string]string{{"app": "v"}}},
		{name: "ReplicationController", pod: owned("v1", "ReplicationController", "rc", true, map[string]string{"app": "w"}),
			matches: []map[string]string{{"app": "w"}}, misses: []map[string]string{{}}},
		{name: "non-controller owner is ignored", pod: owned("apps/v1", "ReplicaSet", "rs", false, map[string]string{"app": "w"}), empty: true},
		{name: "unsupported kind is ignored", pod: owned("batch/v1", "Job", "j", true, map[string]string{"app": "w"}), empty: true},
		{name: "missing ReplicaSet is ignored", pod: owned("apps/v1", "ReplicaSet", "gone", true, map[string]string{"app": "w"}), empty: true},
		{name: "nothing selects the pod", pod: pt.Pod("ns", "p", "", map[string]string{"app": "w"}), empty: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultSelector(tt.pod, h)
			if s.Empty() != tt.empty {
				t.Fatalf("Empty() = %v, want %v (selector %q)", s.Empty(), tt.empty, s.String())
			}
			for _, m := range tt.matches {
				if !s.Matches(labels.Set(m)) {
					t.Errorf("%q should match %v", s.String(), m)
				}
			}
			for _, m := range tt.misses {
				if s.Matches(labels.Set(m)) {
					t.Errorf("%q should not match %v", s.String(), m)
				}
			}
		})
	}
}
