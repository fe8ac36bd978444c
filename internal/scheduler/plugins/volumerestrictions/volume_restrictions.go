// Package volumerestrictions rejects nodes where one of the pod's legacy
// in-tree disks is already mounted in a conflicting way, and pods whose
// ReadWriteOncePod claim is already used by another pod (upstream's
// plugins/volumerestrictions).
package volumerestrictions

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Name is the plugin's name in the profile.
const Name = "VolumeRestrictions"

// Reasons as upstream prints them.
const (
	ErrReasonDiskConflict             = "node(s) had no available disk"
	ErrReasonReadWriteOncePodConflict = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// VolumeRestrictions is the plugin.
type VolumeRestrictions struct {
	storage framework.StorageLister
}

// New builds the plugin over the handle's storage view.
func New(h framework.Handle) framework.Plugin {
	return &VolumeRestrictions{storage: framework.Storage(h)}
}

func (*VolumeRestrictions) Name() string { return Name }

// preFilterState holds the pod's ReadWriteOncePod claim names and how many
// times assigned pods use them; preemption's what-ifs move the count.
type preFilterState struct {
	readWriteOncePodPVCs   sets.Set[string]
	conflictingPVCRefCount int
}

func (s *preFilterState) Clone() framework.StateData {
	c := *s
	return &c
}

func (s *preFilterState) updateWithPod(pod *v1.Pod, multiplier int) {
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim != nil && s.readWriteOncePodPVCs.Has(vol.PersistentVolumeClaim.ClaimName) {
			s.conflictingPVCRefCount += multiplier
		}
	}
}

// needsRestrictionsCheck: the in-tree volume types with a disk conflict rule.
func needsRestrictionsCheck(v *v1.Volume) bool {
	return v.GCEPersistentDisk != nil || v.AWSElasticBlockStore != nil || v.RBD != nil || v.ISCSI != nil
}

// PreFilter looks every claim up (a missing one rejects the pod, and this
// runs before VolumeBinding, hence its text), counts the uses of the pod's
// ReadWriteOncePod claims, and skips when there is nothing to check.
func (pl *VolumeRestrictions) PreFilter(state *framework.CycleState, pi *framework.PodInfo, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	pod := pi.Pod
	needsCheck := false
	for i := range pod.Spec.Volumes {
		if needsRestrictionsCheck(&pod.Spec.Volumes[i]) {
			needsCheck = true
			break
		}
	}
	rwop := sets.New[string]()
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		name := vol.PersistentVolumeClaim.ClaimName
		pvc := pl.storage.PersistentVolumeClaim(pod.Namespace, name)
		if pvc == nil {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ClaimNotFound(name).Error())
		}
		for _, m := range pvc.Spec.AccessModes {
			if m == v1.ReadWriteOncePod {
				rwop.Insert(pvc.Name)
				break
			}
		}
	}
	s := &preFilterState{readWriteOncePodPVCs: rwop}
	for _, name := range sets.List(rwop) {
		if pl.storage.IsPVCUsedByPods(pod.Namespace + "/" + name) {
			s.conflictingPVCRefCount++
		}
	}
	if !needsCheck && s.conflictingPVCRefCount == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, s)
	return nil, nil
}

// ClaimNotFound is the lister's NotFound error for a claim.
func ClaimNotFound(name string) error {
	return errors.NewNotFound(v1.Resource("persistentvolumeclaim"), name)
}

// PreFilterExtensions keeps the claim count right under preemption.
func (pl *VolumeRestrictions) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod counts a pod added to a node.
func (pl *VolumeRestrictions) AddPod(state *framework.CycleState, _ *framework.PodInfo, added *framework.PodInfo, _ *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(added.Pod, 1)
	return nil
}

// RemovePod uncounts a pod removed from a node.
func (pl *VolumeRestrictions) RemovePod(state *framework.CycleState, _ *framework.PodInfo, removed *framework.PodInfo, _ *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(removed.Pod, -1)
	return nil
}

func getPreFilterState(state *framework.CycleState) (*preFilterState, error) {
	s, ok := state.Read(preFilterStateKey).(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("cannot read %q from cycleState", preFilterStateKey)
	}
	return s, nil
}

// Filter rejects a disk conflict with a pod on the node, then a
// ReadWriteOncePod claim in use anywhere.
func (pl *VolumeRestrictions) Filter(state *framework.CycleState, pi *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	if !satisfyVolumeConflicts(pi.Pod, ni) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonDiskConflict)
	}
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.conflictingPVCRefCount > 0 {
		return framework.NewStatus(framework.Unschedulable, ErrReasonReadWriteOncePodConflict)
	}
	return nil
}

func satisfyVolumeConflicts(pod *v1.Pod, ni *framework.NodeInfo) bool {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if !needsRestrictionsCheck(v) {
			continue
		}
		for _, existing := range ni.Pods {
			if isVolumeConflict(v, existing.Pod) {
				return false
			}
		}
	}
	return true
}

// isVolumeConflict: the same GCE PD unless both read-only, the same EBS
// volume ID, the same iSCSI IQN unless both read-only, or an RBD image of the
// same pool on overlapping monitors unless both read-only.
func isVolumeConflict(v *v1.Volume, pod *v1.Pod) bool {
	for _, ev := range pod.Spec.Volumes {
		if d, e := v.GCEPersistentDisk, ev.GCEPersistentDisk; d != nil && e != nil {
			if d.PDName == e.PDName && !(d.ReadOnly && e.ReadOnly) {
				return true
			}
		}
		if d, e := v.AWSElasticBlockStore, ev.AWSElasticBlockStore; d != nil && e != nil && d.VolumeID == e.VolumeID {
			return true
		}
		if d, e := v.ISCSI, ev.ISCSI; d != nil && e != nil {
			if d.IQN == e.IQN && !(d.ReadOnly && e.ReadOnly) {
				return true
			}
		}
		if d, e := v.RBD, ev.RBD; d != nil && e != nil {
			if haveOverlap(d.CephMonitors, e.CephMonitors) && d.RBDPool == e.RBDPool && d.RBDImage == e.RBDImage && !(d.ReadOnly && e.ReadOnly) {
				return true
			}
		}
	}
	return false
}

func haveOverlap(a, b []string) bool {
	set := sets.New(a...)
	for _, x := range b {
		if set.Has(x) {
			return true
		}
	}
	return false
}
