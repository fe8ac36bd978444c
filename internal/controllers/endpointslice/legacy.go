package endpointslice

import (
	"bytes"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
)

// EndpointsControllerName is the legacy Endpoints controller's
// endpoints.kubernetes.io/managed-by value.
const EndpointsControllerName = "endpoint-controller"

// labelEndpointsManagedBy marks Endpoints the legacy controller writes.
const labelEndpointsManagedBy = "endpoints.kubernetes.io/managed-by"

// syncEndpoints plays kube-controller-manager's (deprecated, still running)
// Endpoints controller for one Service with a selector: an Endpoints
// object named like the Service, its addresses grouped into subsets by
// port set, ready pods under addresses and the others under
// notReadyAddresses; terminating pods are left out unless the Service
// publishes not-ready addresses (docs/services.md#legacy-endpoints).
func syncEndpoints(s *cluster.State, svc *corev1.Service, pods []*corev1.Pod) bool {
	key := cluster.Key(svc.Namespace, svc.Name)
	subsets := legacySubsets(s, svc, pods)
	want := map[string]string{}
	for k, v := range svc.Labels {
		want[k] = v
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		want[corev1.IsHeadlessService] = ""
	} else {
		delete(want, corev1.IsHeadlessService)
	}
	want[labelEndpointsManagedBy] = EndpointsControllerName
	cur, ok := s.Endpoints[key]
	if !ok && namespaceTerminating(s, svc.Namespace) {
		return false
	}
	if ok && subsetsEqual(cur.Subsets, subsets) && apiequality.Semantic.DeepEqual(cur.Labels, want) {
		return false
	}
	ep := &corev1.Endpoints{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace, Labels: want},
		Subsets:    subsets,
	}
	if ok {
		ep.ObjectMeta = *cur.ObjectMeta.DeepCopy()
		ep.Labels = want
		ep.ResourceVersion = s.Bump()
	} else {
		create(s, &ep.ObjectMeta, "endpoints/"+string(svc.UID), 0)
	}
	ep.Annotations = triggerAnnotation(ep.Annotations, s)
	s.Endpoints[key] = ep
	return true
}

// legacySubsets builds the subsets as RepackSubsets leaves them: one per
// distinct set of (port, readiness) memberships, addresses sorted by IP
// then pod uid, ports and subsets in hash order.
func legacySubsets(s *cluster.State, svc *corev1.Service, pods []*corev1.Pod) []corev1.EndpointSubset {
	type member struct {
		addr  corev1.EndpointAddress
		ready bool
		ports []corev1.EndpointPort
	}
	var members []member
	selector := labels.SelectorFromSet(svc.Spec.Selector)
	for _, pod := range pods {
		if !selector.Matches(labels.Set(pod.Labels)) {
			continue
		}
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		if pod.DeletionTimestamp != nil && !svc.Spec.PublishNotReadyAddresses {
			continue
		}
		addrs := podAddresses(pod)
		if len(addrs) == 0 {
			continue
		}
		m := member{addr: corev1.EndpointAddress{IP: addrs[0], NodeName: ptrString(pod.Spec.NodeName),
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}},
			ready: svc.Spec.PublishNotReadyAddresses || podReady(pod)}
		if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && pod.Namespace == svc.Namespace {
			m.addr.Hostname = pod.Spec.Hostname
		}
		if len(svc.Spec.Ports) == 0 {
			if svc.Spec.ClusterIP != corev1.ClusterIPNone {
				continue
			}
		}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			if port, ok := findPort(pod, sp); ok {
				m.ports = append(m.ports, corev1.EndpointPort{Name: sp.Name, Port: port, Protocol: sp.Protocol, AppProtocol: sp.AppProtocol})
			}
		}
		if len(svc.Spec.Ports) > 0 && len(m.ports) == 0 {
			continue
		}
		members = append(members, m)
	}
	// Group the addresses by the set of ports they serve (an address serves
	// every port it resolved, ready or not as a whole).
	groups := map[string]*corev1.EndpointSubset{}
	var order []string
	for _, m := range members {
		ports := append([]corev1.EndpointPort(nil), m.ports...)
		sort.SliceStable(ports, func(i, j int) bool { return legacyPortHash(ports[i]) < legacyPortHash(ports[j]) })
		k := legacyPortsHash(ports)
		g, ok := groups[k]
		if !ok {
			g = &corev1.EndpointSubset{Ports: ports}
			groups[k] = g
			order = append(order, k)
		}
		if m.ready {
			g.Addresses = append(g.Addresses, m.addr)
		} else {
			g.NotReadyAddresses = append(g.NotReadyAddresses, m.addr)
		}
	}
	subsets := []corev1.EndpointSubset{}
	for _, k := range order {
		g := groups[k]
		sortAddresses(g.Addresses)
		sortAddresses(g.NotReadyAddresses)
		subsets = append(subsets, *g)
	}
	// Each subset's hash (of all its addresses) is taken once, not once
	// per comparison.
	if len(subsets) > 1 {
		hashed := make([]hashedSubset, len(subsets))
		for i := range subsets {
			hashed[i] = hashedSubset{[]byte(hashOf(subsets[i])), subsets[i]}
		}
		slices.SortStableFunc(hashed, func(a, b hashedSubset) int { return bytes.Compare(a.hash, b.hash) })
		for i := range hashed {
			subsets[i] = hashed[i].subset
		}
	}
	return subsets
}

type hashedSubset struct {
	hash   []byte
	subset corev1.EndpointSubset
}

func sortAddresses(a []corev1.EndpointAddress) {
	sort.SliceStable(a, func(i, j int) bool {
		if a[i].IP != a[j].IP {
			return a[i].IP < a[j].IP
		}
		return uidOf(a[i]) < uidOf(a[j])
	})
}

func uidOf(a corev1.EndpointAddress) types.UID {
	if a.TargetRef == nil {
		return ""
	}
	return a.TargetRef.UID
}

func ptrString(s string) *string { return &s }
