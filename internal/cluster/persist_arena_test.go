package cluster

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/store"
)

// TestArenaKeepsValues: every value cut from the arena keeps its bytes
// while later ones are added (blocks never move), a value larger than a
// block gets a block of its own, and reset reuses the blocks.
func TestArenaKeepsValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
	}{
		{"small", []int{1, 10, 100, 1000}},
		{"fills blocks", []int{arenaBlock / 3, arenaBlock / 3, arenaBlock / 3, arenaBlock / 3, 7}},
		{"larger than a block", []int{5, arenaBlock + 1, 9, 2 * arenaBlock}},
		{"empty", []int{0, 3, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &arena{}
			for round := 0; round < 2; round++ {
				a.reset()
				var got, want [][]byte
				for i, n := range tc.sizes {
					v := bytes.Repeat([]byte{byte(i + 1 + round)}, n)
					got = append(got, a.add(v))
					want = append(want, v)
				}
				for i := range want {
					if !bytes.Equal(got[i], want[i]) {
						t.Fatalf("round %d: value %d changed after later adds", round, i)
					}
					if cap(got[i]) != len(got[i]) {
						t.Fatalf("round %d: value %d has spare capacity %d (an append would overwrite its neighbour)", round, i, cap(got[i])-len(got[i]))
					}
				}
			}
			blocks := len(a.blocks)
			a.reset()
			for i, n := range tc.sizes {
				a.add(bytes.Repeat([]byte{byte(i)}, n))
			}
			if len(a.blocks) != blocks {
				t.Errorf("the same batch again took %d blocks, want the %d it had", len(a.blocks), blocks)
			}
		})
	}
}

// TestArenaEncodeInPlace: objects encoded straight into the blocks (and
// those that outgrow a block's rest, or a whole block) read back as their
// plain encoding, keep it while later ones are encoded, and have no spare
// capacity.
func TestArenaEncodeInPlace(t *testing.T) {
	var pods []*corev1.Pod
	for i := 0; i < 600; i++ {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p", i), Namespace: "default",
			Annotations: map[string]string{"a": strings.Repeat("x", (i*7919)%3000)}}}
		if i%97 == 5 {
			p.Annotations["big"] = strings.Repeat("y", arenaBlock+i)
		}
		pods = append(pods, p)
	}
	gvk := corev1.SchemeGroupVersion.WithKind("Pod")
	a := &arena{}
	for round := 0; round < 2; round++ {
		a.reset()
		var got [][]byte
		for _, p := range pods {
			v, err := a.encode(p, gvk)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		for i, p := range pods {
			want, err := store.Encode(p, gvk)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[i], want) {
				t.Fatalf("round %d: pod %d reads back %d bytes, not its %d-byte encoding", round, i, len(got[i]), len(want))
			}
			if cap(got[i]) != len(got[i]) {
				t.Fatalf("round %d: pod %d has spare capacity", round, i)
			}
		}
	}
}
