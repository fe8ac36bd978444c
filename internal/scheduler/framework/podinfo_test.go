package framework

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// nonZeroPlain is the sums with the scoring defaults as NewPodInfo always
// computed them: a second pass with the defaults filled in.
func nonZeroPlain(pod *v1.Pod, podLevelResources bool) (int64, int64) {
	opts := resourcehelper.PodResourcesOptions{SkipPodLevelResources: !podLevelResources}
	opts.NonMissingContainerRequests = v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(DefaultMilliCPURequest, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(DefaultMemoryRequest, resource.BinarySI),
	}
	nz := resourcehelper.PodRequests(pod, opts)
	return nz.Cpu().MilliValue(), nz.Memory().Value()
}

// checkPodInfo compares got with NewPodInfo's result and the plain
// computation of the defaulted sums.
func checkPodInfo(t *testing.T, got *PodInfo, pod *v1.Pod, podLevelResources bool) {
	t.Helper()
	if want := NewPodInfo(pod, podLevelResources); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: cache gives %+v, NewPodInfo %+v", pod.Name, got, want)
	}
	if cpu, mem := nonZeroPlain(pod, podLevelResources); got.NonZeroMilliCPU != cpu || got.NonZeroMemory != mem {
		t.Fatalf("%s: non-zero sums %d, %d; the plain pass gives %d, %d", pod.Name, got.NonZeroMilliCPU, got.NonZeroMemory, cpu, mem)
	}
}

func rl(kv ...string) v1.ResourceList {
	if kv == nil {
		return nil
	}
	out := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func podWith(name string, containers []v1.ResourceList, inits []v1.ResourceList, sidecar []bool) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	for i, r := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: fmt.Sprint("c", i), Resources: v1.ResourceRequirements{Requests: r}})
	}
	for i, r := range inits {
		c := v1.Container{Name: fmt.Sprint("i", i), Resources: v1.ResourceRequirements{Requests: r}}
		if sidecar != nil && sidecar[i] {
			always := v1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	return p
}

// TestPodInfoCacheMatchesNewPodInfo: every PodInfo from the cache equals
// NewPodInfo's for the same pod, pods that differ only in how a quantity
// is written share sums, and pods whose inputs differ do not.
func TestPodInfoCacheMatchesNewPodInfo(t *testing.T) {
	zero := rl("cpu", "0", "memory", "0")
	pods := []struct {
		pod *v1.Pod
		// shares: the index of an earlier pod whose sums this one reuses (-1: new).
		shares int
	}{
		{podWith("a", []v1.ResourceList{rl("cpu", "1", "memory", "1Gi")}, nil, nil), -1},
		{podWith("a-written-otherwise", []v1.ResourceList{rl("cpu", "1000m", "memory", "1024Mi")}, nil, nil), 0},
		{podWith("a-again", []v1.ResourceList{rl("cpu", "1", "memory", "1Gi")}, nil, nil), 0},
		{podWith("no-memory", []v1.ResourceList{rl("cpu", "1")}, nil, nil), -1},
		{podWith("memory-zero", []v1.ResourceList{rl("cpu", "1", "memory", "0")}, nil, nil), -1},
		{podWith("zero", []v1.ResourceList{zero}, nil, nil), -1},
		{podWith("none", []v1.ResourceList{nil}, nil, nil), -1},
		{podWith("none-empty-map", []v1.ResourceList{{}}, nil, nil), 6},
		{podWith("two-containers", []v1.ResourceList{rl("cpu", "1"), rl("memory", "1Gi")}, nil, nil), -1},
		{podWith("two-containers-swapped", []v1.ResourceList{rl("memory", "1Gi"), rl("cpu", "1")}, nil, nil), -1},
		{podWith("sub-milli", []v1.ResourceList{rl("cpu", "0.0001"), rl("cpu", "0.0001")}, nil, nil), -1},
		{podWith("init", []v1.ResourceList{rl("cpu", "1")}, []v1.ResourceList{rl("cpu", "2")}, nil), -1},
		{podWith("sidecar", []v1.ResourceList{rl("cpu", "1")}, []v1.ResourceList{rl("cpu", "2")}, []bool{true}), -1},
		{podWith("sidecar-again", []v1.ResourceList{rl("cpu", "1")}, []v1.ResourceList{rl("cpu", "2")}, []bool{true}), 12},
		{podWith("scalar", []v1.ResourceList{rl("cpu", "1", "example.com/gpu", "2", "hugepages-2Mi", "4Mi")}, nil, nil), -1},
		{podWith("scalar-again", []v1.ResourceList{rl("cpu", "1", "example.com/gpu", "2", "hugepages-2Mi", "4Mi")}, nil, nil), 14},
	}
	overhead := podWith("overhead", []v1.ResourceList{rl("cpu", "1", "memory", "1Gi")}, nil, nil)
	overhead.Spec.Overhead = rl("cpu", "250m")
	pods = append(pods, struct {
		pod    *v1.Pod
		shares int
	}{overhead, -1})
	podLevel := podWith("pod-level", []v1.ResourceList{rl("cpu", "1", "memory", "1Gi")}, nil, nil)
	podLevel.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu", "3")}
	pods = append(pods, struct {
		pod    *v1.Pod
		shares int
	}{podLevel, 0}) // gate off: its requests are not read; on: not cached
	affinity := podWith("affinity", []v1.ResourceList{rl("cpu", "1", "memory", "1Gi")}, nil, nil)
	affinity.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, TopologyKey: "zone"}}}}
	pods = append(pods, struct {
		pod    *v1.Pod
		shares int
	}{affinity, 0})

	for _, podLevelResources := range []bool{false, true} {
		t.Run(fmt.Sprint("podLevelResources=", podLevelResources), func(t *testing.T) {
			var c PodInfoCache
			entries := 0
			for _, tc := range pods {
				checkPodInfo(t, c.New(tc.pod, podLevelResources), tc.pod, podLevelResources)
				if tc.shares < 0 {
					entries++
				}
			}
			if c.size != entries {
				t.Errorf("cache holds %d request shapes, want %d", c.size, entries)
			}
		})
	}
}

// TestPodInfoCacheRandom compares the cache with NewPodInfo on random pods
// drawn from few shapes, so most are hits.
func TestPodInfoCacheRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	cpus := []string{"100m", "0.1", "1", "250m", "2"}
	mems := []string{"128Mi", "134217728", "1Gi", "0"}
	var c PodInfoCache
	for i := 0; i < 3000; i++ {
		var containers, inits []v1.ResourceList
		var sidecar []bool
		for j := rng.Intn(3) + 1; j > 0; j-- {
			r := v1.ResourceList{}
			if rng.Intn(4) > 0 {
				r[v1.ResourceCPU] = resource.MustParse(cpus[rng.Intn(len(cpus))])
			}
			if rng.Intn(4) > 0 {
				r[v1.ResourceMemory] = resource.MustParse(mems[rng.Intn(len(mems))])
			}
			containers = append(containers, r)
		}
		for j := rng.Intn(2); j > 0; j-- {
			inits = append(inits, rl("cpu", cpus[rng.Intn(len(cpus))]))
			sidecar = append(sidecar, rng.Intn(2) == 0)
		}
		p := podWith(fmt.Sprint("p", i), containers, inits, sidecar)
		switch rng.Intn(6) {
		case 0:
			p.Spec.Overhead = rl("cpu", "100m", "memory", "64Mi")
		case 1:
			p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu", cpus[rng.Intn(len(cpus))])}
		case 2:
			p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("memory", "3Gi", "cpu", "3")}
		}
		podLevel := rng.Intn(2) == 0
		checkPodInfo(t, c.New(p, podLevel), p, podLevel)
	}
}

func BenchmarkPodInfo(b *testing.B) {
	pods := make([]*v1.Pod, 500)
	for i := range pods {
		pods[i] = podWith(fmt.Sprint("p", i), []v1.ResourceList{rl("cpu", "250m", "memory", "512Mi")}, nil, nil)
	}
	b.Run("NewPodInfo", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			NewPodInfo(pods[i%len(pods)], true)
		}
	})
	b.Run("cache", func(b *testing.B) {
		b.ReportAllocs()
		var c PodInfoCache
		for i := 0; i < b.N; i++ {
			c.New(pods[i%len(pods)], true)
		}
	})
}
