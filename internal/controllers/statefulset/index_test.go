package statefulset

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// randomWorld fills a state from seed with sets and pods that exercise the
// claim rules: owned, orphaned, foreign-owned, non-controller references,
// terminating and finished pods, names with and without ordinals, in two
// namespaces. Two calls with one seed build equal worlds.
func randomWorld(seed int64) (*cluster.State, []*appsv1.StatefulSet) {
	r := rand.New(rand.NewSource(seed))
	s := controllertest.NewState()
	var sets []*appsv1.StatefulSet
	names := []string{"db", "web", "db-1"}
	for i, ns := range []string{"a", "b"} {
		for j, name := range names {
			if r.Intn(4) == 0 {
				continue
			}
			n := int32(r.Intn(4))
			set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(fmt.Sprintf("uid-%d-%d", i, j))},
				Spec: appsv1.StatefulSetSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": []string{"x", "y"}[r.Intn(2)]}}}}
			sets = append(sets, set)
		}
	}
	uids := []types.UID{"", "", "uid-0-0", "uid-0-1", "uid-0-2", "uid-1-0", "uid-1-1", "uid-1-2", "foreign"}
	for i := 0; i < 60; i++ {
		name := fmt.Sprintf("%s-%d", names[r.Intn(3)], r.Intn(5))
		switch r.Intn(8) {
		case 0:
			name = fmt.Sprintf("other-%d", i)
		case 1:
			name = fmt.Sprintf("db-0%d", r.Intn(3)) // ordinal 0..2 spelled with a leading zero
		}
		ns := []string{"a", "b"}[r.Intn(2)]
		if _, ok := s.Pods[cluster.Key(ns, name)]; ok {
			continue
		}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(fmt.Sprintf("pod-%d", i)),
			Labels: map[string]string{"app": []string{"x", "y", "z"}[r.Intn(3)]}}}
		if uid := uids[r.Intn(len(uids))]; uid != "" {
			ctrl := r.Intn(5) != 0 // some references are not the controller
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "x", UID: uid, Controller: &ctrl}}
		}
		switch r.Intn(6) {
		case 0:
			now := metav1.NewTime(cluster.Epoch)
			p.DeletionTimestamp = &now
		case 1:
			p.Status.Phase = corev1.PodSucceeded
		case 2:
			p.Status.Phase = corev1.PodFailed
		default:
			p.Status.Phase = corev1.PodRunning
		}
		s.Pods[cluster.Key(ns, name)] = p
	}
	return s, sets
}

func canAdoptFor(set *appsv1.StatefulSet) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool { return ordinalOf(set, p) >= 0 }
}

// TestPodIndexMatchesPlainWalk replays, on two equal random worlds, a few
// passes of what syncSet does to the pods — claim, collect, create one pod,
// delete one, change the selector — once with the plain walks over every
// pod and once with the pass index, and compares the pods, resource
// versions and collected sets after every step.
func TestPodIndexMatchesPlainWalk(t *testing.T) {
	for seed := int64(0); seed < 100; seed++ {
		plain, setsP := randomWorld(seed)
		indexed, setsI := randomWorld(seed)
		r := rand.New(rand.NewSource(seed))
		for pass := 0; pass < 3; pass++ {
			ix := newPodIndex(indexed)
			for n := range setsP {
				sp, si := setsP[n], setsI[n]
				if r.Intn(3) == 0 { // a selector change between passes
					v := []string{"x", "y", "z"}[r.Intn(3)]
					sp.Spec.Selector.MatchLabels["app"], si.Spec.Selector.MatchLabels["app"] = v, v
				}
				selP, _ := metav1.LabelSelectorAsSelector(sp.Spec.Selector)
				selI, _ := metav1.LabelSelectorAsSelector(si.Spec.Selector)
				gotP := controllerutil.ClaimPods(plain, sp, "apps/v1", "StatefulSet", selP, canAdoptFor(sp))
				gotI := controllerutil.ClaimPodsAmong(indexed, ix.claimKeys(si), si, "apps/v1", "StatefulSet", selI, canAdoptFor(si))
				ix.claimed(gotI)
				if gotP != gotI {
					t.Fatalf("seed %d pass %d set %s/%s: claim changed %v, indexed %v", seed, pass, sp.Namespace, sp.Name, gotP, gotI)
				}
				compare(t, seed, "claim", plain, indexed, collect(plain, sp), split(si, ix.owned(si)))
				// Create the first missing ordinal, as reconcile would.
				cp := collect(plain, sp)
				for i, p := range cp.replicas {
					if p != nil {
						continue
					}
					for _, st := range []*cluster.State{plain, indexed} {
						set := sp
						if st == indexed {
							set = si
						}
						pod := newPod(set, &set.Spec.Template, i, "rev")
						key := cluster.Key(pod.Namespace, pod.Name)
						if st == indexed {
							ix.add(set, key)
						}
						if _, taken := st.Pods[key]; !taken {
							st.Pods[key] = pod
							st.Bump()
						}
					}
					break
				}
				// Remove the highest condemned pod outright.
				if len(cp.condemned) > 0 {
					last := cp.condemned[len(cp.condemned)-1]
					delete(plain.Pods, cluster.Key(last.Namespace, last.Name))
					delete(indexed.Pods, cluster.Key(last.Namespace, last.Name))
				}
				compare(t, seed, "reconcile", plain, indexed, collect(plain, sp), split(si, ix.owned(si)))
			}
		}
	}
}

func compare(t *testing.T, seed int64, step string, plain, indexed *cluster.State, a, b setPods) {
	t.Helper()
	if !reflect.DeepEqual(plain.Pods, indexed.Pods) {
		for k, p := range plain.Pods {
			if q := indexed.Pods[k]; !reflect.DeepEqual(p, q) {
				t.Logf("%s: %+v\n%+v", k, p.ObjectMeta, q.ObjectMeta)
			}
		}
		t.Fatalf("seed %d after %s: pods differ", seed, step)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("seed %d after %s: collected %s, indexed %s", seed, step, names(a), names(b))
	}
}

func names(sp setPods) string {
	var out []string
	for _, p := range append(append([]*corev1.Pod(nil), sp.replicas...), sp.condemned...) {
		if p == nil {
			out = append(out, "-")
		} else {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	return fmt.Sprint(out)
}

func TestOrdinalPrefix(t *testing.T) {
	for _, c := range []struct {
		name, prefix string
		ok           bool
	}{
		{"db-0", "db", true}, {"db-1-12", "db-1", true}, {"db-01", "db", true},
		{"db", "", false}, {"db-", "", false}, {"db-x", "", false}, {"-3", "", true}, {"db-1a", "", false},
	} {
		p, ok := ordinalPrefix(c.name)
		if p != c.prefix || ok != c.ok {
			t.Errorf("%q: got %q %v, want %q %v", c.name, p, ok, c.prefix, c.ok)
		}
		// Whenever the pattern names a set, the prefix is that set's name.
		if m := ordinalName.FindStringSubmatch(c.name); m != nil && (!ok || m[1] != p) {
			t.Errorf("%q: pattern says %q, prefix %q %v", c.name, m[1], p, ok)
		}
	}
}
