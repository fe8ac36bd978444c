package upstream

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/labels"
)

// NodePods lists, per node, the pods upstream's cache holds there and,
// prefixed with "nominated:", the pods its nominator holds for it
// (diagnostics for disagreements).
func (r *Runner) NodePods() map[string][]string {
	out := map[string][]string{}
	for name, info := range r.sched.Cache.Dump().Nodes {
		for _, p := range info.GetPods() {
			out[name] = append(out[name], p.GetPod().Namespace+"/"+p.GetPod().Name)
		}
	}
	nodes, _ := r.informers.Core().V1().Nodes().Lister().List(labels.Everything())
	for _, n := range nodes {
		for _, pi := range r.sched.SchedulingQueue.NominatedPodsForNode(n.Name) {
			out[n.Name] = append(out[n.Name], "nominated:"+pi.GetPod().Namespace+"/"+pi.GetPod().Name)
		}
	}
	for _, l := range out {
		sort.Strings(l)
	}
	return out
}

// UsedPorts returns the host ports upstream's cache counts on node (diagnostics).
func (r *Runner) UsedPorts(node string) string {
	info := r.sched.Cache.Dump().Nodes[node]
	if info == nil {
		return "<no node>"
	}
	var out []string
	for _, p := range info.GetPods() {
		for _, c := range p.GetPod().Spec.Containers {
			for _, port := range c.Ports {
				out = append(out, fmt.Sprintf("%s:%s/%d/%s", p.GetPod().Name, port.HostIP, port.HostPort, port.Protocol))
			}
		}
	}
	return fmt.Sprintf("%v used=%v", out, info.GetUsedPorts())
}
