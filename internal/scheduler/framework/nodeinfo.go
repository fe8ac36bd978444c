package framework

import (
	v1 "k8s.io/api/core/v1"
)

// ImageStateSummary is one image's size and how many nodes have it.
type ImageStateSummary struct {
	Size     int64
	NumNodes int
}

// NodeInfo is a node with the pods on it and the sums the plugins need,
// kept incrementally as pods are added and removed.
type NodeInfo struct {
	Node *v1.Node
	Pods []*PodInfo
	// PodsWithAffinity / PodsWithRequiredAntiAffinity are subsets of Pods.
	PodsWithAffinity             []*PodInfo
	PodsWithRequiredAntiAffinity []*PodInfo
	UsedPorts                    HostPortInfo
	// Requested sums effective requests; NonZeroRequested applies scoring defaults
	// (only MilliCPU and Memory are meaningful there).
	Requested        Resource
	NonZeroRequested Resource
	Allocatable      Resource
	// ImageStates maps normalized image names present on the node to their summary.
	ImageStates map[string]*ImageStateSummary
	// Generation changes on every mutation, so derived caches can tell staleness.
	Generation int64
	// Index is the node's position in the snapshot list that last numbered
	// it (the scheduler's NewSnapshot), so that plugins can keep per-node
	// data in slices. It is only a hint: a reader checks that its own list
	// holds this node at Index before trusting it (copies made for
	// preemption carry their original's).
	Index int32
}

// NewNodeInfo builds an empty NodeInfo for node.
func NewNodeInfo(node *v1.Node) *NodeInfo {
	ni := &NodeInfo{UsedPorts: HostPortInfo{}}
	ni.SetNode(node)
	return ni
}

// SetNode (re)sets the node object and its allocatable.
func (n *NodeInfo) SetNode(node *v1.Node) {
	n.Node = node
	n.Allocatable = *NewResource(node.Status.Allocatable)
	n.Generation++
}

// Name is the node's name ("" for a NodeInfo without a node).
func (n *NodeInfo) Name() string {
	if n == nil || n.Node == nil {
		return ""
	}
	return n.Node.Name
}

// AddPod accounts a pod to the node.
func (n *NodeInfo) AddPod(pi *PodInfo) {
	n.Pods = append(n.Pods, pi)
	if pi.HasAffinity() {
		n.PodsWithAffinity = append(n.PodsWithAffinity, pi)
	}
	if len(pi.RequiredAntiAffinityTerms) > 0 {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, pi)
	}
	n.update(pi, +1)
}

// RemovePod removes a pod (matched by UID, falling back to namespace/name).
func (n *NodeInfo) RemovePod(pod *v1.Pod) bool {
	idx := -1
	for i, p := range n.Pods {
		if samePod(p.Pod, pod) {
			idx = i
			break
		}
	}
	if idx < 0 {
		return false
	}
	pi := n.Pods[idx]
	n.Pods = removeAt(n.Pods, idx)
	n.PodsWithAffinity = removePod(n.PodsWithAffinity, pod)
	n.PodsWithRequiredAntiAffinity = removePod(n.PodsWithRequiredAntiAffinity, pod)
	n.update(pi, -1)
	return true
}

func (n *NodeInfo) update(pi *PodInfo, sign int64) {
	if sign > 0 {
		n.Requested.Plus(&pi.Requests)
	} else {
		n.Requested.Minus(&pi.Requests)
	}
	n.NonZeroRequested.MilliCPU += sign * pi.NonZeroMilliCPU
	n.NonZeroRequested.Memory += sign * pi.NonZeroMemory
	for _, p := range HostPorts(pi.Pod) {
		if sign > 0 {
			n.usedPorts().Add(p.HostIP, string(p.Protocol), p.HostPort)
		} else {
			n.UsedPorts.Remove(p.HostIP, string(p.Protocol), p.HostPort)
		}
	}
	n.Generation++
}

// HostPorts lists the host ports a pod's containers and init containers
// declare, as the cache accounts them.
func HostPorts(pod *v1.Pod) []v1.ContainerPort {
	var out []v1.ContainerPort
	for _, list := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range list {
			for _, p := range c.Ports {
				if p.HostPort > 0 {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// Clone copies the NodeInfo so that adding or removing pods on the copy does
// not affect the original (pod infos themselves are shared, they are immutable).
func (n *NodeInfo) Clone() *NodeInfo {
	c := &NodeInfo{
		Node:                         n.Node,
		Pods:                         append([]*PodInfo(nil), n.Pods...),
		PodsWithAffinity:             append([]*PodInfo(nil), n.PodsWithAffinity...),
		PodsWithRequiredAntiAffinity: append([]*PodInfo(nil), n.PodsWithRequiredAntiAffinity...),
		UsedPorts:                    n.UsedPorts.Clone(),
		Requested:                    n.Requested.cloneValue(),
		NonZeroRequested:             n.NonZeroRequested.cloneValue(),
		Allocatable:                  n.Allocatable.cloneValue(),
		ImageStates:                  n.ImageStates,
		Generation:                   n.Generation,
		Index:                        n.Index,
	}
	return c
}

// usedPorts returns UsedPorts, made on first use (copies of a NodeInfo
// without host ports leave it nil).
func (n *NodeInfo) usedPorts() HostPortInfo {
	if n.UsedPorts == nil {
		n.UsedPorts = HostPortInfo{}
	}
	return n.UsedPorts
}

func samePod(a, b *v1.Pod) bool {
	if a.UID != "" && b.UID != "" {
		return a.UID == b.UID
	}
	return a.Namespace == b.Namespace && a.Name == b.Name
}

func removeAt(s []*PodInfo, i int) []*PodInfo {
	out := make([]*PodInfo, 0, len(s)-1)
	out = append(out, s[:i]...)
	return append(out, s[i+1:]...)
}

func removePod(s []*PodInfo, pod *v1.Pod) []*PodInfo {
	for i, p := range s {
		if samePod(p.Pod, pod) {
			return removeAt(s, i)
		}
	}
	return s
}

// HostPortInfo records host ports in use: ip -> (protocol, port) set.
type HostPortInfo map[string]map[ProtocolPort]struct{}

// ProtocolPort is one host port.
type ProtocolPort struct {
	Protocol string
	Port     int32
}

const defaultHostIP = "0.0.0.0"

func sanitize(ip, protocol string) (string, string) {
	if ip == "" {
		ip = defaultHostIP
	}
	if protocol == "" {
		protocol = string(v1.ProtocolTCP)
	}
	return ip, protocol
}

// Add marks a host port used.
func (h HostPortInfo) Add(ip, protocol string, port int32) {
	ip, protocol = sanitize(ip, protocol)
	if h[ip] == nil {
		h[ip] = map[ProtocolPort]struct{}{}
	}
	h[ip][ProtocolPort{protocol, port}] = struct{}{}
}

// Remove unmarks a host port.
func (h HostPortInfo) Remove(ip, protocol string, port int32) {
	ip, protocol = sanitize(ip, protocol)
	delete(h[ip], ProtocolPort{protocol, port})
	if len(h[ip]) == 0 {
		delete(h, ip)
	}
}

// CheckConflict reports whether (ip, protocol, port) clashes with a used port;
// 0.0.0.0 clashes with every address.
func (h HostPortInfo) CheckConflict(ip, protocol string, port int32) bool {
	if port <= 0 {
		return false
	}
	ip, protocol = sanitize(ip, protocol)
	pp := ProtocolPort{protocol, port}
	if ip == defaultHostIP {
		for _, m := range h {
			if _, ok := m[pp]; ok {
				return true
			}
		}
		return false
	}
	for _, key := range []string{ip, defaultHostIP} {
		if _, ok := h[key][pp]; ok {
			return true
		}
	}
	return false
}

// Clone deep-copies; an empty set copies as nil (NodeInfo makes one
// again when a port is added).
func (h HostPortInfo) Clone() HostPortInfo {
	if len(h) == 0 {
		return nil
	}
	c := make(HostPortInfo, len(h))
	for ip, m := range h {
		mm := make(map[ProtocolPort]struct{}, len(m))
		for k := range m {
			mm[k] = struct{}{}
		}
		c[ip] = mm
	}
	return c
}
