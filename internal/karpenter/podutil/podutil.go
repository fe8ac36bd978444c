// Package podutil answers the questions Karpenter's controllers ask of a
// pod's owners, as Karpenter's pkg/utils/pod does: by owner API version and
// kind, whatever the controller flag says.
package podutil

import corev1 "k8s.io/api/core/v1"

// OwnedBy tells whether an owner reference names apiVersion and kind.
func OwnedBy(p *corev1.Pod, apiVersion, kind string) bool {
	for _, o := range p.OwnerReferences {
		if o.APIVersion == apiVersion && o.Kind == kind {
			return true
		}
	}
	return false
}

// OwnedByDaemonSet: a DaemonSet's pod.
func OwnedByDaemonSet(p *corev1.Pod) bool { return OwnedBy(p, "apps/v1", "DaemonSet") }

// OwnedByNode: a static (mirror) pod.
func OwnedByNode(p *corev1.Pod) bool { return OwnedBy(p, "v1", "Node") }
