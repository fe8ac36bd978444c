package scheduler

import (
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
	"github.com/berth-sim/berth/internal/scheduler/plugins/nodeports"
	"github.com/berth-sim/berth/internal/scheduler/plugins/noderesources"
)

// preChecker is upstream's pre-check of node events when queueing hints
// are off (before 1.32): a node added or updated moves only the parked
// pods that would pass the kubelet's admission there (resources with the
// node's pods, node affinity, nodeName, host ports) and tolerate its
// NoSchedule and NoExecute taints (docs/scheduler.md#the-queue).
type preChecker struct {
	s *cluster.State
	// byNode lists the bound, non-terminal pods per node, built on first use.
	byNode map[string][]*v1.Pod
	// infos are the node infos of the events checked so far, by node name
	// and resource version.
	infos    map[string]*framework.NodeInfo
	podLevel bool
}

func (c *preChecker) nodeInfo(n *v1.Node) *framework.NodeInfo {
	key := n.Name + "@" + n.ResourceVersion
	if ni, ok := c.infos[key]; ok {
		return ni
	}
	if c.byNode == nil {
		c.byNode = map[string][]*v1.Pod{}
		for _, p := range c.s.Pods {
			if p.Spec.NodeName != "" && !cluster.IsTerminal(p) {
				c.byNode[p.Spec.NodeName] = append(c.byNode[p.Spec.NodeName], p)
			}
		}
		c.infos = map[string]*framework.NodeInfo{}
	}
	ni := framework.NewNodeInfo(n)
	for _, p := range c.byNode[n.Name] {
		ni.AddPod(framework.NewPodInfo(p, c.podLevel))
	}
	c.infos[key] = ni
	return ni
}

// passes reports whether the node event may move pod.
func (c *preChecker) passes(pi *framework.PodInfo, e *cluster.SchedulingEvent) bool {
	n, ok := e.New.(*v1.Node)
	if !ok || n == nil {
		return true
	}
	ni := c.nodeInfo(n)
	if len(noderesources.Fits(&pi.Requests, ni)) != 0 {
		return false
	}
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pi.Pod).Match(n); !ok {
		return false
	}
	if pi.Pod.Spec.NodeName != "" && pi.Pod.Spec.NodeName != n.Name {
		return false
	}
	if nodeports.Conflict(framework.HostPorts(pi.Pod), ni) {
		return false
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logr.Discard(), n.Spec.Taints, pi.Pod.Spec.Tolerations, helper.DoNotScheduleTaints, false)
	return !untolerated
}
