package kubelet

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/sim"
)

// TestGracefulTermination: a running pod deleted with its 30 s grace period
// gets Killing at once and goes when the period ends; a pod whose containers
// never started goes at once; on a node whose kubelet stopped, the pod stays
// Terminating; a Terminating pod still holds its room for admission.
func TestGracefulTermination(t *testing.T) {
	cases := []struct {
		name    string
		started bool // let the containers start before the delete
		lost    bool // the node's kubelet stops before the delete
		want    time.Duration
	}{
		{name: "running: the whole grace period", started: true, want: 30 * time.Second},
		{name: "never started: at once", want: 0},
		{name: "node lost: stays", started: true, lost: true, want: -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := controllertest.NewState()
			node := controllertest.AddNode(s, "n1", "2", "4Gi", nil)
			pod := boundPod(s, "a", "n1", "1500m")
			ctrls := []sim.Controller{New()}
			if c.started {
				if err := sim.Settle(s, ctrls, time.Minute); err != nil {
					t.Fatal(err)
				}
			}
			if c.lost {
				node.Status.Conditions[0].Status = corev1.ConditionUnknown
			}
			deleted := s.Now
			if s.GracefulDeletePod(pod, nil) {
				t.Fatal("a bound, unfinished pod must go through Terminating")
			}
			if err := sim.RunNow(s, ctrls); err != nil {
				t.Fatal(err)
			}
			killing := s.HasEvent(Name, corev1.EventTypeNormal, KillingContainerReason, podRef(pod, ""))
			if killing != (c.started && !c.lost) {
				t.Errorf("Killing recorded: %v", killing)
			}
			if c.want == 0 {
				if _, ok := s.Pods["default/a"]; ok {
					t.Fatal("a pod that never started should go at once")
				}
				return
			}
			// Another pod cannot be admitted while this one holds 1.5 cpu.
			other := boundPod(s, "b", "n1", "1")
			if err := sim.RunNow(s, ctrls); err != nil {
				t.Fatal(err)
			}
			if other.Status.Phase != corev1.PodFailed && !c.lost {
				t.Errorf("pod b admitted next to a Terminating pod: phase %s", other.Status.Phase)
			}
			if err := sim.Advance(s, ctrls, 29*time.Second); err != nil {
				t.Fatal(err)
			}
			if _, ok := s.Pods["default/a"]; !ok {
				t.Fatalf("gone after %v", s.Now.Sub(deleted))
			}
			if err := sim.Advance(s, ctrls, 10*time.Minute); err != nil {
				t.Fatal(err)
			}
			_, present := s.Pods["default/a"]
			if present != (c.want < 0) {
				t.Fatalf("present=%v after the grace period", present)
			}
		})
	}
}

// A terminating pod the same sync removes (its containers never started)
// no longer holds its share when the sync admits a pod to its node; one
// whose containers run still does.
func TestAdmissionAfterTerminatingPodGoes(t *testing.T) {
	for _, running := range []bool{false, true} {
		t.Run(fmt.Sprintf("running=%v", running), func(t *testing.T) {
			s := controllertest.NewState()
			controllertest.AddNode(s, "n1", "2", "4Gi", nil)
			a := boundPod(s, "a", "n1", "1500m")
			ctrls := []sim.Controller{New()}
			if err := sim.RunNow(s, ctrls); err != nil {
				t.Fatal(err)
			}
			if a.Status.StartTime == nil {
				t.Fatal("pod a not admitted")
			}
			if running {
				if err := sim.Settle(s, ctrls, time.Minute); err != nil {
					t.Fatal(err)
				}
			}
			s.GracefulDeletePod(a, nil)
			b := boundPod(s, "b", "n1", "1")
			if err := sim.RunNow(s, ctrls); err != nil {
				t.Fatal(err)
			}
			_, present := s.Pods["default/a"]
			if present != running {
				t.Fatalf("pod a present: %v", present)
			}
			if admitted := b.Status.Phase != corev1.PodFailed; admitted == running {
				t.Fatalf("pod b admitted: %v (phase %s, %s)", admitted, b.Status.Phase, b.Status.Message)
			}
		})
	}
}
