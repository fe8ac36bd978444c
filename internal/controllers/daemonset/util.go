package daemonset

import (
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// Labels and annotations of daemon pods (pkg/controller/daemon/util,
// apps/v1): the revision hash, the deprecated template generation the API
// server keeps on the DaemonSet, and its copy on each pod.
const (
	RevisionHashLabel            = appsv1.ControllerRevisionHashLabelKey // "controller-revision-hash"
	TemplateGenerationLabel      = "pod-template-generation"
	TemplateGenerationAnnotation = admission.DaemonSetTemplateGenerationAnnotation
)

// daemonTolerations are what AddOrUpdateDaemonPodTolerations adds to every
// daemon pod, in its order; all Exists, none with tolerationSeconds, so the
// DefaultTolerationSeconds admission plugin adds nothing to daemon pods.
var daemonTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

// hostNetworkToleration is added only to hostNetwork daemon pods.
var hostNetworkToleration = corev1.Toleration{Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

// AddDaemonTolerations is AddOrUpdateDaemonPodTolerations: each automatic
// toleration replaces one with the same key, operator, value and effect, or
// is appended.
func AddDaemonTolerations(spec *corev1.PodSpec) {
	add := daemonTolerations
	if spec.HostNetwork {
		add = append(append([]corev1.Toleration(nil), daemonTolerations...), hostNetworkToleration)
	}
	for _, t := range add {
		addOrUpdateToleration(spec, t)
	}
}

func addOrUpdateToleration(spec *corev1.PodSpec, t corev1.Toleration) {
	for i := range spec.Tolerations {
		if spec.Tolerations[i].MatchToleration(&t) {
			if !apiequality.Semantic.DeepEqual(spec.Tolerations[i], t) {
				spec.Tolerations[i] = t
			}
			return
		}
	}
	spec.Tolerations = append(spec.Tolerations, t)
}

// PinToNode is ReplaceDaemonSetPodNodeNameNodeAffinity: the required node
// affinity becomes the single term `metadata.name In [node]` (the controller
// has already checked the template's own terms); preferred terms stay.
func PinToNode(affinity *corev1.Affinity, node string) *corev1.Affinity {
	term := corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
		Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}
	if affinity == nil {
		affinity = &corev1.Affinity{}
	}
	if affinity.NodeAffinity == nil {
		affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}}
	return affinity
}

// TargetNode is the node a daemon pod is meant for: its nodeName once bound,
// else the value of its `metadata.name In [x]` node-affinity field (GetTargetNodeName).
func TargetNode(pod *corev1.Pod) (string, bool) {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName, true
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return "", false
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == metav1.ObjectNameField && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0], true
			}
		}
	}
	return "", false
}

// newPod is the pod the DaemonSet would run on node, with the automatic
// tolerations, as NodeShouldRunDaemonPod builds it for its checks.
func newPod(ds *appsv1.DaemonSet, node string) *corev1.Pod {
	pod := &corev1.Pod{Spec: *ds.Spec.Template.Spec.DeepCopy(), ObjectMeta: *ds.Spec.Template.ObjectMeta.DeepCopy()}
	pod.Namespace = ds.Namespace
	pod.Spec.NodeName = node
	AddDaemonTolerations(&pod.Spec)
	return pod
}

// NodeShouldRunDaemonPod reports whether a daemon pod should be placed on
// node (shouldRun) and whether one already there may stay
// (shouldContinueRunning): the template's nodeName, its nodeSelector and
// required node affinity must match; an untolerated NoSchedule or NoExecute
// taint stops new pods, and only an untolerated NoExecute one evicts.
func NodeShouldRunDaemonPod(node *corev1.Node, ds *appsv1.DaemonSet) (shouldRun, shouldContinueRunning bool) {
	if n := ds.Spec.Template.Spec.NodeName; n != "" && n != node.Name {
		return false, false
	}
	pod := newPod(ds, node.Name)
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok {
		return false, false
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, helper.DoNotScheduleTaints, false)
	if !untolerated {
		return true, true
	}
	_, untoleratedNoExecute := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations,
		func(t *corev1.Taint) bool { return t.Effect == corev1.TaintEffectNoExecute }, false)
	return false, !untoleratedNoExecute
}

// Hash is the DaemonSet's revision hash: controller.ComputeHash of the pod
// template and the collision count, as the ControllerRevision's name suffix
// and the pods' controller-revision-hash label. berth keeps no
// ControllerRevision objects; the hash alone identifies a revision.
func Hash(ds *appsv1.DaemonSet) string {
	return controllerutil.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
}

// templateGeneration is the DaemonSet's deprecated template generation, kept
// by the API server in an annotation.
func templateGeneration(ds *appsv1.DaemonSet) (int64, bool) {
	v, ok := ds.Annotations[TemplateGenerationAnnotation]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// isPodUpdated is util.IsPodUpdated: the pod carries the current template
// generation or the current revision hash.
func isPodUpdated(ds *appsv1.DaemonSet, pod *corev1.Pod, hash string) bool {
	if gen, ok := templateGeneration(ds); ok && pod.Labels[TemplateGenerationLabel] == strconv.FormatInt(gen, 10) {
		return true
	}
	return pod.Labels[RevisionHashLabel] == hash
}

// sortByCreationAndPhase orders pods oldest first, as podByCreationTimestampAndPhase:
// on equal times a Running pod before others, then by name.
func sortByCreationAndPhase(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		if (a.Status.Phase == corev1.PodRunning) != (b.Status.Phase == corev1.PodRunning) {
			return a.Status.Phase == corev1.PodRunning
		}
		return a.Name < b.Name
	})
}

// surgeAndUnavailable resolves maxSurge and maxUnavailable against the
// desired number of scheduled pods, both rounding up; when both are zero,
// maxUnavailable is one (updatedDesiredNodeCounts).
func surgeAndUnavailable(ds *appsv1.DaemonSet, desired int) (maxSurge, maxUnavailable int) {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ru != nil {
		maxSurge = scaled(ru.MaxSurge, desired, 0)
		maxUnavailable = scaled(ru.MaxUnavailable, desired, 1)
	} else {
		maxUnavailable = 1
	}
	if desired > 0 && maxSurge == 0 && maxUnavailable == 0 {
		maxUnavailable = 1
	}
	return maxSurge, maxUnavailable
}

func scaled(v *intstr.IntOrString, total, def int) int {
	if v == nil {
		return def
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, true)
	if err != nil {
		return def
	}
	return n
}

// isAvailable is IsPodAvailable with the DaemonSet's minReadySeconds.
var isAvailable = controllerutil.IsPodAvailable
