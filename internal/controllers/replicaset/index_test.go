package replicaset

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// TestKeptIndexMatchesRebuilt plays random writes against one long-lived
// controller and, before each of its passes, compares the index it would
// reuse (walked by walkKept) with one rebuilt from every pod: the same
// groups and orphans, and the same tallies. The writes: status changes in
// place (as the kubelet makes them), bindings, deletion marks, removals,
// creations, claims and releases in place, pods replaced under their key
// with other labels, sets' selectors and template labels edited in place,
// and the clock moving; in between, the controller's own passes create
// and delete pods.
func TestKeptIndexMatchesRebuilt(t *testing.T) {
	rng := rand.New(rand.NewSource(24))
	labelSets := []map[string]string{{"app": "web"}, {"app": "web", "tier": "front"}, {"app": "db"}}
	reused := 0
	for world := 0; world < 40; world++ {
		s := controllertest.NewState("a", "b")
		var sets []*appsv1.ReplicaSet
		for i := 0; i < 3; i++ {
			n := int32(rng.Intn(6))
			rs := &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Namespace: []string{"a", "b"}[rng.Intn(2)], Name: fmt.Sprintf("rs%d", i), UID: types.UID(fmt.Sprintf("u%d", i))},
				Spec: appsv1.ReplicaSetSpec{
					Replicas:        &n,
					MinReadySeconds: []int32{0, 10}[rng.Intn(2)],
					Selector:        &metav1.LabelSelector{MatchLabels: maps.Clone(labelSets[rng.Intn(3)])},
				},
			}
			rs.Spec.Template.Labels = maps.Clone(rs.Spec.Selector.MatchLabels)
			rs.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "i"}}
			s.ReplicaSets[cluster.Key(rs.Namespace, rs.Name)] = rs
			s.NoteCreated(rs.UID)
			sets = append(sets, rs)
		}
		c := New()
		for step := 0; step < 40; step++ {
			write(t, rng, s, sets, labelSets)
			if k := c.kept; k != nil && k.s == s && c.keptSet == s.ObjectSet() {
				ix := c.index(s)
				ix.ensure()
				if !ix.dirty {
					reused++
				}
				compareIndexes(t, fmt.Sprintf("world %d step %d", world, step), ix, rebuilt(s))
				c.keep(s, ix)
			}
			if _, err := c.Sync(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if reused < 100 {
		t.Fatalf("only %d passes reused their index", reused)
	}
}

func rebuilt(s *cluster.State) *podIndex {
	ix := &podIndex{s: s, dirty: true}
	ix.ensure()
	return ix
}

func compareIndexes(t *testing.T, at string, got, want *podIndex) {
	t.Helper()
	members := func(g *ownerGroup) []string {
		var out []string
		if g != nil {
			for _, p := range g.pods {
				out = append(out, cluster.Key(p.Namespace, p.Name))
			}
		}
		slices.Sort(out)
		return out
	}
	for uid, w := range want.byOwner {
		g := got.byOwner[uid]
		if !slices.Equal(members(g), members(w)) {
			t.Fatalf("%s: owner %s has %v, rebuilt %v", at, uid, members(g), members(w))
		}
		if w.tallied && (!g.tallied || g.set != w.set || g.tally != w.tally) {
			t.Fatalf("%s: owner %s tally %+v (tallied %v), rebuilt %+v", at, uid, g.tally, g.tallied, w.tally)
		}
	}
	for uid, g := range got.byOwner {
		if want.byOwner[uid] == nil && len(g.pods) > 0 {
			t.Fatalf("%s: owner %s kept with %v", at, uid, members(g))
		}
	}
	for _, ns := range []string{"a", "b"} {
		if !slices.Equal(members(got.orphans[ns]), members(want.orphans[ns])) {
			t.Fatalf("%s: orphans in %s %v, rebuilt %v", at, ns, members(got.orphans[ns]), members(want.orphans[ns]))
		}
	}
}

// write makes one random write, through the paths the rest of berth uses.
func write(t *testing.T, rng *rand.Rand, s *cluster.State, sets []*appsv1.ReplicaSet, labelSets []map[string]string) {
	t.Helper()
	keys := cluster.SortedKeys(s.Pods)
	var p *corev1.Pod
	if len(keys) > 0 {
		p = s.Pods[keys[rng.Intn(len(keys))]]
	}
	switch k := rng.Intn(12); {
	case k == 0:
		s.Now = s.Now.Add(time.Duration(rng.Intn(15)) * time.Second)
	case k <= 3 && p != nil: // status in place
		p.Status.Phase = []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodFailed}[rng.Intn(3)]
		p.Status.Conditions = nil
		if rng.Intn(2) == 0 {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(s.Now)}}
		}
		p.ResourceVersion = s.Bump()
	case k == 4 && p != nil:
		s.BindPod(p, "n1")
	case k == 5 && p != nil:
		s.GracefulDeletePod(p, nil)
	case k == 6 && p != nil:
		delete(s.Pods, cluster.Key(p.Namespace, p.Name))
		s.Bump()
	case k == 7: // a pod made by hand, maybe an orphan
		np := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: []string{"a", "b"}[rng.Intn(2)], Name: fmt.Sprintf("hand-%s", s.Bump()),
			Labels: maps.Clone(labelSets[rng.Intn(3)])}}
		if rng.Intn(2) == 0 {
			np.OwnerReferences = []metav1.OwnerReference{controllerutil.NewControllerRef(sets[rng.Intn(3)], "apps/v1", "ReplicaSet")}
		}
		s.Pods[cluster.Key(np.Namespace, np.Name)] = np
		s.NoteCreated(np.UID)
	case k == 8 && p != nil: // claims in place: a release, or an orphan's adoption
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
			controllerutil.ReleasePod(p, ref.UID)
		} else {
			p.OwnerReferences = append(p.OwnerReferences, controllerutil.NewControllerRef(sets[rng.Intn(3)], "apps/v1", "ReplicaSet"))
		}
		p.ResourceVersion = s.Bump()
	case k == 9 && p != nil: // replaced under its key with other labels (admission's Update)
		np := p.DeepCopy()
		np.Labels = maps.Clone(labelSets[rng.Intn(3)])
		np.ResourceVersion = s.Bump()
		s.Pods[cluster.Key(p.Namespace, p.Name)] = np
		s.NoteReplaced()
	case k == 10: // a set's selector edited in place
		rs := sets[rng.Intn(3)]
		rs.Spec.Selector.MatchLabels = maps.Clone(labelSets[rng.Intn(3)])
		rs.ResourceVersion = s.Bump()
	case k == 11: // a set's template labels edited in place
		rs := sets[rng.Intn(3)]
		rs.Spec.Template.Labels = maps.Clone(labelSets[rng.Intn(3)])
		rs.ResourceVersion = s.Bump()
	}
}
