package disruption

import (
	"errors"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
)

func i32(v int32) *int32 { return &v }

// fixture builds a Deployment "web" with `replicas` replicas, of which the
// first `ready` pods are Ready, plus `bare` unmanaged pods labelled app=web.
func fixture(replicas int32, ready, bare int) *cluster.State {
	s := controllertest.NewState("shop")
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "d-uid"},
		Spec: appsv1.DeploymentSpec{Replicas: i32(replicas)}}
	s.Deployments["shop/web"] = d
	t := true
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "rs-uid",
		OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: "web", UID: "d-uid", Controller: &t}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: i32(replicas)}}
	s.ReplicaSets["shop/web-1"] = rs
	for i := 0; i < int(replicas); i++ {
		p := pod(fmt.Sprintf("web-1-%d", i), i < ready)
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-1", UID: "rs-uid", Controller: &t}}
		s.Pods["shop/"+p.Name] = p
	}
	for i := 0; i < bare; i++ {
		p := pod(fmt.Sprintf("bare-%d", i), true)
		s.Pods["shop/"+p.Name] = p
	}
	return s
}

func pod(name string, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func budget(minAvailable, maxUnavailable *intstr.IntOrString) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Generation: 1},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: minAvailable, MaxUnavailable: maxUnavailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
}

func ios(v intstr.IntOrString) *intstr.IntOrString { return &v }

func TestStatus(t *testing.T) {
	cases := []struct {
		name                              string
		replicas                          int32
		ready, bare                       int
		min, max                          *intstr.IntOrString
		wantExpected, wantDesired, wantOK int32
		wantCurrent                       int32
		wantReason                        string
	}{
		{"minAvailable int", 3, 3, 0, ios(intstr.FromInt32(2)), nil, 3, 2, 1, 3, policyv1.SufficientPodsReason},
		{"minAvailable int counts unmanaged pods", 2, 2, 1, ios(intstr.FromInt32(3)), nil, 3, 3, 0, 3, policyv1.InsufficientPodsReason},
		{"minAvailable equals ready", 3, 2, 0, ios(intstr.FromInt32(2)), nil, 3, 2, 0, 2, policyv1.InsufficientPodsReason},
		{"minAvailable percent rounds up", 3, 3, 0, ios(intstr.FromString("50%")), nil, 3, 2, 1, 3, policyv1.SufficientPodsReason},
		{"maxUnavailable int uses the deployment scale", 4, 4, 0, nil, ios(intstr.FromInt32(1)), 4, 3, 1, 4, policyv1.SufficientPodsReason},
		{"maxUnavailable percent rounds up", 4, 4, 0, nil, ios(intstr.FromString("30%")), 4, 2, 2, 4, policyv1.SufficientPodsReason},
		{"maxUnavailable with unready pods", 4, 2, 0, nil, ios(intstr.FromInt32(1)), 4, 3, 0, 2, policyv1.InsufficientPodsReason},
		{"maxUnavailable with an unmanaged pod fails safe", 2, 2, 1, nil, ios(intstr.FromInt32(1)), 0, 0, 0, 0, "SyncFailed"},
		{"no selector match", 0, 0, 0, ios(intstr.FromInt32(1)), nil, 0, 1, 0, 0, policyv1.InsufficientPodsReason},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := fixture(c.replicas, c.ready, c.bare)
			s.PodDisruptionBudgets["shop/web"] = budget(c.min, c.max)
			changed, err := New().Sync(s)
			if err != nil || !changed {
				t.Fatalf("Sync = %v, %v; want a change", changed, err)
			}
			st := s.PodDisruptionBudgets["shop/web"].Status
			if st.ExpectedPods != c.wantExpected || st.DesiredHealthy != c.wantDesired ||
				st.DisruptionsAllowed != c.wantOK || st.CurrentHealthy != c.wantCurrent {
				t.Errorf("status expected/desired/allowed/current = %d/%d/%d/%d, want %d/%d/%d/%d",
					st.ExpectedPods, st.DesiredHealthy, st.DisruptionsAllowed, st.CurrentHealthy,
					c.wantExpected, c.wantDesired, c.wantOK, c.wantCurrent)
			}
			if st.ObservedGeneration != 1 {
				t.Errorf("observedGeneration = %d, want 1", st.ObservedGeneration)
			}
			if len(st.Conditions) != 1 || st.Conditions[0].Type != policyv1.DisruptionAllowedCondition || st.Conditions[0].Reason != c.wantReason {
				t.Errorf("conditions = %+v, want DisruptionAllowed/%s", st.Conditions, c.wantReason)
			}
			if again, _ := New().Sync(s); again {
				t.Errorf("second Sync changed the status again")
			}
		})
	}
}

func TestSyncFailedRecordsEvent(t *testing.T) {
	s := fixture(1, 1, 1)
	s.PodDisruptionBudgets["shop/web"] = budget(nil, ios(intstr.FromInt32(1)))
	if _, err := New().Sync(s); err != nil {
		t.Fatal(err)
	}
	want := `Failed to calculate the number of expected pods: found no controller ref for pod "bare-0"`
	if len(s.Events) != 1 || s.Events[0].Reason != ReasonCalculateFailed || s.Events[0].Message != want {
		t.Fatalf("events = %+v, want one %s event %q", s.Events, ReasonCalculateFailed, want)
	}
}

func TestEvict(t *testing.T) {
	cases := []struct {
		name       string
		ready      int
		min        int32
		target     string
		pending    bool
		wantCode   int
		wantRemain int32
	}{
		{"allowed, one disruption used", 3, 2, "web-1-0", false, 0, 0},
		{"refused when the budget is used up", 2, 2, "web-1-0", false, 429, 0},
		{"pending pod ignores the budget", 2, 2, "web-1-2", true, 0, 0},
		{"unready pod goes when the budget is met", 2, 2, "web-1-2", false, 0, 0},
		{"unready pod refused when the budget is not met", 1, 2, "web-1-2", false, 429, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := fixture(3, c.ready, 0)
			s.PodDisruptionBudgets["shop/web"] = budget(ios(intstr.FromInt32(c.min)), nil)
			if _, err := New().Sync(s); err != nil {
				t.Fatal(err)
			}
			p := s.Pods["shop/"+c.target]
			if c.pending {
				p.Status.Phase = corev1.PodPending
			}
			err := Evict(s, p)
			var ee *EvictionError
			switch {
			case c.wantCode == 0 && err != nil:
				t.Fatalf("Evict: %v", err)
			case c.wantCode != 0 && (!errors.As(err, &ee) || ee.Code != c.wantCode):
				t.Fatalf("Evict = %v, want code %d", err, c.wantCode)
			}
			_, stillThere := s.Pods["shop/"+c.target]
			if stillThere != (c.wantCode != 0) {
				t.Errorf("pod still stored = %v", stillThere)
			}
			if ee != nil && ee.Message != MessageViolatesBudget {
				t.Errorf("message %q", ee.Message)
			}
			if got := s.PodDisruptionBudgets["shop/web"].Status.DisruptionsAllowed; got != c.wantRemain {
				t.Errorf("disruptionsAllowed after eviction = %d, want %d", got, c.wantRemain)
			}
		})
	}
}

func TestEvictTwoBudgets(t *testing.T) {
	s := fixture(2, 2, 0)
	s.PodDisruptionBudgets["shop/web"] = budget(ios(intstr.FromInt32(0)), nil)
	other := budget(ios(intstr.FromInt32(0)), nil)
	other.Name = "other"
	s.PodDisruptionBudgets["shop/other"] = other
	err := Evict(s, s.Pods["shop/web-1-0"])
	var ee *EvictionError
	if !errors.As(err, &ee) || ee.Code != 500 || ee.Retryable() || ee.Message != MessageMultipleBudget {
		t.Fatalf("Evict = %v, want the multiple-budget error", err)
	}
}
