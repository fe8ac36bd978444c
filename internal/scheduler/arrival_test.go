package scheduler

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// created adds pods to s as the API server would, one after another: each
// gets the next resource version and its create revision.
func created(s *cluster.State, pods ...*v1.Pod) {
	for _, p := range pods {
		p.CreationTimestamp.Time = s.Now
		p.ResourceVersion = s.Bump()
		s.NoteCreated(p.UID)
		s.Pods[cluster.Key(p.Namespace, p.Name)] = p
	}
}

func runScheduler(s *cluster.State) error {
	_, err := New().Sync(s)
	return err
}

// TestArrivalOrder: pods created at the same virtual instant are scheduled
// in the order they were created, not by name (docs/ordering.md).
func TestArrivalOrder(t *testing.T) {
	gpu := func(name string) *v1.Node {
		n := plugintest.SizedNode(name, "4", "8Gi", 110)
		n.Labels["gpu"] = "true"
		return n
	}
	tests := []struct {
		name  string
		nodes []*v1.Node
		pods  func() []*v1.Pod
		// want is where each pod lands ("" for Pending).
		want map[string]string
	}{{
		// Scheduled by name, api-a and api-b would come first and one of them
		// could take n2; in creation order the trainer takes n2 first and the
		// two api pods spread over the empty nodes.
		name:  "selector pod first in the file",
		nodes: []*v1.Node{plugintest.SizedNode("n1", "4", "8Gi", 110), gpu("n2"), plugintest.SizedNode("n3", "4", "8Gi", 110)},
		pods: func() []*v1.Pod {
			trainer := plugintest.SizedPod("trainer", "1", "")
			trainer.Spec.NodeSelector = map[string]string{"gpu": "true"}
			return []*v1.Pod{trainer, plugintest.SizedPod("api-a", "1", ""), plugintest.SizedPod("api-b", "1", "")}
		},
		want: map[string]string{"default/trainer": "n2", "default/api-a": "n1|n3", "default/api-b": "n1|n3"},
	}, {
		// Two pods want the same host port on a one-node cluster: the one
		// created first wins, whatever the names.
		name:  "host port goes to the first created",
		nodes: []*v1.Node{plugintest.SizedNode("n1", "4", "8Gi", 110)},
		pods: func() []*v1.Pod {
			return []*v1.Pod{withHostPort(plugintest.SizedPod("zeta", "1", ""), 8080), withHostPort(plugintest.SizedPod("alpha", "1", ""), 8080)}
		},
		want: map[string]string{"default/zeta": "n1", "default/alpha": ""},
	}, {
		// Only one of the two fits; the later-created pod with the earlier
		// name must not jump the queue.
		name:  "capacity goes to the first created",
		nodes: []*v1.Node{plugintest.SizedNode("n1", "2", "8Gi", 110)},
		pods: func() []*v1.Pod {
			return []*v1.Pod{plugintest.SizedPod("b-first", "2", ""), plugintest.SizedPod("a-second", "2", "")}
		},
		want: map[string]string{"default/b-first": "n1", "default/a-second": ""},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newState("1.36", tt.nodes)
			pods := tt.pods()
			created(s, pods...)
			if err := runScheduler(s); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, p := range pods {
				got[cluster.Key(p.Namespace, p.Name)] = s.Pods[cluster.Key(p.Namespace, p.Name)].Spec.NodeName
			}
			if n1, n3 := got["default/api-a"], got["default/api-b"]; tt.want["default/api-a"] == "n1|n3" {
				if n1 == n3 || (n1 != "n1" && n1 != "n3") || (n3 != "n1" && n3 != "n3") {
					t.Fatalf("api pods on %q and %q, want one on each of n1 and n3 (all: %v)", n1, n3, got)
				}
				delete(got, "default/api-a")
				delete(got, "default/api-b")
			}
			for k, want := range tt.want {
				if want == "n1|n3" {
					continue
				}
				if got[k] != want {
					t.Errorf("%s on %q, want %q (all: %v)", k, got[k], want, got)
				}
			}
		})
	}
}

// TestRequeueOrder: a pod that failed re-enters the queue behind pods that
// were already waiting, even when its name sorts first.
func TestRequeueOrder(t *testing.T) {
	s := newState("1.36", []*v1.Node{plugintest.SizedNode("n1", "1", "8Gi", 110)})
	sc := New()
	created(s, plugintest.SizedPod("z-big", "2", ""))
	if _, err := sc.Sync(s); err != nil {
		t.Fatal(err)
	}
	created(s, plugintest.SizedPod("b-small", "1", ""))
	// A node z-big fits arrives: the event moves it out of the
	// unschedulable pool (creating b-small did not).
	n2 := plugintest.SizedNode("n2", "2", "8Gi", 110)
	s.Nodes["n2"] = n2
	s.NodeAdded(n2)
	s.Now = s.Now.Add(backoffFor(1))
	due := sc.duePods(s)
	var order []string
	for _, p := range due {
		order = append(order, p.key)
	}
	if len(order) != 2 || order[0] != "default/z-big" {
		// z-big re-entered the queue at its failure, before b-small was created.
		t.Fatalf("queue order %v, want [default/z-big default/b-small]", order)
	}
	if s.Scheduler.Queue["default/z-big"].Seq >= s.Scheduler.Queue["default/b-small"].Seq {
		t.Fatalf("z-big seq %d not before b-small seq %d", s.Scheduler.Queue["default/z-big"].Seq, s.Scheduler.Queue["default/b-small"].Seq)
	}
}
