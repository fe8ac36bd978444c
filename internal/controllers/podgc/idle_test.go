package podgc

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
)

// candidates is the walk an idle pass skips.
func candidates(s *cluster.State) int {
	n := 0
	for _, p := range s.Pods {
		if p.Spec.NodeName == "" {
			continue
		}
		if _, ok := s.Nodes[p.Spec.NodeName]; !ok || p.DeletionTimestamp != nil {
			n++
		}
	}
	return n
}

// TestIdleSkipMatchesWalk plays random writes against one collector and
// checks that whenever it skips its walk (no candidate last time, object
// set and bindings and deletion marks unchanged since), the walk would
// have found no candidate: pods created bound (to live and missing
// nodes) or unbound, bindings (to missing nodes too), graceful deletions,
// nodes removed, added or replaced under their name, status writes, the
// clock moving.
func TestIdleSkipMatchesWalk(t *testing.T) {
	rng := rand.New(rand.NewSource(24))
	skipped, found := 0, 0
	for world := 0; world < 40; world++ {
		s := controllertest.NewState()
		controllertest.AddNode(s, "n0", "2", "4Gi", nil)
		c := New()
		nodes := 1
		nodeName := func() string {
			if rng.Intn(6) == 0 {
				return "gone"
			}
			return fmt.Sprintf("n%d", rng.Intn(nodes))
		}
		pods := func() []*corev1.Pod {
			var out []*corev1.Pod
			for _, k := range cluster.SortedKeys(s.Pods) {
				out = append(out, s.Pods[k])
			}
			return out
		}
		for step := 0; step < 50; step++ {
			switch rng.Intn(9) {
			case 0, 1: // a pod, bound at creation now and then
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "p-"},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
				if rng.Intn(3) == 0 {
					p.Spec.NodeName = nodeName()
				}
				if err := admission.CreatePod(s, p); err != nil {
					t.Fatal(err)
				}
			case 2: // a binding
				for _, p := range pods() {
					if p.Spec.NodeName == "" {
						s.BindPod(p, nodeName())
						break
					}
				}
			case 3: // a graceful deletion
				if ps := pods(); len(ps) > 0 {
					s.GracefulDeletePod(ps[rng.Intn(len(ps))], nil)
				}
			case 4: // a node goes
				if name := fmt.Sprintf("n%d", rng.Intn(nodes)); s.Nodes[name] != nil {
					s.RemoveNodeObject(name)
				}
			case 5: // a node comes, or comes back under its old name
				name := fmt.Sprintf("n%d", nodes)
				if rng.Intn(2) == 0 {
					name = fmt.Sprintf("n%d", rng.Intn(nodes))
					if s.Nodes[name] != nil {
						s.RemoveNodeObject(name)
					}
				} else {
					nodes++
				}
				controllertest.AddNode(s, name, "2", "4Gi", nil)
			case 6: // a status write
				if ps := pods(); len(ps) > 0 {
					s.UpdatePodStatus(ps[rng.Intn(len(ps))], func(st *corev1.PodStatus) bool { st.Phase = corev1.PodRunning; return true })
				}
			case 7:
				s.Now = s.Now.Add(time.Duration(rng.Intn(60)) * time.Second)
			default: // nothing: a pass at the same state
			}
			if c.idleState == s && c.idleSet == s.ObjectSet() && c.idleMarks == s.BindsAndDeletes() {
				skipped++
				if n := candidates(s); n > 0 {
					t.Fatalf("world %d step %d: the pass would skip %d candidates", world, step, n)
				}
			}
			if candidates(s) > 0 {
				found++
			}
			if _, err := c.Sync(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if skipped == 0 || found == 0 {
		t.Fatalf("skipped %d passes, %d steps with candidates: the random writes should give both", skipped, found)
	}
}
