package scheduler

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/plugins/queuesort"
)

// randomDue builds n due pods with few distinct priorities (some nil),
// few distinct timestamps and unique sequences, in random order.
func randomDue(rng *rand.Rand, n int, inOrder bool) []pendingPod {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	due := make([]pendingPod, n)
	for i := range due {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p-", i), Namespace: "default"}}
		if !inOrder {
			switch r := rng.Intn(4); r {
			case 0: // nil priority counts as 0
			default:
				prio := int32(r*1000 - 2000)
				p.Spec.Priority = &prio
			}
		}
		ts := base.Add(time.Duration(rng.Intn(3)) * time.Second)
		if inOrder {
			ts = base.Add(time.Duration(i/10) * time.Second)
		}
		due[i] = pendingPod{key: "default/" + p.Name, pod: p, q: &cluster.QueuedPod{Timestamp: ts, Seq: int64(i + 1)}}
	}
	if !inOrder {
		rng.Shuffle(n, func(i, j int) { due[i], due[j] = due[j], due[i] })
	}
	return due
}

// TestSortDueMatchesPlugin compares the flat-key sort for PrioritySort with
// sorting through the plugin's Less.
func TestSortDueMatchesPlugin(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, tc := range []struct {
		n       int
		inOrder bool
	}{{0, false}, {1, false}, {2, false}, {50, false}, {3000, false}, {3000, true}} {
		t.Run(fmt.Sprintf("%d in order %v", tc.n, tc.inOrder), func(t *testing.T) {
			due := randomDue(rng, tc.n, tc.inOrder)
			if tc.n == 50 {
				// A time Unix nanoseconds cannot hold: the plugin's comparison.
				due[7].q.Timestamp = time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
			}
			want := append([]pendingPod(nil), due...)
			sortDueWith(want, &queuesort.PrioritySort{})
			got := append([]pendingPod(nil), due...)
			sortDue(got, &queuesort.PrioritySort{})
			for i := range want {
				if got[i].key != want[i].key {
					t.Fatalf("position %d: got %s, want %s", i, got[i].key, want[i].key)
				}
			}
		})
	}
}

func BenchmarkSortDue(b *testing.B) {
	due := randomDue(rand.New(rand.NewSource(1)), 100000, false)
	work := make([]pendingPod, len(due))
	for _, s := range []struct {
		name string
		fn   func([]pendingPod, QueueSortPlugin)
	}{{"plugin", sortDueWith}, {"keys", sortDue}} {
		b.Run(s.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				copy(work, due)
				s.fn(work, &queuesort.PrioritySort{})
			}
		})
	}
}
