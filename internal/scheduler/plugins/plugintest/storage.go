package plugintest

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Storage holds the storage objects the volume plugins look up; a Handle
// embeds it, so tests fill h.PVCs, h.PVs and so on.
type Storage struct {
	PVCs           []*v1.PersistentVolumeClaim
	PVs            []*v1.PersistentVolume
	StorageClasses []*storagev1.StorageClass
	CSINodes       []*storagev1.CSINode
}

var _ framework.StorageLister = (*Handle)(nil)

func (h *Handle) PersistentVolumeClaim(namespace, name string) *v1.PersistentVolumeClaim {
	for _, o := range h.PVCs {
		if o.Namespace == namespace && o.Name == name {
			return o
		}
	}
	return nil
}

func (h *Handle) PersistentVolume(name string) *v1.PersistentVolume {
	for _, o := range h.PVs {
		if o.Name == name {
			return o
		}
	}
	return nil
}

func (h *Handle) PersistentVolumes() []*v1.PersistentVolume {
	out := append([]*v1.PersistentVolume(nil), h.PVs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (h *Handle) StorageClass(name string) *storagev1.StorageClass {
	for _, o := range h.StorageClasses {
		if o.Name == name {
			return o
		}
	}
	return nil
}

func (h *Handle) CSINode(name string) *storagev1.CSINode {
	for _, o := range h.CSINodes {
		if o.Name == name {
			return o
		}
	}
	return nil
}

// IsPVCUsedByPods looks through the pods on every node.
func (h *Handle) IsPVCUsedByPods(key string) bool {
	for _, ni := range h.NodeInfos {
		for _, p := range ni.Pods {
			for _, vol := range p.Pod.Spec.Volumes {
				if vol.PersistentVolumeClaim != nil && p.Pod.Namespace+"/"+vol.PersistentVolumeClaim.ClaimName == key {
					return true
				}
			}
		}
	}
	return false
}

// UpdatePersistentVolume replaces the PV of the same name.
func (h *Handle) UpdatePersistentVolume(pv *v1.PersistentVolume) error {
	for i, o := range h.PVs {
		if o.Name == pv.Name {
			h.PVs[i] = pv
		}
	}
	return nil
}

// UpdatePersistentVolumeClaim replaces the claim of the same name.
func (h *Handle) UpdatePersistentVolumeClaim(pvc *v1.PersistentVolumeClaim) error {
	for i, o := range h.PVCs {
		if o.Namespace == pvc.Namespace && o.Name == pvc.Name {
			h.PVCs[i] = pvc
		}
	}
	return nil
}
