package divergence

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
)

func state() *cluster.State {
	s := cluster.New("", 1)
	s.NodeClaims["x"] = &karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "uid-x"},
		Status: karpv1.NodeClaimStatus{NodeName: "n", Conditions: []metav1.Condition{{Type: "Initialized", Status: "True"}}}}
	for _, n := range []string{"n", "m"} {
		s.Nodes[n] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}
	}
	for _, p := range []string{"a", "b"} {
		s.Pods["default/"+p] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: p, UID: types.UID("uid-" + p)},
			Status: corev1.PodStatus{Phase: corev1.PodPending}}
	}
	return s
}

func nominate(s *cluster.State, pod, msg string) {
	p := s.Pods["default/"+pod]
	s.Record(cluster.EventSource{Component: "karpenter"}, cluster.Regarding("Pod", "v1", p), corev1.EventTypeNormal, "Nominated",
		"Pod should schedule on: "+msg)
}

func berthEvents(s *cluster.State) string {
	var out []string
	for _, e := range s.Events {
		if e.Source.Component == "berth" {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return strings.Join(out, "\n")
}

func TestNominations(t *testing.T) {
	s := state()
	nominate(s, "a", "nodeclaim/x")
	s.Now = s.Now.Add(time.Second)
	nominate(s, "a", "nodeclaim/old")
	// The same message again is counted on the first event, which is
	// still the newest nomination.
	s.Now = s.Now.Add(time.Second)
	nominate(s, "a", "nodeclaim/x")
	nominate(s, "b", "nodeclaim/y, node/m")
	// A pod recreated under b's name is not b.
	s.Pods["default/b"].UID = "uid-b2"
	got := Nominations(s)
	if len(got) != 1 || got[0].Pod.Name != "a" || got[0].NodeClaim != "x" || got[0].Node != "" {
		t.Fatalf("nominations %+v", got)
	}
	if got[0].Target(s) != "n" {
		t.Errorf("target %q", got[0].Target(s))
	}
}

func TestDivergenceReportedOnce(t *testing.T) {
	s := state()
	nominate(s, "a", "nodeclaim/x")
	nominate(s, "b", "nodeclaim/x")
	c := New()
	if _, err := c.Sync(s); err != nil {
		t.Fatal(err)
	}
	if got := berthEvents(s); got != "" {
		t.Fatalf("pending pods reported: %s", got)
	}
	s.Pods["default/a"].Spec.NodeName = "n"
	s.Pods["default/b"].Spec.NodeName = "m"
	s.Bump()
	for i := 0; i < 2; i++ {
		if _, err := c.Sync(s); err != nil {
			t.Fatal(err)
		}
		s.Bump()
	}
	want := "NominationDiverged: Karpenter nominated pod default/b for nodeclaim/x (node/n); kube-scheduler bound it to node/m"
	if got := berthEvents(s); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
}

func TestLaunchedNodeUnused(t *testing.T) {
	s := state()
	nominate(s, "a", "nodeclaim/x")
	nominate(s, "b", "nodeclaim/x")
	s.Pods["default/a"].Spec.NodeName = "m"
	s.Pods["default/b"].Spec.NodeName = "m"
	// A DaemonSet pod does not make the node used.
	yes := true
	s.Pods["kube-system/ds"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "ds", UID: "uid-ds",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", Controller: &yes}}},
		Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	c := New()
	if _, err := c.Sync(s); err != nil {
		t.Fatal(err)
	}
	s.Bump()
	if _, err := c.Sync(s); err != nil {
		t.Fatal(err)
	}
	got := berthEvents(s)
	want := "NodeClaim x launched node/n for 2 nominated pod(s); kube-scheduler bound them elsewhere (default/a on node/m, default/b on node/m) and the node runs no workload pods"
	if strings.Count(got, "LaunchedNodeUnused") != 1 || !strings.Contains(got, want) || strings.Count(got, "NominationDiverged") != 2 {
		t.Errorf("events:\n%s", got)
	}
	// The claim goes: its reports are forgotten.
	delete(s.NodeClaims, "x")
	s.NodeClaims["z"] = &karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "z", UID: "uid-z"}}
	s.Bump()
	if _, err := c.Sync(s); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Karpenter.AWS.Reported); n != 0 {
		t.Errorf("%d reports kept for a gone claim", n)
	}
}
