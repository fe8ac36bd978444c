package cluster

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// sortByCreationPlain is the comparison sort SortByCreation replaced.
func sortByCreationPlain[T metav1.Object](s *State, objs []T) {
	sort.Slice(objs, func(i, j int) bool {
		a, b := objs[i], objs[j]
		return createdBefore(s, a, b, Key(a.GetNamespace(), a.GetName()), Key(b.GetNamespace(), b.GetName()))
	})
}

// TestSortByCreationMatchesPlain compares SortByCreation with the plain
// comparison sort on inputs in creation order, shuffled, reversed, with
// many objects sharing a revision (0: stored without one) and with names
// that order differently from their revisions.
func TestSortByCreationMatchesPlain(t *testing.T) {
	for _, tc := range []struct {
		name             string
		n                int
		unrecordedEvery  int // every k-th object has no revision (0: none)
		arrange          string
		namespaces, seed int
	}{
		{name: "empty", n: 0, arrange: "shuffle", namespaces: 1, seed: 1},
		{name: "one", n: 1, arrange: "shuffle", namespaces: 1, seed: 1},
		{name: "in order", n: 500, arrange: "asis", namespaces: 3, seed: 1},
		{name: "reversed", n: 500, arrange: "reverse", namespaces: 3, seed: 2},
		{name: "shuffled", n: 2000, arrange: "shuffle", namespaces: 3, seed: 3},
		{name: "ties shuffled", n: 2000, unrecordedEvery: 2, arrange: "shuffle", namespaces: 2, seed: 4},
		{name: "all ties in order", n: 300, unrecordedEvery: 1, arrange: "asis", namespaces: 2, seed: 5},
		{name: "all ties shuffled", n: 300, unrecordedEvery: 1, arrange: "shuffle", namespaces: 2, seed: 6},
		{name: "one swap", n: 1000, arrange: "swap", namespaces: 1, seed: 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(tc.seed)))
			s := New("", 1)
			var pods []*corev1.Pod
			for i := 0; i < tc.n; i++ {
				// Names out of step with creation: a random suffix.
				name := fmt.Sprintf("p-%05d", rng.Intn(100000))
				ns := fmt.Sprintf("ns-%d", rng.Intn(tc.namespaces))
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Namespace: ns, UID: types.UID(fmt.Sprint("uid-", i))}}
				p.ResourceVersion = s.Bump()
				if tc.unrecordedEvery == 0 || i%tc.unrecordedEvery != 0 {
					s.NoteCreated(p.UID)
				}
				pods = append(pods, p)
			}
			switch tc.arrange {
			case "shuffle":
				rng.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
			case "reverse":
				for i, j := 0, len(pods)-1; i < j; i, j = i+1, j-1 {
					pods[i], pods[j] = pods[j], pods[i]
				}
			case "swap":
				pods[400], pods[401] = pods[401], pods[400]
			}
			want := append([]*corev1.Pod(nil), pods...)
			sortByCreationPlain(s, want)
			got := append([]*corev1.Pod(nil), pods...)
			SortByCreation(s, got)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("position %d: got %s, want %s", i, got[i].Name, want[i].Name)
				}
			}
		})
	}
}

func BenchmarkSortByCreation(b *testing.B) {
	s := New("", 1)
	rng := rand.New(rand.NewSource(1))
	pods := make([]*corev1.Pod, 100000)
	for i := range pods {
		pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%03d-%05d", i/500, i), Namespace: "shop", UID: types.UID(fmt.Sprint("uid-", i))}}
		s.Bump()
		s.NoteCreated(pods[i].UID)
	}
	rng.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
	work := make([]*corev1.Pod, len(pods))
	for _, sorter := range []struct {
		name string
		fn   func(*State, []*corev1.Pod)
	}{{"plain", sortByCreationPlain[*corev1.Pod]}, {"keyed", SortByCreation[*corev1.Pod]}} {
		b.Run(sorter.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				copy(work, pods)
				sorter.fn(s, work)
			}
		})
	}
}
