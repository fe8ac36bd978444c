package disruption

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/pools"
)

func pod(name string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: "uid-" + "name",
		Labels: map[string]string{"app": "web"}, Annotations: annotations}, Spec: corev1.PodSpec{NodeName: "ip-0"}}
}

func TestCandidateValidation(t *testing.T) {
	pdb := func(allowed int32, maxUnavailable *intstr.IntOrString) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, MaxUnavailable: maxUnavailable},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed}}
	}
	cases := []struct {
		name  string
		setup func(s *cluster.State)
		class string
		want  string
	}{
		{"plain node is a candidate", func(s *cluster.State) {}, gracefulClass, ""},
		{"node annotation", func(s *cluster.State) {
			s.Nodes["ip-0"].Annotations = map[string]string{"karpenter.sh/do-not-disrupt": "true"}
		}, gracefulClass, `disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation`},
		{"nominated", func(s *cluster.State) {
			s.Karpenter.Nominated = map[string]time.Time{"ip-0": s.Now.Add(time.Second)}
		}, gracefulClass, "node is nominated for a pending pod"},
		{"not initialized", func(s *cluster.State) { delete(s.Nodes["ip-0"].Labels, "karpenter.sh/initialized") },
			gracefulClass, "node isn't initialized"},
		{"deleting", func(s *cluster.State) { s.NodeClaims["default-0"].DeletionTimestamp = &metav1.Time{Time: s.Now} },
			gracefulClass, "node is deleting or marked for deletion"},
		{"pod annotation", func(s *cluster.State) {
			s.Pods["default/p"] = pod("p", map[string]string{"karpenter.sh/do-not-disrupt": "true"})
		}, gracefulClass, `pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/p)`},
		{"pdb without disruptions", func(s *cluster.State) {
			s.Pods["default/p"] = pod("p", nil)
			s.PodDisruptionBudgets = map[string]*policyv1.PodDisruptionBudget{"default/web": pdb(0, nil)}
		}, gracefulClass, "pdb prevents pod evictions (PodDisruptionBudget=default/web)"},
		{"pdb allowing one", func(s *cluster.State) {
			s.Pods["default/p"] = pod("p", nil)
			s.PodDisruptionBudgets = map[string]*policyv1.PodDisruptionBudget{"default/web": pdb(1, nil)}
		}, gracefulClass, ""},
		{"pod blocks ignored for eventual with a grace period", func(s *cluster.State) {
			s.Pods["default/p"] = pod("p", map[string]string{"karpenter.sh/do-not-disrupt": "true"})
			s.NodeClaims["default-0"].Spec.TerminationGracePeriod = ptr(karpv1.Duration("1h"))
		}, eventualClass, ""},
		{"pod blocks kept for eventual without a grace period", func(s *cluster.State) {
			s.Pods["default/p"] = pod("p", map[string]string{"karpenter.sh/do-not-disrupt": "true"})
		}, eventualClass, `pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/p)`},
	}
	for _, c := range cases {
		s := fixture(1, nil, "0s")
		c.setup(s)
		cs := newCandidateSet(s, pools.List(s), nil, podsByNode(s))
		_, err := cs.build(s.NodeClaims["default-0"], c.class)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCurrentlyReschedulable(t *testing.T) {
	zero := intstr.FromInt32(0)
	s := fixture(1, nil, "0s")
	s.PodDisruptionBudgets = map[string]*policyv1.PodDisruptionBudget{"default/web": {ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, MaxUnavailable: &zero}}}
	if newPDBLimits(s).currentlyReschedulable(pod("p", nil)) {
		t.Error("a pod under maxUnavailable: 0 counted as reschedulable")
	}
}

func TestDisruptionCostOrder(t *testing.T) {
	s := fixture(0, nil, "0s")
	prio := int32(1 << 25)
	busy := []*corev1.Pod{pod("a", nil), pod("b", nil)}
	important := []*corev1.Pod{{Spec: corev1.PodSpec{Priority: &prio}}}
	cheap := []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.PodDeletionCost: "-134217728"}}}}
	claim := func(age time.Duration, expire karpv1.NillableDuration) *karpv1.NodeClaim {
		return &karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(s.Now.Add(-age))},
			Spec: karpv1.NodeClaimSpec{ExpireAfter: expire}}
	}
	cost := func(pods []*corev1.Pod, nc *karpv1.NodeClaim) float64 {
		return reschedulingCost(pods) * lifetimeRemaining(s, nc)
	}
	cases := []struct {
		name string
		a, b float64
	}{
		{"fewer pods first", cost(important[:0], claim(0, "Never")), cost(busy, claim(0, "Never"))},
		{"a pod-deletion-cost lowers the cost", cost(cheap, claim(0, "Never")), cost(busy[:1], claim(0, "Never"))},
		{"priority raises it", cost(busy[:1], claim(0, "Never")), cost(important, claim(0, "Never"))},
		{"closer to expiry first", cost(busy, claim(600*time.Hour, "720h")), cost(busy, claim(time.Hour, "720h"))},
	}
	for _, c := range cases {
		if !(c.a < c.b) {
			t.Errorf("%s: %v is not below %v", c.name, c.a, c.b)
		}
	}
	if got := evictionCost(&corev1.Pod{Spec: corev1.PodSpec{Priority: ptr(int32(2000000000))}}); got != 10 {
		t.Errorf("eviction cost %v, want the clamp at 10", got)
	}
}
