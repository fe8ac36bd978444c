package admission

import (
	"fmt"
	"slices"

	"github.com/berth-sim/berth/internal/cluster"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Built-in priority classes the API server creates at start-up
// (pkg/apis/scheduling: SystemClusterCritical, SystemNodeCritical).
const (
	SystemClusterCritical      = "system-cluster-critical"
	SystemNodeCritical         = "system-node-critical"
	SystemCriticalPriority     = int32(2000000000)
	SystemNodeCriticalPriority = SystemCriticalPriority + 1000
)

// DefaultTolerationSeconds is the default of kube-apiserver's
// --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds.
const DefaultTolerationSeconds int64 = 300

// PodMutator is an extra mutating step run after the built-in plugins, in
// the place of mutating admission webhooks (the EKS Fargate webhook).
type PodMutator func(s *cluster.State, pod *corev1.Pod) error

// PodMutators run in order on every pod create, after the built-in plugins.
// The CLI wiring appends to it; it is empty by default.
var PodMutators []PodMutator

// forbidden is the API server's admission rejection: `pods "x" is forbidden: ...`.
// Name generation has not happened yet at admission time, so a pod with only
// generateName is named by its generateName prefix, as upstream does.
func forbidden(resource string, m metav1.Object, err error) error {
	name := m.GetName()
	if name == "" {
		name = m.GetGenerateName()
	}
	if name == "" {
		name = "Unknown"
	}
	return fmt.Errorf("%s %q is forbidden: %v", resource, name, err)
}

// admitPod runs the pod admission plugins in kube-apiserver's order.
func admitPod(s *cluster.State, pod *corev1.Pod) error {
	if err := admitServiceAccount(s, pod); err != nil {
		return err
	}
	if err := admitPriority(s, pod); err != nil {
		return err
	}
	AddDefaultTolerations(pod)
	ApplyMatchLabelKeys(pod)
	for _, m := range PodMutators {
		if err := m(s, pod); err != nil {
			return err
		}
	}
	return nil
}

// serviceAccountTokenPath is where the ServiceAccount plugin mounts the token volume.
const serviceAccountTokenPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// admitServiceAccount is the ServiceAccount plugin: default the account, refuse
// a pod whose account does not exist, and mount the projected token volume.
func admitServiceAccount(s *cluster.State, pod *corev1.Pod) error {
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = "default"
	}
	sa, ok := s.ServiceAccounts[cluster.Key(pod.Namespace, pod.Spec.ServiceAccountName)]
	if !ok {
		return forbidden("pods", pod, fmt.Errorf("error looking up service account %s/%s: serviceaccount %q not found",
			pod.Namespace, pod.Spec.ServiceAccountName, pod.Spec.ServiceAccountName))
	}
	if pod.Spec.AutomountServiceAccountToken != nil && !*pod.Spec.AutomountServiceAccountToken {
		return nil
	}
	if pod.Spec.AutomountServiceAccountToken == nil && sa.AutomountServiceAccountToken != nil && !*sa.AutomountServiceAccountToken {
		return nil
	}
	for _, c := range pod.Spec.Containers {
		for _, m := range c.VolumeMounts {
			if m.MountPath == serviceAccountTokenPath {
				return nil
			}
		}
	}
	name := s.GenerateName("kube-api-access-")
	pod.Spec.Volumes = append(pod.Spec.Volumes, tokenVolume(name))
	mount := corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: serviceAccountTokenPath}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			list[i].VolumeMounts = append(list[i].VolumeMounts, mount)
		}
	}
	return nil
}

// tokenVolume is the service-account token volume. Its projection is the
// same for every pod, and every pod points at one shared copy: built per
// pod it was ten small objects, 850,000 of the 5.5 million live objects of
// a 100,000-pod cluster, each marked again by every collection
// (docs/simulation-speed.md#memory-at-100000-pods). Nothing edits a pod's
// volume sources in place (defaultVolume only fills a missing DefaultMode,
// which the shared copy has); a copy of the pod (DeepCopy, a load) gets
// its own.
func tokenVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: sharedTokenProjection}}
}

var sharedTokenProjection = newTokenProjection()

func newTokenProjection() *corev1.ProjectedVolumeSource {
	return &corev1.ProjectedVolumeSource{
		DefaultMode: ptrTo(defaultVolumeMode),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptrTo(int64(3607)), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path:     "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
	}
}

// builtinPriorityClasses always exist, whether or not Bootstrap stored them.
var builtinPriorityClasses = map[string]int32{
	SystemClusterCritical: SystemCriticalPriority,
	SystemNodeCritical:    SystemNodeCriticalPriority,
}

// LookupPriorityClass finds a class by name, falling back to the built-ins.
func LookupPriorityClass(s *cluster.State, name string) (*schedulingv1.PriorityClass, bool) {
	if pc, ok := s.PriorityClasses[name]; ok {
		return pc, true
	}
	if v, ok := builtinPriorityClasses[name]; ok {
		return builtinPriorityClass(name, v), true
	}
	return nil, false
}

func builtinPriorityClass(name string, value int32) *schedulingv1.PriorityClass {
	policy := corev1.PreemptLowerPriority
	return &schedulingv1.PriorityClass{
		TypeMeta:         metav1.TypeMeta{Kind: "PriorityClass", APIVersion: "scheduling.k8s.io/v1"},
		ObjectMeta:       metav1.ObjectMeta{Name: name},
		Value:            value,
		Description:      "Used for system critical pods that must not be moved from their current node.",
		PreemptionPolicy: &policy,
	}
}

// globalDefaultClass returns the globalDefault class with the lowest value,
// as the Priority plugin's getDefaultPriorityClass does.
func globalDefaultClass(s *cluster.State) *schedulingv1.PriorityClass {
	// The lowest value wins, ties to the first name in key order. The
	// map is walked in any order: sorting the keys for every pod created
	// cost an allocation per pod (docs/simulation-speed.md#pod-creation-session-24).
	var best *schedulingv1.PriorityClass
	var bestKey string
	for k, pc := range s.PriorityClasses {
		if pc.GlobalDefault && (best == nil || pc.Value < best.Value || pc.Value == best.Value && k < bestKey) {
			best, bestKey = pc, k
		}
	}
	return best
}

// admitPriority is the Priority plugin: resolve priorityClassName into
// spec.priority and spec.preemptionPolicy.
func admitPriority(s *cluster.State, pod *corev1.Pod) error {
	var (
		value  int32
		policy = corev1.PreemptLowerPriority
	)
	if pod.Spec.PriorityClassName == "" {
		if pc := globalDefaultClass(s); pc != nil {
			pod.Spec.PriorityClassName = pc.Name
			value = pc.Value
			if pc.PreemptionPolicy != nil {
				policy = *pc.PreemptionPolicy
			}
		}
	} else {
		pc, ok := LookupPriorityClass(s, pod.Spec.PriorityClassName)
		if !ok {
			return forbidden("pods", pod, fmt.Errorf("no PriorityClass with name %v was found", pod.Spec.PriorityClassName))
		}
		value = pc.Value
		if pc.PreemptionPolicy != nil {
			policy = *pc.PreemptionPolicy
		}
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != value {
		return forbidden("pods", pod, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name",
			*pod.Spec.Priority, value))
	}
	if value == 0 {
		pod.Spec.Priority = sharedZeroPriority
	} else {
		pod.Spec.Priority = ptrTo(value)
	}
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != policy {
		return forbidden("pods", pod, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name",
			*pod.Spec.PreemptionPolicy, policy))
	}
	switch policy {
	case corev1.PreemptLowerPriority:
		pod.Spec.PreemptionPolicy = sharedPreemptLower
	case corev1.PreemptNever:
		pod.Spec.PreemptionPolicy = sharedPreemptNever
	default:
		pod.Spec.PreemptionPolicy = ptrTo(policy)
	}
	return nil
}

// AddDefaultTolerations is the DefaultTolerationSeconds plugin: a pod that
// does not already tolerate not-ready (or unreachable) NoExecute taints, by a
// toleration with that key or an empty key and effect NoExecute or empty,
// gets an Exists toleration for it with tolerationSeconds 300.
func AddDefaultTolerations(pod *corev1.Pod) {
	toleratesNotReady, toleratesUnreachable := false, false
	for _, t := range pod.Spec.Tolerations {
		effectMatches := t.Effect == corev1.TaintEffectNoExecute || t.Effect == ""
		if (t.Key == corev1.TaintNodeNotReady || t.Key == "") && effectMatches {
			toleratesNotReady = true
		}
		if (t.Key == corev1.TaintNodeUnreachable || t.Key == "") && effectMatches {
			toleratesUnreachable = true
		}
	}
	// Room for both at once: one allocation per pod instead of two.
	add := 0
	for _, missing := range []bool{!toleratesNotReady, !toleratesUnreachable} {
		if missing {
			add++
		}
	}
	pod.Spec.Tolerations = slices.Grow(pod.Spec.Tolerations, add)
	if !toleratesNotReady {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, defaultToleration(corev1.TaintNodeNotReady))
	}
	if !toleratesUnreachable {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, defaultToleration(corev1.TaintNodeUnreachable))
	}
}

// defaultToleration is the plugin's toleration for key. Every pod points
// at one shared tolerationSeconds: nothing writes through a toleration's
// seconds (an update replaces the pointer), and a copy of the pod gets
// its own (docs/simulation-speed.md#pod-creation-session-24).
func defaultToleration(key string) corev1.Toleration {
	return corev1.Toleration{
		Key:               key,
		Operator:          corev1.TolerationOpExists,
		Effect:            corev1.TaintEffectNoExecute,
		TolerationSeconds: sharedDefaultTolerationSeconds,
	}
}

var sharedDefaultTolerationSeconds = ptrTo(DefaultTolerationSeconds)

// admitPriorityClass is the Priority plugin's check on PriorityClass writes:
// only one class may be the global default. An update may keep its own flag.
func admitPriorityClass(s *cluster.State, pc *schedulingv1.PriorityClass, update bool) error {
	if !pc.GlobalDefault {
		return nil
	}
	dpc := globalDefaultClass(s)
	if dpc == nil || (update && dpc.Name == pc.Name) {
		return nil
	}
	return forbidden(resourceName(pc), pc, fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", dpc.Name))
}
