package endpointslice

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// endpointEqual is apiequality.Semantic.DeepEqual for endpoints, written
// out: the reflective comparison was a third of a pass that reconciles a
// Service's few hundred endpoints. Like it, an empty list or map equals a
// nil one. TestEqualMatchesSemantic checks it against the reflective one,
// and fails when an Endpoint field it does not know appears.
func endpointEqual(a, b *discoveryv1.Endpoint) bool {
	return stringsEqual(a.Addresses, b.Addresses) &&
		ptrEqual(a.Conditions.Ready, b.Conditions.Ready) &&
		ptrEqual(a.Conditions.Serving, b.Conditions.Serving) &&
		ptrEqual(a.Conditions.Terminating, b.Conditions.Terminating) &&
		ptrEqual(a.Hostname, b.Hostname) &&
		ptrEqual(a.TargetRef, b.TargetRef) &&
		maps.Equal(a.DeprecatedTopology, b.DeprecatedTopology) &&
		ptrEqual(a.NodeName, b.NodeName) &&
		ptrEqual(a.Zone, b.Zone) &&
		hintsEqual(a.Hints, b.Hints)
}

func hintsEqual(a, b *discoveryv1.EndpointHints) bool {
	if a == nil || b == nil {
		return a == b
	}
	return listEqual(a.ForZones, b.ForZones) && listEqual(a.ForNodes, b.ForNodes)
}

// subsetsEqual is apiequality.Semantic.DeepEqual for legacy subsets.
func subsetsEqual(a, b []corev1.EndpointSubset) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !addressesEqual(a[i].Addresses, b[i].Addresses) || !addressesEqual(a[i].NotReadyAddresses, b[i].NotReadyAddresses) ||
			len(a[i].Ports) != len(b[i].Ports) {
			return false
		}
		for j := range a[i].Ports {
			p, q := &a[i].Ports[j], &b[i].Ports[j]
			if p.Name != q.Name || p.Port != q.Port || p.Protocol != q.Protocol || !ptrEqual(p.AppProtocol, q.AppProtocol) {
				return false
			}
		}
	}
	return true
}

func addressesEqual(a, b []corev1.EndpointAddress) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		p, q := &a[i], &b[i]
		if p.IP != q.IP || p.Hostname != q.Hostname || !ptrEqual(p.NodeName, q.NodeName) || !ptrEqual(p.TargetRef, q.TargetRef) {
			return false
		}
	}
	return true
}

// ptrEqual compares what two pointers point at (both nil is equal).
func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func stringsEqual(a, b []string) bool { return listEqual(a, b) }

// listEqual compares two lists element by element; nil equals empty.
func listEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
