package provisioning

import (
	"errors"
	"fmt"
	"net"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// hostPort is one host port a pod's container exposes.
type hostPort struct {
	ip       net.IP
	port     int32
	protocol corev1.Protocol
}

// matches: same protocol and port, and the same address or either one
// unspecified (0.0.0.0 takes every address).
func (p hostPort) matches(o hostPort) bool {
	if p.protocol != o.protocol || p.port != o.port {
		return false
	}
	return p.ip.Equal(o.ip) || p.ip.IsUnspecified() || o.ip.IsUnspecified()
}

// hostPortsOf lists the host ports of a pod's containers (init containers
// are not counted, as in Karpenter).
func hostPortsOf(pod *corev1.Pod) []hostPort {
	var out []hostPort
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort == 0 {
				continue
			}
			ip := p.HostIP
			if ip == "" {
				ip = "0.0.0.0"
			}
			out = append(out, hostPort{ip: net.ParseIP(ip), port: p.HostPort, protocol: p.Protocol})
		}
	}
	return out
}

// hostPortUsage records the host ports taken on one node, by pod.
type hostPortUsage struct {
	reserved map[string][]hostPort
}

func newHostPortUsage() *hostPortUsage { return &hostPortUsage{reserved: map[string][]hostPort{}} }

func (u *hostPortUsage) add(pod *corev1.Pod, ports []hostPort) {
	u.reserved[pod.Namespace+"/"+pod.Name] = ports
}

// conflicts reports the first port of the pod another pod already holds.
func (u *hostPortUsage) conflicts(pod *corev1.Pod, ports []hostPort) error {
	if len(ports) == 0 || len(u.reserved) == 0 {
		return nil
	}
	self := pod.Namespace + "/" + pod.Name
	keys := make([]string, 0, len(u.reserved))
	for k := range u.reserved {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, p := range ports {
		for _, k := range keys {
			if k == self {
				continue
			}
			for _, held := range u.reserved[k] {
				if p.matches(held) {
					return withValues(errors.New("pod hostport conflicts with existing hostport configuration"),
						"pod-hostport-ip", p.ip.String(), "pod-hostport-port", fmt.Sprint(p.port), "pod-hostport-protocol", string(p.protocol),
						"existing-hostport-ip", held.ip.String(), "existing-hostport-port", fmt.Sprint(held.port), "existing-hostport-protocol", string(held.protocol))
				}
			}
		}
	}
	return nil
}
