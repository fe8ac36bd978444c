package endpointslice

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// podToEndpoint is the pod's endpoint: serving when the pod is Ready,
// terminating once it has a deletionTimestamp, and ready only when serving
// and not terminating (or when the Service publishes not-ready addresses).
func podToEndpoint(pod *corev1.Pod, node *corev1.Node, svc *corev1.Service) discoveryv1.Endpoint {
	serving := podReady(pod)
	terminating := pod.DeletionTimestamp != nil
	ready := svc.Spec.PublishNotReadyAddresses || (serving && !terminating)
	ep := discoveryv1.Endpoint{
		Addresses: podAddresses(pod),
		Conditions: discoveryv1.EndpointConditions{
			Ready: ptr.To(ready), Serving: ptr.To(serving), Terminating: ptr.To(terminating),
		},
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
	}
	if pod.Spec.NodeName != "" {
		ep.NodeName = ptr.To(pod.Spec.NodeName)
	}
	if node != nil && node.Labels[corev1.LabelTopologyZone] != "" {
		ep.Zone = ptr.To(node.Labels[corev1.LabelTopologyZone])
	}
	if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && pod.Namespace == svc.Namespace {
		ep.Hostname = ptr.To(pod.Spec.Hostname)
	}
	return ep
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podAddresses are the pod's IPv4 addresses (status.podIPs, which the API
// server fills from status.podIP).
func podAddresses(pod *corev1.Pod) []string {
	ips := make([]string, 0, 1)
	if len(pod.Status.PodIPs) == 0 && pod.Status.PodIP != "" {
		if a, err := netip.ParseAddr(pod.Status.PodIP); err == nil && a.Is4() {
			ips = append(ips, a.String())
		}
		return ips
	}
	for _, ip := range pod.Status.PodIPs {
		if a, err := netip.ParseAddr(ip.IP); err == nil && a.Is4() {
			ips = append(ips, a.String())
		}
	}
	return ips
}

// endpointPorts resolves each Service port against the pod: a numeric
// targetPort as is, a named one through the pod's container ports (and
// sidecar init containers'); a port the pod does not name is left out.
func endpointPorts(svc *corev1.Service, pod *corev1.Pod) []discoveryv1.EndpointPort {
	out := []discoveryv1.EndpointPort{}
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		port, ok := findPort(pod, sp)
		if !ok {
			continue
		}
		out = append(out, discoveryv1.EndpointPort{
			Name: ptr.To(sp.Name), Port: ptr.To(port), Protocol: ptr.To(sp.Protocol), AppProtocol: sp.AppProtocol,
		})
	}
	return out
}

func findPort(pod *corev1.Pod, sp *corev1.ServicePort) (int32, bool) {
	switch sp.TargetPort.Type {
	case intstr.String:
		name := sp.TargetPort.StrVal
		for _, c := range pod.Spec.Containers {
			for _, p := range c.Ports {
				if p.Name == name && p.Protocol == sp.Protocol {
					return p.ContainerPort, true
				}
			}
		}
		for _, c := range pod.Spec.InitContainers {
			if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				continue
			}
			for _, p := range c.Ports {
				if p.Name == name && p.Protocol == sp.Protocol {
					return p.ContainerPort, true
				}
			}
		}
		return 0, false
	default:
		return int32(sp.TargetPort.IntValue()), true
	}
}

// portMapKey identifies a set of endpoint ports as upstream's NewPortMapKey
// does (a hash of the ports sorted by their own hashes), and sorts ports
// into that order, which is the order slices list them in.
func portMapKey(ports []discoveryv1.EndpointPort) string {
	sort.SliceStable(ports, func(i, j int) bool { return slicePortHash(ports[i]) < slicePortHash(ports[j]) })
	if ports == nil {
		ports = []discoveryv1.EndpointPort{}
	}
	return slicePortsHash(ports)
}

func hashOf(v any) string {
	h := fnv.New128a()
	fmt.Fprint(h, dump.ForHash(v))
	return hex.EncodeToString(h.Sum(nil))
}

// endpointKey identifies an endpoint across syncs: its pod, else its
// addresses.
func endpointKey(ep *discoveryv1.Endpoint) string {
	if ep.TargetRef != nil && ep.TargetRef.UID != "" {
		return string(ep.TargetRef.UID)
	}
	return strings.Join(ep.Addresses, ",")
}
