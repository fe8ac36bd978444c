package cluster

import (
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// benchState returns the state the persistence benchmarks use: the one in
// $BERTH_BENCH_STATE (a state directory, such as the 5,000-node profile
// cluster), else a generated cluster of nodes, bound pods and events.
func benchState(b *testing.B) *State {
	b.Helper()
	if dir := os.Getenv("BERTH_BENCH_STATE"); dir != "" {
		s, err := Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	return syntheticState(1000, 2000, 10000)
}

// syntheticState is a cluster of nodes with pods bound round-robin and an
// event per pod and then some.
func syntheticState(nodes, pods, events int) *State {
	s := New("1.34", 1)
	for i := 0; i < nodes; i++ {
		name := fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i/250, i%250)
		s.Nodes[name] = &corev1.Node{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(s.NewUID()), ResourceVersion: s.Bump(), Labels: map[string]string{"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": "us-east-1a", "node.kubernetes.io/instance-type": "m5.large"}},
			Status: corev1.NodeStatus{
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("29")},
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1930m"), corev1.ResourceMemory: resource.MustParse("7Gi"), corev1.ResourcePods: resource.MustParse("29")},
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"}},
			},
		}
	}
	names := SortedKeys(s.Nodes)
	for i := 0; i < pods; i++ {
		name := fmt.Sprintf("web-%d", i)
		s.Pods[Key("default", name)] = &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(s.NewUID()), ResourceVersion: s.Bump(), Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{NodeName: names[i%len(names)], Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
	}
	for i := 0; i < events; i++ {
		ref := corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: fmt.Sprintf("web-%d", i%max(pods, 1)), APIVersion: "v1"}
		s.Now = s.Now.Add(1e9)
		s.Record(EventSource{Component: "default-scheduler"}, ref, corev1.EventTypeNormal, "Scheduled", fmt.Sprintf("Successfully assigned default/%s to node %d", ref.Name, i))
	}
	return s
}

func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	if err := benchState(b).Save(dir); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveFull writes the state into a new directory: the first save
// of a state, such as the end of the first `apply`. cpu-ns/op is the
// process's CPU time (user and system, every thread, the collector's
// included) per save, the figure to compare on a shared machine.
func BenchmarkSaveFull(b *testing.B) {
	s := benchState(b)
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		if err := s.Save(dir); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu -= processCPU()
		os.RemoveAll(dir)
		cpu += processCPU()
		b.StartTimer()
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkSaveIncremental saves a loaded state after a small change: one
// node's label and the clock, the shape of `advance` with little due.
func BenchmarkSaveIncremental(b *testing.B) {
	dir := b.TempDir()
	if err := benchState(b).Save(dir); err != nil {
		b.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	node := s.Nodes[SortedKeys(s.Nodes)[0]]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		node.Labels["bench"] = fmt.Sprint(i)
		s.Now = s.Now.Add(1e9)
		if err := s.Save(dir); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClone(b *testing.B) {
	s := benchState(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Clone()
	}
}
