package view

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/cluster"
)

func ptr[T any](v T) *T { return &v }

func at(s *cluster.State, ago time.Duration) metav1.Time { return metav1.NewTime(s.Now.Add(-ago)) }

var defaultTolerations = []corev1.Toleration{
	{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
	{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
}

// apiAccessVolume is the projected token volume admission adds to every pod.
func apiAccessVolume() corev1.Volume {
	return corev1.Volume{Name: "kube-api-access-x2x4l", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(3607)), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{}},
		}}}}
}

func uiPod(s *cluster.State, name, hash string, age time.Duration) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "ui", UID: types.UID("uid-" + name), CreationTimestamp: at(s, age),
			Labels: map[string]string{"app.kubernetes.io/name": "ui", "pod-template-hash": hash},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "ui-" + hash,
				UID: types.UID("uid-rs-" + hash), Controller: ptr(true)}},
		},
		Spec: corev1.PodSpec{
			ServiceAccountName: "ui",
			Priority:           ptr(int32(0)),
			Containers: []corev1.Container{{
				Name: "ui", Image: "public.ecr.aws/aws-containers/retail-store-sample-ui:0.4.0",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("1536Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1536Mi")},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access-x2x4l", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
			}},
			Volumes:     []corev1.Volume{apiAccessVolume()},
			Tolerations: append([]corev1.Toleration(nil), defaultTolerations...),
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
}

// seedState is seed 000 just after the nodeSelector patch: the old pod runs,
// the new one is Pending with a FailedScheduling event.
func seedState() *cluster.State {
	s := cluster.New("", 1)
	s.Now = cluster.Epoch.Add(time.Hour)
	s.Namespaces["ui"] = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ui", CreationTimestamp: at(s, time.Hour),
		Labels: map[string]string{"kubernetes.io/metadata.name": "ui"}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}

	running := uiPod(s, "ui-795bd46545-mrglh", "795bd46545", 8*time.Minute)
	running.Spec.NodeName = "ip-10-42-11-43.us-west-2.compute.internal"
	running.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, HostIP: "10.42.11.43", PodIP: "10.42.11.7",
		PodIPs:    []corev1.PodIP{{IP: "10.42.11.7"}},
		StartTime: ptr(at(s, 8*time.Minute)),
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "ui", Ready: true, Image: "ui",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(s, 8*time.Minute)}}}},
	}
	s.Pods[cluster.Key("ui", running.Name)] = running

	pending := uiPod(s, "ui-659df48c56-z496x", "659df48c56", 16*time.Second)
	pending.Spec.NodeSelector = map[string]string{"kubernetes.io/arch": "arm64"}
	pending.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}}
	s.Pods[cluster.Key("ui", pending.Name)] = pending

	saved := s.Now
	s.Now = saved.Add(-19 * time.Second)
	s.Record(cluster.EventSource{Component: "default-scheduler", Series: true},
		cluster.Regarding("Pod", "v1", pending), corev1.EventTypeWarning, "FailedScheduling",
		"0/4 nodes are available: 1 node(s) had untolerated taint {frontend: true}, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.")
	s.Now = saved

	s.Nodes["ip-10-42-10-138.us-west-2.compute.internal"] = gravitonNode(s)

	s.Deployments[cluster.Key("ui", "ui")] = &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{Kind: "Deployment", APIVersion: "apps/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: "ui", UID: "uid-deploy-ui", Generation: 2, CreationTimestamp: at(s, 9*time.Minute)},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "ui"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": "ui"}},
				Spec:       corev1.PodSpec{Containers: pending.Spec.Containers},
			},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxUnavailable: ptr(intstr.FromString("25%")), MaxSurge: ptr(intstr.FromString("25%"))}},
		},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UnavailableReplicas: 1},
	}
	return s
}

func gravitonNode(s *cluster.State) *corev1.Node {
	return &corev1.Node{
		TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "ip-10-42-10-138.us-west-2.compute.internal", UID: "uid-node-138",
			CreationTimestamp: at(s, 20*time.Minute),
			Labels: map[string]string{
				"beta.kubernetes.io/instance-type":  "t4g.medium",
				"beta.kubernetes.io/os":             "linux",
				"eks.amazonaws.com/capacityType":    "ON_DEMAND",
				"eks.amazonaws.com/nodegroup":       "graviton",
				"eks.amazonaws.com/nodegroup-image": "ami-03e8f91597dcf297b",
				"kubernetes.io/arch":                "arm64",
				"kubernetes.io/hostname":            "ip-10-42-10-138.us-west-2.compute.internal",
				"kubernetes.io/os":                  "linux",
				"node.kubernetes.io/instance-type":  "t4g.medium",
			}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "frontend", Value: "true", Effect: corev1.TaintEffectNoExecute}}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "kubelet is posting ready status", LastHeartbeatTime: at(s, 0), LastTransitionTime: at(s, 19*time.Minute)}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.42.10.138"}, {Type: corev1.NodeHostName, Address: "ip-10-42-10-138.us-west-2.compute.internal"}},
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("3943372Ki"),
				corev1.ResourcePods: resource.MustParse("17"), corev1.ResourceEphemeralStorage: resource.MustParse("20959212Ki")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1930m"), corev1.ResourceMemory: resource.MustParse("3388364Ki"),
				corev1.ResourcePods: resource.MustParse("17"), corev1.ResourceEphemeralStorage: resource.MustParse("18242267924")},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.34.2-eks-1234567", OSImage: "Amazon Linux 2023.9.20251110",
				KernelVersion: "6.12.46-66.121.amzn2023.aarch64", ContainerRuntimeVersion: "containerd://2.1.4",
				OperatingSystem: "linux", Architecture: "arm64"},
		},
	}
}

func resourceQ(s string) *resource.Quantity { q := resource.MustParse(s); return &q }
