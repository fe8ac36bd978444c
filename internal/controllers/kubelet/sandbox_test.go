package kubelet

import (
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/podnet"
	"github.com/berth-sim/berth/internal/sim"
)

var sandboxEvent = regexp.MustCompile(`^Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "[0-9a-f]{64}": plugin type="aws-cni" name="aws-cni" failed \(add\): add cmd: failed to assign an IP address to container$`)

func podnetAllocator(s *cluster.State) func(*corev1.Node) (string, error) {
	return podnet.NewAllocator(s).Allocate
}

// A t3.micro holds two pod addresses (2 ENIs × 1 secondary IP): the third
// pod stays ContainerCreating with one FailedCreatePodSandBox warning, the
// cluster settles, and the pod starts once a pod on the node is gone.
func TestSandboxFailsWhenNodeIsOutOfAddresses(t *testing.T) {
	s := controllertest.NewState()
	n := controllertest.AddNode(s, "ip-10-0-0-10", "2", "1Gi", map[string]string{corev1.LabelInstanceTypeStable: "t3.micro"})
	n.Spec.ProviderID = "aws:///zone-x/i-0abc"
	ctrls := []sim.Controller{NewWithIPAllocator(podnetAllocator)}
	for _, name := range []string{"a", "b", "c"} {
		boundPod(s, name, n.Name, "10m")
		s.Now = s.Now.Add(time.Second) // creation order a, b, c
	}
	if err := sim.Settle(s, ctrls, time.Hour); err != nil {
		t.Fatalf("settle: %v", err)
	}
	c := s.Pods["default/c"]
	if c.Status.Phase != corev1.PodPending || c.Status.PodIP != "" ||
		c.Status.ContainerStatuses[0].State.Waiting == nil || c.Status.ContainerStatuses[0].State.Waiting.Reason != "ContainerCreating" {
		t.Fatalf("pod c: %+v", c.Status)
	}
	for _, name := range []string{"a", "b"} {
		if p := s.Pods["default/"+name]; p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
			t.Fatalf("pod %s: %s %q", name, p.Status.Phase, p.Status.PodIP)
		}
	}
	ev := s.EventsFor("Pod", "default", "c")
	if len(ev) != 1 || ev[0].Reason != FailedCreatePodSandBoxReason || ev[0].Type != corev1.EventTypeWarning || !sandboxEvent.MatchString(ev[0].Message) {
		t.Fatalf("events of c: %+v", ev)
	}
	// More syncs change nothing and record nothing more.
	if err := sim.Advance(s, ctrls, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	if ev := s.EventsFor("Pod", "default", "c"); len(ev) != 1 || ev[0].Count != 1 {
		t.Fatalf("retries without a free address recorded %+v", ev)
	}
	// Pod a finishes: its address goes back to the node, c gets it.
	freed := s.Pods["default/a"].Status.PodIP
	now := metav1.NewTime(s.Now)
	s.Pods["default/a"].DeletionTimestamp = &now
	// Through the API server's write, which moves the resource version:
	// the kubelet sits out passes over a state that has not moved
	// (controllerutil.Quiet).
	s.DeletePod(s.Pods["default/a"])
	if err := sim.Settle(s, ctrls, time.Hour); err != nil {
		t.Fatal(err)
	}
	if c.Status.Phase != corev1.PodRunning || c.Status.PodIP == "" {
		t.Fatalf("pod c after a freed %s: %s %q", freed, c.Status.Phase, c.Status.PodIP)
	}
}

// Two runs from the same seed give the same sandbox ID.
func TestSandboxIDIsDeterministic(t *testing.T) {
	run := func() string {
		s := controllertest.NewState()
		controllertest.AddNode(s, "kind-worker", "2", "1Gi", nil).Spec.PodCIDR = "10.244.1.0/31"
		boundPod(s, "a", "kind-worker", "10m")
		if err := sim.Settle(s, []sim.Controller{NewWithIPAllocator(podnetAllocator)}, time.Hour); err != nil {
			t.Fatal(err)
		}
		ev := s.EventsFor("Pod", "default", "a")
		if len(ev) != 1 {
			t.Fatalf("events %+v", ev)
		}
		return ev[0].Message
	}
	if a, b := run(), run(); a != b {
		t.Fatalf("%s\n%s", a, b)
	}
}
