package fargate

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// Mutate is the EKS Fargate webhook on pod CREATE: a pod that a profile
// selects gets schedulerName fargate-scheduler and the profile's label. It
// runs once; pods created before a profile existed stay where they are.
// Left alone (docs/fargate.md#the-webhook): pods of DaemonSets, pods
// already bound (nodeName), pods asking for another scheduler, and pods
// annotated eks.amazonaws.com/compute-type: ec2.
func Mutate(s *cluster.State, pod *corev1.Pod) error {
	if len(s.FargateProfiles) == 0 || pod.Spec.NodeName != "" {
		return nil
	}
	if name := pod.Spec.SchedulerName; name != "" && name != corev1.DefaultSchedulerName {
		return nil
	}
	if pod.Annotations[LabelComputeType] == ComputeTypeEC2 {
		return nil
	}
	for _, ref := range pod.OwnerReferences {
		if ref.Controller != nil && *ref.Controller && ref.Kind == "DaemonSet" {
			return nil
		}
	}
	p := Choose(Profiles(s), pod.Namespace, pod.Labels)
	if p == nil {
		return nil
	}
	pod.Spec.SchedulerName = SchedulerName
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[LabelProfile] = p.Name
	return nil
}

// Annotations fargate-scheduler writes on a pod it takes.
const (
	AnnotationCapacityProvisioned = "CapacityProvisioned"
	AnnotationLogging             = "Logging"
)

// Logging is what Fargate's log router finds for a pod: the event it
// reports and the Logging annotation (docs/fargate.md#logging).
type Logging struct {
	EventType, Reason, Message, Annotation string
}

// Names of the logging ConfigMap.
const (
	LoggingNamespace = "aws-observability"
	LoggingConfigMap = "aws-logging"
)

// LoggingFor looks for the aws-observability/aws-logging ConfigMap.
func LoggingFor(s *cluster.State) Logging {
	if _, ok := s.ConfigMaps[cluster.Key(LoggingNamespace, LoggingConfigMap)]; ok {
		return Logging{EventType: corev1.EventTypeNormal, Reason: "LoggingEnabled",
			Message: "Successfully enabled logging for pod", Annotation: "LoggingEnabled"}
	}
	return Logging{EventType: corev1.EventTypeWarning, Reason: "LoggingDisabled",
		Message:    `Disabled logging because aws-logging configmap was not found. configmap "aws-logging" not found`,
		Annotation: "LoggingDisabled: LOGGING_CONFIGMAP_NOT_FOUND"}
}

// IsFargateNode reports whether a node is a Fargate node.
func IsFargateNode(n *corev1.Node) bool {
	return n != nil && n.Labels[LabelComputeType] == ComputeTypeFargate
}

// Taint is the taint every Fargate node carries.
var Taint = corev1.Taint{Key: LabelComputeType, Value: ComputeTypeFargate, Effect: corev1.TaintEffectNoSchedule}
