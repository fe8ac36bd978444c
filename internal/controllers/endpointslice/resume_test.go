package endpointslice

import (
	"fmt"
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
)

// TestResumeMatchesFull checks the resumed pass (resume.go) against
// recomputing every Service: a controller that keeps its memory across
// random writes (pods created, deleted, relabelled, readied, moved,
// terminated; nodes relabelled; Services reselected, added, removed; a
// slice deleted by hand) must leave the same slices, Endpoints and
// resource version as a fresh controller on a copy of the same state.
func TestResumeMatchesFull(t *testing.T) {
	unselected := 0
	for seed := int64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewSource(seed))
		s := controllertest.NewState("shop", "back")
		for i, zone := range []string{"us-west-2a", "us-west-2b", "us-west-2c"} {
			controllertest.AddNode(s, fmt.Sprint("n", i), "8", "16Gi", map[string]string{corev1.LabelTopologyZone: zone})
		}
		apps := []string{"web", "api", "other"}
		addService := func(ns, name, app string) {
			s.Services[cluster.Key(ns, name)] = &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("svc-" + ns + name), ResourceVersion: s.Bump()},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": app}, ClusterIP: "10.100.0.1",
					Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http")}}}}
		}
		addService("shop", "web", "web")
		addService("shop", "api", "api")
		addService("back", "web", "web")
		next := 0
		addPod := func() {
			ns := []string{"shop", "back"}[r.Intn(2)]
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p-", next), Namespace: ns, UID: types.UID(fmt.Sprint("uid-", next)),
					Labels: map[string]string{"app": apps[r.Intn(len(apps))]}, ResourceVersion: s.Bump()},
				Spec: corev1.PodSpec{NodeName: fmt.Sprint("n", r.Intn(3)), Containers: []corev1.Container{{Name: "c",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: int32(8080 + r.Intn(2)), Protocol: corev1.ProtocolTCP}}}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.1.%d.%d", next/200, next%200+1)},
			}
			if r.Intn(2) == 0 {
				ready(p)
			}
			next++
			s.Pods[cluster.Key(p.Namespace, p.Name)] = p
		}
		for i := 0; i < 30; i++ {
			addPod()
		}
		c := New()
		if _, err := c.Sync(s); err != nil {
			t.Fatal(err)
		}
		for step := 0; step < 40; step++ {
			pods := cluster.SortedKeys(s.Pods)
			pod := s.Pods[pods[r.Intn(len(pods))]]
			switch r.Intn(11) {
			case 0:
				addPod()
			case 1:
				delete(s.Pods, cluster.Key(pod.Namespace, pod.Name))
				s.Bump()
			case 2:
				pod.Labels = map[string]string{"app": apps[r.Intn(len(apps))]}
				pod.ResourceVersion = s.Bump()
			case 3:
				ready(pod)
				pod.ResourceVersion = s.Bump()
			case 4:
				pod.Spec.NodeName = fmt.Sprint("n", r.Intn(4)) // n3 does not exist
				pod.ResourceVersion = s.Bump()
			case 5:
				terminating(pod)
				pod.ResourceVersion = s.Bump()
			case 6:
				n := s.Nodes[fmt.Sprint("n", r.Intn(3))]
				n.Labels[corev1.LabelTopologyZone] = "us-west-2" + string(rune('a'+r.Intn(3)))
				n.ResourceVersion = s.Bump()
			case 7:
				svc := s.Services[cluster.SortedKeys(s.Services)[r.Intn(len(s.Services))]]
				svc.Spec.Selector = map[string]string{"app": apps[r.Intn(len(apps))]}
				if r.Intn(3) == 0 {
					// No Service selecting pods: the pass skips its walk
					// over the pods until one selects again.
					for _, k := range cluster.SortedKeys(s.Services) {
						s.Services[k].Spec.Selector = nil
						s.Services[k].ResourceVersion = s.Bump()
					}
				}
				svc.ResourceVersion = s.Bump()
			case 8:
				if r.Intn(2) == 0 {
					addService("back", fmt.Sprint("extra-", step), apps[r.Intn(len(apps))])
				} else if k := cluster.SortedKeys(s.Services); len(k) > 1 {
					delete(s.Services, k[r.Intn(len(k))])
					s.Bump()
				}
			case 9:
				if k := cluster.SortedKeys(s.EndpointSlices); len(k) > 0 {
					delete(s.EndpointSlices, k[r.Intn(len(k))])
					s.Bump()
				}
			default:
				pod.Status.PodIP = ""
				pod.ResourceVersion = s.Bump()
			}
			if !anySelects(s.Services) {
				unselected++
			}
			full := s.Clone()
			for round := 0; round < 2; round++ { // the second round settles
				resumed, err := c.Sync(s)
				if err != nil {
					t.Fatal(err)
				}
				recomputed, err := New().Sync(full)
				if err != nil {
					t.Fatal(err)
				}
				if resumed != recomputed || s.ResourceVersion != full.ResourceVersion ||
					!sameObjects(s.EndpointSlices, full.EndpointSlices) || !sameObjects(s.Endpoints, full.Endpoints) {
					t.Fatalf("seed %d step %d round %d: the resumed pass (changed %v, rv %d) differs from recomputing all (changed %v, rv %d)",
						seed, step, round, resumed, s.ResourceVersion, recomputed, full.ResourceVersion)
				}
			}
		}
	}
	if unselected == 0 {
		t.Fatal("no step left every Service without a selector")
	}
}

func sameObjects[T *discoveryv1.EndpointSlice | *corev1.Endpoints](a, b map[string]T) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !apiequality.Semantic.DeepEqual(v, b[k]) {
			return false
		}
	}
	return true
}
