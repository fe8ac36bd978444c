package view

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// describePodTemplate is kubectl's DescribePodTemplate (nested under a workload).
func describePodTemplate(t *corev1.PodTemplateSpec, w prefixWriter) {
	w.write(level0, "Pod Template:\n")
	if t == nil {
		w.write(level1, "<unset>")
		return
	}
	printLabelsMultiline(w, "  Labels", t.Labels)
	if len(t.Annotations) > 0 {
		printAnnotationsMultiline(w, "  Annotations", t.Annotations)
	}
	if t.Spec.ServiceAccountName != "" {
		w.write(level1, "Service Account:\t%s\n", t.Spec.ServiceAccountName)
	}
	if len(t.Spec.InitContainers) > 0 {
		describeContainers("Init Containers", t.Spec.InitContainers, nil, nil, w, "  ")
	}
	describeContainers("Containers", t.Spec.Containers, nil, nil, w, "  ")
	describeVolumes(t.Spec.Volumes, w, "  ")
	describeTopologySpreadConstraints(t.Spec.TopologySpreadConstraints, w, "  ")
	if t.Spec.PriorityClassName != "" {
		w.write(level1, "Priority Class Name:\t%s\n", t.Spec.PriorityClassName)
	}
	printLabelsMultiline(w, "  Node-Selectors", t.Spec.NodeSelector)
	printTolerationsMultiline(w, "  Tolerations", t.Spec.Tolerations)
}

func describeDeploymentObj(s *cluster.State, obj runtime.Object) string {
	d := obj.(*appsv1.Deployment)
	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return fmt.Sprintf("error: %v\n", err)
	}
	oldRSs, newRS := deploymentReplicaSets(s, d)
	events := eventQuery{kind: "Deployment", namespace: d.Namespace, name: d.Name, uids: uidsOf(d)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", d.Name)
		w.write(level0, "Namespace:\t%s\n", d.Namespace)
		w.write(level0, "CreationTimestamp:\t%s\n", d.CreationTimestamp.Time.Format(describeTimeFormat))
		printLabelsMultiline(w, "Labels", d.Labels)
		printAnnotationsMultiline(w, "Annotations", d.Annotations)
		w.write(level0, "Selector:\t%s\n", selector)
		w.write(level0, "Replicas:\t%d desired | %d updated | %d total | %d available | %d unavailable\n",
			replicas(d.Spec.Replicas), d.Status.UpdatedReplicas, d.Status.Replicas, d.Status.AvailableReplicas, d.Status.UnavailableReplicas)
		w.write(level0, "StrategyType:\t%s\n", d.Spec.Strategy.Type)
		w.write(level0, "MinReadySeconds:\t%d\n", d.Spec.MinReadySeconds)
		if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
			w.write(level0, "RollingUpdateStrategy:\t%s max unavailable, %s max surge\n", intOrStringText(ru.MaxUnavailable), intOrStringText(ru.MaxSurge))
		}
		describePodTemplate(&d.Spec.Template, w)
		if len(d.Status.Conditions) > 0 {
			w.write(level0, "Conditions:\n  Type\tStatus\tReason\n")
			w.write(level1, "----\t------\t------\n")
			for _, c := range d.Status.Conditions {
				w.write(level1, "%v \t%v\t%v\n", c.Type, c.Status, c.Reason)
			}
		}
		var newRSs []*appsv1.ReplicaSet
		if newRS != nil {
			newRSs = append(newRSs, newRS)
		}
		if len(oldRSs) > 0 || len(newRSs) > 0 {
			w.write(level0, "OldReplicaSets:\t%s\n", replicaSetsText(oldRSs))
			w.write(level0, "NewReplicaSet:\t%s\n", replicaSetsText(newRSs))
		}
		describeEvents(s, events, w)
	})
}

// intOrStringText is IntOrString.String() with nil printed as "<nil>".
func intOrStringText(v *intstr.IntOrString) string {
	if v == nil {
		return "<nil>"
	}
	return v.String()
}

func replicaSetsText(rss []*appsv1.ReplicaSet) string {
	var parts []string
	for _, rs := range rss {
		parts = append(parts, fmt.Sprintf("%s (%d/%d replicas created)", rs.Name, rs.Status.Replicas, replicas(rs.Spec.Replicas)))
	}
	if len(parts) == 0 {
		return "<none>"
	}
	return strings.Join(parts, ", ")
}

// deploymentReplicaSets finds the ReplicaSets a Deployment controls: the
// oldest one whose template equals the Deployment's (ignoring
// pod-template-hash) is new, every other one is old.
func deploymentReplicaSets(s *cluster.State, d *appsv1.Deployment) (old []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) {
	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, nil
	}
	var owned []*appsv1.ReplicaSet
	for _, k := range cluster.SortedKeys(s.ReplicaSets) {
		rs := s.ReplicaSets[k]
		if rs.Namespace != d.Namespace || !selector.Matches(labels.Set(rs.Labels)) {
			continue
		}
		if ref := metav1.GetControllerOf(rs); ref == nil || ref.UID != d.UID {
			continue
		}
		owned = append(owned, rs)
	}
	byAge := append([]*appsv1.ReplicaSet(nil), owned...)
	sort.SliceStable(byAge, func(i, j int) bool {
		if byAge[i].CreationTimestamp.Equal(&byAge[j].CreationTimestamp) {
			return byAge[i].Name < byAge[j].Name
		}
		return byAge[i].CreationTimestamp.Before(&byAge[j].CreationTimestamp)
	})
	for _, rs := range byAge {
		if controllerutil.EqualIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			newRS = rs
			break
		}
	}
	for _, rs := range owned {
		if newRS == nil || rs.UID != newRS.UID || rs.Name != newRS.Name {
			old = append(old, rs)
		}
	}
	return old, newRS
}

func describeReplicaSetObj(s *cluster.State, obj runtime.Object) string {
	rs := obj.(*appsv1.ReplicaSet)
	running, waiting, succeeded, failed := podPhaseCounts(s, rs.Namespace, rs.Spec.Selector, rs.UID)
	events := eventQuery{kind: "ReplicaSet", namespace: rs.Namespace, name: rs.Name, uids: uidsOf(rs)}.find(s)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", rs.Name)
		w.write(level0, "Namespace:\t%s\n", rs.Namespace)
		w.write(level0, "Selector:\t%s\n", metav1.FormatLabelSelector(rs.Spec.Selector))
		printLabelsMultiline(w, "Labels", rs.Labels)
		printAnnotationsMultiline(w, "Annotations", rs.Annotations)
		if c := printController(rs); c != "" {
			w.write(level0, "Controlled By:\t%s\n", c)
		}
		w.write(level0, "Replicas:\t%d current / %d desired\n", rs.Status.Replicas, replicas(rs.Spec.Replicas))
		w.write(level0, "Pods Status:\t")
		w.write(level0, "%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
		describePodTemplate(&rs.Spec.Template, w)
		if len(rs.Status.Conditions) > 0 {
			w.write(level0, "Conditions:\n  Type\tStatus\tReason\n")
			w.write(level1, "----\t------\t------\n")
			for _, c := range rs.Status.Conditions {
				w.write(level1, "%v \t%v\t%v\n", c.Type, c.Status, c.Reason)
			}
		}
		describeEvents(s, events, w)
	})
}

// podPhaseCounts counts the pods a controller owns by phase.
func podPhaseCounts(s *cluster.State, namespace string, sel *metav1.LabelSelector, uid types.UID) (running, waiting, succeeded, failed int) {
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return
	}
	for _, k := range cluster.SortedKeys(s.Pods) {
		pod := s.Pods[k]
		if pod.Namespace != namespace || !selector.Matches(labels.Set(pod.Labels)) {
			continue
		}
		if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != uid {
			continue
		}
		switch pod.Status.Phase {
		case corev1.PodRunning:
			running++
		case corev1.PodPending:
			waiting++
		case corev1.PodSucceeded:
			succeeded++
		case corev1.PodFailed:
			failed++
		}
	}
	return
}

func describeNamespace(n *corev1.Namespace) string {
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", n.Name)
		printLabelsMultiline(w, "Labels", n.Labels)
		printAnnotationsMultiline(w, "Annotations", n.Annotations)
		w.write(level0, "Status:\t%s\n", string(n.Status.Phase))
		if len(n.Status.Conditions) > 0 {
			w.write(level0, "Conditions:\n")
			w.write(level1, "Type\tStatus\tLastTransitionTime\tReason\tMessage\n")
			w.write(level1, "----\t------\t------------------\t------\t-------\n")
			for _, c := range n.Status.Conditions {
				w.write(level1, "%v\t%v\t%s\t%v\t%v\n", c.Type, c.Status, c.LastTransitionTime.Time.Format(describeTimeFormat), c.Reason, c.Message)
			}
		}
		// berth keeps no ResourceQuota or LimitRange objects.
		w.write(level0, "\n")
		w.write(level0, "No resource quota.\n")
		w.write(level0, "\n")
		w.write(level0, "No LimitRange resource.\n")
	})
}

func describeService(s *cluster.State, svc *corev1.Service) string {
	events := eventQuery{kind: "Service", namespace: svc.Namespace, name: svc.Name, uids: uidsOf(svc)}.find(s)
	slices := serviceSlices(s, svc)
	return tabbedString(func(w prefixWriter) {
		w.write(level0, "Name:\t%s\n", svc.Name)
		w.write(level0, "Namespace:\t%s\n", svc.Namespace)
		printLabelsMultiline(w, "Labels", svc.Labels)
		printAnnotationsMultiline(w, "Annotations", svc.Annotations)
		w.write(level0, "Selector:\t%s\n", labels.FormatLabels(svc.Spec.Selector))
		w.write(level0, "Type:\t%s\n", svc.Spec.Type)
		if svc.Spec.IPFamilyPolicy != nil {
			w.write(level0, "IP Family Policy:\t%s\n", *svc.Spec.IPFamilyPolicy)
		}
		if len(svc.Spec.IPFamilies) > 0 {
			var fams []string
			for _, f := range svc.Spec.IPFamilies {
				fams = append(fams, string(f))
			}
			w.write(level0, "IP Families:\t%s\n", strings.Join(fams, ","))
		} else {
			w.write(level0, "IP Families:\t%s\n", "<none>")
		}
		w.write(level0, "IP:\t%s\n", svc.Spec.ClusterIP)
		if len(svc.Spec.ClusterIPs) > 0 {
			w.write(level0, "IPs:\t%s\n", strings.Join(svc.Spec.ClusterIPs, ","))
		} else {
			w.write(level0, "IPs:\t%s\n", "<none>")
		}
		if len(svc.Spec.ExternalIPs) > 0 {
			w.write(level0, "External IPs:\t%v\n", strings.Join(svc.Spec.ExternalIPs, ","))
		}
		if svc.Spec.LoadBalancerIP != "" {
			w.write(level0, "Desired LoadBalancer IP:\t%s\n", svc.Spec.LoadBalancerIP)
		}
		if svc.Spec.ExternalName != "" {
			w.write(level0, "External Name:\t%s\n", svc.Spec.ExternalName)
		}
		if len(svc.Status.LoadBalancer.Ingress) > 0 {
			w.write(level0, "LoadBalancer Ingress:\t%s\n", loadBalancerIngress(svc.Status.LoadBalancer.Ingress))
		}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			name := sp.Name
			if name == "" {
				name = "<unset>"
			}
			w.write(level0, "Port:\t%s\t%d/%s\n", name, sp.Port, sp.Protocol)
			if sp.TargetPort.Type == intstr.Int {
				w.write(level0, "TargetPort:\t%d/%s\n", sp.TargetPort.IntVal, sp.Protocol)
			} else {
				w.write(level0, "TargetPort:\t%s/%s\n", sp.TargetPort.StrVal, sp.Protocol)
			}
			if sp.AppProtocol != nil {
				w.write(level0, "AppProtocol:\t%s\n", *sp.AppProtocol)
			}
			if sp.NodePort != 0 {
				w.write(level0, "NodePort:\t%s\t%d/%s\n", name, sp.NodePort, sp.Protocol)
			}
			w.write(level0, "Endpoints:\t%s\n", formatServiceEndpoints(slices, sp.Name))
		}
		w.write(level0, "Session Affinity:\t%s\n", svc.Spec.SessionAffinity)
		if svc.Spec.ExternalTrafficPolicy != "" {
			w.write(level0, "External Traffic Policy:\t%s\n", svc.Spec.ExternalTrafficPolicy)
		}
		if svc.Spec.InternalTrafficPolicy != nil {
			w.write(level0, "Internal Traffic Policy:\t%s\n", *svc.Spec.InternalTrafficPolicy)
		}
		if svc.Spec.HealthCheckNodePort != 0 {
			w.write(level0, "HealthCheck NodePort:\t%d\n", svc.Spec.HealthCheckNodePort)
		}
		if len(svc.Spec.LoadBalancerSourceRanges) > 0 {
			w.write(level0, "LoadBalancer Source Ranges:\t%v\n", strings.Join(svc.Spec.LoadBalancerSourceRanges, ","))
		}
		if svc.Spec.TrafficDistribution != nil {
			w.write(level0, "Traffic Distribution:\t%s\n", *svc.Spec.TrafficDistribution)
		}
		describeEvents(s, events, w)
	})
}

// loadBalancerIngress lists the load balancer's addresses (an IP with its
// mode, else the hostname), comma-separated.
func loadBalancerIngress(ingress []corev1.LoadBalancerIngress) string {
	parts := make([]string, len(ingress))
	for i, in := range ingress {
		switch {
		case in.IP != "" && in.IPMode != nil:
			parts[i] = fmt.Sprintf("%s (%s)", in.IP, *in.IPMode)
		case in.IP != "":
			parts[i] = in.IP
		default:
			parts[i] = in.Hostname
		}
	}
	return strings.Join(parts, ", ")
}
