package garbagecollector

import (
	"fmt"
	"math/rand"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
)

// plainOwnerMissing is the check ownerMissing replaces: every owner uid of
// every object against the uids of every object.
func plainOwnerMissing(s *cluster.State) bool {
	wanted := map[types.UID]bool{}
	for _, k := range cluster.Kinds {
		k.Each(s, func(m metav1.Object) {
			for _, r := range m.GetOwnerReferences() {
				wanted[r.UID] = false
			}
		})
	}
	missing := len(wanted)
	for _, k := range cluster.Kinds {
		k.Each(s, func(m metav1.Object) {
			if seen, ok := wanted[m.GetUID()]; ok && !seen {
				wanted[m.GetUID()] = true
				missing--
			}
		})
	}
	return missing > 0
}

// TestOwnerMissingMatchesPlain builds random clusters whose references name
// their owners rightly, by a wrong kind, name, namespace or API version
// with a live uid, or a uid nothing has, and compares the answers.
func TestOwnerMissingMatchesPlain(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	answers := map[bool]int{}
	for world := 0; world < 400; world++ {
		s := controllertest.NewState("a", "b")
		type owner struct {
			apiVersion, kind, ns, name string
			uid                        types.UID
		}
		var live []owner
		nOwners := rng.Intn(4)
		for i := 0; i < nOwners; i++ {
			ns := []string{"a", "b"}[rng.Intn(2)]
			name := fmt.Sprintf("o%d", i)
			uid := types.UID(fmt.Sprintf("uid-%d-%d", world, i))
			switch rng.Intn(3) {
			case 0:
				s.ReplicaSets[cluster.Key(ns, name)] = &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid}}
				live = append(live, owner{"apps/v1", "ReplicaSet", ns, name, uid})
			case 1:
				s.Deployments[cluster.Key(ns, name)] = &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid}}
				live = append(live, owner{"apps/v1", "Deployment", ns, name, uid})
			default:
				s.Nodes[name] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid}}
				live = append(live, owner{"v1", "Node", "", name, uid})
			}
		}
		nPods := rng.Intn(6)
		for i := 0; i < nPods; i++ {
			ns := []string{"a", "b"}[rng.Intn(2)]
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprintf("pod-%d-%d", world, i))}}
			for r := rng.Intn(3); r > 0; r-- {
				ref := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "gone", UID: types.UID(fmt.Sprintf("dead-%d", rng.Intn(3)))}
				if len(live) > 0 && rng.Intn(4) > 0 {
					o := live[rng.Intn(len(live))]
					ref = metav1.OwnerReference{APIVersion: o.apiVersion, Kind: o.kind, Name: o.name, UID: o.uid}
					switch rng.Intn(6) {
					case 0:
						ref.Kind = "StatefulSet"
					case 1:
						ref.Name = "other"
					case 2:
						ref.APIVersion = "not/a/version"
					case 3:
						ref.Kind = "Pod"
						ref.APIVersion = "v1"
					}
				} else if rng.Intn(3) == 0 && i > 0 {
					// Owned by an earlier pod, by uid only.
					ref = metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "p0", UID: types.UID(fmt.Sprintf("pod-%d-0", world))}
				}
				p.OwnerReferences = append(p.OwnerReferences, ref)
			}
			s.Pods[cluster.Key(ns, p.Name)] = p
		}
		got, want := ownerMissing(s), plainOwnerMissing(s)
		if got != want {
			t.Fatalf("world %d: ownerMissing = %v, plain check = %v", world, got, want)
		}
		answers[want]++
	}
	if answers[true] == 0 || answers[false] == 0 {
		t.Fatalf("random worlds gave one answer only: %v", answers)
	}
}
