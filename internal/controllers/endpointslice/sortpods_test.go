package endpointslice

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

func podNames(ps []*corev1.Pod) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Namespace + "/" + p.Name
	}
	return fmt.Sprint(out)
}

// TestSortByNameMatchesSortSlice checks sortByName against the sort.Slice
// by name it replaces.
func TestSortByNameMatchesSortSlice(t *testing.T) {
	for seed := int64(1); seed <= 50; seed++ {
		r := rand.New(rand.NewSource(seed))
		var all []*corev1.Pod
		for _, i := range r.Perm(r.Intn(60)) {
			all = append(all, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p-", i), Namespace: "ns"}})
		}
		want := append([]*corev1.Pod(nil), all...)
		sort.Slice(want, func(i, j int) bool { return want[i].Name < want[j].Name })
		got := append([]*corev1.Pod(nil), all...)
		sortByName(got)
		if podNames(got) != podNames(want) {
			t.Fatalf("seed %d: sortByName %v, sort.Slice %v", seed, podNames(got), podNames(want))
		}
	}
}

// TestCandidatesMatchPlain checks candidates (sorted runs, binary search,
// merge) against the plain computation: the pods the Service matched that
// still exist, plus the written pods of its namespace it did not match,
// sorted by name. Namespaces are chosen so that one is a prefix of another
// ("a", "a-b", "ab").
func TestCandidatesMatchPlain(t *testing.T) {
	namespaces := []string{"a", "a-b", "ab", "b"}
	for seed := int64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewSource(seed))
		s := &cluster.State{Pods: map[string]*corev1.Pod{}}
		w := newSeen()
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: namespaces[r.Intn(len(namespaces))]}}
		svcKey := cluster.Key(svc.Namespace, svc.Name)
		var matched []*corev1.Pod
		for i := 0; i < r.Intn(80); i++ {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p-", r.Intn(40)), Namespace: namespaces[r.Intn(len(namespaces))]}}
			k := cluster.Key(p.Namespace, p.Name)
			if _, dup := s.Pods[k]; dup {
				continue
			}
			s.Pods[k] = p
			if p.Namespace == svc.Namespace && r.Intn(2) == 0 {
				matched = append(matched, p)
			}
		}
		sortByName(matched)
		w.selected[svcKey] = map[string]bool{}
		for _, p := range matched {
			k := cluster.Key(p.Namespace, p.Name)
			w.selected[svcKey][k] = true
			w.order[svcKey] = append(w.order[svcKey], k)
			if r.Intn(4) == 0 { // deleted since
				delete(s.Pods, k)
			}
		}
		// Written pods are those of this pass, so they exist.
		for _, k := range cluster.SortedKeys(s.Pods) {
			if r.Intn(2) == 0 {
				w.touched = append(w.touched, keyedPod{k, s.Pods[k]})
			}
		}
		r.Shuffle(len(w.touched), func(i, j int) { w.touched[i], w.touched[j] = w.touched[j], w.touched[i] })
		var want []*corev1.Pod
		for k := range w.selected[svcKey] {
			if p, ok := s.Pods[k]; ok {
				want = append(want, p)
			}
		}
		for _, tp := range w.touched {
			if tp.pod.Namespace == svc.Namespace && !w.selected[svcKey][tp.key] {
				want = append(want, tp.pod)
			}
		}
		sort.Slice(want, func(i, j int) bool { return want[i].Name < want[j].Name })
		if got := w.candidates(s, svc); podNames(got) != podNames(want) {
			t.Fatalf("seed %d: candidates %v, plain %v", seed, podNames(got), podNames(want))
		}
	}
}
