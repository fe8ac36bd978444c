package admission

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
)

// IsDefaultClassAnnotation marks the cluster's default StorageClass.
const IsDefaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// Finalizers the StorageObjectInUseProtection admission plugin adds.
const (
	pvcProtectionFinalizer = "kubernetes.io/pvc-protection"
	pvProtectionFinalizer  = "kubernetes.io/pv-protection"
)

// DefaultStorageClass applies SetDefaults_StorageClass.
func DefaultStorageClass(sc *storagev1.StorageClass) {
	if sc.ReclaimPolicy == nil {
		sc.ReclaimPolicy = ptrTo(corev1.PersistentVolumeReclaimDelete)
	}
	if sc.VolumeBindingMode == nil {
		sc.VolumeBindingMode = ptrTo(storagev1.VolumeBindingImmediate)
	}
}

// DefaultPersistentVolume applies SetDefaults_PersistentVolume: phase
// Pending until the PV controller sees it, reclaim policy Retain, volume
// mode Filesystem.
func DefaultPersistentVolume(pv *corev1.PersistentVolume) {
	if pv.Status.Phase == "" {
		pv.Status.Phase = corev1.VolumePending
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if pv.Spec.VolumeMode == nil {
		pv.Spec.VolumeMode = ptrTo(corev1.PersistentVolumeFilesystem)
	}
}

// DefaultPersistentVolumeClaim applies SetDefaults_PersistentVolumeClaim.
func DefaultPersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) {
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
	if pvc.Spec.VolumeMode == nil {
		pvc.Spec.VolumeMode = ptrTo(corev1.PersistentVolumeFilesystem)
	}
}

// DefaultClass returns the default StorageClass: among the classes
// annotated as default, the newest, ties broken by name (GetDefaultClass in
// pkg/volume/util/storageclass), or nil.
func DefaultClass(s *cluster.State) *storagev1.StorageClass {
	var best *storagev1.StorageClass
	for _, k := range cluster.SortedKeys(s.StorageClasses) {
		sc := s.StorageClasses[k]
		if sc.Annotations[IsDefaultClassAnnotation] != "true" {
			continue
		}
		if best == nil || sc.CreationTimestamp.After(best.CreationTimestamp.Time) {
			best = sc
		}
	}
	return best
}

// admitStorage runs the storage admission plugins on a new object:
// DefaultStorageClass fills a claim's class, StorageObjectInUseProtection
// adds the protection finalizers. berth also refuses a claim that the EBS
// volume type of its (existing) class can never hold, rather than leaving it
// Pending with a provisioning failure.
func admitStorage(s *cluster.State, obj interface{}) error {
	switch o := obj.(type) {
	case *corev1.PersistentVolumeClaim:
		if o.Spec.StorageClassName == nil {
			if def := DefaultClass(s); def != nil {
				o.Spec.StorageClassName = ptrTo(def.Name)
			}
		}
		addFinalizer(&o.Finalizers, pvcProtectionFinalizer)
		return checkClaimSize(s, o)
	case *corev1.PersistentVolume:
		addFinalizer(&o.Finalizers, pvProtectionFinalizer)
	}
	return nil
}

func addFinalizer(list *[]string, f string) {
	for _, v := range *list {
		if v == f {
			return
		}
	}
	*list = append(*list, f)
}

// checkClaimSize compares the claim's request with the size range of the
// EBS volume type its class provisions.
func checkClaimSize(s *cluster.State, pvc *corev1.PersistentVolumeClaim) error {
	if pvc.Spec.StorageClassName == nil {
		return nil
	}
	sc, ok := s.StorageClasses[*pvc.Spec.StorageClassName]
	if !ok || !aws.IsEBSProvisioner(sc.Provisioner) {
		return nil
	}
	req, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		return nil
	}
	msg := ClaimSizeProblem(sc, req.Value())
	if msg == "" {
		return nil
	}
	return fmt.Errorf("PersistentVolumeClaim %q is invalid: spec.resources.requests.storage: Invalid value: %q: %s",
		pvc.Name, req.String(), msg)
}

// ClaimSizeProblem says why an EBS class cannot provision a volume of the
// given size (after rounding up to GiB), or "" when it can.
func ClaimSizeProblem(sc *storagev1.StorageClass, bytes int64) string {
	volType := aws.EBSVolumeType(sc.Parameters)
	lo, hi, ok := aws.EBSSizeRange(volType)
	if !ok {
		return ""
	}
	size := aws.RoundUpGiB(bytes) << 30
	switch {
	case size > hi.Value():
		return fmt.Sprintf("exceeds the largest EBS %s volume (%s) that StorageClass %q can provision", volType, hi.String(), sc.Name)
	case size < lo.Value():
		return fmt.Sprintf("is below the smallest EBS %s volume (%s) that StorageClass %q can provision", volType, lo.String(), sc.Name)
	}
	return ""
}

// keepStorageState carries over, on update, what the controllers own: the
// status, the binding (volumeName / claimRef), the class the claim was
// defaulted to, the finalizers and the controllers' annotations. kubectl
// apply's three-way merge keeps them the same way.
func keepStorageState(obj, old interface{}) {
	switch o := obj.(type) {
	case *corev1.PersistentVolumeClaim:
		op := old.(*corev1.PersistentVolumeClaim)
		o.Status = op.Status
		if o.Spec.VolumeName == "" {
			o.Spec.VolumeName = op.Spec.VolumeName
		}
		if o.Spec.StorageClassName == nil {
			o.Spec.StorageClassName = op.Spec.StorageClassName
		}
		o.Finalizers = op.Finalizers
		o.Annotations = mergeControllerAnnotations(o.Annotations, op.Annotations)
	case *corev1.PersistentVolume:
		op := old.(*corev1.PersistentVolume)
		o.Status = op.Status
		if o.Spec.ClaimRef == nil {
			o.Spec.ClaimRef = op.Spec.ClaimRef
		}
		o.Finalizers = op.Finalizers
		o.Annotations = mergeControllerAnnotations(o.Annotations, op.Annotations)
	}
}

// controllerAnnotations are written by the PV controller, the scheduler and
// the external provisioner, never by users.
var controllerAnnotations = []string{
	"pv.kubernetes.io/bind-completed", "pv.kubernetes.io/bound-by-controller", "pv.kubernetes.io/provisioned-by",
	"pv.kubernetes.io/migrated-to", "volume.kubernetes.io/selected-node", "volume.kubernetes.io/storage-provisioner",
	"volume.beta.kubernetes.io/storage-provisioner",
	"volume.kubernetes.io/provisioner-deletion-secret-name", "volume.kubernetes.io/provisioner-deletion-secret-namespace",
}

func mergeControllerAnnotations(desired, live map[string]string) map[string]string {
	for _, k := range controllerAnnotations {
		if v, ok := live[k]; ok {
			if desired == nil {
				desired = map[string]string{}
			}
			if _, set := desired[k]; !set {
				desired[k] = v
			}
		}
	}
	return desired
}
