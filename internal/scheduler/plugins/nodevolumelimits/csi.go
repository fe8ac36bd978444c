// Package nodevolumelimits is upstream's NodeVolumeLimits (CSILimits): a
// node must not exceed the attach limit its CSINode reports per CSI driver.
// Volumes are counted by unique driver/handle over the pods on the node;
// in-tree EBS volumes count as ebs.csi.aws.com once the node has a CSINode
// (CSI migration), and unbound claims count under their class's driver.
// VolumeAttachment objects are not modelled: every attachment belongs to a
// pod on the node in berth.
package nodevolumelimits

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/component-helpers/storage/ephemeral"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/volumebinding"
)

// Name is the plugin's name in the profile.
const Name = "NodeVolumeLimits"

// ErrReasonMaxVolumeCountExceeded is the Filter reason.
const ErrReasonMaxVolumeCountExceeded = "node(s) exceed max volume count"

// unboundHandlePrefix stands in for upstream's random 32-character prefix of
// the made-up handle of a claim that has no volume yet; only uniqueness matters.
const unboundHandlePrefix = "berth-unbound-volume"

// CSILimits is the plugin.
type CSILimits struct {
	storage framework.StorageLister
}

// New builds the plugin over the handle's storage view.
func New(h framework.Handle) framework.Plugin { return &CSILimits{storage: framework.Storage(h)} }

func (*CSILimits) Name() string { return Name }

// PreFilter skips pods with no claim and no in-tree EBS volume.
func (pl *CSILimits) PreFilter(_ *framework.CycleState, pi *framework.PodInfo, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	for i := range pi.Pod.Spec.Volumes {
		vol := &pi.Pod.Spec.Volumes[i]
		if vol.PersistentVolumeClaim != nil || vol.Ephemeral != nil || vol.AWSElasticBlockStore != nil {
			return nil, nil
		}
	}
	return nil, framework.NewStatus(framework.Skip)
}

// PreFilterExtensions: none.
func (pl *CSILimits) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter counts the pod's new volumes per driver against the node's limits.
func (pl *CSILimits) Filter(_ *framework.CycleState, pi *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	pod := pi.Pod
	if len(pod.Spec.Volumes) == 0 {
		return nil
	}
	csiNode := pl.storage.CSINode(ni.Name())
	newVolumes := map[string]string{}
	if err := pl.filterAttachableVolumes(pod, csiNode, true, newVolumes); err != nil {
		if apierrors.IsNotFound(err) {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
		}
		return framework.AsStatus(err)
	}
	if len(newVolumes) == 0 {
		return nil
	}
	limits := volumeLimits(csiNode)
	if len(limits) == 0 {
		return nil
	}
	attached := map[string]string{}
	for _, existing := range ni.Pods {
		if err := pl.filterAttachableVolumes(existing.Pod, csiNode, false, attached); err != nil {
			return framework.AsStatus(err)
		}
	}
	attachedCount := map[string]int{}
	for unique, driver := range attached {
		delete(newVolumes, unique)
		attachedCount[driver]++
	}
	newCount := map[string]int{}
	for _, driver := range newVolumes {
		newCount[driver]++
	}
	for driver, count := range newCount {
		if limit, ok := limits[driver]; ok && attachedCount[driver]+count > int(limit) {
			return framework.NewStatus(framework.Unschedulable, ErrReasonMaxVolumeCountExceeded)
		}
	}
	return nil
}

// filterAttachableVolumes adds the pod's attachable volumes to result as
// unique name -> driver.
func (pl *CSILimits) filterAttachableVolumes(pod *v1.Pod, csiNode *storagev1.CSINode, newPod bool, result map[string]string) error {
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		var name string
		isEphemeral := false
		switch {
		case vol.PersistentVolumeClaim != nil:
			name = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			name, isEphemeral = ephemeral.VolumeClaimName(pod, vol), true
		default:
			if err := inlineEBSVolume(vol, csiNode, result); err != nil {
				return err
			}
			continue
		}
		if name == "" {
			return fmt.Errorf("PersistentVolumeClaim had no name")
		}
		pvc := pl.storage.PersistentVolumeClaim(pod.Namespace, name)
		if pvc == nil {
			if newPod {
				return fmt.Errorf("looking up PVC %s/%s: %w", pod.Namespace, name, apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), name))
			}
			continue
		}
		if isEphemeral {
			if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
				return err
			}
		}
		driver, handle := pl.csiDriverInfo(csiNode, pvc)
		if driver == "" || handle == "" {
			continue
		}
		result[driver+"/"+handle] = driver
	}
	return nil
}

// inlineEBSVolume counts a pod's inline in-tree EBS volume once migrated
// (the node has a CSINode).
func inlineEBSVolume(vol *v1.Volume, csiNode *storagev1.CSINode, result map[string]string) error {
	if vol.AWSElasticBlockStore == nil || csiNode == nil {
		return nil
	}
	handle, err := volumebinding.EBSVolumeHandle(vol.AWSElasticBlockStore.VolumeID)
	if err != nil {
		return fmt.Errorf("converting volume(%s) from inline to csi: %w", vol.Name, err)
	}
	result[volumebinding.EBSCSIDriverName+"/"+handle] = volumebinding.EBSCSIDriverName
	return nil
}

// csiDriverInfo names the driver and handle of a claim's volume, or of the
// volume its class would provision.
func (pl *CSILimits) csiDriverInfo(csiNode *storagev1.CSINode, pvc *v1.PersistentVolumeClaim) (string, string) {
	if pvc.Spec.VolumeName == "" {
		return pl.csiDriverInfoFromClass(csiNode, pvc)
	}
	pv := pl.storage.PersistentVolume(pvc.Spec.VolumeName)
	if pv == nil {
		return pl.csiDriverInfoFromClass(csiNode, pvc)
	}
	src := pv.Spec.CSI
	if src == nil {
		if !volumebinding.IsMigratableEBS(pv) || csiNode == nil {
			return "", ""
		}
		t, err := volumebinding.TranslateEBSPVToCSI(pv)
		if err != nil || t.Spec.CSI == nil {
			return "", ""
		}
		src = t.Spec.CSI
	}
	return src.Driver, src.VolumeHandle
}

func (pl *CSILimits) csiDriverInfoFromClass(csiNode *storagev1.CSINode, pvc *v1.PersistentVolumeClaim) (string, string) {
	name := storagehelpers.GetPersistentVolumeClaimClass(pvc)
	if name == "" {
		return "", ""
	}
	class := pl.storage.StorageClass(name)
	if class == nil {
		return "", ""
	}
	handle := fmt.Sprintf("%s-%s/%s", unboundHandlePrefix, pvc.Namespace, pvc.Name)
	if class.Provisioner == volumebinding.InTreeEBSPluginName {
		if csiNode == nil {
			return "", ""
		}
		return volumebinding.EBSCSIDriverName, handle
	}
	return class.Provisioner, handle
}

// volumeLimits reads allocatable.count per driver from the CSINode.
func volumeLimits(csiNode *storagev1.CSINode) map[string]int64 {
	out := map[string]int64{}
	if csiNode == nil {
		return out
	}
	for _, d := range csiNode.Spec.Drivers {
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			out[d.Name] = int64(*d.Allocatable.Count)
		}
	}
	return out
}
