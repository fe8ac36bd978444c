package replicaset

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/sim"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

func newRS(replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": "web"}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}}},
		},
	}
}

func ctrls() []sim.Controller { return []sim.Controller{New(), controllertest.Binder{}, kubelet.New()} }

func TestScaleUpAndDown(t *testing.T) {
	s := controllertest.NewState()
	controllertest.AddNode(s, "n1", "4", "8Gi", nil)
	if err := admission.Create(s, newRS(3)); err != nil {
		t.Fatal(err)
	}
	if err := sim.Settle(s, ctrls(), time.Hour); err != nil {
		t.Fatal(err)
	}
	rs := s.ReplicaSets["default/web"]
	pods := ActivePods(s, rs)
	if len(pods) != 3 {
		t.Fatalf("want 3 pods, got %d", len(pods))
	}
	for _, p := range pods {
		if !strings.HasPrefix(p.Name, "web-") || len(p.Name) != 9 || !controllerutil.IsControlledBy(p, string(rs.UID)) {
			t.Errorf("pod %s not named or owned as upstream", p.Name)
		}
	}
	st := rs.Status
	if st.Replicas != 3 || st.ReadyReplicas != 3 || st.AvailableReplicas != 3 || st.FullyLabeledReplicas != 3 || st.ObservedGeneration != 1 {
		t.Fatalf("status %+v", st)
	}
	events := s.EventsFor("ReplicaSet", "default", "web")
	if len(events) != 3 {
		t.Fatalf("want 3 events, got %d", len(events))
	}
	for _, e := range events {
		name := strings.TrimPrefix(e.Message, "Created pod: ")
		if e.Reason != SuccessfulCreateReason || e.Source.Component != Name || s.Pods[cluster.Key("default", name)] == nil {
			t.Errorf("event %s %q does not name a created pod", e.Reason, e.Message)
		}
	}

	// Make one pod unready: scale-down must pick it first.
	victim := pods[1]
	for i := range victim.Status.Conditions {
		if victim.Status.Conditions[i].Type == corev1.PodReady {
			victim.Status.Conditions[i].Status = corev1.ConditionFalse
		}
	}
	one := int32(2)
	rs.Spec.Replicas = &one
	gen := s.SchedulingGeneration
	if err := sim.RunNow(s, []sim.Controller{New()}); err != nil {
		t.Fatal(err)
	}
	// Deleted gracefully: Terminating for its grace period, the others untouched.
	for _, p := range s.Pods {
		if (p.DeletionTimestamp != nil) != (p.Name == victim.Name) {
			t.Fatalf("pod %s terminating=%t: the unready pod should have been deleted first", p.Name, p.DeletionTimestamp != nil)
		}
	}
	if s.SchedulingGeneration != gen {
		// Only the deletionTimestamp is set: a plain pod Update no
		// scheduling plugin registers; the Delete event comes when the
		// kubelet has stopped the pod and the object goes.
		t.Fatal("a graceful delete announced a scheduling event")
	}
	last := s.EventsFor("ReplicaSet", "default", "web")
	if e := last[len(last)-1]; e.Reason != SuccessfulDeleteReason || e.Message != "Deleted pod: "+victim.Name {
		t.Fatalf("last event %s %s", e.Reason, e.Message)
	}
}

func TestPodsToDeleteRanking(t *testing.T) {
	now := cluster.Epoch.Add(time.Hour)
	mk := func(name, node string, phase corev1.PodPhase, ready bool, readySince time.Duration) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: k8stypes.UID("uid-" + name), CreationTimestamp: metav1.NewTime(cluster.Epoch)}}
		p.Spec.NodeName = node
		p.Status.Phase = phase
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(now.Add(-readySince))}}
		return p
	}
	cases := []struct {
		name string
		pods []*corev1.Pod
		want string
	}{
		{"unassigned first", []*corev1.Pod{mk("a", "n1", corev1.PodRunning, true, time.Hour), mk("b", "", corev1.PodPending, false, 0)}, "b"},
		{"pending before running", []*corev1.Pod{mk("a", "n1", corev1.PodRunning, true, time.Hour), mk("b", "n1", corev1.PodPending, false, 0)}, "b"},
		{"unready before ready", []*corev1.Pod{mk("a", "n1", corev1.PodRunning, true, time.Hour), mk("b", "n2", corev1.PodRunning, false, 0)}, "b"},
		{"doubled-up first", []*corev1.Pod{mk("a", "n1", corev1.PodRunning, true, time.Hour), mk("b", "n2", corev1.PodRunning, true, time.Hour), mk("c", "n2", corev1.PodRunning, true, time.Hour)}, "b"},
		{"ready for less time first", []*corev1.Pod{mk("a", "n1", corev1.PodRunning, true, time.Hour), mk("b", "n2", corev1.PodRunning, true, time.Minute)}, "b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := controllerutil.PodsToDelete(c.pods, c.pods, 1, now)
			if got[0].Name != c.want {
				t.Fatalf("deleted %s, want %s", got[0].Name, c.want)
			}
		})
	}
}

func TestFailedCreate(t *testing.T) {
	s := controllertest.NewState()
	rs := newRS(1)
	rs.Spec.Template.Spec.PriorityClassName = "gold"
	admission.Create(s, rs)
	for i := 0; i < 3; i++ {
		if err := sim.RunNow(s, []sim.Controller{New()}); err != nil {
			t.Fatal(err)
		}
	}
	rs = s.ReplicaSets["default/web"]
	events := s.EventsFor("ReplicaSet", "default", "web")
	want := `Error creating: pods "web-" is forbidden: no PriorityClass with name gold was found`
	if len(events) != 1 || events[0].Type != corev1.EventTypeWarning || events[0].Reason != FailedCreateReason || events[0].Message != want {
		t.Fatalf("events %+v", events)
	}
	if c := replicaFailure(rs); c == nil || c.Reason != FailedCreateReason {
		t.Fatalf("ReplicaFailure condition missing: %+v", rs.Status)
	}
	admission.Create(s, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "gold"}, Value: 5})
	if err := sim.RunNow(s, []sim.Controller{New()}); err != nil {
		t.Fatal(err)
	}
	if len(ActivePods(s, rs)) != 1 || replicaFailure(rs) != nil {
		t.Fatal("creation should succeed once the class exists and clear the condition")
	}
}

func TestMinReadySeconds(t *testing.T) {
	s := controllertest.NewState()
	controllertest.AddNode(s, "n1", "4", "8Gi", nil)
	rs := newRS(1)
	rs.Spec.MinReadySeconds = 10
	admission.Create(s, rs)
	if err := sim.Settle(s, ctrls(), time.Hour); err != nil {
		t.Fatal(err)
	}
	rs = s.ReplicaSets["default/web"]
	pod := ActivePods(s, rs)[0]
	ready := controllerutil.GetPodCondition(&pod.Status, corev1.PodReady).LastTransitionTime.Time
	if rs.Status.AvailableReplicas != 1 || rs.Status.ReadyReplicas != 1 {
		t.Fatalf("status %+v", rs.Status)
	}
	if got := s.Now.Sub(ready); got <= 10*time.Second {
		t.Fatalf("available only %v after ready, want more than minReadySeconds", got)
	}
}

func TestKubeletRejectionDoesNotSpin(t *testing.T) {
	s := controllertest.NewState()
	controllertest.AddNode(s, "small", "1", "1Gi", nil)
	rs := newRS(1)
	rs.Spec.Template.Spec.NodeName = "small"
	rs.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	admission.Create(s, rs)
	c := []sim.Controller{New(), kubelet.New()}
	if err := sim.Settle(s, c, time.Hour); err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 1 {
		t.Fatalf("want one rejected pod after apply, got %d", len(s.Pods))
	}
	for _, p := range s.Pods {
		if p.Status.Phase != corev1.PodFailed || p.Status.Reason != "OutOfcpu" {
			t.Fatalf("pod status %s %s", p.Status.Phase, p.Status.Reason)
		}
	}
	if err := sim.Advance(s, c, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 4 {
		t.Fatalf("want one replacement per second under advance, got %d pods", len(s.Pods))
	}
}

// PodFromTemplate builds what a deep copy of the whole template gave
// (GetPodFromTemplate), nil and empty metadata alike, and shares nothing
// with the template but the containers' resource lists.
func TestPodFromTemplateMatchesTemplateCopy(t *testing.T) {
	templates := map[string]corev1.PodTemplateSpec{
		"nil metadata": {Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}},
		"empty metadata": {
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{}, Annotations: map[string]string{}, Finalizers: []string{}},
		},
		"full": {
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "b"}, Finalizers: []string{"f"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
		},
	}
	for name, tmpl := range templates {
		t.Run(name, func(t *testing.T) {
			rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", UID: "u1"}}
			rs.Spec.Template = tmpl
			c := rs.Spec.Template.DeepCopy()
			want := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Namespace: "default", GenerateName: "web-1-", Labels: c.Labels, Annotations: c.Annotations, Finalizers: c.Finalizers,
					OwnerReferences: []metav1.OwnerReference{controllerutil.NewControllerRef(rs, "apps/v1", "ReplicaSet")},
				},
				Spec: c.Spec,
			}
			got := PodFromTemplate(rs)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
			if got.Labels != nil {
				got.Labels["x"] = "y"
				if _, ok := rs.Spec.Template.Labels["x"]; ok {
					t.Fatal("the pod's labels are the template's map")
				}
			}
			if len(got.Spec.Containers) > 0 {
				got.Spec.Containers[0].Image = "changed"
				if rs.Spec.Template.Spec.Containers[0].Image == "changed" {
					t.Fatal("the pod's containers are the template's")
				}
			}
		})
	}
}

// TestCreatedPodsLeaveTemplateResources: pods share their template's
// request and limit lists, and the API server's defaulting (requests from
// limits) copies a list before adding to it, so the template and the
// earlier pods keep theirs.
func TestCreatedPodsLeaveTemplateResources(t *testing.T) {
	q := resource.MustParse
	for name, res := range map[string]corev1.ResourceRequirements{
		"limits only":      {Limits: corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("1Gi")}},
		"partial requests": {Requests: corev1.ResourceList{corev1.ResourceCPU: q("500m")}, Limits: corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("1Gi")}},
		"requests only":    {Requests: corev1.ResourceList{corev1.ResourceCPU: q("500m")}},
	} {
		t.Run(name, func(t *testing.T) {
			s := controllertest.NewState("shop")
			n := int32(3)
			labels := map[string]string{"app": "web"}
			rs := &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "u1"},
				Spec: appsv1.ReplicaSetSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx", Resources: *res.DeepCopy()}}}}},
			}
			s.ReplicaSets[cluster.Key(rs.Namespace, rs.Name)] = rs
			if _, err := New().Sync(s); err != nil || len(s.Pods) != 3 {
				t.Fatalf("%d pods, err %v", len(s.Pods), err)
			}
			if got := rs.Spec.Template.Spec.Containers[0].Resources; !reflect.DeepEqual(got, res) {
				t.Fatalf("template resources now %v, want %v", got, res)
			}
			want := res.DeepCopy()
			if want.Limits != nil && want.Requests == nil {
				want.Requests = corev1.ResourceList{}
			}
			for name, l := range want.Limits {
				if _, ok := want.Requests[name]; !ok {
					want.Requests[name] = l
				}
			}
			for _, p := range s.Pods {
				if got := p.Spec.Containers[0].Resources; !apiequality.Semantic.DeepEqual(got, *want) {
					t.Fatalf("pod %s resources %v, want %v", p.Name, got, *want)
				}
			}
		})
	}
}
