package garbagecollector

import (
	"fmt"
	"math/rand"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// TestSkipsOnlyWhenNoneMissing plays random writes against one collector
// and checks, before every pass it skips because the object set did not
// change, that the check it skips (every owner reference against every
// object) would have found every owner: creations with live and dead
// owners, owners removed (alone or with a creation, so the count stays),
// pods removed, status writes, adoptions and releases, and updates that
// point a pod at a dead owner.
func TestSkipsOnlyWhenNoneMissing(t *testing.T) {
	rng := rand.New(rand.NewSource(24))
	skipped, missing := 0, 0
	for world := 0; world < 60; world++ {
		s := controllertest.NewState("a")
		c := New()
		var owners []*appsv1.ReplicaSet
		addOwner := func() {
			rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: fmt.Sprintf("rs%d", len(owners))}}
			if err := admission.Create(s, rs); err != nil {
				t.Fatal(err)
			}
			owners = append(owners, rs)
		}
		liveOwner := func() *appsv1.ReplicaSet {
			for _, i := range rng.Perm(len(owners)) {
				if rs := s.ReplicaSets[cluster.Key("a", owners[i].Name)]; rs == owners[i] {
					return rs
				}
			}
			return nil
		}
		pods := func() []*corev1.Pod {
			var out []*corev1.Pod
			for _, k := range cluster.SortedKeys(s.Pods) {
				out = append(out, s.Pods[k])
			}
			return out
		}
		for range 3 {
			addOwner()
		}
		for step := 0; step < 40; step++ {
			switch rng.Intn(9) {
			case 0, 1: // a pod of a live owner, now and then of a dead one
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", GenerateName: "p-"},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
				if rs := liveOwner(); rs != nil && rng.Intn(5) > 0 {
					p.OwnerReferences = []metav1.OwnerReference{controllerutil.NewControllerRef(rs, "apps/v1", "ReplicaSet")}
				} else if rng.Intn(2) == 0 {
					p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "gone", UID: "dead"}}
				}
				if err := admission.CreatePod(s, p); err != nil {
					t.Fatal(err)
				}
			case 2: // an owner goes
				if rs := liveOwner(); rs != nil {
					delete(s.ReplicaSets, cluster.Key(rs.Namespace, rs.Name))
					s.Bump()
				}
			case 3: // an owner goes and another comes: the count stays
				if rs := liveOwner(); rs != nil {
					delete(s.ReplicaSets, cluster.Key(rs.Namespace, rs.Name))
					s.Bump()
					addOwner()
				}
			case 4: // a pod goes
				if ps := pods(); len(ps) > 0 {
					s.DeletePod(ps[rng.Intn(len(ps))])
				}
			case 5: // a status write
				if ps := pods(); len(ps) > 0 {
					s.UpdatePodStatus(ps[rng.Intn(len(ps))], func(st *corev1.PodStatus) bool { st.Phase = corev1.PodRunning; return true })
				}
			case 6: // a claim: release or adopt
				if ps := pods(); len(ps) > 0 {
					p := ps[rng.Intn(len(ps))]
					if ref := metav1.GetControllerOf(p); ref != nil {
						controllerutil.ReleasePod(p, ref.UID)
					} else if rs := liveOwner(); rs != nil {
						p.OwnerReferences = append(p.OwnerReferences, controllerutil.NewControllerRef(rs, "apps/v1", "ReplicaSet"))
					}
					p.ResourceVersion = s.Bump()
				}
			case 7: // an update names a dead owner
				if ps := pods(); len(ps) > 0 {
					p := ps[rng.Intn(len(ps))].DeepCopy()
					p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "gone", UID: types.UID(fmt.Sprintf("dead-%d", step))}}
					if _, err := admission.Update(s, p); err != nil {
						t.Fatal(err)
					}
				}
			default: // nothing: a pass at the same state
			}
			skip := c.noneMissing && c.state == s && c.none == s.ObjectSet()
			if skip {
				skipped++
				if plainOwnerMissing(s) {
					t.Fatalf("world %d step %d: the pass would be skipped, but an owner is missing", world, step)
				}
			}
			if plainOwnerMissing(s) {
				missing++
			}
			if _, err := c.Sync(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if skipped == 0 || missing == 0 {
		t.Fatalf("skipped %d passes, %d with an owner missing: the random writes should give both", skipped, missing)
	}
}
