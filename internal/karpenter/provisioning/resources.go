package provisioning

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Resource arithmetic as Karpenter does it (docs/karpenter-provisioning.md#requests):
// a container's limit stands in for a missing request, native sidecars add
// to the sum and to every later init container, pod overhead is added, and
// every pod asks for one "pods".

// requestsForPods sums the pods' requests and sets pods to their number.
func requestsForPods(pods ...*corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, p := range pods {
		mergeInto(out, podRequests(p))
	}
	out[corev1.ResourcePods] = *resource.NewQuantity(int64(len(pods)), resource.DecimalExponent)
	return out
}

func podRequests(pod *corev1.Pod) corev1.ResourceList {
	requests := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		mergeInto(requests, limitsAsRequests(&pod.Spec.Containers[i]))
	}
	if len(pod.Spec.InitContainers) == 0 {
		// Without init containers the maximum below is the containers'
		// sum as it stands; skipping it saves two maps per pod.
		if pod.Spec.Overhead != nil {
			mergeInto(requests, pod.Spec.Overhead)
		}
		return requests
	}
	sidecars := corev1.ResourceList{}
	maxInit := corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		reqs := limitsAsRequests(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			mergeInto(requests, reqs)
			mergeInto(sidecars, reqs)
			maxInit = maxResources(maxInit, sidecars)
			continue
		}
		maxInit = maxResources(maxInit, merge(reqs, sidecars))
	}
	requests = maxResources(requests, maxInit)
	if pod.Spec.Overhead != nil {
		mergeInto(requests, pod.Spec.Overhead)
	}
	return requests
}

func limitsAsRequests(c *corev1.Container) corev1.ResourceList {
	out := make(corev1.ResourceList, len(c.Resources.Requests)+len(c.Resources.Limits))
	for name, q := range c.Resources.Requests {
		out[name] = q
	}
	for name, q := range c.Resources.Limits {
		if _, ok := c.Resources.Requests[name]; !ok {
			out[name] = q
		}
	}
	return out
}

func merge(lists ...corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, l := range lists {
		mergeInto(out, l)
	}
	return out
}

func mergeInto(dst, src corev1.ResourceList) {
	for name, q := range src {
		cur := dst[name]
		cur.Add(q)
		dst[name] = cur
	}
}

// subtract is lhs minus rhs over lhs's resources.
func subtract(lhs, rhs corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(lhs))
	for name, q := range lhs {
		cur := q.DeepCopy()
		if r, ok := rhs[name]; ok {
			cur.Sub(r)
		}
		out[name] = cur
	}
	return out
}

// subtractFrom takes src away from dst in place, adding names dst lacks.
func subtractFrom(dst, src corev1.ResourceList) {
	for name, q := range src {
		cur := dst[name]
		cur.Sub(q)
		dst[name] = cur
	}
}

func maxResources(lists ...corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, l := range lists {
		for name, q := range l {
			if cur, ok := out[name]; !ok || q.Cmp(cur) > 0 {
				out[name] = q
			}
		}
	}
	return out
}

var zero = resource.NewScaledQuantity(0, resource.Kilo)

// fits tells whether candidate fits in total; a negative amount anywhere
// in total never fits.
func fits(candidate, total corev1.ResourceList) bool {
	for _, q := range total {
		if zero.Cmp(q) > 0 {
			return false
		}
	}
	for name, q := range candidate {
		t := total[name]
		if q.Cmp(t) > 0 {
			return false
		}
	}
	return true
}

// resourcesString prints a resource list as Karpenter's messages do: its
// JSON form, or {} when empty.
func resourcesString(list corev1.ResourceList) string {
	if len(list) == 0 {
		return "{}"
	}
	b, err := json.Marshal(list)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
