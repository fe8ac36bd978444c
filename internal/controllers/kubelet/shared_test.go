package kubelet

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// The shared pull texts are the texts the kubelet formats, asked for once
// or many times.
func TestPullMessageMatchesFormat(t *testing.T) {
	for _, image := range []string{"nginx:1.27", "public.ecr.aws/eks/pause:3.9", `odd"name`} {
		for _, pulled := range []time.Duration{0, 2 * time.Second, 1500 * time.Millisecond} {
			want := map[uint8]string{
				pullingMessage:    fmt.Sprintf("Pulling image %q", image),
				pulledMessage:     fmt.Sprintf("Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.", image, pulled, pulled, imageSize(image)),
				presentMessage:    fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", image),
				presentOldMessage: fmt.Sprintf("Container image %q already present on machine", image),
			}
			for kind, w := range want {
				for range 2 {
					if got := pullMessage(kind, image, pulled); got != w {
						t.Fatalf("pullMessage(%d, %q, %v) = %q, want %q", kind, image, pulled, got, w)
					}
				}
			}
		}
	}
}

// Container IDs are the digits fmt's %016x gives for the same four draws.
func TestContainerIDMatchesFormat(t *testing.T) {
	a, b := cluster.New("", 7), cluster.New("", 7)
	for range 100 {
		want := fmt.Sprintf("containerd://%016x%016x%016x%016x", b.Rand.Uint64(), b.Rand.Uint64(), b.Rand.Uint64(), b.Rand.Uint64())
		if got := newContainerID(a); got != want {
			t.Fatalf("newContainerID = %q, want %q", got, want)
		}
	}
	if got, want := hex64(a), fmt.Sprintf("%016x%016x%016x%016x", b.Rand.Uint64(), b.Rand.Uint64(), b.Rand.Uint64(), b.Rand.Uint64()); got != want {
		t.Fatalf("hex64 = %q, want %q", got, want)
	}
}

// The one-slice start conditions are setConditions' result.
func TestStartConditionsMatchSetConditions(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	earlier := metav1.NewTime(now.Add(-time.Minute))
	cases := map[string][]corev1.PodCondition{
		"none":                nil,
		"scheduled":           {{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: earlier}},
		"scheduled, reasoned": {{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, Reason: "x", Message: "y", LastProbeTime: earlier, LastTransitionTime: earlier}},
		"unschedulable":       {{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", LastTransitionTime: earlier}},
		"other first":         {{Type: "example.com/gate", Status: corev1.ConditionTrue}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: earlier}},
		"ready too":           {{Type: corev1.PodReady, Status: corev1.ConditionFalse}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: earlier}},
	}
	for name, conds := range cases {
		t.Run(name, func(t *testing.T) {
			fast := &corev1.Pod{Status: corev1.PodStatus{Conditions: slices.Clone(conds)}}
			plain := fast.DeepCopy()
			startConditions(fast, now, "containers with unready status: [app]")
			setConditions(plain, now,
				corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse},
				corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
				corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [app]"},
				corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [app]"},
				corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			)
			if !reflect.DeepEqual(fast.Status.Conditions, plain.Status.Conditions) {
				t.Fatalf("start conditions\n got %+v\nwant %+v", fast.Status.Conditions, plain.Status.Conditions)
			}
		})
	}
}

// The shared normalized names are the names computed each time.
func TestNormalizeImageMatchesPlain(t *testing.T) {
	for _, image := range []string{"nginx", "nginx:1.27", "library/nginx", "bitnami/redis:7", "registry.local/app-000:1",
		"localhost/x", "localhost:5000/x:1", "public.ecr.aws/eks/pause:3.9", "nginx@sha256:abc", "a.b/c/d"} {
		want := makeNormalizedImage(image)
		for range 2 {
			if got := normalizeImage(image); got != want {
				t.Fatalf("normalizeImage(%q) = %q, want %q", image, got, want)
			}
		}
	}
	if got := normalizeImage("nginx"); got != "docker.io/library/nginx:latest" {
		t.Fatalf("normalizeImage(nginx) = %q", got)
	}
}

// setConditions leaves the sort out when the conditions are in the
// kubelet's order already: the result is what the stable sort gives, for
// lists in order, out of order and with conditions of others.
func TestSetConditionsOrder(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionFalse}
	}
	gate := corev1.PodConditionType("example.com/gate")
	started := []corev1.PodCondition{c(corev1.PodReadyToStartContainers), c(corev1.PodInitialized), c(corev1.PodReady), c(corev1.ContainersReady), c(corev1.PodScheduled)}
	cases := map[string][]corev1.PodCondition{
		"started":          started,
		"started and gate": append(slices.Clone(started), c(gate)),
		"gate first":       append([]corev1.PodCondition{c(gate)}, started...),
		"reversed":         {c(corev1.PodScheduled), c(corev1.ContainersReady), c(corev1.PodReady), c(corev1.PodInitialized), c(corev1.PodReadyToStartContainers)},
		"scheduled only":   {c(corev1.PodScheduled)},
		"none":             nil,
	}
	for name, conds := range cases {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{Status: corev1.PodStatus{Conditions: slices.Clone(conds)}}
			setConditions(pod, now, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue},
				corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue})
			// What setConditions did before: the upsert, then always the sort.
			want := slices.Clone(conds)
			for _, u := range []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.ContainersReady, Status: corev1.ConditionTrue}} {
				u.LastTransitionTime = metav1.NewTime(now)
				if i := slices.IndexFunc(want, func(w corev1.PodCondition) bool { return w.Type == u.Type }); i >= 0 {
					want[i] = u
				} else {
					want = append(want, u)
				}
			}
			slices.SortStableFunc(want, func(a, b corev1.PodCondition) int { return conditionRank(a.Type) - conditionRank(b.Type) })
			if !reflect.DeepEqual(pod.Status.Conditions, want) {
				t.Fatalf("got  %v\nwant %v", condTypes(pod.Status.Conditions), condTypes(want))
			}
			if !inKubeletOrder(pod.Status.Conditions) {
				t.Fatal("not in the kubelet's order afterwards")
			}
		})
	}
}

func condTypes(conds []corev1.PodCondition) []corev1.PodConditionType {
	var out []corev1.PodConditionType
	for _, c := range conds {
		out = append(out, c.Type)
	}
	return out
}

// isNormalImage says yes exactly for the names normalizing leaves as they
// are, so normalizeImage may return them without the shared map.
func TestIsNormalImageMatchesNormalize(t *testing.T) {
	parts := []string{"", "nginx", "library", "a.b", "localhost", "localhost:5000", "host:1", "x:1.2", "app@sha256:ab", "v1.0", ":", "@", "."}
	var names []string
	for _, a := range parts {
		names = append(names, a)
		for _, b := range parts {
			names = append(names, a+"/"+b, a+":"+b, a+"@"+b)
			for _, c := range parts[:6] {
				names = append(names, a+"/"+b+"/"+c, a+"/"+b+":"+c)
			}
		}
	}
	normal := 0
	for _, name := range names {
		want := makeNormalizedImage(name) == name
		if got := isNormalImage(name); got != want {
			t.Fatalf("isNormalImage(%q) = %v, normalizing gives %q", name, got, makeNormalizedImage(name))
		}
		if want {
			normal++
		}
	}
	if normal == 0 || normal == len(names) {
		t.Fatalf("%d of %d names normal: the table does not tell the cases apart", normal, len(names))
	}
}
