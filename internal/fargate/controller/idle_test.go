package controller

import (
	"math/rand"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/fargate"
)

// waiting is the walk an idle pass skips: the pods handed to
// fargate-scheduler that wait for it.
func waiting(s *cluster.State) int {
	n := 0
	for _, p := range s.Pods {
		if p.Spec.SchedulerName == fargate.SchedulerName && p.Spec.NodeName == "" && !cluster.IsTerminal(p) && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// TestIdleSkipMatchesWalk plays random writes (pods created for either
// scheduler, bound, finished, deleted, status writes, time passing)
// against one controller and checks that whenever it skips its walk,
// the walk would have found no pod to handle and there is no record.
func TestIdleSkipMatchesWalk(t *testing.T) {
	rng := rand.New(rand.NewSource(24))
	skipped, found := 0, 0
	for world := 0; world < 40; world++ {
		s := controllertest.NewState("apps", "web")
		c := New()
		pods := func() []*corev1.Pod {
			var out []*corev1.Pod
			for _, k := range cluster.SortedKeys(s.Pods) {
				out = append(out, s.Pods[k])
			}
			return out
		}
		create := func() {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "web", GenerateName: "p-"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
			if rng.Intn(4) == 0 {
				p.Spec.SchedulerName = fargate.SchedulerName
			}
			if err := admission.CreatePod(s, p); err != nil {
				t.Fatal(err)
			}
		}
		for step := 0; step < 40; step++ {
			switch rng.Intn(8) {
			case 0: // a pod, for fargate-scheduler now and then
				create()
			case 1: // one pod goes, another comes: the count stays
				if ps := pods(); len(ps) > 0 {
					s.DeletePod(ps[rng.Intn(len(ps))])
				}
				create()
			case 2: // bound by default-scheduler
				for _, p := range pods() {
					if p.Spec.NodeName == "" && p.Spec.SchedulerName != fargate.SchedulerName {
						s.BindPod(p, "n1")
						break
					}
				}
			case 3: // finished or marked for deletion
				if ps := pods(); len(ps) > 0 {
					p := ps[rng.Intn(len(ps))]
					if rng.Intn(2) == 0 {
						s.UpdatePodStatus(p, func(st *corev1.PodStatus) bool { st.Phase = corev1.PodSucceeded; return true })
					} else {
						s.GracefulDeletePod(p, nil)
					}
				}
			case 4: // removed
				if ps := pods(); len(ps) > 0 {
					s.DeletePod(ps[rng.Intn(len(ps))])
				}
			case 5: // a status write that changes nothing for Fargate
				if ps := pods(); len(ps) > 0 {
					s.UpdatePodStatus(ps[rng.Intn(len(ps))], func(st *corev1.PodStatus) bool { st.Message = "x"; return true })
				}
			default:
				s.Now = s.Now.Add(13 * time.Second)
			}
			if c.idleState == s && c.idle == s.ObjectSet() && len(s.Fargate.Pods) == 0 {
				skipped++
				if n := waiting(s); n > 0 {
					t.Fatalf("world %d step %d: the pass would skip %d waiting pods", world, step, n)
				}
			}
			if waiting(s) > 0 {
				found++
			}
			if _, err := c.Sync(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if skipped == 0 || found == 0 {
		t.Fatalf("skipped %d passes, %d steps with waiting pods: the random writes should give both", skipped, found)
	}
}
