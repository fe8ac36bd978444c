package kubelet

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// nodeFacts is what every pod's sync reads of its node. Nodes do not change
// while the sync walks the pods (heartbeats come first), so at 100,000 pods
// on 5,000 nodes the node's conditions and timing are looked at once per
// node rather than two or three times per pod.
type nodeFacts struct {
	node      *corev1.Node
	reporting bool
	timing    Timing
	// internalIP is the node's InternalIP address ("": none), every
	// started pod's hostIP.
	internalIP string
	// info holds the pods the node's kubelet has admitted, made at the
	// sync's first admission to the node (nodeInfos.get).
	info *framework.NodeInfo
}

// facts returns the node named name with what the sync reads of it, or nil
// when there is no such node.
func (n *nodeInfos) facts(name string) *nodeFacts {
	if f, ok := n.nodes[name]; ok {
		return f
	}
	var f *nodeFacts
	if node, ok := n.s.Nodes[name]; ok {
		f = &nodeFacts{node: node, reporting: nodeReporting(node), timing: timingOf(node), internalIP: nodeInternalIP(node)}
	}
	if n.nodes == nil {
		n.nodes = map[string]*nodeFacts{}
	}
	n.nodes[name] = f
	return f
}

// admissionInfo is what admission reads of a pod: its effective requests
// (framework.NewPodInfo's Requests, the same sum). The scheduler's other
// derived data (the requests with scoring defaults, the parsed affinity
// terms) is left out: admission neither scores nor checks affinity
// between pods, and the NodeInfo it adds the pod to is its own, dropped
// at the end of the sync. At 100,000 pods the second request sum and the
// affinity parse were half of admission's cost.
//
// A pod of one container, without init containers, overhead or (with the
// gate on) pod-level requests, requests what its container does:
// PodRequests would copy that list into a new one only to have it summed,
// so the container's own list is summed instead. Pods of several
// containers still go through PodRequests, which adds quantities before
// rounding them to whole millis.
func admissionInfo(pod *corev1.Pod, podLevelResources bool) *framework.PodInfo {
	spec := &pod.Spec
	if len(spec.Containers) == 1 && len(spec.InitContainers) == 0 && spec.Overhead == nil &&
		!(podLevelResources && resourcehelper.IsPodLevelRequestsSet(pod)) {
		return &framework.PodInfo{Pod: pod, Requests: *framework.NewResource(spec.Containers[0].Resources.Requests)}
	}
	opts := resourcehelper.PodResourcesOptions{SkipPodLevelResources: !podLevelResources}
	return &framework.PodInfo{Pod: pod, Requests: *framework.NewResource(resourcehelper.PodRequests(pod, opts))}
}

// leaseKeys looks node leases up by node name through one reused key
// buffer: every pass looks up every node's lease, and s.NodeLease builds
// the key string each time (5,000 nodes, a string each, on every pass).
type leaseKeys struct{ buf []byte }

// leaseKeyPrefix is the leases' namespace part of a state key.
var leaseKeyPrefix = cluster.Key(corev1.NamespaceNodeLease, "")

// lease is s.NodeLease(name).
func (k *leaseKeys) lease(s *cluster.State, name string) *coordinationv1.Lease {
	k.buf = append(append(k.buf[:0], leaseKeyPrefix...), name...)
	return s.Leases[string(k.buf)]
}
