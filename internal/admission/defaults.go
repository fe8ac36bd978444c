// Package admission is what the API server does to an object between the
// client's request and storage: defaulting (a faithful subset of the
// SetDefaults_* functions of pkg/apis/*/v1), the pod admission plugins in
// API-server order, and the server-owned metadata (uid, generateName,
// resourceVersion, generation, creationTimestamp).
package admission

import (
	"maps"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Defaults from pkg/apis/core/v1/defaults.go and pkg/apis/apps/v1/defaults.go.
const (
	defaultTerminationGracePeriodSeconds int64 = 30
	defaultTerminationMessagePath              = "/dev/termination-log"
	defaultRevisionHistoryLimit          int32 = 10
	defaultProgressDeadlineSeconds       int32 = 600
	defaultVolumeMode                    int32 = 0o644 // 420, configMap/secret/projected defaultMode
)

var defaultMaxSurgeUnavailable = intstr.FromString("25%")

func ptrTo[T any](v T) *T { return &v }

// Defaults every created pod points at rather than a copy of its own
// (docs/simulation-speed.md#pod-creation-session-24): nothing in berth
// writes through these pointers (a write replaces the pointer), and a
// copy of the pod (DeepCopy, a load from disk) gets its own values.
var (
	sharedEnableServiceLinks = ptrTo(corev1.DefaultEnableServiceLinks)
	sharedZeroPriority       = ptrTo(int32(0))
	sharedPreemptLower       = ptrTo(corev1.PreemptLowerPriority)
	sharedPreemptNever       = ptrTo(corev1.PreemptNever)
)

// DefaultPod applies SetDefaults_Pod and SetDefaults_PodSpec and the
// per-field defaults of everything a pod contains.
func DefaultPod(pod *corev1.Pod) {
	// SetDefaults_Pod: a container with limits but no request for a resource
	// requests its limit (only for pods, not for templates).
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			c := &list[i]
			if c.Resources.Limits == nil {
				continue
			}
			// The requests may be a list the pod shares with its
			// template and siblings (docs/simulation-speed.md#pod-creation-session-24):
			// copy it before the first addition.
			owned := false
			if c.Resources.Requests == nil {
				c.Resources.Requests = corev1.ResourceList{}
				owned = true
			}
			for name, q := range c.Resources.Limits {
				if _, ok := c.Resources.Requests[name]; !ok {
					if !owned {
						c.Resources.Requests = maps.Clone(c.Resources.Requests)
						owned = true
					}
					c.Resources.Requests[name] = q.DeepCopy()
				}
			}
		}
	}
	if pod.Spec.EnableServiceLinks == nil {
		pod.Spec.EnableServiceLinks = sharedEnableServiceLinks
	}
	DefaultPodSpec(&pod.Spec)
}

// DefaultPodSpec applies SetDefaults_PodSpec and the container, port, probe
// and volume defaults. It is used for pods and for pod templates.
func DefaultPodSpec(spec *corev1.PodSpec) {
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptrTo(defaultTerminationGracePeriodSeconds)
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	// A deprecated serviceAccount alias fills serviceAccountName (and back).
	if spec.ServiceAccountName == "" && spec.DeprecatedServiceAccount != "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i], spec.HostNetwork)
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i], spec.HostNetwork)
	}
	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
}

func defaultContainer(c *corev1.Container, hostNetwork bool) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = defaultTerminationMessagePath
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		// With host networking the container port is the host port.
		if hostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
	}
	for _, probe := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(probe)
	}
	for i := range c.Env {
		if f := c.Env[i].ValueFrom; f != nil && f.FieldRef != nil && f.FieldRef.APIVersion == "" {
			f.FieldRef.APIVersion = "v1"
		}
	}
}

// defaultPullPolicy mirrors SetDefaults_Container: Always for the latest tag
// or no tag at all, IfNotPresent otherwise (a digest counts as a tag).
func defaultPullPolicy(image string) corev1.PullPolicy {
	if strings.Contains(image, "@") {
		return corev1.PullIfNotPresent
	}
	name := image
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	i := strings.LastIndex(name, ":")
	if i < 0 || name[i+1:] == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	if h := p.HTTPGet; h != nil {
		if h.Path == "" {
			h.Path = "/"
		}
		if h.Scheme == "" {
			h.Scheme = corev1.URISchemeHTTP
		}
	}
}

func defaultVolume(v *corev1.Volume) {
	// SetDefaults_Volume: no source at all means an emptyDir.
	if v.VolumeSource == (corev1.VolumeSource{}) {
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	switch {
	case v.ConfigMap != nil && v.ConfigMap.DefaultMode == nil:
		v.ConfigMap.DefaultMode = ptrTo(defaultVolumeMode)
	case v.Secret != nil && v.Secret.DefaultMode == nil:
		v.Secret.DefaultMode = ptrTo(defaultVolumeMode)
	case v.Projected != nil && v.Projected.DefaultMode == nil:
		v.Projected.DefaultMode = ptrTo(defaultVolumeMode)
	case v.HostPath != nil && v.HostPath.Type == nil:
		v.HostPath.Type = ptrTo(corev1.HostPathUnset)
	}
}

// DefaultDeployment applies SetDefaults_Deployment and the template defaults.
func DefaultDeployment(d *appsv1.Deployment) {
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = ptrTo(int32(1))
	}
	st := &d.Spec.Strategy
	if st.Type == "" {
		st.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if st.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if st.RollingUpdate == nil {
			st.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if st.RollingUpdate.MaxUnavailable == nil {
			st.RollingUpdate.MaxUnavailable = ptrTo(defaultMaxSurgeUnavailable)
		}
		if st.RollingUpdate.MaxSurge == nil {
			st.RollingUpdate.MaxSurge = ptrTo(defaultMaxSurgeUnavailable)
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptrTo(defaultRevisionHistoryLimit)
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = ptrTo(defaultProgressDeadlineSeconds)
	}
	DefaultPodSpec(&d.Spec.Template.Spec)
}

// DefaultReplicaSet applies SetDefaults_ReplicaSet and the template defaults.
func DefaultReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = ptrTo(int32(1))
	}
	DefaultPodSpec(&rs.Spec.Template.Spec)
}

// DefaultService applies SetDefaults_Service (cluster IPs are allocated by
// CreateService, not here).
func DefaultService(svc *corev1.Service) {
	if svc.Spec.Type == "" {
		svc.Spec.Type = corev1.ServiceTypeClusterIP
	}
	if svc.Spec.SessionAffinity == "" {
		svc.Spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == (intstr.IntOrString{}) {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if svc.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.InternalTrafficPolicy == nil {
		svc.Spec.InternalTrafficPolicy = ptrTo(corev1.ServiceInternalTrafficPolicyCluster)
	}
	if (svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer) &&
		svc.Spec.ExternalTrafficPolicy == "" {
		svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
}

// DefaultNamespace applies SetDefaults_Namespace and the namespace
// strategy: the immutable name label, the kubernetes finalizer, phase Active.
func DefaultNamespace(ns *corev1.Namespace) {
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
	if len(ns.Spec.Finalizers) == 0 {
		ns.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
	}
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}
