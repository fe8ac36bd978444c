package replicaset

import (
	"fmt"
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

// plainTally is what tallyGroup replaces: the claim's release check over
// the group, the active pods gathered, and calculateStatus's counts over
// them with the helpers it called per pod.
func plainTally(rs *appsv1.ReplicaSet, group []*corev1.Pod, selector func(map[string]string) bool, now time.Time) tally {
	var t tally
	t.release = slices.ContainsFunc(group, func(p *corev1.Pod) bool {
		return p.DeletionTimestamp == nil && !selector(p.Labels)
	})
	pods := activeOf(rs, group)
	t.active = len(pods)
	for _, p := range pods {
		if controllerutil.HasLabels(p.Labels, rs.Spec.Template.Labels) {
			t.fullyLabeled++
		}
		if controllerutil.IsPodReady(p) {
			t.ready++
			if controllerutil.IsPodAvailable(p, rs.Spec.MinReadySeconds, now) {
				t.available++
			} else if at := controllerutil.AvailableAt(p, rs.Spec.MinReadySeconds); t.nextAvailable.IsZero() || at.Before(t.nextAvailable) {
				t.nextAvailable = at
			}
		}
	}
	return t
}

// TestTallyMatchesPlain compares one walk with the walks it replaces on
// random groups: pods of other namespaces, finished, terminating, with and
// without the selector's and the template's labels, ready or not since
// various instants, under various minReadySeconds.
func TestTallyMatchesPlain(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	now := time.Date(2025, 1, 1, 0, 10, 0, 0, time.UTC)
	labelSets := []map[string]string{
		nil, {"app": "web"}, {"app": "web", "tier": "front"}, {"app": "db"}, {"tier": "front"},
	}
	seen := map[string]bool{}
	for world := 0; world < 2000; world++ {
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "rs"},
			Spec: appsv1.ReplicaSetSpec{
				MinReadySeconds: []int32{0, 0, 5, 30}[rng.Intn(4)],
				Template:        corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labelSets[1+rng.Intn(2)]}},
			},
		}
		selector, err := controllerutil.SelectorMatcher(&metav1.LabelSelector{MatchLabels: labelSets[1+rng.Intn(2)]})
		if err != nil {
			t.Fatal(err)
		}
		var group []*corev1.Pod
		for i := rng.Intn(8); i > 0; i-- {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
				Namespace: []string{"a", "a", "a", "b"}[rng.Intn(4)], Name: fmt.Sprintf("p%d", i),
				Labels: labelSets[rng.Intn(len(labelSets))],
			}}
			p.Status.Phase = []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed}[rng.Intn(5)]
			if rng.Intn(5) == 0 {
				ts := metav1.NewTime(now)
				p.DeletionTimestamp = &ts
			}
			if rng.Intn(4) > 0 {
				st := []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionTrue, corev1.ConditionFalse}[rng.Intn(3)]
				var since metav1.Time
				if rng.Intn(6) > 0 {
					since = metav1.NewTime(now.Add(-time.Duration(rng.Intn(60)) * time.Second))
				}
				p.Status.Conditions = append(p.Status.Conditions,
					corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
					corev1.PodCondition{Type: corev1.PodReady, Status: st, LastTransitionTime: since})
			}
			group = append(group, p)
		}
		got, want := tallyGroup(rs, group, selector, now), plainTally(rs, group, selector, now)
		if got != want {
			t.Fatalf("world %d: tally %+v, plain %+v", world, got, want)
		}
		seen[fmt.Sprint(want.release, want.available > 0, !want.nextAvailable.IsZero(), want.fullyLabeled < int32(want.active))] = true
	}
	if len(seen) < 8 {
		t.Fatalf("random groups covered too few cases: %v", seen)
	}
}

// TestIndexTallyMatchesPlain checks the tallies the index's walk keeps
// against the plain computation over each set's pods gathered from the
// whole state: sets sharing a UID, sets with an invalid selector, pods of
// unknown owners, orphans, and sets read after their group was touched.
func TestIndexTallyMatchesPlain(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	now := time.Date(2025, 1, 1, 0, 10, 0, 0, time.UTC)
	labelSets := []map[string]string{nil, {"app": "web"}, {"app": "web", "tier": "front"}, {"app": "db"}}
	kept := 0
	for world := 0; world < 500; world++ {
		s := controllertest.NewState("a", "b")
		s.Now = now
		uids := []types.UID{"u0", "u1", "u2", "u3", ""}
		var sets []*appsv1.ReplicaSet
		for i := rng.Intn(5); i >= 0; i-- {
			rs := &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Namespace: []string{"a", "b"}[rng.Intn(2)], Name: fmt.Sprintf("rs%d", i), UID: uids[rng.Intn(len(uids))]},
				Spec: appsv1.ReplicaSetSpec{
					MinReadySeconds: []int32{0, 10}[rng.Intn(2)],
					Selector:        &metav1.LabelSelector{MatchLabels: labelSets[1+rng.Intn(3)]},
					Template:        corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labelSets[1+rng.Intn(3)]}},
				},
			}
			if rng.Intn(8) == 0 {
				rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}
			}
			s.ReplicaSets[cluster.Key(rs.Namespace, rs.Name)] = rs
			sets = append(sets, rs)
		}
		for i := rng.Intn(12); i > 0; i-- {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
				Namespace: []string{"a", "b"}[rng.Intn(2)], Name: fmt.Sprintf("p%d", i), Labels: labelSets[rng.Intn(len(labelSets))],
			}}
			if rng.Intn(4) > 0 {
				yes := true
				p.OwnerReferences = []metav1.OwnerReference{{UID: uids[rng.Intn(len(uids))], Controller: &yes}}
			}
			p.Status.Phase = []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodFailed}[rng.Intn(3)]
			if rng.Intn(2) == 0 {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
					LastTransitionTime: metav1.NewTime(now.Add(-time.Duration(rng.Intn(20)) * time.Second))}}
			}
			s.Pods[cluster.Key(p.Namespace, p.Name)] = p
		}
		ix := &podIndex{s: s, dirty: true}
		for _, rs := range sets {
			selector, err := controllerutil.SelectorMatcher(rs.Spec.Selector)
			if err != nil {
				continue // the sync stops at the error
			}
			if rng.Intn(4) == 0 {
				ix.touch(rs, nil)
			}
			var group []*corev1.Pod
			for _, p := range s.Pods {
				if controllerutil.IsControlledBy(p, string(rs.UID)) {
					group = append(group, p)
				}
			}
			if g := ix.byOwner[rs.UID]; g != nil && g.tallied && g.set == rs {
				kept++
			}
			got, want := ix.tally(rs, selector), plainTally(rs, group, selector, now)
			if got != want {
				t.Fatalf("world %d set %s: index tally %+v, plain %+v", world, rs.Name, got, want)
			}
		}
	}
	if kept == 0 {
		t.Fatal("no set was read from the walk's tallies")
	}
}
