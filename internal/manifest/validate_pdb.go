package manifest

import (
	policyv1 "k8s.io/api/policy/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validatePodDisruptionBudget is ValidatePodDisruptionBudget for policy/v1:
// at most one of minAvailable and maxUnavailable, each a non-negative
// integer or a percentage of at most 100%, a valid selector and a known
// unhealthyPodEvictionPolicy.
func validatePodDisruptionBudget(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
	errs := validateMeta(&pdb.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	spec, fldPath := &pdb.Spec, field.NewPath("spec")
	if spec.MinAvailable != nil && spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(fldPath, spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	errs = append(errs, validateBudgetValue(spec.MinAvailable, fldPath.Child("minAvailable"))...)
	errs = append(errs, validateBudgetValue(spec.MaxUnavailable, fldPath.Child("maxUnavailable"))...)
	errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector,
		metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
	if p := spec.UnhealthyPodEvictionPolicy; p != nil && *p != policyv1.IfHealthyBudget && *p != policyv1.AlwaysAllow {
		errs = append(errs, field.NotSupported(fldPath.Child("unhealthyPodEvictionPolicy"), *p,
			[]string{string(policyv1.IfHealthyBudget), string(policyv1.AlwaysAllow)}))
	}
	return errs
}

// validateBudgetValue is ValidatePositiveIntOrPercent plus IsNotMoreThan100Percent.
func validateBudgetValue(v *intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	errs := validateIntOrPercent(v, fldPath)
	if len(errs) > 0 || v.Type != intstr.String {
		return errs
	}
	if n, err := intstr.GetScaledValueFromIntOrPercent(v, 100, false); err == nil && n > 100 {
		errs = append(errs, field.Invalid(fldPath, v, "must not be greater than 100%"))
	}
	return errs
}
