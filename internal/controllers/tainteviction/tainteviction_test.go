package tainteviction

import (
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	"github.com/berth-sim/berth/internal/sim"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func i64(v int64) *int64 { return &v }

func TestEvictionTiming(t *testing.T) {
	taint := corev1.Taint{Key: "maintenance", Value: "true", Effect: corev1.TaintEffectNoExecute}
	cases := []struct {
		name        string
		tolerations []corev1.Toleration
		taints      []corev1.Taint
		wantAfter   time.Duration // -1: never evicted within the test
	}{
		{"untolerated: now", nil, []corev1.Taint{taint}, 0},
		{"tolerated forever", []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists}}, []corev1.Taint{taint}, -1},
		{"tolerationSeconds 60", []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists, TolerationSeconds: i64(60)}}, []corev1.Taint{taint}, 60 * time.Second},
		{"zero seconds: now", []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists, TolerationSeconds: i64(0)}}, []corev1.Taint{taint}, 0},
		{"shortest of two", []corev1.Toleration{
			{Key: "maintenance", Operator: corev1.TolerationOpExists, TolerationSeconds: i64(120)},
			{Key: "other", Operator: corev1.TolerationOpExists, TolerationSeconds: i64(30)},
		}, []corev1.Taint{taint, {Key: "other", Effect: corev1.TaintEffectNoExecute}}, 30 * time.Second},
		{"NoSchedule ignored", nil, []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectNoSchedule}}, -1},
		// The default not-ready toleration (300 s) applies to a not-ready node.
		{"default not-ready toleration", nil, []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}}, 300 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := controllertest.NewState()
			node := controllertest.AddNode(s, "n1", "2", "4Gi", nil)
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
				Spec:       corev1.PodSpec{NodeName: "n1", Tolerations: c.tolerations, Containers: []corev1.Container{{Name: "c", Image: "x:1"}}},
			}
			if err := admission.CreatePod(s, pod); err != nil {
				t.Fatal(err)
			}
			s.Now = s.Now.Add(10 * time.Second)
			added := metav1.NewTime(s.Now)
			for _, tn := range c.taints {
				tn.TimeAdded = &added
				node.Spec.Taints = append(node.Spec.Taints, tn)
			}
			ctrls := []sim.Controller{New()}
			if err := sim.RunNow(s, ctrls); err != nil {
				t.Fatal(err)
			}
			if err := sim.Advance(s, ctrls, 10*time.Minute); err != nil {
				t.Fatal(err)
			}
			events := s.EventsFor("Pod", "default", "p")
			// Evicted means marked for deletion: the pod then waits,
			// Terminating, for a kubelet this test does not run.
			live, present := s.Pods["default/p"]
			present = present && live.DeletionTimestamp == nil
			if c.wantAfter < 0 {
				if !present || len(events) != 0 {
					t.Fatalf("pod evicted: present=%v events=%v", present, events)
				}
				return
			}
			if present {
				t.Fatal("pod not evicted")
			}
			if len(events) != 1 || events[0].Reason != EvictionReason || events[0].Message != "Marking for deletion Pod default/p" ||
				events[0].Source.Component != Name {
				t.Fatalf("events %+v", events)
			}
			if got := events[0].FirstTimestamp.Sub(added.Time); got != c.wantAfter {
				t.Fatalf("evicted %v after the taint, want %v", got, c.wantAfter)
			}
			if cond := controllerutil.GetPodCondition(&pod.Status, corev1.DisruptionTarget); cond == nil || cond.Reason != DisruptionTargetReason {
				t.Fatalf("DisruptionTarget condition %+v", cond)
			}
		})
	}
}

func TestCancelWhenTaintRemoved(t *testing.T) {
	s := controllertest.NewState()
	node := controllertest.AddNode(s, "n1", "2", "4Gi", nil, corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "x:1"}}}}
	admission.CreatePod(s, pod)
	ctrls := []sim.Controller{New()}
	if err := sim.Advance(s, ctrls, time.Minute); err != nil {
		t.Fatal(err)
	}
	node.Spec.Taints = nil
	if err := sim.Advance(s, ctrls, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Pods["default/p"]; !ok {
		t.Fatal("pod evicted after the taint went away")
	}
	ev := s.EventsFor("Pod", "default", "p")
	if len(ev) != 1 || ev[0].Message != "Cancelling deletion of Pod default/p" || !ev[0].FirstTimestamp.Time.Equal(cluster.Epoch.Add(time.Minute)) {
		t.Fatalf("events %+v", ev)
	}
}
