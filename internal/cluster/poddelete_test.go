package cluster

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestGracefulDeletePod(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	cases := []struct {
		name     string
		node     string
		phase    corev1.PodPhase
		spec     *int64 // terminationGracePeriodSeconds
		override *int64
		// earlier is a previous delete's grace period (nil: none).
		earlier   *int64
		wantGone  bool
		wantGrace int64
		wantAt    time.Duration // deletionTimestamp - now
	}{
		{name: "bound: the pod's own period", node: "n1", spec: i64(30), wantGrace: 30, wantAt: 30 * time.Second},
		{name: "override wins", node: "n1", spec: i64(30), override: i64(5), wantGrace: 5, wantAt: 5 * time.Second},
		{name: "zero: at once", node: "n1", spec: i64(0), wantGone: true},
		{name: "no period: at once", node: "n1", wantGone: true},
		{name: "negative: one second", node: "n1", override: i64(-3), wantGrace: 1, wantAt: time.Second},
		{name: "unbound: at once", spec: i64(30), wantGone: true},
		{name: "finished: at once", node: "n1", phase: corev1.PodSucceeded, spec: i64(30), wantGone: true},
		{name: "second delete may shorten", node: "n1", spec: i64(30), earlier: i64(30), override: i64(10), wantGrace: 1},
		{name: "second delete may not lengthen", node: "n1", spec: i64(30), earlier: i64(30), override: i64(60), wantGrace: 30, wantAt: 10 * time.Second},
		{name: "second delete without a period changes nothing", node: "n1", spec: i64(30), earlier: i64(30), wantGrace: 30, wantAt: 10 * time.Second},
		{name: "second delete with zero: gone", node: "n1", spec: i64(30), earlier: i64(30), override: i64(0), wantGone: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New("", 1)
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", Generation: 1},
				Spec:       corev1.PodSpec{NodeName: c.node, TerminationGracePeriodSeconds: c.spec},
				Status:     corev1.PodStatus{Phase: c.phase},
			}
			s.Pods["default/p"] = pod
			if c.earlier != nil {
				if s.GracefulDeletePod(pod, c.earlier) {
					t.Fatal("first delete removed the pod")
				}
				// 20 s of the first grace period pass.
				s.Now = s.Now.Add(20 * time.Second)
			}
			gone := s.GracefulDeletePod(pod, c.override)
			if _, present := s.Pods["default/p"]; gone != !present || gone != c.wantGone {
				t.Fatalf("gone=%v present=%v, want gone=%v", gone, present, c.wantGone)
			}
			if c.wantGone {
				return
			}
			if got := *pod.DeletionGracePeriodSeconds; got != c.wantGrace {
				t.Errorf("deletionGracePeriodSeconds %d, want %d", got, c.wantGrace)
			}
			at := pod.DeletionTimestamp.Sub(s.Now)
			if c.name == "second delete may shorten" {
				// 30 s granted 20 s ago, shortened to 10 s: due 10 s ago,
				// which is moved up to now with one second left.
				if at != 0 || *pod.DeletionGracePeriodSeconds != 1 {
					t.Errorf("shortened into the past: at %v grace %d, want now and 1", at, *pod.DeletionGracePeriodSeconds)
				}
				return
			}
			if at != c.wantAt {
				t.Errorf("deletionTimestamp now%+v, want now%+v", at, c.wantAt)
			}
			if pod.Generation != 2 {
				t.Errorf("generation %d, want 2 (bumped once by the first graceful delete)", pod.Generation)
			}
		})
	}
}

func TestRemoveNodeObjectKeepsPods(t *testing.T) {
	s := New("", 1)
	s.Nodes["n1"] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	s.Scheduler.NodeOrder = []string{"n1"}
	s.Pods["default/p"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: corev1.PodSpec{NodeName: "n1"}}
	s.RemoveNodeObject("n1")
	if _, ok := s.Nodes["n1"]; ok || len(s.Scheduler.NodeOrder) != 0 {
		t.Fatal("node still there")
	}
	if _, ok := s.Pods["default/p"]; !ok {
		t.Fatal("the node's pod went with it; the pod GC collects it later")
	}
	if len(s.NodeLedger) != 1 || s.NodeLedger[0].Name != "n1" {
		t.Fatalf("ledger %+v", s.NodeLedger)
	}
}
