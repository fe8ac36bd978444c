package berthrun

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// Enqueue creates pods as pending without scheduling them, for the bulk mode
// in which one Sync schedules them all, as berth apply's settle loop does.
// Each pod is created one microsecond after the previous one, so that among
// equal priorities the queue keeps their order, as upstream's queue keeps
// arrival order.
func (r *Runner) Enqueue(pods []*v1.Pod) error {
	s := r.state
	if s == nil {
		return fmt.Errorf("berthrun: Enqueue before Load")
	}
	for i, pod := range pods {
		p := pod.DeepCopy()
		p.Spec.NodeName = ""
		p.CreationTimestamp = metav1.NewTime(s.Now.Add(time.Duration(i) * time.Microsecond))
		stamp(s, p)
		key := cluster.Key(p.Namespace, p.Name)
		if _, dup := s.Pods[key]; dup {
			return fmt.Errorf("berthrun: pod %s already exists", key)
		}
		s.Pods[key] = p
	}
	return nil
}

// Sync runs the scheduler controller once: one attempt for every pending
// pod that is due, in queue order.
func (r *Runner) Sync() error {
	if r.state == nil {
		return fmt.Errorf("berthrun: Sync before Load")
	}
	_, err := r.sched.Sync(r.state)
	return err
}

// Outcome is where a pod ended up after Sync: its node, or the message of
// its PodScheduled condition when it is unschedulable.
type Outcome struct {
	Node, Message string
}

// Outcomes reports every pod of the cluster by key (namespace/name).
func (r *Runner) Outcomes() map[string]Outcome {
	out := make(map[string]Outcome, len(r.state.Pods))
	for key, p := range r.state.Pods {
		o := Outcome{Node: p.Spec.NodeName}
		if o.Node == "" {
			for _, c := range p.Status.Conditions {
				if c.Type == v1.PodScheduled {
					o.Message = c.Message
				}
			}
		}
		out[key] = o
	}
	return out
}
