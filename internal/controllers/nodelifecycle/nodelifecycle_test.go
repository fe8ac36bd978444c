package nodelifecycle

import (
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/sim"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var started = metav1.NewTime(cluster.Epoch)

// runningPod is a started pod on node with the given pod conditions.
func runningPod(s *cluster.State, name, node string, conds ...corev1.PodCondition) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}
	if err := admission.CreatePod(s, p); err != nil {
		panic(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = conds
	return p
}

func cond(t corev1.PodConditionType, st corev1.ConditionStatus) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: st, LastTransitionTime: started}
}

func setNodeReady(node *corev1.Node, st corev1.ConditionStatus) {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			node.Status.Conditions[i].Status = st
		}
	}
}

func TestMarkPodsNotReady(t *testing.T) {
	readyPod := []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue), cond(corev1.ContainersReady, corev1.ConditionTrue)}
	cases := []struct {
		name      string
		nodeReady corev1.ConditionStatus // "" removes the node's Ready condition
		podNode   string                 // defaults to n1
		conds     []corev1.PodCondition
		wantMark  bool
	}{
		{name: "unknown node marks ready pod", nodeReady: corev1.ConditionUnknown, conds: readyPod, wantMark: true},
		{name: "false node marks ready pod", nodeReady: corev1.ConditionFalse, conds: readyPod, wantMark: true},
		{name: "ready node leaves pod", nodeReady: corev1.ConditionTrue, conds: readyPod},
		{name: "node not yet observed", nodeReady: "", conds: readyPod},
		{name: "pod on another node", nodeReady: corev1.ConditionUnknown, podNode: "n2", conds: readyPod},
		{name: "pod without Ready condition", nodeReady: corev1.ConditionUnknown,
			conds: []corev1.PodCondition{cond(corev1.PodScheduled, corev1.ConditionTrue)}},
		{name: "pod already not ready", nodeReady: corev1.ConditionUnknown,
			conds: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionFalse), cond(corev1.ContainersReady, corev1.ConditionFalse)}},
		{name: "pod Ready Unknown", nodeReady: corev1.ConditionUnknown,
			conds: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionUnknown)}, wantMark: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := controllertest.NewState()
			n1 := controllertest.AddNode(s, "n1", "2", "4Gi", nil)
			controllertest.AddNode(s, "n2", "2", "4Gi", nil)
			if c.nodeReady == "" {
				n1.Status.Conditions = nil
			} else {
				setNodeReady(n1, c.nodeReady)
			}
			node := c.podNode
			if node == "" {
				node = "n1"
			}
			pod := runningPod(s, "a", node, append([]corev1.PodCondition(nil), c.conds...)...)
			before := pod.DeepCopy()
			s.Now = cluster.Epoch.Add(40 * time.Second)

			ctrl := New()
			changed, err := ctrl.Sync(s)
			if err != nil {
				t.Fatal(err)
			}
			if changed != c.wantMark {
				t.Fatalf("changed = %v, want %v", changed, c.wantMark)
			}
			events := s.EventsFor("Pod", "default", "a")
			if !c.wantMark {
				if pod.ResourceVersion != before.ResourceVersion || len(events) != 0 {
					t.Fatalf("pod touched: rv %s -> %s, events %+v", before.ResourceVersion, pod.ResourceVersion, events)
				}
				for i := range before.Status.Conditions {
					if pod.Status.Conditions[i] != before.Status.Conditions[i] {
						t.Fatalf("condition changed: %+v", pod.Status.Conditions[i])
					}
				}
				return
			}
			ready := controllerutil.GetPodCondition(&pod.Status, corev1.PodReady)
			if ready.Status != corev1.ConditionFalse || !ready.LastTransitionTime.Time.Equal(s.Now) || ready.Reason != "" || ready.Message != "" {
				t.Fatalf("Ready = %+v", ready)
			}
			// Only Ready is written; ContainersReady keeps what the kubelet said.
			for i, old := range before.Status.Conditions {
				if old.Type != corev1.PodReady && pod.Status.Conditions[i] != old {
					t.Fatalf("%s changed: %+v", old.Type, pod.Status.Conditions[i])
				}
			}
			if pod.ResourceVersion == before.ResourceVersion {
				t.Fatal("resourceVersion not bumped")
			}
			if len(events) != 1 || events[0].Type != corev1.EventTypeWarning || events[0].Reason != "NodeNotReady" ||
				events[0].Message != "Node is not ready" || events[0].Source.Component != "node-controller" {
				t.Fatalf("events %+v", events)
			}
			// Once: a second sync finds nothing to do.
			rv := pod.ResourceVersion
			if changed, _ := ctrl.Sync(s); changed || pod.ResourceVersion != rv || len(s.EventsFor("Pod", "default", "a")) != 1 {
				t.Fatalf("second sync changed the pod (changed=%v rv %s -> %s)", changed, rv, pod.ResourceVersion)
			}
		})
	}
}

func TestMarkKeepsReasonAndProbeTime(t *testing.T) {
	s := controllertest.NewState()
	n1 := controllertest.AddNode(s, "n1", "2", "4Gi", nil)
	setNodeReady(n1, corev1.ConditionUnknown)
	probe := metav1.NewTime(cluster.Epoch.Add(time.Second))
	pod := runningPod(s, "a", "n1", corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue,
		Reason: "SomeReason", Message: "some message", LastProbeTime: probe, LastTransitionTime: started})
	s.Now = cluster.Epoch.Add(time.Minute)
	if _, err := New().Sync(s); err != nil {
		t.Fatal(err)
	}
	got := pod.Status.Conditions[0]
	want := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse,
		Reason: "SomeReason", Message: "some message", LastProbeTime: probe, LastTransitionTime: metav1.NewTime(s.Now)}
	if got != want {
		t.Fatalf("Ready = %+v, want %+v", got, want)
	}
}

// With the kubelet model running too, a pod that was Ready stays not ready
// while its node is not Ready, and a pod bound meanwhile is not started.
func TestKubeletDoesNotUndoMark(t *testing.T) {
	s := controllertest.NewState()
	n1 := controllertest.AddNode(s, "n1", "2", "4Gi", nil)
	ctrls := []sim.Controller{kubelet.New(), New()}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}
	if err := admission.CreatePod(s, pod); err != nil {
		t.Fatal(err)
	}
	if err := sim.Settle(s, ctrls, time.Hour); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.IsPodReady(pod) {
		t.Fatalf("pod did not start: %+v", pod.Status)
	}
	setNodeReady(n1, corev1.ConditionUnknown)
	late := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}
	if err := admission.CreatePod(s, late); err != nil {
		t.Fatal(err)
	}
	if err := sim.Advance(s, ctrls, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	if controllerutil.IsPodReady(pod) {
		t.Fatalf("pod Ready again: %+v", pod.Status.Conditions)
	}
	if cr := controllerutil.GetPodCondition(&pod.Status, corev1.ContainersReady); cr == nil || cr.Status != corev1.ConditionTrue {
		t.Fatalf("ContainersReady = %+v", cr)
	}
	if late.Status.StartTime != nil || late.Status.Phase != corev1.PodPending {
		t.Fatalf("pod bound to a not-ready node started: %+v", late.Status)
	}
	if ev := s.EventsFor("Pod", "default", "a"); ev[len(ev)-1].Reason != NodeNotReadyReason || ev[len(ev)-1].Count != 1 {
		t.Fatalf("last event %+v", ev[len(ev)-1])
	}
}
