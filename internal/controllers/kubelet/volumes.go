package kubelet

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// VolumeAttachDelay models the attach-detach controller's
// ControllerPublishVolume (EBS AttachVolume until the device is in use) and
// the kubelet's mount of the device, counted from the moment the pod's last
// claim became Bound. docs/eks.md (EBS volumes) puts claim-to-Running at 10–20 s
// [unverified]; with the provisioner's 5 s, 5 s here lands in that range.
const VolumeAttachDelay = 5 * time.Second

// attachDetachSource reports the SuccessfulAttachVolume events.
var attachDetachSource = cluster.EventSource{Component: "attachdetach-controller"}

// volumesReady reports whether every claim of the pod is Bound to an
// existing volume and, if the pod has claims, when its volumes are attached
// and mounted (admission or the last binding, whichever is later, plus
// VolumeAttachDelay). The kubelet's
// volume manager keeps the pod in ContainerCreating, with no sandbox, until
// then.
func volumesReady(s *cluster.State, pod *corev1.Pod) (time.Time, bool) {
	pvs := podVolumes(s, pod)
	if len(pvs) == 0 {
		return time.Time{}, true
	}
	// Attaching starts once the pod is on the node and the volume is bound.
	last := pod.Status.StartTime.Time
	for _, pv := range pvs {
		if pv == nil {
			return time.Time{}, false
		}
		bound := pv.CreationTimestamp.Time
		if pv.Status.LastPhaseTransitionTime != nil {
			bound = pv.Status.LastPhaseTransitionTime.Time
		}
		if bound.After(last) {
			last = bound
		}
	}
	return last.Add(VolumeAttachDelay), true
}

// podVolumes lists the PV of each claim the pod uses, nil for a claim that is
// missing, unbound or bound to a volume that does not exist.
func podVolumes(s *cluster.State, pod *corev1.Pod) []*corev1.PersistentVolume {
	var out []*corev1.PersistentVolume
	for _, vol := range pod.Spec.Volumes {
		name := ""
		switch {
		case vol.PersistentVolumeClaim != nil:
			name = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			name = pod.Name + "-" + vol.Name
		default:
			continue
		}
		pvc := s.PersistentVolumeClaims[cluster.Key(pod.Namespace, name)]
		if pvc == nil || pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" {
			out = append(out, nil)
			continue
		}
		out = append(out, s.PersistentVolumes[pvc.Spec.VolumeName])
	}
	return out
}

// recordAttached writes the attach-detach controller's event for each
// attachable (EBS) volume of the pod.
func recordAttached(s *cluster.State, pod *corev1.Pod, _ *corev1.Node) {
	for _, pv := range podVolumes(s, pod) {
		if pv == nil || (pv.Spec.CSI == nil && pv.Spec.AWSElasticBlockStore == nil) {
			continue
		}
		s.Record(attachDetachSource, podRef(pod, ""), corev1.EventTypeNormal, "SuccessfulAttachVolume",
			fmt.Sprintf("AttachVolume.Attach succeeded for volume %q ", pv.Name))
	}
}
