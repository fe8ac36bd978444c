package view

import (
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/cluster"
)

// The column sets below mirror the server-side table printers
// (pkg/printers/internalversion); Priority 1 columns only show with -o wide.
func col(name string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "string"}
}

func nameCol() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name"}
}

func wideCol(name string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "string", Priority: 1}
}

var (
	podColumns = []metav1.TableColumnDefinition{nameCol(), col("Ready"), col("Status"), col("Restarts"), col("Age"),
		wideCol("IP"), wideCol("Node"), wideCol("Nominated Node"), wideCol("Readiness Gates")}
	nodeColumns = []metav1.TableColumnDefinition{nameCol(), col("Status"), col("Roles"), col("Age"), col("Version"),
		wideCol("Internal-IP"), wideCol("External-IP"), wideCol("OS-Image"), wideCol("Kernel-Version"), wideCol("Container-Runtime")}
	deploymentColumns = []metav1.TableColumnDefinition{nameCol(), col("Ready"), col("Up-to-date"), col("Available"), col("Age"),
		wideCol("Containers"), wideCol("Images"), wideCol("Selector")}
	replicaSetColumns = []metav1.TableColumnDefinition{nameCol(), col("Desired"), col("Current"), col("Ready"), col("Age"),
		wideCol("Containers"), wideCol("Images"), wideCol("Selector")}
	namespaceColumns = []metav1.TableColumnDefinition{nameCol(), col("Status"), col("Age")}
	eventColumns     = []metav1.TableColumnDefinition{col("Last Seen"), col("Type"), col("Reason"), col("Object"),
		wideCol("Subobject"), wideCol("Source"), col("Message"), wideCol("First Seen"), wideCol("Count"), wideCol("Name")}
	serviceColumns = []metav1.TableColumnDefinition{nameCol(), col("Type"), col("Cluster-IP"), col("External-IP"), col("Port(s)"), col("Age"),
		wideCol("Selector")}
	serviceAccountColumns = []metav1.TableColumnDefinition{nameCol(), col("Secrets"), col("Age")}
	configMapColumns      = []metav1.TableColumnDefinition{nameCol(), col("Data"), col("Age")}
	secretColumns         = []metav1.TableColumnDefinition{nameCol(), col("Type"), col("Data"), col("Age")}
	priorityClassColumns  = []metav1.TableColumnDefinition{nameCol(), col("Value"), col("Global-Default"), col("Age"), col("PreemptionPolicy")}
)

func row(obj runtime.Object, cells ...interface{}) metav1.TableRow {
	return metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: obj}}
}

// podRow computes READY, STATUS and RESTARTS as kubectl's printPod does.
func podRow(s *cluster.State, pod *corev1.Pod) metav1.TableRow {
	restarts, restartableInitRestarts := 0, 0
	totalContainers := len(pod.Spec.Containers)
	readyContainers := 0
	var lastRestart, lastRestartableInitRestart metav1.Time

	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	initContainers := map[string]*corev1.Container{}
	for i := range pod.Spec.InitContainers {
		initContainers[pod.Spec.InitContainers[i].Name] = &pod.Spec.InitContainers[i]
		if isRestartableInit(&pod.Spec.InitContainers[i]) {
			totalContainers++
		}
	}

	initializing := false
	for i, st := range pod.Status.InitContainerStatuses {
		restarts += int(st.RestartCount)
		if t := st.LastTerminationState.Terminated; t != nil && lastRestart.Before(&t.FinishedAt) {
			lastRestart = t.FinishedAt
		}
		restartable := isRestartableInit(initContainers[st.Name])
		if restartable {
			restartableInitRestarts += int(st.RestartCount)
			if t := st.LastTerminationState.Terminated; t != nil && lastRestartableInitRestart.Before(&t.FinishedAt) {
				lastRestartableInitRestart = t.FinishedAt
			}
		}
		switch {
		case st.State.Terminated != nil && st.State.Terminated.ExitCode == 0:
			continue
		case restartable && st.Started != nil && *st.Started:
			if st.Ready {
				readyContainers++
			}
			continue
		case st.State.Terminated != nil:
			switch {
			case st.State.Terminated.Reason != "":
				reason = "Init:" + st.State.Terminated.Reason
			case st.State.Terminated.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", st.State.Terminated.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", st.State.Terminated.ExitCode)
			}
		case st.State.Waiting != nil && st.State.Waiting.Reason != "" && st.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + st.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || podConditionTrue(pod, corev1.PodInitialized) {
		restarts = restartableInitRestarts
		lastRestart = lastRestartableInitRestart
		hasRunning := false
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			st := pod.Status.ContainerStatuses[i]
			restarts += int(st.RestartCount)
			if t := st.LastTerminationState.Terminated; t != nil && lastRestart.Before(&t.FinishedAt) {
				lastRestart = t.FinishedAt
			}
			switch {
			case st.State.Waiting != nil && st.State.Waiting.Reason != "":
				reason = st.State.Waiting.Reason
			case st.State.Terminated != nil && st.State.Terminated.Reason != "":
				reason = st.State.Terminated.Reason
			case st.State.Terminated != nil && st.State.Terminated.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", st.State.Terminated.Signal)
			case st.State.Terminated != nil:
				reason = fmt.Sprintf("ExitCode:%d", st.State.Terminated.ExitCode)
			case st.Ready && st.State.Running != nil:
				hasRunning = true
				readyContainers++
			}
		}
		if reason == "Completed" && hasRunning {
			if podConditionTrue(pod, corev1.PodReady) {
				reason = "Running"
			} else {
				reason = "NotReady"
			}
		}
	}

	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	if pod.DeletionTimestamp != nil && pod.Status.Reason == "NodeLost" {
		reason = "Unknown"
	} else if pod.DeletionTimestamp != nil && !terminal {
		reason = "Terminating"
	}

	restartsText := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsText = fmt.Sprintf("%d (%s ago)", restarts, since(s, lastRestart))
	}

	podIP, nodeName, nominated := "<none>", "<none>", "<none>"
	if len(pod.Status.PodIPs) > 0 && pod.Status.PodIPs[0].IP != "" {
		podIP = pod.Status.PodIPs[0].IP
	}
	if pod.Spec.NodeName != "" {
		nodeName = pod.Spec.NodeName
	}
	if pod.Status.NominatedNodeName != "" {
		nominated = pod.Status.NominatedNodeName
	}
	gates := "<none>"
	if len(pod.Spec.ReadinessGates) > 0 {
		trueGates := 0
		for _, g := range pod.Spec.ReadinessGates {
			for _, c := range pod.Status.Conditions {
				if c.Type == g.ConditionType {
					if c.Status == corev1.ConditionTrue {
						trueGates++
					}
					break
				}
			}
		}
		gates = fmt.Sprintf("%d/%d", trueGates, len(pod.Spec.ReadinessGates))
	}
	return row(pod, pod.Name, fmt.Sprintf("%d/%d", readyContainers, totalContainers), reason, restartsText,
		since(s, pod.CreationTimestamp), podIP, nodeName, nominated, gates)
}

func isRestartableInit(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func podConditionTrue(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nodeStatusText is Ready / NotReady / Unknown, plus SchedulingDisabled when cordoned.
func nodeStatusText(node *corev1.Node) string {
	var status []string
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			status = append(status, string(c.Type))
		} else {
			status = append(status, "Not"+string(c.Type))
		}
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if node.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	return strings.Join(status, ",")
}

func nodeAddress(node *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range node.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

func nodeRow(s *cluster.State, node *corev1.Node) metav1.TableRow {
	roles := strings.Join(findNodeRoles(node), ",")
	if roles == "" {
		roles = "<none>"
	}
	info := node.Status.NodeInfo
	return row(node, node.Name, nodeStatusText(node), roles, since(s, node.CreationTimestamp), info.KubeletVersion,
		nodeAddress(node, corev1.NodeInternalIP), nodeAddress(node, corev1.NodeExternalIP),
		orUnknown(info.OSImage), orUnknown(info.KernelVersion), orUnknown(info.ContainerRuntimeVersion))
}

func containerCells(containers []corev1.Container) (names, images string) {
	var n, i []string
	for _, c := range containers {
		n = append(n, c.Name)
		i = append(i, c.Image)
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

func selectorText(sel *metav1.LabelSelector) string {
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "<invalid>"
	}
	return selector.String()
}

func replicas(p *int32) int64 {
	if p == nil {
		return 1
	}
	return int64(*p)
}

func deploymentRow(s *cluster.State, d *appsv1.Deployment) metav1.TableRow {
	names, images := containerCells(d.Spec.Template.Spec.Containers)
	return row(d, d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicas(d.Spec.Replicas)),
		int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), since(s, d.CreationTimestamp),
		names, images, selectorText(d.Spec.Selector))
}

func replicaSetRow(s *cluster.State, rs *appsv1.ReplicaSet) metav1.TableRow {
	names, images := containerCells(rs.Spec.Template.Spec.Containers)
	return row(rs, rs.Name, replicas(rs.Spec.Replicas), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
		since(s, rs.CreationTimestamp), names, images, selectorText(rs.Spec.Selector))
}

func namespaceRow(s *cluster.State, ns *corev1.Namespace) metav1.TableRow {
	return row(ns, ns.Name, string(ns.Status.Phase), since(s, ns.CreationTimestamp))
}

// eventRow is the server-side printEvent: LAST SEEN falls back to the first
// time, a series overrides time and count.
func eventRow(s *cluster.State, e *corev1.Event) metav1.TableRow {
	first := since(s, e.FirstTimestamp)
	if e.FirstTimestamp.IsZero() {
		first = sinceMicro(s, e.EventTime)
	}
	last := since(s, e.LastTimestamp)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = sinceMicro(s, e.Series.LastObservedTime)
		count = e.Series.Count
	} else if count == 0 {
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	return row(e, last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, eventSource(e),
		strings.TrimSpace(e.Message), first, int64(count), e.Name)
}

func eventSource(e *corev1.Event) string {
	component, instance := e.Source.Component, e.Source.Host
	if component == "" {
		component, instance = e.ReportingController, e.ReportingInstance
	}
	if instance == "" {
		return component
	}
	return component + ", " + instance
}

func serviceRow(s *cluster.State, svc *corev1.Service) metav1.TableRow {
	clusterIP := "<none>"
	if len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	} else if svc.Spec.ClusterIP != "" {
		clusterIP = svc.Spec.ClusterIP
	}
	ports := servicePorts(svc.Spec.Ports)
	if ports == "" {
		ports = "<none>"
	}
	svcType := svc.Spec.Type
	if svcType == "" {
		svcType = corev1.ServiceTypeClusterIP
	}
	return row(svc, svc.Name, string(svcType), clusterIP, serviceExternalIP(svc), ports, since(s, svc.CreationTimestamp),
		labels.FormatLabels(svc.Spec.Selector))
}

func servicePorts(ports []corev1.ServicePort) string {
	var out []string
	for _, p := range ports {
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		if p.NodePort > 0 {
			out = append(out, fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, proto))
		} else {
			out = append(out, fmt.Sprintf("%d/%s", p.Port, proto))
		}
	}
	return strings.Join(out, ",")
}

func serviceExternalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeLoadBalancer:
		var ingress []string
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				ingress = append(ingress, in.IP)
			} else if in.Hostname != "" {
				ingress = append(ingress, in.Hostname)
			}
		}
		all := append(append([]string{}, ingress...), svc.Spec.ExternalIPs...)
		if len(all) > 0 {
			return strings.Join(all, ",")
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	if len(svc.Spec.ExternalIPs) > 0 {
		return strings.Join(svc.Spec.ExternalIPs, ",")
	}
	return "<none>"
}

func serviceAccountRow(s *cluster.State, sa *corev1.ServiceAccount) metav1.TableRow {
	return row(sa, sa.Name, int64(len(sa.Secrets)), since(s, sa.CreationTimestamp))
}

func configMapRow(s *cluster.State, cm *corev1.ConfigMap) metav1.TableRow {
	return row(cm, cm.Name, int64(len(cm.Data)+len(cm.BinaryData)), since(s, cm.CreationTimestamp))
}

func secretRow(s *cluster.State, sec *corev1.Secret) metav1.TableRow {
	return row(sec, sec.Name, string(sec.Type), int64(len(sec.Data)), since(s, sec.CreationTimestamp))
}

func priorityClassRow(s *cluster.State, pc *schedulingv1.PriorityClass) metav1.TableRow {
	policy := "<unset>"
	if pc.PreemptionPolicy != nil {
		policy = string(*pc.PreemptionPolicy)
	}
	return row(pc, pc.Name, int64(pc.Value), pc.GlobalDefault, since(s, pc.CreationTimestamp), policy)
}
