package manifest

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/berth-sim/berth/internal/aws"
)

var (
	supportedAccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany, corev1.ReadWriteMany,
		corev1.ReadWriteOnce, corev1.ReadWriteOncePod}
	supportedReclaimPolicies = []corev1.PersistentVolumeReclaimPolicy{corev1.PersistentVolumeReclaimDelete,
		corev1.PersistentVolumeReclaimRetain}
	supportedBindingModes = []storagev1.VolumeBindingMode{storagev1.VolumeBindingImmediate,
		storagev1.VolumeBindingWaitForFirstConsumer}
	supportedVolumeModes = []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem}
)

// validateStorageObject covers StorageClass, PersistentVolume and
// PersistentVolumeClaim (ValidateStorageClass, ValidatePersistentVolume,
// ValidatePersistentVolumeClaim) for the fields placement reads. On top of
// the API server, classes served by the EBS CSI driver must name a volume
// type EBS has: the driver would fail every CreateVolume otherwise.
func validateStorageObject(obj interface{}) (field.ErrorList, bool) {
	switch o := obj.(type) {
	case *storagev1.StorageClass:
		errs := validateMeta(&o.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
		return append(errs, validateStorageClass(o)...), true
	case *corev1.PersistentVolume:
		errs := validateMeta(&o.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
		return append(errs, validatePersistentVolumeSpec(&o.Spec, field.NewPath("spec"))...), true
	case *corev1.PersistentVolumeClaim:
		errs := validateMeta(&o.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
		return append(errs, validatePersistentVolumeClaimSpec(&o.Spec, field.NewPath("spec"))...), true
	case *storagev1.CSINode:
		return validateMeta(&o.ObjectMeta, false, apivalidation.NameIsDNSSubdomain), true
	}
	return nil, false
}

func validateStorageClass(sc *storagev1.StorageClass) field.ErrorList {
	var errs field.ErrorList
	if sc.Provisioner == "" {
		errs = append(errs, field.Required(field.NewPath("provisioner"), ""))
	} else if aws.IsEBSProvisioner(sc.Provisioner) {
		for k, v := range sc.Parameters {
			if strings.EqualFold(k, "type") && !slices.Contains(aws.EBSVolumeTypes, strings.ToLower(v)) {
				errs = append(errs, field.NotSupported(field.NewPath("parameters", k), v, aws.EBSVolumeTypes))
			}
		}
	}
	if p := sc.ReclaimPolicy; p != nil && !containsReclaimPolicy(*p) {
		errs = append(errs, field.NotSupported(field.NewPath("reclaimPolicy"), *p, supportedReclaimPolicies))
	}
	if m := sc.VolumeBindingMode; m != nil && *m != storagev1.VolumeBindingImmediate && *m != storagev1.VolumeBindingWaitForFirstConsumer {
		errs = append(errs, field.NotSupported(field.NewPath("volumeBindingMode"), *m, supportedBindingModes))
	}
	return errs
}

func validateAccessModes(modes []corev1.PersistentVolumeAccessMode, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(modes) == 0 {
		return field.ErrorList{field.Required(fldPath, "at least 1 access mode is required")}
	}
	hasOncePod := false
	for _, m := range modes {
		if m == corev1.ReadWriteOncePod {
			hasOncePod = true
		}
		if !containsAccessMode(m) {
			errs = append(errs, field.NotSupported(fldPath, m, supportedAccessModes))
		}
	}
	if hasOncePod && len(modes) > 1 {
		errs = append(errs, field.Forbidden(fldPath, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

func validateVolumeMode(mode *corev1.PersistentVolumeMode, fldPath *field.Path) field.ErrorList {
	if mode != nil && *mode != corev1.PersistentVolumeBlock && *mode != corev1.PersistentVolumeFilesystem {
		return field.ErrorList{field.NotSupported(fldPath, *mode, supportedVolumeModes)}
	}
	return nil
}

func validatePersistentVolumeSpec(spec *corev1.PersistentVolumeSpec, fldPath *field.Path) field.ErrorList {
	errs := validateAccessModes(spec.AccessModes, fldPath.Child("accessModes"))
	capPath := fldPath.Child("capacity")
	if len(spec.Capacity) == 0 {
		errs = append(errs, field.Required(capPath, ""))
	} else if q, ok := spec.Capacity[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.NotSupported(capPath, corev1.ResourceList(spec.Capacity), []corev1.ResourceName{corev1.ResourceStorage}))
	} else if q.Sign() <= 0 {
		errs = append(errs, field.Invalid(capPath.Key(string(corev1.ResourceStorage)), q.String(), "must be greater than zero"))
	}
	if p := spec.PersistentVolumeReclaimPolicy; p != "" && !containsReclaimPolicy(p) {
		errs = append(errs, field.NotSupported(fldPath.Child("persistentVolumeReclaimPolicy"), p, supportedReclaimPolicies))
	}
	errs = append(errs, validateVolumeMode(spec.VolumeMode, fldPath.Child("volumeMode"))...)
	if spec.StorageClassName != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(spec.StorageClassName, false) {
			errs = append(errs, field.Invalid(fldPath.Child("storageClassName"), spec.StorageClassName, msg))
		}
	}
	if na := spec.NodeAffinity; na != nil {
		naPath := fldPath.Child("nodeAffinity")
		if na.Required == nil {
			errs = append(errs, field.Required(naPath.Child("required"), "must specify required node constraints"))
		} else {
			errs = append(errs, validateNodeSelector(na.Required, naPath.Child("required"))...)
		}
	}
	return errs
}

func validatePersistentVolumeClaimSpec(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	errs := validateAccessModes(spec.AccessModes, fldPath.Child("accessModes"))
	if spec.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
	}
	storagePath := fldPath.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(storagePath, ""))
	} else if q.Sign() <= 0 {
		errs = append(errs, field.Invalid(storagePath, q.String(), "must be greater than zero"))
	}
	errs = append(errs, validateVolumeMode(spec.VolumeMode, fldPath.Child("volumeMode"))...)
	if spec.StorageClassName != nil && *spec.StorageClassName != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*spec.StorageClassName, false) {
			errs = append(errs, field.Invalid(fldPath.Child("storageClassName"), *spec.StorageClassName, msg))
		}
	}
	return errs
}

// validateNodeSelector mirrors ValidateNodeSelector (PV node affinity).
func validateNodeSelector(ns *corev1.NodeSelector, fldPath *field.Path) field.ErrorList {
	termsPath := fldPath.Child("nodeSelectorTerms")
	if len(ns.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(termsPath, "must have at least one node selector term")}
	}
	var errs field.ErrorList
	for i, term := range ns.NodeSelectorTerms {
		errs = append(errs, validateNodeSelectorTerm(term, termsPath.Index(i))...)
	}
	return errs
}

func containsAccessMode(m corev1.PersistentVolumeAccessMode) bool {
	for _, v := range supportedAccessModes {
		if v == m {
			return true
		}
	}
	return false
}

func containsReclaimPolicy(p corev1.PersistentVolumeReclaimPolicy) bool {
	for _, v := range supportedReclaimPolicies {
		if v == p {
			return true
		}
	}
	return false
}
