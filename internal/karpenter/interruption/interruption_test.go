package interruption

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
)

// fixture: a launched spot claim with its node and one pod, a launched
// on-demand claim without a node, an unlaunched claim and a node no claim
// owns.
func fixture() *cluster.State {
	s := cluster.New("", 1)
	claim := func(name, ct, providerID, node string) {
		s.NodeClaims[name] = &karpv1.NodeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
				Finalizers: []string{cluster.KarpenterTerminationFinalizer},
				Labels: map[string]string{"karpenter.sh/capacity-type": ct, corev1.LabelInstanceTypeStable: "m5.large",
					corev1.LabelTopologyZone: "us-west-2a"}},
			Status: karpv1.NodeClaimStatus{ProviderID: providerID, NodeName: node},
		}
	}
	claim("spot-a", "spot", "aws:///us-west-2a/i-0aaa", "ip-1")
	claim("od-b", "on-demand", "aws:///us-west-2a/i-0bbb", "")
	claim("new-c", "spot", "", "")
	s.Nodes["ip-1"] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-1", UID: "uid-ip-1",
		Finalizers: []string{cluster.KarpenterTerminationFinalizer}},
		Spec:   corev1.NodeSpec{ProviderID: "aws:///us-west-2a/i-0aaa"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	s.Nodes["static"] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "static"}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-west-2a/i-0ccc"}}
	s.Pods["default/web"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
		Spec: corev1.PodSpec{NodeName: "ip-1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	return s
}

func TestNotify(t *testing.T) {
	for _, tc := range []struct{ ref, want string }{
		{"ip-1", "ok spot-a ip-1 i-0aaa"},
		{"node/ip-1", "ok spot-a ip-1 i-0aaa"},
		{"nodeclaim/spot-a", "ok spot-a ip-1 i-0aaa"},
		{"nodeclaim/od-b", "error: nodeclaim/od-b is an on-demand instance"},
		{"nodeclaim/new-c", "error: nodeclaim/new-c has no instance yet"},
		{"static", "error: node/static is not a Karpenter node"},
		{"missing", `error: Error from server (NotFound): nodes "missing" not found`},
		{"nodeclaim/missing", `error: Error from server (NotFound): nodeclaims.karpenter.sh "missing" not found`},
		{"pod/web", `error: cannot interrupt "pod/web"`},
	} {
		s := fixture()
		n, err := Notify(s, tc.ref)
		got := ""
		if err != nil {
			got = "error: " + err.Error()
			if s.Karpenter.AWS != nil && len(s.Karpenter.AWS.Interruptions) != 0 {
				t.Errorf("%s: a refused notice was queued", tc.ref)
			}
		} else {
			got = "ok " + n.NodeClaim + " " + n.Node + " " + n.Instance
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: got %q, want prefix %q", tc.ref, got, tc.want)
		}
	}
}

func TestNotifyTwice(t *testing.T) {
	s := fixture()
	if _, err := Notify(s, "ip-1"); err != nil {
		t.Fatal(err)
	}
	n, err := Notify(s, "nodeclaim/spot-a")
	if err != nil || !n.Again || len(s.Karpenter.AWS.Interruptions) != 1 {
		t.Errorf("second notice: %+v %v, %d queued", n, err, len(s.Karpenter.AWS.Interruptions))
	}
}

func TestHandleAndReclaim(t *testing.T) {
	s := fixture()
	if _, err := Notify(s, "ip-1"); err != nil {
		t.Fatal(err)
	}
	c := New(nil)
	if _, err := c.Sync(s); err != nil {
		t.Fatal(err)
	}
	nc := s.NodeClaims["spot-a"]
	if nc.DeletionTimestamp == nil {
		t.Fatal("NodeClaim not deleted on the notice")
	}
	var reasons []string
	for _, e := range s.Events {
		reasons = append(reasons, e.InvolvedObject.Kind+"/"+e.Reason)
	}
	if got, want := strings.Join(reasons, " "), "NodeClaim/SpotInterrupted Node/SpotInterrupted NodeClaim/TerminatingOnInterruption Node/TerminatingOnInterruption"; got != want {
		t.Errorf("events %s\nwant   %s", got, want)
	}
	if e := s.Karpenter.AWS.Unavailable; len(e) != 1 || e[0].Key != "spot:m5.large:us-west-2a" {
		t.Errorf("cache %+v", e)
	}
	// A second Sync publishes nothing more.
	n := len(s.Events)
	if _, err := c.Sync(s); err != nil {
		t.Fatal(err)
	}
	if len(s.Events) != n {
		t.Errorf("second Sync published %d more events", len(s.Events)-n)
	}
	// Nothing drained it (no lifecycle here): at the deadline EC2 takes it.
	s.Now = s.Now.Add(ReclaimDelay)
	if _, err := c.Sync(s); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Nodes["ip-1"]; ok {
		t.Error("node still there after the reclaim")
	}
	if _, ok := s.NodeClaims["spot-a"]; ok {
		t.Error("NodeClaim still there after the reclaim")
	}
	if _, ok := s.Pods["default/web"]; ok {
		t.Error("pod of the reclaimed node still there")
	}
	last := s.Events[len(s.Events)-1]
	if last.Reason != ReasonInstanceReclaimed || last.Source.Component != "berth" ||
		last.Message != "EC2 reclaimed spot instance i-0aaa 2m0s after the interruption notice; 1 pod(s) besides DaemonSet pods were still on the node" {
		t.Errorf("last event %s %s %q", last.Source.Component, last.Reason, last.Message)
	}
	if len(s.Karpenter.AWS.Interruptions) != 0 {
		t.Error("notice kept after the reclaim")
	}
}

// When Karpenter terminated the instance first, the notice is forgotten
// and its timer dropped, so settling does not run to the deadline.
func TestNoticeForgottenAfterTermination(t *testing.T) {
	s := fixture()
	if _, err := Notify(s, "ip-1"); err != nil {
		t.Fatal(err)
	}
	c := New(nil)
	if _, err := c.Sync(s); err != nil {
		t.Fatal(err)
	}
	if len(s.Timers) != 1 {
		t.Fatalf("timers %+v", s.Timers)
	}
	delete(s.NodeClaims, "spot-a")
	delete(s.Nodes, "ip-1")
	if _, err := c.Sync(s); err != nil {
		t.Fatal(err)
	}
	if len(s.Karpenter.AWS.Interruptions) != 0 || len(s.Timers) != 0 {
		t.Errorf("left %d notices, %d timers", len(s.Karpenter.AWS.Interruptions), len(s.Timers))
	}
}
