package cluster

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkRecord records what a pod's start-up reports (the kubelet's
// four events and the ReplicaSet's create) for 2,000 pods per op.
func BenchmarkRecord(b *testing.B) {
	const pods = 2000
	refs := make([]corev1.ObjectReference, pods)
	for i := range refs {
		refs[i] = corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default",
			Name: fmt.Sprintf("web-7d4b9c-%05d", i), UID: types.UID(fmt.Sprintf("uid-%05d", i))}
	}
	rs := corev1.ObjectReference{Kind: "ReplicaSet", APIVersion: "apps/v1", Namespace: "default", Name: "web-7d4b9c", UID: "rs"}
	kubelet, rsc := EventSource{Component: "kubelet"}, EventSource{Component: "replicaset-controller"}
	b.ReportAllocs()
	for b.Loop() {
		s := New("1.36", 1)
		for i := range refs {
			s.Now = s.Now.Add(time.Second)
			s.Record(rsc, rs, "Normal", "SuccessfulCreate", "Created pod: "+refs[i].Name)
			s.Record(kubelet, refs[i], "Normal", "Pulled", `Container image "nginx:1.27" already present on machine`)
			s.Record(kubelet, refs[i], "Normal", "Created", "Created container: web")
			s.Record(kubelet, refs[i], "Normal", "Started", "Started container web")
		}
	}
}
