package framework

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// StorageLister is the storage view a Handle may offer to the volume
// plugins: the objects upstream reads through its informers' listers, plus
// the writes the VolumeBinding PreBind makes through the API. Lookups return
// nil when the object does not exist.
type StorageLister interface {
	PersistentVolumeClaim(namespace, name string) *v1.PersistentVolumeClaim
	PersistentVolume(name string) *v1.PersistentVolume
	// PersistentVolumes lists every volume, ordered by name.
	PersistentVolumes() []*v1.PersistentVolume
	StorageClass(name string) *storagev1.StorageClass
	CSINode(name string) *storagev1.CSINode
	// IsPVCUsedByPods reports whether a pod assigned to a node uses the
	// claim "namespace/name" (the snapshot's StorageInfos).
	IsPVCUsedByPods(key string) bool
	// UpdatePersistentVolume and UpdatePersistentVolumeClaim store a changed
	// object (PreBind's API updates).
	UpdatePersistentVolume(pv *v1.PersistentVolume) error
	UpdatePersistentVolumeClaim(pvc *v1.PersistentVolumeClaim) error
}

// Storage returns h's storage view, or an empty one when h has none.
func Storage(h Handle) StorageLister {
	if s, ok := h.(StorageLister); ok {
		return s
	}
	return noStorage{}
}

type noStorage struct{}

func (noStorage) PersistentVolumeClaim(string, string) *v1.PersistentVolumeClaim { return nil }
func (noStorage) PersistentVolume(string) *v1.PersistentVolume                   { return nil }
func (noStorage) PersistentVolumes() []*v1.PersistentVolume                      { return nil }
func (noStorage) StorageClass(string) *storagev1.StorageClass                    { return nil }
func (noStorage) CSINode(string) *storagev1.CSINode                              { return nil }
func (noStorage) IsPVCUsedByPods(string) bool                                    { return false }
func (noStorage) UpdatePersistentVolume(*v1.PersistentVolume) error              { return nil }
func (noStorage) UpdatePersistentVolumeClaim(*v1.PersistentVolumeClaim) error    { return nil }

// StorageEpoch is offered by storage views whose objects change only by
// replacement through UpdatePersistentVolume and UpdatePersistentVolumeClaim
// for as long as the epoch stays the same (berth's scheduler within one
// Sync). Plugins may then cache what they derive from storage objects for
// the epoch, dropping what depends on an object written since.
type StorageEpoch interface {
	// StorageEpoch returns the current epoch and the objects written in
	// it so far, oldest first.
	StorageEpoch() (epoch uint64, writes []StorageWrite)
}

// StorageWrite names a PersistentVolume (Namespace "") or a
// PersistentVolumeClaim replaced during the epoch.
type StorageWrite struct {
	Volume          bool
	Namespace, Name string
}
