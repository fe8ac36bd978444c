package podgc

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/sim"
)

// TestCollection checks when the collector removes a pod whose node is
// lost: at 20 s passes counted from time zero, after the 40 s quarantine
// for orphans, at the first pass for Terminating pods on an out-of-service
// node, never otherwise. want < 0: the pod stays.
func TestCollection(t *testing.T) {
	const never = -1
	cases := []struct {
		name string
		// setup runs at +25s, after the pod was bound at +5s.
		setup func(s *cluster.State, node *corev1.Node, pod *corev1.Pod)
		want  time.Duration
	}{
		{
			name:  "node deleted: first pass +40s, quarantine ends +80s",
			setup: func(s *cluster.State, node *corev1.Node, _ *corev1.Pod) { s.RemoveNodeObject(node.Name) },
			want:  80 * time.Second,
		},
		{
			name: "terminating on a not-ready node with the out-of-service taint: next pass",
			setup: func(s *cluster.State, node *corev1.Node, pod *corev1.Pod) {
				notReady(s, node)
				s.GracefulDeletePod(pod, nil)
				now := metav1.NewTime(s.Now)
				node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute, TimeAdded: &now})
			},
			want: 40 * time.Second,
		},
		{
			name: "terminating on a not-ready node without the taint: stays",
			setup: func(s *cluster.State, node *corev1.Node, pod *corev1.Pod) {
				notReady(s, node)
				s.GracefulDeletePod(pod, nil)
			},
			want: never,
		},
		{
			name: "out-of-service taint on a ready node: stays",
			setup: func(s *cluster.State, node *corev1.Node, pod *corev1.Pod) {
				s.GracefulDeletePod(pod, nil)
				node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeOutOfService, Effect: corev1.TaintEffectNoExecute})
			},
			want: never,
		},
		{
			name: "not terminating on an out-of-service node: left to taint eviction",
			setup: func(s *cluster.State, node *corev1.Node, _ *corev1.Pod) {
				notReady(s, node)
				node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeOutOfService, Effect: corev1.TaintEffectNoExecute})
			},
			want: never,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := controllertest.NewState()
			start := s.Now
			node := controllertest.AddNode(s, "n1", "2", "4Gi", nil)
			s.Now = start.Add(5 * time.Second)
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
				Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "x:1"}}},
			}
			if err := admission.CreatePod(s, pod); err != nil {
				t.Fatal(err)
			}
			s.Now = start.Add(25 * time.Second)
			c.setup(s, node, pod)
			ctrls := []sim.Controller{New()}
			if err := sim.RunNow(s, ctrls); err != nil {
				t.Fatal(err)
			}
			if c.want < 0 {
				if err := sim.Advance(s, ctrls, 10*time.Minute); err != nil {
					t.Fatal(err)
				}
				if _, ok := s.Pods["default/p"]; !ok {
					t.Fatal("pod collected")
				}
				return
			}
			if err := sim.Advance(s, ctrls, start.Add(c.want-time.Second).Sub(s.Now)); err != nil {
				t.Fatal(err)
			}
			if _, ok := s.Pods["default/p"]; !ok {
				t.Fatalf("pod collected before +%v", c.want)
			}
			if err := sim.Advance(s, ctrls, time.Second); err != nil {
				t.Fatal(err)
			}
			if _, ok := s.Pods["default/p"]; ok {
				t.Fatalf("pod still there at +%v", c.want)
			}
			if pod.Status.Phase != corev1.PodFailed {
				t.Errorf("phase %s before the delete, want Failed", pod.Status.Phase)
			}
		})
	}
}

// TestOrphanCondition checks the DisruptionTarget condition an orphan gets
// before it goes.
func TestOrphanCondition(t *testing.T) {
	s := controllertest.NewState()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: "gone", Containers: []corev1.Container{{Name: "c", Image: "x:1"}}},
	}
	if err := admission.CreatePod(s, pod); err != nil {
		t.Fatal(err)
	}
	if err := sim.Advance(s, []sim.Controller{New()}, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Pods["default/p"]; ok {
		t.Fatal("a pod bound to a node that never existed is an orphan")
	}
	var cond *corev1.PodCondition
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.DisruptionTarget {
			cond = &pod.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Reason != OrphanedReason || cond.Message != OrphanedMessage || cond.Status != corev1.ConditionTrue {
		t.Fatalf("condition %+v", cond)
	}
}

func notReady(s *cluster.State, node *corev1.Node) {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			node.Status.Conditions[i].Status = corev1.ConditionUnknown
			node.Status.Conditions[i].LastTransitionTime = metav1.NewTime(s.Now)
		}
	}
}

// TestSkipsLaterOnlyWithoutCandidates: a pass that found no pod to judge
// is skipped at later instants until the next write; one that found an
// orphan waiting out its quarantine is not (its outcome follows the clock).
func TestSkipsLaterOnlyWithoutCandidates(t *testing.T) {
	for _, node := range []string{"n1", "gone"} {
		s := controllertest.NewState()
		controllertest.AddNode(s, "n1", "2", "4Gi", nil)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "x:1"}}},
		}
		if err := admission.CreatePod(s, pod); err != nil {
			t.Fatal(err)
		}
		c := New()
		if changed, err := c.Sync(s); changed || err != nil {
			t.Fatalf("%s: first pass changed %v, err %v", node, changed, err)
		}
		s.Now = s.Now.Add(5 * time.Minute)
		if got, want := c.quiet.Skip(s), node == "n1"; got != want {
			t.Fatalf("pod on %s: skipped later = %v, want %v", node, got, want)
		}
		if node == "gone" {
			if changed, _ := c.Sync(s); !changed {
				t.Fatal("the orphan was not collected after its quarantine")
			}
		}
	}
}
