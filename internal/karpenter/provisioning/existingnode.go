package provisioning

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/karpenter/podutil"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// existingNode is a StateNode during a solve: what is left on it after its
// pods and the DaemonSet pods that have yet to land there.
type existingNode struct {
	*StateNode
	pods         []*corev1.Pod
	remaining    corev1.ResourceList
	requirements scheduling.Requirements
	hostPorts    *hostPortUsage
	volumes      Volumes
	topology     *topology
}

// newExistingNode subtracts the requests of the node's pods and of the
// compatible DaemonSets not yet running there (never below zero).
func newExistingNode(n *StateNode, top *topology, daemons []*corev1.Pod) *existingNode {
	var podsOnNode, daemonsOnNode []*corev1.Pod
	ports := newHostPortUsage()
	for _, p := range n.Pods {
		podsOnNode = append(podsOnNode, p)
		if podutil.OwnedByDaemonSet(p) {
			daemonsOnNode = append(daemonsOnNode, p)
		}
		ports.add(p, hostPortsOf(p))
	}
	daemonResources := requestsForPods(daemons...)
	if len(daemonsOnNode) > 0 {
		subtractFrom(daemonResources, requestsForPods(daemonsOnNode...))
	}
	for name, q := range daemonResources {
		if q.Sign() < 0 {
			q.Set(0)
			daemonResources[name] = q
		}
	}
	available := n.Allocatable
	if len(podsOnNode) > 0 {
		available = subtract(n.Allocatable, requestsForPods(podsOnNode...))
	}
	e := &existingNode{StateNode: n, remaining: subtract(available, daemonResources), requirements: scheduling.NewLabelRequirements(n.Labels),
		hostPorts: ports, volumes: Volumes{}.union(n.Volumes), topology: top}
	e.requirements.Add(scheduling.NewRequirement(corev1.LabelHostname, corev1.NodeSelectorOpIn, n.hostName()))
	top.register(corev1.LabelHostname, n.hostName())
	return e
}

var errExceedsNodeResources = errors.New("exceeds node resources")

func (n *existingNode) canAdd(pod *corev1.Pod, data *podData) (scheduling.Requirements, error) {
	if err := tolerates(n.Taints, pod.Spec.Tolerations); err != nil {
		return nil, err
	}
	if err := exceedsVolumeLimits(n.volumes, data.volumes, n.VolumeLimits); err != nil {
		return nil, fmt.Errorf("checking volume usage, %w", err)
	}
	if err := n.hostPorts.conflicts(pod, hostPortsOf(pod)); err != nil {
		return nil, fmt.Errorf("checking host port usage, %w", err)
	}
	if !fits(data.requests, n.remaining) {
		return nil, errExceedsNodeResources
	}
	if err := n.requirements.Compatible(data.requirements); err != nil {
		return nil, err
	}
	reqs := scheduling.NewRequirements(n.requirements.Values()...)
	reqs.Add(data.requirements.Values()...)
	topo, err := n.topology.addRequirements(pod, n.Taints, data.strictRequirements, reqs)
	if err != nil {
		return nil, err
	}
	if err := reqs.Compatible(topo); err != nil {
		return nil, err
	}
	reqs.Add(topo.Values()...)
	return reqs, nil
}

func (n *existingNode) add(pod *corev1.Pod, data *podData, reqs scheduling.Requirements) {
	n.pods = append(n.pods, pod)
	subtractFrom(n.remaining, data.requests)
	n.requirements = reqs
	n.topology.record(pod, n.Taints, reqs)
	n.hostPorts.add(pod, hostPortsOf(pod))
	if len(data.volumes) > 0 {
		n.volumes = n.volumes.union(data.volumes)
	}
}
