package disruption

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/apis/v1alpha5"
	"github.com/berth-sim/berth/internal/karpenter/lifecycle"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioner"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// fixture is a v1 pool with n initialized, empty nodes.
func fixture(n int, budgets []karpv1.Budget, consolidateAfter karpv1.NillableDuration) *cluster.State {
	s := cluster.New("1.34", 1)
	s.NodePools = map[string]*karpv1.NodePool{"default": {ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "np"},
		Spec: karpv1.NodePoolSpec{Disruption: karpv1.Disruption{ConsolidationPolicy: karpv1.ConsolidationPolicyWhenEmpty,
			ConsolidateAfter: consolidateAfter, Budgets: budgets},
			Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{NodeClassRef: &karpv1.NodeClassReference{
				Group: karpv1.AWSGroup, Kind: "EC2NodeClass", Name: "default"}}}}}}
	s.EC2NodeClasses = map[string]*karpv1.EC2NodeClass{"default": {ObjectMeta: metav1.ObjectMeta{Name: "default"}}}
	s.NodeClaims = map[string]*karpv1.NodeClaim{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("default-%d", i)
		node := fmt.Sprintf("ip-%d", i)
		s.NodeClaims[name] = &karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{scheduling.NodePoolLabelKey: "default"}, Finalizers: []string{cluster.KarpenterTerminationFinalizer}},
			Status: karpv1.NodeClaimStatus{NodeName: node, Conditions: []metav1.Condition{{Type: lifecycle.ConditionInitialized, Status: metav1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(s.Now)}}}}
		s.Nodes[node] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, UID: types.UID("node-" + name),
			Labels: map[string]string{scheduling.NodePoolLabelKey: "default", provisioner.LabelInitialized: "true"}}}
	}
	return s
}

func deleting(s *cluster.State) []string {
	var out []string
	for _, name := range cluster.SortedKeys(s.NodeClaims) {
		if s.NodeClaims[name].DeletionTimestamp != nil {
			out = append(out, name)
		}
	}
	return out
}

// settle runs the controller until it changes nothing, then moves the
// clock to its next timer, until `until`.
func run(t *testing.T, s *cluster.State, c *Controller, until time.Time) {
	t.Helper()
	for {
		for i := 0; i < 100; i++ {
			ch, err := c.Sync(s)
			if err != nil {
				t.Fatal(err)
			}
			if !ch {
				break
			}
		}
		next, ok := s.NextTimer(false)
		if !ok || next.After(until) {
			s.Now = until
			return
		}
		s.Now = next
		s.DropTimersUpTo(next)
	}
}

func TestEmptinessRespectsTheDefaultBudget(t *testing.T) {
	// 10% of 5 nodes rounds up to 1: one node per command.
	s := fixture(5, []karpv1.Budget{{Nodes: "10%"}}, "30s")
	c := New(nil)
	run(t, s, c, s.Now.Add(29*time.Second))
	if got := deleting(s); len(got) != 0 {
		t.Fatalf("deleted before consolidateAfter: %v", got)
	}
	run(t, s, c, s.Now.Add(16*time.Second)) // 30 s, then the 15 s validation
	if got := deleting(s); len(got) != 1 {
		t.Fatalf("deleting %v, want one node", got)
	}
	n := s.Nodes[s.NodeClaims[deleting(s)[0]].Status.NodeName]
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != provisioner.TaintDisrupted {
		t.Fatalf("taints %v", n.Spec.Taints)
	}
	var msgs []string
	for _, e := range s.Events {
		if e.Reason == "DisruptionTerminating" {
			msgs = append(msgs, e.Reason+" "+e.Message)
		}
	}
	if len(msgs) != 2 || msgs[0] != "DisruptionTerminating Disrupting Node: Empty" || msgs[1] != "DisruptionTerminating Disrupting NodeClaim: Empty" {
		t.Fatalf("events %q", msgs)
	}
}

func TestBudgetsPerReason(t *testing.T) {
	cases := []struct {
		budgets []karpv1.Budget
		want    int
	}{
		{[]karpv1.Budget{{Nodes: "10%"}}, 2},               // 19 nodes: 1.9 rounds up
		{[]karpv1.Budget{{Nodes: "3"}, {Nodes: "50%"}}, 3}, // the smallest wins
		{[]karpv1.Budget{{Nodes: "0", Reasons: []karpv1.DisruptionReason{karpv1.DisruptionReasonDrifted}}}, 1<<31 - 1}, // another reason
		{[]karpv1.Budget{{Nodes: "0"}}, 0},
	}
	for i, c := range cases {
		s := fixture(19, c.budgets, "0s")
		got := budgets(s, pools.List(s), karpv1.DisruptionReasonEmpty)["default"]
		if got != c.want {
			t.Errorf("case %d: allowed %d, want %d", i, got, c.want)
		}
	}
}

func TestEmptinessCommandAbandonedWhenAPodArrives(t *testing.T) {
	s := fixture(1, nil, "0s")
	c := New(nil)
	run(t, s, c, s.Now.Add(5*time.Second))
	if s.Karpenter.EmptinessCommand == nil {
		t.Fatal("no command pending validation")
	}
	s.Pods["default/p"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "p"}, Spec: corev1.PodSpec{NodeName: "ip-0"}}
	run(t, s, c, s.Now.Add(20*time.Second))
	if got := deleting(s); len(got) != 0 {
		t.Fatalf("deleted %v although a pod arrived", got)
	}
}

func TestLegacyEmptinessTimestamp(t *testing.T) {
	s := fixture(1, nil, "")
	delete(s.NodePools, "default")
	ttl := int64(30)
	s.Provisioners = nil
	// A v1alpha5 pool: the node carries the provisioner-name label.
	s.NodeClaims["default-0"].Labels = map[string]string{"karpenter.sh/provisioner-name": "default"}
	s.Nodes["ip-0"].Labels["karpenter.sh/provisioner-name"] = "default"
	s.Provisioners = legacy(ttl)
	c := New(nil)
	run(t, s, c, s.Now.Add(time.Second))
	if _, ok := s.Nodes["ip-0"].Annotations[AnnotationEmptinessTimestamp]; !ok {
		t.Fatal("empty node not annotated")
	}
	s.Pods["default/p"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "p"}, Spec: corev1.PodSpec{NodeName: "ip-0"}}
	run(t, s, c, s.Now.Add(time.Second))
	if _, ok := s.Nodes["ip-0"].Annotations[AnnotationEmptinessTimestamp]; ok {
		t.Fatal("annotation kept after a pod landed")
	}
	delete(s.Pods, "default/p")
	run(t, s, c, s.Now.Add(29*time.Second))
	if len(deleting(s)) != 0 {
		t.Fatal("deleted before the TTL")
	}
	run(t, s, c, s.Now.Add(3*time.Second))
	if got := deleting(s); len(got) != 1 {
		t.Fatalf("deleting %v after the TTL", got)
	}
}

func legacy(ttl int64) map[string]*v1alpha5.Provisioner {
	return map[string]*v1alpha5.Provisioner{"default": {ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "prov"},
		Spec: v1alpha5.ProvisionerSpec{TTLSecondsAfterEmpty: &ttl, Provider: &v1alpha5.AWS{}}}}
}
