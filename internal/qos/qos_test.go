package qos

import (
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestPodQOSClass(t *testing.T) {
	rl := func(cpu, mem string) corev1.ResourceList {
		l := corev1.ResourceList{}
		if cpu != "" {
			l[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		return l
	}
	ctr := func(req, lim corev1.ResourceList) corev1.Container {
		return corev1.Container{Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
	}
	for _, tc := range []struct {
		name string
		pod  corev1.PodSpec
		want corev1.PodQOSClass
	}{
		{"none", corev1.PodSpec{Containers: []corev1.Container{ctr(nil, nil)}}, corev1.PodQOSBestEffort},
		{"equal", corev1.PodSpec{Containers: []corev1.Container{ctr(rl("1", "1Gi"), rl("1", "1Gi"))}}, corev1.PodQOSGuaranteed},
		{"cpu only", corev1.PodSpec{Containers: []corev1.Container{ctr(rl("1", ""), rl("1", ""))}}, corev1.PodQOSBurstable},
		{"request below limit", corev1.PodSpec{Containers: []corev1.Container{ctr(rl("500m", "1Gi"), rl("1", "1Gi"))}}, corev1.PodQOSBurstable},
		{"pod-level equal", corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: rl("1", "1Gi"), Limits: rl("1", "1Gi")},
			Containers: []corev1.Container{ctr(nil, nil)}}, corev1.PodQOSGuaranteed},
		{"pod-level cpu only", corev1.PodSpec{Resources: &corev1.ResourceRequirements{Limits: rl("1", "")},
			Containers: []corev1.Container{ctr(rl("1", "1Gi"), rl("1", "1Gi"))}}, corev1.PodQOSBurstable},
	} {
		if got := PodQOSClass(&corev1.Pod{Spec: tc.pod}); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

// plainPodQOSClass is the map-based classification PodQOSClass replaced
// (session 24), kept to check the two agree.
func plainPodQOSClass(pod *corev1.Pod) corev1.PodQOSClass {
	supported := func(n corev1.ResourceName) bool { return n == corev1.ResourceCPU || n == corev1.ResourceMemory }
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	zero := resource.Quantity{}
	isGuaranteed := true
	add := func(into corev1.ResourceList, from corev1.ResourceList) {
		for name, q := range from {
			if !supported(name) || q.Cmp(zero) != 1 {
				continue
			}
			cur := into[name]
			cur.Add(q)
			into[name] = cur
		}
	}
	var all []corev1.Container
	all = append(all, pod.Spec.Containers...)
	all = append(all, pod.Spec.InitContainers...)
	if pod.Spec.Resources != nil {
		add(requests, pod.Spec.Resources.Requests)
		add(limits, pod.Spec.Resources.Limits)
		if len(pod.Spec.Resources.Limits) < 2 || !hasBoth(pod.Spec.Resources.Limits) {
			isGuaranteed = false
		}
	} else {
		for _, c := range all {
			add(requests, c.Resources.Requests)
			add(limits, c.Resources.Limits)
			if !hasBoth(c.Resources.Limits) {
				isGuaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if isGuaranteed {
		for name, req := range requests {
			if l, ok := limits[name]; !ok || l.Cmp(req) != 0 {
				isGuaranteed = false
				break
			}
		}
	}
	if isGuaranteed && len(requests) == len(limits) {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// TestPodQOSClassMatchesPlain compares PodQOSClass with the map-based
// classification on random pods: zero, negative and positive amounts,
// other resources, init containers, pod-level resources.
func TestPodQOSClassMatchesPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 24))
	amounts := []string{"0", "-1", "100m", "250m", "1", "1Gi", "512Mi", "2"}
	names := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, "example.com/gpu"}
	list := func() corev1.ResourceList {
		if rng.IntN(4) == 0 {
			return nil
		}
		l := corev1.ResourceList{}
		for _, n := range names {
			if rng.IntN(2) == 0 {
				l[n] = resource.MustParse(amounts[rng.IntN(len(amounts))])
			}
		}
		return l
	}
	containers := func(max int) []corev1.Container {
		var out []corev1.Container
		for range rng.IntN(max + 1) {
			out = append(out, corev1.Container{Resources: corev1.ResourceRequirements{Requests: list(), Limits: list()}})
		}
		return out
	}
	seen := map[corev1.PodQOSClass]int{}
	for i := 0; i < 20000; i++ {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: containers(3), InitContainers: containers(1)}}
		if rng.IntN(5) == 0 {
			pod.Spec.Resources = &corev1.ResourceRequirements{Requests: list(), Limits: list()}
		}
		if i%3 == 0 {
			// Guaranteed pods are rare at random: make some.
			for j := range pod.Spec.Containers {
				r := &pod.Spec.Containers[j].Resources
				r.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(amounts[2+rng.IntN(2)]), corev1.ResourceMemory: resource.MustParse("1Gi")}
				if rng.IntN(2) == 0 {
					r.Requests = r.Limits.DeepCopy()
				}
			}
			pod.Spec.InitContainers = nil
		}
		got, want := PodQOSClass(pod), plainPodQOSClass(pod)
		if got != want {
			t.Fatalf("pod %d %+v: got %s, want %s", i, pod.Spec, got, want)
		}
		seen[got]++
	}
	if len(seen) != 3 {
		t.Fatalf("classes seen: %v; the random pods should reach all three", seen)
	}
}
