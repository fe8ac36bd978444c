package view

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/qos"
)

func describePod(s *cluster.State, pod *corev1.Pod) string {
	// kubectl searches pod events without a kind: name, namespace and uid.
	events := eventQuery{namespace: pod.Namespace, name: pod.Name, uids: uidsOf(pod)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", pod.Name)
		w.write(level0, "Namespace:\t%s\n", pod.Namespace)
		if pod.Spec.Priority != nil {
			w.write(level0, "Priority:\t%d\n", *pod.Spec.Priority)
		}
		if pod.Spec.PriorityClassName != "" {
			w.write(level0, "Priority Class Name:\t%s\n", pod.Spec.PriorityClassName)
		}
		if pod.Spec.RuntimeClassName != nil && *pod.Spec.RuntimeClassName != "" {
			w.write(level0, "Runtime Class Name:\t%s\n", *pod.Spec.RuntimeClassName)
		}
		if pod.Spec.ServiceAccountName != "" {
			w.write(level0, "Service Account:\t%s\n", pod.Spec.ServiceAccountName)
		}
		if pod.Spec.NodeName == "" {
			w.write(level0, "Node:\t<none>\n")
		} else {
			w.write(level0, "Node:\t%s\n", pod.Spec.NodeName+"/"+pod.Status.HostIP)
		}
		if pod.Status.StartTime != nil {
			w.write(level0, "Start Time:\t%s\n", pod.Status.StartTime.Time.Format(describeTimeFormat))
		}
		printLabelsMultiline(w, "Labels", pod.Labels)
		printAnnotationsMultiline(w, "Annotations", pod.Annotations)
		if pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodFailed && pod.Status.Phase != corev1.PodSucceeded {
			w.write(level0, "Status:\tTerminating (lasts %s)\n", since(s, *pod.DeletionTimestamp))
			grace := int64(0)
			if pod.DeletionGracePeriodSeconds != nil {
				grace = *pod.DeletionGracePeriodSeconds
			}
			w.write(level0, "Termination Grace Period:\t%ds\n", grace)
		} else {
			w.write(level0, "Status:\t%s\n", string(pod.Status.Phase))
		}
		if pod.Status.Reason != "" {
			w.write(level0, "Reason:\t%s\n", pod.Status.Reason)
		}
		if pod.Status.Message != "" {
			w.write(level0, "Message:\t%s\n", pod.Status.Message)
		}
		if sc := pod.Spec.SecurityContext; sc != nil && sc.SeccompProfile != nil {
			w.write(level0, "SeccompProfile:\t%s\n", sc.SeccompProfile.Type)
			if sc.SeccompProfile.Type == corev1.SeccompProfileTypeLocalhost && sc.SeccompProfile.LocalhostProfile != nil {
				w.write(level0, "LocalhostProfile:\t%s\n", *sc.SeccompProfile.LocalhostProfile)
			}
		}
		w.write(level0, "IP:\t%s\n", pod.Status.PodIP)
		if len(pod.Status.PodIPs) == 0 {
			w.write(level0, "IPs:\t<none>\n")
		} else {
			w.write(level0, "IPs:\n")
			for _, ip := range pod.Status.PodIPs {
				w.write(level1, "IP:\t%s\n", ip.IP)
			}
		}
		if c := printController(pod); c != "" {
			w.write(level0, "Controlled By:\t%s\n", c)
		}
		if pod.Status.NominatedNodeName != "" {
			w.write(level0, "NominatedNodeName:\t%s\n", pod.Status.NominatedNodeName)
		}
		if pod.Spec.Resources != nil {
			w.write(level0, "Resources:\n")
			describeResources(pod.Spec.Resources, w, level1)
		}
		if len(pod.Spec.InitContainers) > 0 {
			describeContainers("Init Containers", pod.Spec.InitContainers, pod.Status.InitContainerStatuses, pod, w, "")
		}
		describeContainers("Containers", pod.Spec.Containers, pod.Status.ContainerStatuses, pod, w, "")
		if len(pod.Spec.ReadinessGates) > 0 {
			w.write(level0, "Readiness Gates:\n  Type\tStatus\n")
			for _, g := range pod.Spec.ReadinessGates {
				status := "<none>"
				for _, c := range pod.Status.Conditions {
					if c.Type == g.ConditionType {
						status = string(c.Status)
						break
					}
				}
				w.write(level1, "%v \t%v \n", g.ConditionType, status)
			}
		}
		if len(pod.Status.Conditions) > 0 {
			w.write(level0, "Conditions:\n  Type\tStatus\n")
			for _, c := range pod.Status.Conditions {
				w.write(level1, "%v \t%v \n", c.Type, c.Status)
			}
		}
		describeVolumes(pod.Spec.Volumes, w, "")
		w.write(level0, "QoS Class:\t%s\n", podQOS(pod))
		printLabelsMultiline(w, "Node-Selectors", pod.Spec.NodeSelector)
		printTolerationsMultiline(w, "Tolerations", pod.Spec.Tolerations)
		describeTopologySpreadConstraints(pod.Spec.TopologySpreadConstraints, w, "")
		describeEvents(s, events, w)
	})
}

// podQOS is the API server's status.qosClass, computed as upstream when unset.
func podQOS(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return qos.PodQOSClass(pod)
}

func describeContainers(label string, containers []corev1.Container, statuses []corev1.ContainerStatus, pod *corev1.Pod, w prefixWriter, space string) {
	byName := map[string]corev1.ContainerStatus{}
	for _, st := range statuses {
		byName[st.Name] = st
	}
	none := ""
	if len(containers) == 0 {
		none = " <none>"
	}
	w.write(level0, "%s%s:%s\n", space, label, none)
	for _, c := range containers {
		st, ok := byName[c.Name]
		nameIndent := ""
		if space != "" {
			nameIndent = " "
		}
		w.write(level1, "%s%v:\n", nameIndent, c.Name)
		if ok {
			w.write(level2, "Container ID:\t%s\n", st.ContainerID)
		}
		w.write(level2, "Image:\t%s\n", c.Image)
		if ok {
			w.write(level2, "Image ID:\t%s\n", st.ImageID)
		}
		ports := containerPorts(c.Ports, func(p corev1.ContainerPort) int32 { return p.ContainerPort })
		if strings.Contains(ports, ",") {
			w.write(level2, "Ports:\t%s\n", ports)
		} else {
			w.write(level2, "Port:\t%s\n", orNone(ports))
		}
		hostPorts := containerPorts(c.Ports, func(p corev1.ContainerPort) int32 { return p.HostPort })
		if strings.Contains(hostPorts, ",") {
			w.write(level2, "Host Ports:\t%s\n", hostPorts)
		} else {
			w.write(level2, "Host Port:\t%s\n", orNone(hostPorts))
		}
		if sc := c.SecurityContext; sc != nil && sc.SeccompProfile != nil {
			w.write(level2, "SeccompProfile:\t%s\n", sc.SeccompProfile.Type)
		}
		describeCommand(c, w)
		if ok {
			describeStatus("State", st.State, w)
			if st.LastTerminationState.Terminated != nil {
				describeStatus("Last State", st.LastTerminationState, w)
			}
			w.write(level2, "Ready:\t%v\n", printBool(st.Ready))
			w.write(level2, "Restart Count:\t%d\n", st.RestartCount)
		}
		describeResources(&c.Resources, w, level2)
		describeProbes(c, w)
		if len(c.EnvFrom) > 0 {
			describeEnvFrom(c, w)
		}
		describeEnv(c, pod, w)
		describeMounts(c, w)
	}
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func printBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func containerPorts(ports []corev1.ContainerPort, number func(corev1.ContainerPort) int32) string {
	out := make([]string, 0, len(ports))
	for _, p := range ports {
		s := fmt.Sprintf("%d/%s", number(p), p.Protocol)
		if p.Name != "" {
			s = fmt.Sprintf("%s (%s)", s, p.Name)
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

func describeCommand(c corev1.Container, w prefixWriter) {
	if len(c.Command) > 0 {
		w.write(level2, "Command:\n")
		for _, cmd := range c.Command {
			for _, line := range strings.Split(cmd, "\n") {
				w.write(level3, "%s\n", line)
			}
		}
	}
	if len(c.Args) > 0 {
		w.write(level2, "Args:\n")
		for _, arg := range c.Args {
			for _, line := range strings.Split(arg, "\n") {
				w.write(level3, "%s\n", line)
			}
		}
	}
}

func describeStatus(name string, state corev1.ContainerState, w prefixWriter) {
	switch {
	case state.Running != nil:
		w.write(level2, "%s:\tRunning\n", name)
		w.write(level3, "Started:\t%v\n", state.Running.StartedAt.Time.Format(describeTimeFormat))
	case state.Waiting != nil:
		w.write(level2, "%s:\tWaiting\n", name)
		if state.Waiting.Reason != "" {
			w.write(level3, "Reason:\t%s\n", state.Waiting.Reason)
		}
	case state.Terminated != nil:
		t := state.Terminated
		w.write(level2, "%s:\tTerminated\n", name)
		if t.Reason != "" {
			w.write(level3, "Reason:\t%s\n", t.Reason)
		}
		if t.Message != "" {
			w.write(level3, "Message:\t%s\n", t.Message)
		}
		w.write(level3, "Exit Code:\t%d\n", t.ExitCode)
		if t.Signal > 0 {
			w.write(level3, "Signal:\t%d\n", t.Signal)
		}
		w.write(level3, "Started:\t%s\n", t.StartedAt.Time.Format(describeTimeFormat))
		w.write(level3, "Finished:\t%s\n", t.FinishedAt.Time.Format(describeTimeFormat))
	default:
		w.write(level2, "%s:\tWaiting\n", name)
	}
}

func describeResources(r *corev1.ResourceRequirements, w prefixWriter, level int) {
	if r == nil {
		return
	}
	if len(r.Limits) > 0 {
		w.write(level, "Limits:\n")
	}
	for _, name := range cluster.SortedKeys(r.Limits) {
		q := r.Limits[name]
		w.write(level+1, "%s:\t%s\n", name, q.String())
	}
	if len(r.Requests) > 0 {
		w.write(level, "Requests:\n")
	}
	for _, name := range cluster.SortedKeys(r.Requests) {
		q := r.Requests[name]
		w.write(level+1, "%s:\t%s\n", name, q.String())
	}
}

func describeProbes(c corev1.Container, w prefixWriter) {
	if c.LivenessProbe != nil {
		w.write(level2, "Liveness:\t%s\n", describeProbe(c.LivenessProbe))
	}
	if c.ReadinessProbe != nil {
		w.write(level2, "Readiness:\t%s\n", describeProbe(c.ReadinessProbe))
	}
	if c.StartupProbe != nil {
		w.write(level2, "Startup:\t%s\n", describeProbe(c.StartupProbe))
	}
}

func describeProbe(p *corev1.Probe) string {
	attrs := fmt.Sprintf("delay=%ds timeout=%ds period=%ds #success=%d #failure=%d",
		p.InitialDelaySeconds, p.TimeoutSeconds, p.PeriodSeconds, p.SuccessThreshold, p.FailureThreshold)
	switch {
	case p.Exec != nil:
		return fmt.Sprintf("exec %v %s", p.Exec.Command, attrs)
	case p.HTTPGet != nil:
		u := &url.URL{Scheme: strings.ToLower(string(p.HTTPGet.Scheme)), Path: p.HTTPGet.Path}
		if port := p.HTTPGet.Port.String(); port != "" {
			u.Host = net.JoinHostPort(p.HTTPGet.Host, port)
		} else {
			u.Host = p.HTTPGet.Host
		}
		return fmt.Sprintf("http-get %s %s", u.String(), attrs)
	case p.TCPSocket != nil:
		return fmt.Sprintf("tcp-socket %s:%s %s", p.TCPSocket.Host, p.TCPSocket.Port.String(), attrs)
	case p.GRPC != nil:
		service := ""
		if p.GRPC.Service != nil {
			service = *p.GRPC.Service
		}
		return fmt.Sprintf("grpc <pod>:%d %s %s", p.GRPC.Port, service, attrs)
	}
	return fmt.Sprintf("unknown %s", attrs)
}

func describeEnvFrom(c corev1.Container, w prefixWriter) {
	w.write(level2, "Environment Variables from:\n")
	for _, e := range c.EnvFrom {
		from, name, optional := "", "", false
		if e.ConfigMapRef != nil {
			from, name = "ConfigMap", e.ConfigMapRef.Name
			optional = e.ConfigMapRef.Optional != nil && *e.ConfigMapRef.Optional
		} else if e.SecretRef != nil {
			from, name = "Secret", e.SecretRef.Name
			optional = e.SecretRef.Optional != nil && *e.SecretRef.Optional
		}
		if e.Prefix == "" {
			w.write(level3, "%s\t%s\tOptional: %t\n", name, from, optional)
		} else {
			w.write(level3, "%s\t%s with prefix '%s'\tOptional: %t\n", name, from, e.Prefix, optional)
		}
	}
}

func describeEnv(c corev1.Container, pod *corev1.Pod, w prefixWriter) {
	none := ""
	if len(c.Env) == 0 {
		none = "\t<none>"
	}
	w.write(level2, "Environment:%s\n", none)
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			for i, line := range strings.Split(e.Value, "\n") {
				if i == 0 {
					w.write(level3, "%s:\t%s\n", e.Name, line)
				} else {
					w.write(level3, "\t%s\n", line)
				}
			}
			continue
		}
		switch vf := e.ValueFrom; {
		case vf.FieldRef != nil:
			w.write(level3, "%s:\t%s (%s:%s)\n", e.Name, podFieldValue(pod, vf.FieldRef.FieldPath), vf.FieldRef.APIVersion, vf.FieldRef.FieldPath)
		case vf.ResourceFieldRef != nil:
			value := containerResourceValue(vf.ResourceFieldRef, &c)
			if value == "0" && (vf.ResourceFieldRef.Resource == "limits.cpu" || vf.ResourceFieldRef.Resource == "limits.memory") {
				value = "node allocatable"
			}
			w.write(level3, "%s:\t%s (%s)\n", e.Name, value, vf.ResourceFieldRef.Resource)
		case vf.SecretKeyRef != nil:
			optional := vf.SecretKeyRef.Optional != nil && *vf.SecretKeyRef.Optional
			w.write(level3, "%s:\t<set to the key '%s' in secret '%s'>\tOptional: %t\n", e.Name, vf.SecretKeyRef.Key, vf.SecretKeyRef.Name, optional)
		case vf.ConfigMapKeyRef != nil:
			optional := vf.ConfigMapKeyRef.Optional != nil && *vf.ConfigMapKeyRef.Optional
			w.write(level3, "%s:\t<set to the key '%s' of config map '%s'>\tOptional: %t\n", e.Name, vf.ConfigMapKeyRef.Key, vf.ConfigMapKeyRef.Name, optional)
		}
	}
}

// podFieldValue resolves the downward-API field paths a pod may reference.
func podFieldValue(pod *corev1.Pod, path string) string {
	switch path {
	case "metadata.name":
		return pod.Name
	case "metadata.namespace":
		return pod.Namespace
	case "metadata.uid":
		return string(pod.UID)
	case "spec.nodeName":
		return pod.Spec.NodeName
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName
	case "status.hostIP":
		return pod.Status.HostIP
	case "status.podIP":
		return pod.Status.PodIP
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": pod.Labels, "metadata.annotations": pod.Annotations} {
		if strings.HasPrefix(path, prefix+"['") && strings.HasSuffix(path, "']") {
			return m[strings.TrimSuffix(strings.TrimPrefix(path, prefix+"['"), "']")]
		}
	}
	return ""
}

// containerResourceValue is the downward API's resourceFieldRef value:
// the quantity divided by the divisor, rounded up.
func containerResourceValue(ref *corev1.ResourceFieldSelector, c *corev1.Container) string {
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return ""
	}
	list := c.Resources.Limits
	if kind == "requests" {
		list = c.Resources.Requests
	}
	q := list[corev1.ResourceName(name)]
	if name == "cpu" {
		return fmt.Sprint(int64(math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue()))))
	}
	return fmt.Sprint(int64(math.Ceil(float64(q.Value()) / float64(divisor.Value()))))
}

func describeMounts(c corev1.Container, w prefixWriter) {
	none := ""
	if len(c.VolumeMounts) == 0 {
		none = "\t<none>"
	}
	w.write(level2, "Mounts:%s\n", none)
	mounts := append([]corev1.VolumeMount(nil), c.VolumeMounts...)
	sort.SliceStable(mounts, func(i, j int) bool { return mounts[i].MountPath < mounts[j].MountPath })
	for _, m := range mounts {
		flags := []string{"rw"}
		if m.ReadOnly {
			flags = []string{"ro"}
		}
		if m.SubPath != "" {
			flags = append(flags, fmt.Sprintf("path=%q", m.SubPath))
		}
		w.write(level3, "%s from %s (%s)\n", m.MountPath, m.Name, strings.Join(flags, ","))
	}
}

func describeVolumes(volumes []corev1.Volume, w prefixWriter, space string) {
	if len(volumes) == 0 {
		w.write(level0, "%sVolumes:\t<none>\n", space)
		return
	}
	w.write(level0, "%sVolumes:\n", space)
	for _, v := range volumes {
		nameIndent := ""
		if space != "" {
			nameIndent = " "
		}
		w.write(level1, "%s%v:\n", nameIndent, v.Name)
		switch src := v.VolumeSource; {
		case src.HostPath != nil:
			hostPathType := "<none>"
			if src.HostPath.Type != nil {
				hostPathType = string(*src.HostPath.Type)
			}
			w.write(level2, "Type:\tHostPath (bare host directory volume)\n    Path:\t%v\n    HostPathType:\t%v\n", src.HostPath.Path, hostPathType)
		case src.EmptyDir != nil:
			sizeLimit := "<unset>"
			if src.EmptyDir.SizeLimit != nil && src.EmptyDir.SizeLimit.Sign() > 0 {
				sizeLimit = src.EmptyDir.SizeLimit.String()
			}
			w.write(level2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t%v\n    SizeLimit:\t%v\n", src.EmptyDir.Medium, sizeLimit)
		case src.Secret != nil:
			optional := src.Secret.Optional != nil && *src.Secret.Optional
			w.write(level2, "Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t%v\n    Optional:\t%v\n", src.Secret.SecretName, optional)
		case src.ConfigMap != nil:
			optional := src.ConfigMap.Optional != nil && *src.ConfigMap.Optional
			w.write(level2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t%v\n    Optional:\t%v\n", src.ConfigMap.Name, optional)
		case src.PersistentVolumeClaim != nil:
			w.write(level2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t%v\n    ReadOnly:\t%v\n", src.PersistentVolumeClaim.ClaimName, src.PersistentVolumeClaim.ReadOnly)
		case src.Projected != nil:
			describeProjected(src.Projected, w)
		case src.DownwardAPI != nil:
			w.write(level2, "Type:\tDownwardAPI (a volume populated by information about the pod)\n    Items:\n")
			for _, item := range src.DownwardAPI.Items {
				if item.FieldRef != nil {
					w.write(level3, "%v -> %v\n", item.FieldRef.FieldPath, item.Path)
				}
				if item.ResourceFieldRef != nil {
					w.write(level3, "%v -> %v\n", item.ResourceFieldRef.Resource, item.Path)
				}
			}
		case src.CSI != nil:
			fsType, readOnly := "", src.CSI.ReadOnly != nil && *src.CSI.ReadOnly
			if src.CSI.FSType != nil {
				fsType = *src.CSI.FSType
			}
			w.write(level2, "Type:\tCSI (a Container Storage Interface (CSI) volume source)\n    Driver:\t%v\n    FSType:\t%v\n    ReadOnly:\t%v\n", src.CSI.Driver, fsType, readOnly)
			describeVolumeAttributes(w, src.CSI.VolumeAttributes)
		default:
			w.write(level1, "<unknown>\n")
		}
	}
}

func describeProjected(p *corev1.ProjectedVolumeSource, w prefixWriter) {
	w.write(level2, "Type:\tProjected (a volume that contains injected data from multiple sources)\n")
	for _, src := range p.Sources {
		switch {
		case src.Secret != nil:
			optional := src.Secret.Optional != nil && *src.Secret.Optional
			w.write(level2, "SecretName:\t%v\n    Optional:\t%v\n", src.Secret.Name, optional)
		case src.DownwardAPI != nil:
			w.write(level2, "DownwardAPI:\ttrue\n")
		case src.ConfigMap != nil:
			optional := src.ConfigMap.Optional != nil && *src.ConfigMap.Optional
			w.write(level2, "ConfigMapName:\t%v\n    Optional:\t%v\n", src.ConfigMap.Name, optional)
		case src.ServiceAccountToken != nil:
			seconds := int64(0)
			if src.ServiceAccountToken.ExpirationSeconds != nil {
				seconds = *src.ServiceAccountToken.ExpirationSeconds
			}
			w.write(level2, "TokenExpirationSeconds:\t%d\n", seconds)
		}
	}
}

func describeVolumeAttributes(w prefixWriter, attrs map[string]string) {
	w.write(level2, "VolumeAttributes:\t")
	if len(attrs) == 0 {
		w.writeLine("<none>")
		return
	}
	for i, k := range sortedMapKeys(attrs) {
		if i != 0 {
			w.write(level2, "")
			w.write(level2, "\t")
		}
		line := k + "=" + attrs[k]
		if len(line) > maxAnnotationLen {
			line = line[:maxAnnotationLen] + "..."
		}
		w.write(level2, "%s\n", line)
	}
}

func describeTopologySpreadConstraints(tscs []corev1.TopologySpreadConstraint, w prefixWriter, space string) {
	if len(tscs) == 0 {
		return
	}
	sorted := append([]corev1.TopologySpreadConstraint(nil), tscs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].TopologyKey < sorted[j].TopologyKey })
	w.write(level0, "%sTopology Spread Constraints:\t", space)
	for i, c := range sorted {
		if i != 0 {
			w.write(level0, "%s\t", space)
		}
		w.write(level0, "%s:%v when max skew %d is exceeded", c.TopologyKey, c.WhenUnsatisfiable, c.MaxSkew)
		if c.LabelSelector != nil {
			w.write(level0, " for selector %s", metav1.FormatLabelSelector(c.LabelSelector))
		}
		w.write(level0, "\n")
	}
}
