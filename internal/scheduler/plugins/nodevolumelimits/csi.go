// Package nodevolumelimits is upstream's NodeVolumeLimits (CSILimits): a
// node must not exceed the attach limit its CSINode reports per CSI driver.
// Volumes are counted by unique driver/handle over the pods on the node;
// in-tree EBS volumes count as ebs.csi.aws.com once the node has a CSINode
// (CSI migration), and unbound claims count under their class's driver.
// VolumeAttachment objects are not modelled: every attachment belongs to a
// pod on the node in berth.
package nodevolumelimits

import (
	"sort"

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
	// cache holds pods' and nodes' volumes while the storage epoch lasts
	// (nil when the storage view offers no epoch: nothing is cached).
	cache *volumeCache
	// seen is dedupe's scratch space (Filter is not concurrent).
	seen map[string]struct{}
}

// New builds the plugin over the handle's storage view.
func New(h framework.Handle) framework.Plugin {
	pl := &CSILimits{storage: framework.Storage(h)}
	if e, ok := pl.storage.(framework.StorageEpoch); ok {
		pl.cache = &volumeCache{source: e}
	}
	return pl
}

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
// A pod's volume list depends on the node only through whether it has a
// CSINode, so lists are derived once per pod and reused across nodes, and
// a node's attached volumes are reused until its pods or their claims change.
func (pl *CSILimits) Filter(_ *framework.CycleState, pi *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	pod := pi.Pod
	if len(pod.Spec.Volumes) == 0 {
		return nil
	}
	if pl.cache != nil {
		pl.cache.sync()
	}
	nv := pl.node(ni)
	newCV, err := pl.podVolumes(pi, nv.csiNode, true)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
		}
		return framework.AsStatus(err)
	}
	newVolumes := newCV.vols
	if len(newVolumes) == 0 || !nv.hasLimits {
		return nil
	}
	attached, err := pl.attachedOn(nv, ni)
	if err != nil {
		return framework.AsStatus(err)
	}
	for i := range newVolumes {
		driver := newVolumes[i].driver
		if i != firstOfDriver(newVolumes, driver) {
			continue
		}
		limit, ok := nv.limit(driver)
		if !ok {
			continue
		}
		count := 0
		for j := range newVolumes {
			if newVolumes[j].driver == driver && !contains(attached, newVolumes[j].unique) {
				count++
			}
		}
		if count > 0 && countDriver(attached, driver)+count > int(limit) {
			return framework.NewStatus(framework.Unschedulable, ErrReasonMaxVolumeCountExceeded)
		}
	}
	return nil
}

// node returns the node's entry, cached for the epoch when possible.
func (pl *CSILimits) node(ni *framework.NodeInfo) *nodeVolumes {
	if pl.cache != nil {
		if nv := pl.cache.nodes[ni]; nv != nil {
			return nv
		}
	}
	csiNode := pl.storage.CSINode(ni.Name())
	nv := &nodeVolumes{csiNode: csiNode, limits: volumeLimits(csiNode)}
	nv.hasLimits = len(nv.limits) > 0
	if pl.cache != nil {
		pl.cache.nodes[ni] = nv
	}
	return nv
}

// attachedOn returns the volumes of the pods on the node without repeats.
func (pl *CSILimits) attachedOn(nv *nodeVolumes, ni *framework.NodeInfo) ([]attachedVolume, error) {
	if nv.valid && nv.gen == ni.Generation && len(nv.pods) == len(ni.Pods) {
		fresh := true
		for _, cv := range nv.pods {
			if cv.stale {
				fresh = false
				break
			}
		}
		if fresh {
			return nv.attached, nil
		}
	}
	nv.valid = false
	pods := make([]*cachedVolumes, 0, len(ni.Pods))
	var attached []attachedVolume
	for _, existing := range ni.Pods {
		cv, err := pl.podVolumes(existing, nv.csiNode, false)
		if err != nil {
			return nil, err
		}
		pods = append(pods, cv)
		attached = append(attached, cv.vols...)
	}
	attached = pl.dedupe(attached)
	if pl.cache != nil {
		nv.valid, nv.gen, nv.pods, nv.attached = true, ni.Generation, pods, attached
	}
	return attached, nil
}

// dedupe drops repeated unique names (volumes shared by pods on the node),
// keeping the first; small lists are compared pairwise.
func (pl *CSILimits) dedupe(vols []attachedVolume) []attachedVolume {
	out := vols[:0]
	if len(vols) <= 16 {
		for i := range vols {
			if !contains(out, vols[i].unique) {
				out = append(out, vols[i])
			}
		}
		return out
	}
	if pl.seen == nil {
		pl.seen = map[string]struct{}{}
	}
	clear(pl.seen)
	for i := range vols {
		if _, ok := pl.seen[vols[i].unique]; !ok {
			pl.seen[vols[i].unique] = struct{}{}
			out = append(out, vols[i])
		}
	}
	return out
}

func contains(vols []attachedVolume, unique string) bool {
	for i := range vols {
		if vols[i].unique == unique {
			return true
		}
	}
	return false
}

func countDriver(vols []attachedVolume, driver string) int {
	n := 0
	for i := range vols {
		if vols[i].driver == driver {
			n++
		}
	}
	return n
}

func firstOfDriver(vols []attachedVolume, driver string) int {
	for i := range vols {
		if vols[i].driver == driver {
			return i
		}
	}
	return -1
}

// podVolumes returns the pod's attachable volumes without repeats, from
// the cache when nothing they were derived from changed.
func (pl *CSILimits) podVolumes(pi *framework.PodInfo, csiNode *storagev1.CSINode, newPod bool) (*cachedVolumes, error) {
	variant := 0
	if csiNode != nil {
		variant |= 1
	}
	if newPod {
		variant |= 2
	}
	if pl.cache != nil {
		if cv := pl.cache.get(pi, variant); cv != nil {
			return cv, nil
		}
	}
	rec := &recordingLister{StorageLister: pl.storage, record: pl.cache != nil}
	result := map[string]string{}
	if err := filterAttachableVolumes(rec, pi.Pod, csiNode, newPod, result); err != nil {
		return nil, err
	}
	vols := make([]attachedVolume, 0, len(result))
	for unique, driver := range result {
		vols = append(vols, attachedVolume{unique: unique, driver: driver})
	}
	// Map order must not leak: sort so the list is the same every time.
	sort.Slice(vols, func(i, j int) bool { return vols[i].unique < vols[j].unique })
	cv := &cachedVolumes{vols: vols}
	if pl.cache != nil {
		pl.cache.put(pi, variant, cv, rec.deps)
	}
	return cv, nil
}

// filterAttachableVolumes adds the pod's attachable volumes to result as
// unique name -> driver.
func filterAttachableVolumes(storage framework.StorageLister, pod *v1.Pod, csiNode *storagev1.CSINode, newPod bool, result map[string]string) error {
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
		pvc := storage.PersistentVolumeClaim(pod.Namespace, name)
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
		driver, handle := csiDriverInfo(storage, csiNode, pvc)
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
func csiDriverInfo(storage framework.StorageLister, csiNode *storagev1.CSINode, pvc *v1.PersistentVolumeClaim) (string, string) {
	if pvc.Spec.VolumeName == "" {
		return csiDriverInfoFromClass(storage, csiNode, pvc)
	}
	pv := storage.PersistentVolume(pvc.Spec.VolumeName)
	if pv == nil {
		return csiDriverInfoFromClass(storage, csiNode, pvc)
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

func csiDriverInfoFromClass(storage framework.StorageLister, csiNode *storagev1.CSINode, pvc *v1.PersistentVolumeClaim) (string, string) {
	name := storagehelpers.GetPersistentVolumeClaimClass(pvc)
	if name == "" {
		return "", ""
	}
	class := storage.StorageClass(name)
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

// driverLimit is a CSINode driver's allocatable.count.
type driverLimit struct {
	driver string
	limit  int64
}

// volumeLimits reads allocatable.count per driver from the CSINode; of
// repeated driver names the last one with a count wins, as in a map.
func volumeLimits(csiNode *storagev1.CSINode) []driverLimit {
	if csiNode == nil {
		return nil
	}
	var out []driverLimit
	for _, d := range csiNode.Spec.Drivers {
		if d.Allocatable == nil || d.Allocatable.Count == nil {
			continue
		}
		l := driverLimit{driver: d.Name, limit: int64(*d.Allocatable.Count)}
		replaced := false
		for i := range out {
			if out[i].driver == d.Name {
				out[i], replaced = l, true
			}
		}
		if !replaced {
			out = append(out, l)
		}
	}
	return out
}

func (nv *nodeVolumes) limit(driver string) (int64, bool) {
	for _, l := range nv.limits {
		if l.driver == driver {
			return l.limit, true
		}
	}
	return 0, false
}
