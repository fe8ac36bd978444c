package podutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOwners(t *testing.T) {
	pod := func(apiVersion, kind string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind}}}}
	}
	cases := []struct {
		pod          *corev1.Pod
		daemon, node bool
	}{
		{pod("apps/v1", "DaemonSet"), true, false},
		{pod("extensions/v1beta1", "DaemonSet"), false, false}, // another API's kind is not Karpenter's DaemonSet
		{pod("v1", "Node"), false, true},
		{pod("apps/v1", "ReplicaSet"), false, false},
		{&corev1.Pod{}, false, false},
	}
	for i, c := range cases {
		if OwnedByDaemonSet(c.pod) != c.daemon || OwnedByNode(c.pod) != c.node {
			t.Errorf("case %d: daemon %v node %v", i, OwnedByDaemonSet(c.pod), OwnedByNode(c.pod))
		}
	}
}
