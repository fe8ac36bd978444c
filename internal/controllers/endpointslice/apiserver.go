package endpointslice

import (
	"hash/fnv"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
)

// ControlPlaneENIs is how many addresses EKS's API server endpoints list:
// one cross-account ENI in each of two of the cluster's subnets.
const ControlPlaneENIs = 2

// APIServerPort is the port the EKS API server listens on behind the
// kubernetes Service (port https 443, targetPort 443).
const APIServerPort = 443

// syncAPIServerEndpoints plays the API server's endpoint reconciler: once
// the kubernetes Service exists in a cluster with a VPC, its Endpoints list
// the control plane ENIs' private addresses (labelled skip-mirror, as the
// reconciler writes them) and the EndpointSlice "kubernetes" mirrors them
// (docs/services.md#the-kubernetes-service).
func syncAPIServerEndpoints(s *cluster.State) bool {
	key := cluster.Key(metav1.NamespaceDefault, "kubernetes")
	if _, ok := s.Services[key]; !ok || !aws.HasClusterVPC(s.Info) {
		return false
	}
	changed := false
	ep, ok := s.Endpoints[key]
	if !ok {
		ips := controlPlaneIPs(s)
		if len(ips) == 0 {
			return false
		}
		addrs := make([]corev1.EndpointAddress, len(ips))
		for i, ip := range ips {
			addrs[i] = corev1.EndpointAddress{IP: ip}
		}
		ep = &corev1.Endpoints{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
			ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: metav1.NamespaceDefault,
				Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"}},
			Subsets: []corev1.EndpointSubset{{
				Addresses: addrs,
				Ports:     []corev1.EndpointPort{{Name: "https", Port: APIServerPort, Protocol: corev1.ProtocolTCP}},
			}},
		}
		create(s, &ep.ObjectMeta, "kubernetes-endpoints", 0)
		s.Endpoints[key] = ep
		changed = true
	}
	if _, ok := s.EndpointSlices[key]; !ok {
		sl := sliceFromEndpoints(ep)
		create(s, &sl.ObjectMeta, "kubernetes-endpointslice", 1)
		s.EndpointSlices[key] = sl
		changed = true
	}
	return changed
}

// sliceFromEndpoints is the reconciler's EndpointsAdapter: the slice has the
// Endpoints' name, only the service-name label, and each address as a
// ready endpoint with no node, zone or target.
func sliceFromEndpoints(ep *corev1.Endpoints) *discoveryv1.EndpointSlice {
	sl := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: ep.Name, Namespace: ep.Namespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: ep.Name}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	if len(ep.Subsets) > 0 {
		sub := ep.Subsets[0]
		for _, p := range sub.Ports {
			sl.Ports = append(sl.Ports, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Port: ptr.To(p.Port), Protocol: ptr.To(p.Protocol)})
		}
		for _, a := range sub.Addresses {
			sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{a.IP},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		}
	}
	return sl
}

// controlPlaneIPs are the private addresses of the control plane ENIs, one
// in each of the first two zones' private subnets, drawn from a source
// derived from the seed (not the shared stream, so that no other drawn
// name or address moves), sorted as the reconciler stores them.
func controlPlaneIPs(s *cluster.State) []string {
	used := aws.UsedIPs(s)
	zones := aws.ClusterZones(s.Info)
	var ips []string
	for _, zone := range zones[:min(len(zones), ControlPlaneENIs)] {
		cidr, err := aws.PrivateSubnet(s.Info, zone)
		if err != nil {
			continue
		}
		r := derivedRand(s, "control-plane-eni/"+zone)
		if ip, err := aws.DrawSubnetIP(&r, cidr, used); err == nil {
			ips = append(ips, ip)
		}
	}
	sort.Strings(ips)
	return ips
}

// derivedRand is a generator seeded from the cluster's seed and purpose.
func derivedRand(s *cluster.State, purpose string) cluster.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(purpose))
	return cluster.NewRand(s.Seed ^ int64(h.Sum64()))
}

// create fills in what the API server sets on a new object (EndpointSlices
// track generations, Endpoints do not).
func create(s *cluster.State, m *metav1.ObjectMeta, purpose string, generation int64) {
	r := derivedRand(s, purpose)
	m.UID = types.UID(r.UID())
	m.CreationTimestamp = metav1.NewTime(s.Now)
	m.Generation = generation
	m.ResourceVersion = s.Bump()
	s.NoteCreated(m.UID)
}
