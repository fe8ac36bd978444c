package lifecycle

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/capacity/nodegroups"
	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// register is the kubelet joining and Karpenter's registration controller
// linking the Node to the NodeClaim in one step
// (docs/karpenter-lifecycle.md#registration): the Node is created as the
// kubelet and the AWS cloud provider make it, then synced as
// registration.syncNode does: finalizer, owner reference, NodeClaim taints
// and startup taints merged in (unless karpenter.sh/do-not-sync-taints),
// the claim's annotations and labels, karpenter.sh/registered=true. The
// karpenter.sh/unregistered:NoExecute taint the AMI bootstrap adds is gone
// again in the same step, so it never shows.
func register(s *cluster.State, nc *karpv1.NodeClaim) error {
	zone := nc.Labels[corev1.LabelTopologyZone]
	region := pools.Region(s)
	instanceID := nc.Status.ProviderID[strings.LastIndex(nc.Status.ProviderID, "/")+1:]
	var ip, name string
	if subnet, err := aws.PrivateSubnet(s.Info, zone); err == nil {
		if ip, err = aws.AllocateIP(s, subnet); err != nil {
			return err
		}
		name = aws.NodeName(region, ip)
	} else {
		// No cluster VPC in the state: the instance's resource name.
		name = instanceID + "." + region + ".compute.internal"
	}
	if _, taken := s.Nodes[name]; taken {
		return fmt.Errorf("node %s already exists", name)
	}
	node := buildNode(s, nc, name, ip)
	node.ResourceVersion = s.Bump()
	s.NoteCreated(node.UID)
	s.Nodes[name] = node
	s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, name)
	s.NodeAdded(node)

	nc.Status.NodeName = name
	setTrue(s, nc, ConditionRegistered)
	write(s, nc)
	return nil
}

// buildNode is the registered Node of nc.
func buildNode(s *cluster.State, nc *karpv1.NodeClaim, name, ip string) *corev1.Node {
	labels := map[string]string{}
	l := nc.Labels
	// What the kubelet and the cloud provider set.
	for k, v := range map[string]string{
		corev1.LabelHostname:              name,
		nodegroups.LabelBetaArch:          l[corev1.LabelArchStable],
		nodegroups.LabelBetaOS:            l[corev1.LabelOSStable],
		nodegroups.LabelBetaInstanceType:  l[corev1.LabelInstanceTypeStable],
		nodegroups.LabelFailureRegion:     l[corev1.LabelTopologyRegion],
		nodegroups.LabelFailureZone:       l[corev1.LabelTopologyZone],
		corev1.LabelArchStable:            l[corev1.LabelArchStable],
		corev1.LabelOSStable:              l[corev1.LabelOSStable],
		corev1.LabelInstanceTypeStable:    l[corev1.LabelInstanceTypeStable],
		corev1.LabelTopologyRegion:        l[corev1.LabelTopologyRegion],
		corev1.LabelTopologyZone:          l[corev1.LabelTopologyZone],
		scheduling.LabelTopologyZoneID:    l[scheduling.LabelTopologyZoneID],
		scheduling.NodeRegisteredLabelKey: "true",
	} {
		if v != "" {
			labels[k] = v
		}
	}
	for k, v := range nc.Labels {
		labels[k] = v
	}
	labels[scheduling.NodeRegisteredLabelKey] = "true"

	annotations := map[string]string{
		nodegroups.AnnotationTTL:              "0",
		nodegroups.AnnotationControllerAttach: "true",
	}
	if ip != "" {
		annotations[nodegroups.AnnotationProvidedNodeIP] = ip
	}
	for k, v := range nc.Annotations {
		annotations[k] = v
	}

	var taints []corev1.Taint
	if nc.Labels[scheduling.NodeDoNotSyncTaintsLabelKey] != "true" {
		taints = mergeTaints(taints, nc.Spec.Taints)
		taints = mergeTaints(taints, nc.Spec.StartupTaints)
	}

	arch := l[corev1.LabelArchStable]
	family := amiFamilyOf(s, nc)
	info := aws.BootedSystemInfo(s, family, arch)
	now := metav1.NewTime(s.Now)
	var addresses []corev1.NodeAddress
	if ip != "" {
		addresses = append(addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	addresses = append(addresses,
		corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: name},
		corev1.NodeAddress{Type: corev1.NodeHostName, Address: name})
	yes := true
	return &corev1.Node{
		TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			UID:               types.UID(s.NewUID()),
			CreationTimestamp: now,
			Labels:            labels,
			Annotations:       annotations,
			Finalizers:        []string{TerminationFinalizer},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: karpv1.SchemeGroupVersion.String(), Kind: "NodeClaim", Name: nc.Name, UID: nc.UID,
				BlockOwnerDeletion: &yes,
			}},
		},
		Spec: corev1.NodeSpec{ProviderID: nc.Status.ProviderID, Taints: taints},
		Status: corev1.NodeStatus{
			// The kubelet runs with Karpenter's max-pods, kube-reserved and
			// eviction thresholds, so it reports the claim's figures.
			Capacity:        nc.Status.Capacity.DeepCopy(),
			Allocatable:     nc.Status.Allocatable.DeepCopy(),
			Conditions:      nodegroups.ReadyConditions(now),
			Addresses:       addresses,
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: nodegroups.KubeletPort}},
			NodeInfo:        info,
		},
	}
}

// amiFamilyOf is the internal/aws family of the claim's pool.
func amiFamilyOf(s *cluster.State, nc *karpv1.NodeClaim) string {
	if p := pools.Of(pools.List(s), nc.Labels); p != nil {
		return awsAMIFamily(p.NodeClass.AMIFamily)
	}
	return aws.DefaultAMIFamily
}

// mergeTaints is upstream scheduling.Taints.Merge: add each taint not
// already present (same key and effect).
func mergeTaints(into, add []corev1.Taint) []corev1.Taint {
	for _, t := range add {
		if !slices.ContainsFunc(into, func(x corev1.Taint) bool { return x.MatchTaint(&t) }) {
			into = append(into, *t.DeepCopy())
		}
	}
	return into
}

// initialize is the initialization controller plus the start-up agent: the
// startup taints come off StartupTaintRemovalDelay after registration;
// Initialized turns True once the node is Ready, no startup taint is left
// and every requested resource is allocatable, and the node is labelled
// karpenter.sh/initialized=true.
func initialize(s *cluster.State, nc *karpv1.NodeClaim, node *corev1.Node) bool {
	changed := false
	if len(nc.Spec.StartupTaints) != 0 {
		due := FindCondition(nc, ConditionRegistered).LastTransitionTime.Add(StartupTaintRemovalDelay)
		if s.Now.Before(due) {
			wake(s, due, nc.Name)
		} else {
			kept := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool {
				return slices.ContainsFunc(nc.Spec.StartupTaints, func(st corev1.Taint) bool { return st.MatchTaint(&t) })
			})
			if len(kept) != len(node.Spec.Taints) {
				old := node.DeepCopy()
				node.Spec.Taints = kept
				writeNode(s, old, node)
				changed = true
			}
		}
	}
	reason, message := initializedBlocker(nc, node)
	if reason != "" {
		if SetCondition(s, nc, ConditionInitialized, metav1.ConditionUnknown, reason, message) {
			write(s, nc)
			changed = true
		}
		return changed
	}
	if node.Labels[scheduling.NodeInitializedLabelKey] != "true" {
		old := node.DeepCopy()
		node.Labels[scheduling.NodeInitializedLabelKey] = "true"
		writeNode(s, old, node)
	}
	setTrue(s, nc, ConditionInitialized)
	write(s, nc)
	return true
}

// initializedBlocker says why the node is not initialized yet, with
// upstream's reasons and messages; "" when it is.
func initializedBlocker(nc *karpv1.NodeClaim, node *corev1.Node) (reason, message string) {
	ready := false
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		return "NodeNotReady", "Node status is NotReady"
	}
	for _, st := range nc.Spec.StartupTaints {
		for _, t := range node.Spec.Taints {
			if st.MatchTaint(&t) {
				return "StartupTaintsExist", fmt.Sprintf("StartupTaint %q still exists", formatTaint(t))
			}
		}
	}
	for _, name := range sortedNames(nc.Spec.Resources.Requests) {
		if q := nc.Spec.Resources.Requests[name]; q.IsZero() {
			continue
		}
		if q, ok := node.Status.Allocatable[name]; !ok || q.IsZero() {
			return "ResourceNotRegistered", fmt.Sprintf("Resource %q was requested but not registered", name)
		}
	}
	return "", ""
}

func formatTaint(t corev1.Taint) string {
	if t.Value == "" {
		return fmt.Sprintf("%s:%s", t.Key, t.Effect)
	}
	return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for name := range l {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
