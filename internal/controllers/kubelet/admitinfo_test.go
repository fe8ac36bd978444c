package kubelet

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/version"
)

// Admission's requests are the scheduler's PodInfo requests, whatever the
// pod's shape and the pod-level resources gate.
func TestAdmissionInfoMatchesNewPodInfo(t *testing.T) {
	req := func(kv ...string) corev1.ResourceRequirements {
		rl := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			rl[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return corev1.ResourceRequirements{Requests: rl}
	}
	always := corev1.ContainerRestartPolicyAlways
	cases := map[string]corev1.PodSpec{
		"none":   {Containers: []corev1.Container{{Name: "a"}}},
		"one":    {Containers: []corev1.Container{{Name: "a", Resources: req("cpu", "100m", "memory", "1Gi")}}},
		"two":    {Containers: []corev1.Container{{Name: "a", Resources: req("cpu", "100m")}, {Name: "b", Resources: req("cpu", "250m", "memory", "64Mi", "ephemeral-storage", "1Gi")}}},
		"scalar": {Containers: []corev1.Container{{Name: "a", Resources: req("cpu", "1", "nvidia.com/gpu", "2", "hugepages-2Mi", "4Mi")}}},
		"init larger": {
			InitContainers: []corev1.Container{{Name: "i", Resources: req("cpu", "2", "memory", "10Mi")}},
			Containers:     []corev1.Container{{Name: "a", Resources: req("cpu", "100m", "memory", "1Gi")}},
		},
		"sidecar": {
			InitContainers: []corev1.Container{{Name: "s", RestartPolicy: &always, Resources: req("cpu", "300m")}, {Name: "i", Resources: req("cpu", "1")}},
			Containers:     []corev1.Container{{Name: "a", Resources: req("cpu", "100m")}},
		},
		"overhead": {
			Containers: []corev1.Container{{Name: "a", Resources: req("cpu", "100m")}},
			Overhead:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
		"sub-milli":   {Containers: []corev1.Container{{Name: "a", Resources: req("cpu", "500u", "memory", "100m")}}},
		"sub-milli 2": {Containers: []corev1.Container{{Name: "a", Resources: req("cpu", "500u")}, {Name: "b", Resources: req("cpu", "500u")}}},
		"limits only": {Containers: []corev1.Container{{Name: "a", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
		"pod-level limits only": {
			Containers: []corev1.Container{{Name: "a", Resources: req("cpu", "100m")}},
			Resources:  &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
		},
		"pod-level": {
			Containers: []corev1.Container{{Name: "a", Resources: req("cpu", "100m")}},
			Resources:  &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("3Gi")}},
		},
		"affinity": {
			Containers: []corev1.Container{{Name: "a", Resources: req("cpu", "100m")}},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: "kubernetes.io/hostname",
			}}}},
		},
	}
	for name, spec := range cases {
		for _, podLevel := range []bool{false, true} {
			pod := &corev1.Pod{Spec: spec}
			got, want := admissionInfo(pod, podLevel), framework.NewPodInfo(pod, podLevel)
			if got.Pod != pod || !reflect.DeepEqual(got.Requests, want.Requests) {
				t.Errorf("%s (pod-level %v): requests %+v, want %+v", name, podLevel, got.Requests, want.Requests)
			}
		}
	}
}

// The shared Created/Started texts are containerMessages' texts.
func TestContainerTextsMatchMessages(t *testing.T) {
	for _, v := range []string{"1.28", "1.29", "1.30", "1.33", "1.34", "1.35", "1.36"} {
		ver, err := version.Parse(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"app", "sidecar", "app"} {
			wantCreated, wantStarted := containerMessages(ver, name)
			for range 2 {
				if created, started := containerTexts(ver, name); created != wantCreated || started != wantStarted {
					t.Fatalf("%s %s: %q %q, want %q %q", v, name, created, started, wantCreated, wantStarted)
				}
			}
		}
	}
}

// The shared unready text is the one built from the pod's container names.
func TestUnreadyMessageMatchesFormat(t *testing.T) {
	for _, names := range [][]string{{"app"}, {"web"}, {"app", "sidecar"}, {"a", "b", "c"}, nil} {
		pod := &corev1.Pod{}
		for _, n := range names {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: n})
		}
		want := fmt.Sprintf("containers with unready status: [%s]", strings.Join(names, " "))
		for range 2 {
			if got := unreadyMessage(pod); got != want {
				t.Fatalf("%v: %q, want %q", names, got, want)
			}
		}
	}
}

// needsPull on a node that lists no images is the full lookup's answer.
func TestNeedsPullMatchesLookup(t *testing.T) {
	lookup := func(c corev1.Container, node *corev1.Node) bool {
		switch c.ImagePullPolicy {
		case corev1.PullAlways:
			return true
		case corev1.PullNever:
			return false
		}
		for _, img := range node.Status.Images {
			for _, n := range img.Names {
				if n == c.Image || n == makeNormalizedImage(c.Image) {
					return false
				}
			}
		}
		return true
	}
	nodes := []*corev1.Node{
		{},
		{Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{"docker.io/library/nginx:1.27"}}}}},
		{Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{"registry.local/app:1", "x"}}}}},
	}
	for i, node := range nodes {
		for _, image := range []string{"nginx:1.27", "registry.local/app:1", "other"} {
			for _, policy := range []corev1.PullPolicy{"", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever} {
				c := corev1.Container{Image: image, ImagePullPolicy: policy}
				if got, want := needsPull(c, node), lookup(c, node); got != want {
					t.Errorf("node %d, %s %q: %v, want %v", i, image, policy, got, want)
				}
			}
		}
	}
}
