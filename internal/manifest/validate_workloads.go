package manifest

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateDaemonSetSpec follows ValidateDaemonSetSpec for the fields berth uses.
func validateDaemonSetSpec(spec *appsv1.DaemonSetSpec, fldPath *field.Path) field.ErrorList {
	errs := renameDeadlineError(validateWorkloadTemplate(spec.Selector, &spec.Template, "daemonset", fldPath), "DaemonSet")
	if spec.MinReadySeconds < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("minReadySeconds"), int64(spec.MinReadySeconds), isNegativeErrorMsg))
	}
	st := spec.UpdateStrategy
	switch st.Type {
	case "", appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if ru := st.RollingUpdate; ru != nil {
			rp := fldPath.Child("updateStrategy", "rollingUpdate")
			errs = append(errs, validateIntOrPercent(ru.MaxUnavailable, rp.Child("maxUnavailable"))...)
			errs = append(errs, validateIntOrPercent(ru.MaxSurge, rp.Child("maxSurge"))...)
			if ru.MaxUnavailable != nil && ru.MaxSurge != nil && intOrPercentIsZero(ru.MaxUnavailable) && intOrPercentIsZero(ru.MaxSurge) {
				errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), ru.MaxUnavailable, "may not be 0 when `maxSurge` is 0"))
			}
		}
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("updateStrategy", "type"), st.Type,
			[]appsv1.DaemonSetUpdateStrategyType{appsv1.OnDeleteDaemonSetStrategyType, appsv1.RollingUpdateDaemonSetStrategyType}))
	}
	return errs
}

// validateStatefulSetSpec follows ValidateStatefulSetSpec for the fields berth uses.
func validateStatefulSetSpec(spec *appsv1.StatefulSetSpec, fldPath *field.Path) field.ErrorList {
	errs := validateReplicas(spec.Replicas, fldPath.Child("replicas"))
	errs = append(errs, renameDeadlineError(validateWorkloadTemplate(spec.Selector, &spec.Template, "statefulset", fldPath), "StatefulSet")...)
	switch spec.PodManagementPolicy {
	case "", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(fldPath.Child("podManagementPolicy"), spec.PodManagementPolicy,
			"must be 'OrderedReady' or 'Parallel'"))
	}
	switch spec.UpdateStrategy.Type {
	case "", appsv1.RollingUpdateStatefulSetStrategyType:
		if ru := spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil && *ru.Partition < 0 {
			errs = append(errs, field.Invalid(fldPath.Child("updateStrategy", "rollingUpdate", "partition"), int64(*ru.Partition), isNegativeErrorMsg))
		}
	case appsv1.OnDeleteStatefulSetStrategyType:
		if spec.UpdateStrategy.RollingUpdate != nil {
			errs = append(errs, field.Invalid(fldPath.Child("updateStrategy", "rollingUpdate"), spec.UpdateStrategy.RollingUpdate,
				"only allowed for updateStrategy 'RollingUpdate'"))
		}
	default:
		errs = append(errs, field.Invalid(fldPath.Child("updateStrategy"), spec.UpdateStrategy,
			"must be 'RollingUpdate' or 'OnDelete'"))
	}
	if p := spec.PersistentVolumeClaimRetentionPolicy; p != nil {
		pp := fldPath.Child("persistentVolumeClaimRetentionPolicy")
		allowed := []appsv1.PersistentVolumeClaimRetentionPolicyType{appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType}
		for name, v := range map[string]appsv1.PersistentVolumeClaimRetentionPolicyType{"whenDeleted": p.WhenDeleted, "whenScaled": p.WhenScaled} {
			if v != "" && v != allowed[0] && v != allowed[1] {
				errs = append(errs, field.NotSupported(pp.Child(name), v, allowed))
			}
		}
	}
	if spec.MinReadySeconds < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("minReadySeconds"), int64(spec.MinReadySeconds), isNegativeErrorMsg))
	}
	for i := range spec.VolumeClaimTemplates {
		ct := &spec.VolumeClaimTemplates[i]
		if ct.Name == "" {
			errs = append(errs, field.Required(fldPath.Child("volumeClaimTemplates").Index(i).Child("metadata", "name"), "name or generateName is required"))
		}
	}
	return errs
}

// validateJobSpec follows ValidateJob for the fields berth uses. Without
// manualSelector the API server generates the selector, so none is needed.
func validateJobSpec(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, v := range map[string]*int32{"parallelism": spec.Parallelism, "completions": spec.Completions, "backoffLimit": spec.BackoffLimit} {
		if v != nil && *v < 0 {
			errs = append(errs, field.Invalid(fldPath.Child(name), int64(*v), isNegativeErrorMsg))
		}
	}
	tmplPath := fldPath.Child("template")
	if spec.ManualSelector != nil && *spec.ManualSelector {
		if spec.Selector == nil {
			errs = append(errs, field.Required(fldPath.Child("selector"), ""))
		} else {
			errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
			if sel, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !sel.Matches(labels.Set(spec.Template.Labels)) {
				errs = append(errs, field.Invalid(tmplPath.Child("metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
			}
		}
	}
	errs = append(errs, metav1validation.ValidateLabels(spec.Template.Labels, tmplPath.Child("metadata", "labels"))...)
	errs = append(errs, validatePodSpec(&spec.Template.Spec, tmplPath.Child("spec"))...)
	switch p := spec.Template.Spec.RestartPolicy; p {
	case corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure:
	case "":
		errs = append(errs, field.Required(tmplPath.Child("spec", "restartPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(tmplPath.Child("spec", "restartPolicy"), p,
			[]corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	}
	sortRuns(errs)
	return errs
}

// renameDeadlineError puts kind into the activeDeadlineSeconds message,
// which validateWorkloadTemplate words for ReplicaSets.
func renameDeadlineError(errs field.ErrorList, kind string) field.ErrorList {
	for _, e := range errs {
		if e.Type == field.ErrorTypeForbidden && e.Field == "spec.template.spec.activeDeadlineSeconds" {
			e.Detail = "activeDeadlineSeconds in " + kind + " is not Supported"
		}
	}
	return errs
}
