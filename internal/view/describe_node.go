package view

import (
	"sort"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/berth-sim/berth/internal/cluster"
)

func describeNode(s *cluster.State, node *corev1.Node) string {
	// Controllers report node events by uid, the kubelet by name; kubectl
	// asks for each and appends the kubelet's after the controllers'.
	events := eventQuery{kind: "Node", name: node.Name, uids: uidsOf(node)}.find(s)
	events = append(events, eventQuery{kind: "Node", name: node.Name, uids: []string{node.Name}}.find(s)...)
	pods := s.PodsOnNode(node.Name)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", node.Name)
		if roles := findNodeRoles(node); len(roles) > 0 {
			w.write(level0, "Roles:\t%s\n", strings.Join(roles, ","))
		} else {
			w.write(level0, "Roles:\t%s\n", "<none>")
		}
		printLabelsMultiline(w, "Labels", node.Labels)
		printAnnotationsMultiline(w, "Annotations", node.Annotations)
		w.write(level0, "CreationTimestamp:\t%s\n", node.CreationTimestamp.Time.Format(describeTimeFormat))
		printTaintsMultiline(w, "Taints", node.Spec.Taints)
		w.write(level0, "Unschedulable:\t%v\n", node.Spec.Unschedulable)
		describeNodeLease(w, s.NodeLease(node.Name))
		if len(node.Status.Conditions) > 0 {
			w.write(level0, "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n")
			w.write(level1, "----\t------\t-----------------\t------------------\t------\t-------\n")
			for _, c := range node.Status.Conditions {
				w.write(level1, "%v \t%v \t%s \t%s \t%v \t%v\n", c.Type, c.Status,
					c.LastHeartbeatTime.Time.Format(describeTimeFormat), c.LastTransitionTime.Time.Format(describeTimeFormat),
					c.Reason, c.Message)
			}
		}
		w.write(level0, "Addresses:\n")
		for _, a := range node.Status.Addresses {
			w.write(level1, "%s:\t%s\n", a.Type, a.Address)
		}
		printResources := func(list corev1.ResourceList) {
			for _, name := range cluster.SortedKeys(list) {
				q := list[name]
				w.write(level0, "  %s:\t%s\n", name, q.String())
			}
		}
		if len(node.Status.Capacity) > 0 {
			w.write(level0, "Capacity:\n")
			printResources(node.Status.Capacity)
		}
		if len(node.Status.Allocatable) > 0 {
			w.write(level0, "Allocatable:\n")
			printResources(node.Status.Allocatable)
		}
		info := node.Status.NodeInfo
		w.write(level0, "System Info:\n")
		w.write(level0, "  Machine ID:\t%s\n", info.MachineID)
		w.write(level0, "  System UUID:\t%s\n", info.SystemUUID)
		w.write(level0, "  Boot ID:\t%s\n", info.BootID)
		w.write(level0, "  Kernel Version:\t%s\n", info.KernelVersion)
		w.write(level0, "  OS Image:\t%s\n", info.OSImage)
		w.write(level0, "  Operating System:\t%s\n", info.OperatingSystem)
		w.write(level0, "  Architecture:\t%s\n", info.Architecture)
		w.write(level0, "  Container Runtime Version:\t%s\n", info.ContainerRuntimeVersion)
		w.write(level0, "  Kubelet Version:\t%s\n", info.KubeletVersion)
		if node.Spec.PodCIDR != "" {
			w.write(level0, "PodCIDR:\t%s\n", node.Spec.PodCIDR)
		}
		if len(node.Spec.PodCIDRs) > 0 {
			w.write(level0, "PodCIDRs:\t%s\n", strings.Join(node.Spec.PodCIDRs, ","))
		}
		if node.Spec.ProviderID != "" {
			w.write(level0, "ProviderID:\t%s\n", node.Spec.ProviderID)
		}
		describeFargateNode(s, node, pods, w)
		describeNodeResource(s, pods, node, w)
		describeEvents(s, events, w)
	})
}

func percent(part, whole int64) int64 {
	if whole == 0 {
		return 0
	}
	return int64(float64(part) / float64(whole) * 100)
}

// describeNodeResource prints the Non-terminated Pods table and the
// Allocated resources summary with kubectl's truncated percentages.
func describeNodeResource(s *cluster.State, pods []*corev1.Pod, node *corev1.Node, w prefixWriter) {
	w.write(level0, "Non-terminated Pods:\t(%d in total)\n", len(pods))
	w.write(level1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n")
	w.write(level1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n")
	allocatable := node.Status.Capacity
	if len(node.Status.Allocatable) > 0 {
		allocatable = node.Status.Allocatable
	}
	reqs, limits := corev1.ResourceList{}, corev1.ResourceList{}
	for _, pod := range pods {
		opts := resourcehelper.PodResourcesOptions{UseStatusResources: true}
		req, lim := resourcehelper.PodRequests(pod, opts), resourcehelper.PodLimits(pod, opts)
		cpuReq, cpuLim, memReq, memLim := req[corev1.ResourceCPU], lim[corev1.ResourceCPU], req[corev1.ResourceMemory], lim[corev1.ResourceMemory]
		// kubectl divides by allocatable without a zero guard here (NaN/Inf
		// converted to int64); a real node always has cpu and memory.
		w.write(level1, "%s\t%s\t\t%s (%d%%)\t%s (%d%%)\t%s (%d%%)\t%s (%d%%)\t%s\n", pod.Namespace, pod.Name,
			cpuReq.String(), percent(cpuReq.MilliValue(), allocatable.Cpu().MilliValue()),
			cpuLim.String(), percent(cpuLim.MilliValue(), allocatable.Cpu().MilliValue()),
			memReq.String(), percent(memReq.Value(), allocatable.Memory().Value()),
			memLim.String(), percent(memLim.Value(), allocatable.Memory().Value()),
			since(s, pod.CreationTimestamp))
		sumInto(reqs, resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
		sumInto(limits, resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{}))
	}
	w.write(level0, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n")
	w.write(level1, "Resource\tRequests\tLimits\n")
	w.write(level1, "--------\t--------\t------\n")
	cpuReqs, cpuLims := reqs[corev1.ResourceCPU], limits[corev1.ResourceCPU]
	memReqs, memLims := reqs[corev1.ResourceMemory], limits[corev1.ResourceMemory]
	esReqs, esLims := reqs[corev1.ResourceEphemeralStorage], limits[corev1.ResourceEphemeralStorage]
	w.write(level1, "%s\t%s (%d%%)\t%s (%d%%)\n", corev1.ResourceCPU,
		cpuReqs.String(), percent(cpuReqs.MilliValue(), allocatable.Cpu().MilliValue()),
		cpuLims.String(), percent(cpuLims.MilliValue(), allocatable.Cpu().MilliValue()))
	w.write(level1, "%s\t%s (%d%%)\t%s (%d%%)\n", corev1.ResourceMemory,
		memReqs.String(), percent(memReqs.Value(), allocatable.Memory().Value()),
		memLims.String(), percent(memLims.Value(), allocatable.Memory().Value()))
	w.write(level1, "%s\t%s (%d%%)\t%s (%d%%)\n", corev1.ResourceEphemeralStorage,
		esReqs.String(), percent(esReqs.Value(), allocatable.StorageEphemeral().Value()),
		esLims.String(), percent(esLims.Value(), allocatable.StorageEphemeral().Value()))

	var hugePages, extended []string
	for name := range allocatable {
		switch {
		case strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
			hugePages = append(hugePages, string(name))
		case !isStandardContainerResource(name) && name != corev1.ResourcePods:
			extended = append(extended, string(name))
		}
	}
	sort.Strings(hugePages)
	sort.Strings(extended)
	for _, name := range hugePages {
		rn := corev1.ResourceName(name)
		r, l, a := reqs[rn], limits[rn], allocatable[rn]
		w.write(level1, "%s\t%s (%d%%)\t%s (%d%%)\n", name, r.String(), percent(r.Value(), a.Value()), l.String(), percent(l.Value(), a.Value()))
	}
	for _, name := range extended {
		rn := corev1.ResourceName(name)
		r, l := reqs[rn], limits[rn]
		w.write(level1, "%s\t%s\t%s\n", name, r.String(), l.String())
	}
}

func sumInto(total, add corev1.ResourceList) {
	for name, q := range add {
		if cur, ok := total[name]; ok {
			cur.Add(q)
			total[name] = cur
		} else {
			total[name] = q.DeepCopy()
		}
	}
}

// isStandardContainerResource mirrors kubectl's list of standard container
// resource names (cpu, memory, ephemeral-storage, hugepages-*).
func isStandardContainerResource(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return true
	}
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// describeNodeLease prints the Lease block from the kubelet's lease object
// (docs/node-lifecycle.md), "<unset>" for whatever it lacks, as kubectl does.
func describeNodeLease(w prefixWriter, lease *coordinationv1.Lease) {
	holder, acquire, renew := "<unset>", "<unset>", "<unset>"
	if lease != nil {
		if lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		if lease.Spec.AcquireTime != nil {
			acquire = lease.Spec.AcquireTime.Time.Format(describeTimeFormat)
		}
		if lease.Spec.RenewTime != nil {
			renew = lease.Spec.RenewTime.Time.Format(describeTimeFormat)
		}
	}
	w.write(level0, "Lease:\n")
	w.write(level1, "HolderIdentity:\t%s\n", holder)
	w.write(level1, "AcquireTime:\t%s\n", acquire)
	w.write(level1, "RenewTime:\t%s\n", renew)
}
