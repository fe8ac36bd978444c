package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWrites(t *testing.T) {
	cases := []struct {
		name string
		// write is applied to a state holding one pod, ns/p, on no node.
		write func(s *State, p *corev1.Pod)
		// Wanted effects: pod still stored, its node, its resource version
		// (empty: untouched), how far the state's version and the
		// scheduling generation move.
		stored   bool
		node     string
		rv       string
		versions int64
		woken    bool
	}{
		// A pending pod's removal is no cluster event for other pods.
		{name: "delete", write: func(s *State, p *corev1.Pod) { s.DeletePod(p) },
			versions: 1},
		{name: "delete bound", write: func(s *State, p *corev1.Pod) { p.Spec.NodeName = "n1"; s.DeletePod(p) },
			node: "n1", versions: 1, woken: true},
		{name: "delete twice", write: func(s *State, p *corev1.Pod) { p.Spec.NodeName = "n1"; s.DeletePod(p); s.DeletePod(p) },
			node: "n1", versions: 1, woken: true},
		{name: "delete a stranger", write: func(s *State, _ *corev1.Pod) {
			s.DeletePod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"}})
		}, stored: true},
		{name: "bind", write: func(s *State, p *corev1.Pod) { s.BindPod(p, "n1") },
			stored: true, node: "n1", rv: "1", versions: 1, woken: true},
		{name: "status changed", write: func(s *State, p *corev1.Pod) {
			s.UpdatePodStatus(p, func(st *corev1.PodStatus) bool { st.Phase = corev1.PodRunning; return true })
		}, stored: true, rv: "1", versions: 1},
		{name: "status unchanged", write: func(s *State, p *corev1.Pod) {
			s.UpdatePodStatus(p, func(*corev1.PodStatus) bool { return false })
		}, stored: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New("", 1)
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
			s.Pods[Key("ns", "p")] = p
			rv, gen := s.ResourceVersion, s.SchedulingGeneration
			tc.write(s, p)
			if _, ok := s.Pods["ns/p"]; ok != tc.stored {
				t.Errorf("stored = %v, want %v", ok, tc.stored)
			}
			if p.Spec.NodeName != tc.node {
				t.Errorf("nodeName = %q, want %q", p.Spec.NodeName, tc.node)
			}
			if p.ResourceVersion != tc.rv {
				t.Errorf("resourceVersion = %q, want %q", p.ResourceVersion, tc.rv)
			}
			if got := s.ResourceVersion - rv; got != tc.versions {
				t.Errorf("state version moved by %d, want %d", got, tc.versions)
			}
			if woken := s.SchedulingGeneration != gen; woken != tc.woken {
				t.Errorf("scheduler woken = %v, want %v", woken, tc.woken)
			}
		})
	}
}

func TestUpdatePodStatusReports(t *testing.T) {
	s := New("", 1)
	p := &corev1.Pod{}
	if s.UpdatePodStatus(p, func(*corev1.PodStatus) bool { return false }) {
		t.Error("no change reported as a write")
	}
	if !s.UpdatePodStatus(p, func(st *corev1.PodStatus) bool { st.Message = "m"; return true }) || p.Status.Message != "m" {
		t.Error("change not applied or not reported")
	}
}
