package manifest

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/berth-sim/berth/internal/eksctl"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	karpv1alpha5 "github.com/berth-sim/berth/internal/karpenter/apis/v1alpha5"
)

// isNegativeErrorMsg is the API server's text for negative numbers.
const isNegativeErrorMsg = "must be greater than or equal to 0"

// Validate checks obj with the API server's rules for the fields berth uses
// (names, labels, selectors, quantities, taints, tolerations, affinity,
// containers, workload selectors and replicas) and eksctl's rules for a
// ClusterConfig. Each problem is one line,
// "file:line: document n (Kind ns/name): field.path: message", and all of
// them are joined into the returned error.
//
// Validation sees the object as written, before defaulting: a missing
// namespace is fine (apply fills it in) and an empty restartPolicy means Always.
func Validate(obj Object) error {
	var errs field.ErrorList
	switch o := obj.Object.(type) {
	case *eksctl.ClusterConfig:
		if _, _, err := o.Resolve(obj.Source.String()); err != nil {
			return &Error{Source: obj.Source, Object: obj.describe(), Err: err}
		}
		return nil
	case *corev1.Namespace:
		errs = validateMeta(&o.ObjectMeta, false, apivalidation.ValidateNamespaceName)
	case *corev1.Node:
		errs = validateMeta(&o.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
		errs = append(errs, validateNodeTaints(o.Spec.Taints, field.NewPath("spec", "taints"))...)
		errs = append(errs, validateNodeResources(o)...)
	case *corev1.Pod:
		errs = validateMeta(&o.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
		errs = append(errs, validatePodSpec(&o.Spec, field.NewPath("spec"))...)
	case *corev1.Service:
		errs = validateMeta(&o.ObjectMeta, true, apivalidation.NameIsDNS1035Label)
		errs = append(errs, metav1validation.ValidateLabels(o.Spec.Selector, field.NewPath("spec", "selector"))...)
	case *corev1.ServiceAccount:
		errs = validateMeta(&o.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	case *corev1.ConfigMap:
		errs = validateMeta(&o.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
		errs = append(errs, validateDataKeys(sets.List(sets.KeySet(o.Data)), field.NewPath("data"))...)
		errs = append(errs, validateDataKeys(sets.List(sets.KeySet(o.BinaryData)), field.NewPath("binaryData"))...)
	case *corev1.Secret:
		errs = validateMeta(&o.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
		errs = append(errs, validateDataKeys(sets.List(sets.KeySet(o.Data)), field.NewPath("data"))...)
		errs = append(errs, validateDataKeys(sets.List(sets.KeySet(o.StringData)), field.NewPath("stringData"))...)
	case *appsv1.Deployment:
		errs = validateMeta(&o.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
		errs = append(errs, validateDeploymentSpec(&o.Spec, field.NewPath("spec"))...)
	case *appsv1.ReplicaSet:
		errs = validateMeta(&o.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
		errs = append(errs, validateReplicaSetSpec(&o.Spec, field.NewPath("spec"))...)
	case *appsv1.DaemonSet:
		errs = append(validateMeta(&o.ObjectMeta, true, apivalidation.NameIsDNSSubdomain), validateDaemonSetSpec(&o.Spec, field.NewPath("spec"))...)
	case *appsv1.StatefulSet:
		errs = append(validateMeta(&o.ObjectMeta, true, apivalidation.NameIsDNSSubdomain), validateStatefulSetSpec(&o.Spec, field.NewPath("spec"))...)
	case *batchv1.Job:
		errs = append(validateMeta(&o.ObjectMeta, true, apivalidation.NameIsDNSSubdomain), validateJobSpec(&o.Spec, field.NewPath("spec"))...)
	case *schedulingv1.PriorityClass:
		errs = validateMeta(&o.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
		errs = append(errs, validatePriorityClass(o)...)
	case *policyv1.PodDisruptionBudget:
		errs = validatePodDisruptionBudget(o)
	case *karpv1.NodePool:
		errs = validateNodePool(o)
	case *karpv1.NodeClaim:
		errs = validateNodeClaim(o)
	case *karpv1.EC2NodeClass:
		errs = validateEC2NodeClass(o)
	case *karpv1alpha5.Provisioner:
		// The API server checks the schema before it calls the webhooks.
		if errs = validateProvisionerSchema(o); len(errs) == 0 {
			return obj.webhookErrors(provisionerWebhook(o))
		}
	case *karpv1alpha5.AWSNodeTemplate:
		if errs = validateMeta(&o.ObjectMeta, false, apivalidation.NameIsDNSSubdomain); len(errs) == 0 {
			return obj.webhookErrors(awsNodeTemplateWebhook(o))
		}
	default:
		var ok bool
		if errs, ok = validateStorageObject(obj.Object); !ok {
			return &Error{Source: obj.Source, Object: obj.describe(), Err: fmt.Errorf("berth cannot validate %T", obj.Object)}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	sortRuns(errs)
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		out = append(out, &Error{Source: obj.Source, Object: obj.describe(), Err: oneLine(e)})
	}
	return errors.Join(out...)
}

// webhookErrors labels admission webhook denials with the object's source.
func (obj Object) webhookErrors(errs []error) error {
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		out = append(out, &Error{Source: obj.Source, Object: obj.describe(), Err: e})
	}
	return errors.Join(out...)
}

// ValidateAll validates every object and joins all problems.
func ValidateAll(objs []Object) error {
	var errs []error
	for _, o := range objs {
		if err := Validate(o); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// validateMeta runs apimachinery's ObjectMeta validation. A namespaced object
// without a namespace is checked as if it were in "default", since apply
// fills the namespace in before the API server sees it.
func validateMeta(meta *metav1.ObjectMeta, namespaced bool, nameFn apivalidation.ValidateNameFunc) field.ErrorList {
	m := *meta
	if namespaced && m.Namespace == "" {
		m.Namespace = metav1.NamespaceDefault
	}
	if labelsValid(m.Labels) {
		// Valid labels add no errors; skip checking them again.
		m.Labels = nil
	}
	return apivalidation.ValidateObjectMeta(&m, namespaced, nameFn, field.NewPath("metadata"))
}

func validateDataKeys(keys []string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range keys {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(fldPath, k, msg))
		}
	}
	return errs
}

func validateDeploymentSpec(spec *appsv1.DeploymentSpec, fldPath *field.Path) field.ErrorList {
	errs := validateReplicas(spec.Replicas, fldPath.Child("replicas"))
	errs = append(errs, validateWorkloadTemplate(spec.Selector, &spec.Template, "deployment", fldPath)...)
	errs = append(errs, validateDeploymentStrategy(&spec.Strategy, fldPath.Child("strategy"))...)
	if spec.RevisionHistoryLimit != nil && *spec.RevisionHistoryLimit < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("revisionHistoryLimit"), int64(*spec.RevisionHistoryLimit), isNegativeErrorMsg))
	}
	if spec.MinReadySeconds < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("minReadySeconds"), int64(spec.MinReadySeconds), isNegativeErrorMsg))
	}
	if spec.ProgressDeadlineSeconds != nil {
		if *spec.ProgressDeadlineSeconds < 0 {
			errs = append(errs, field.Invalid(fldPath.Child("progressDeadlineSeconds"), int64(*spec.ProgressDeadlineSeconds), isNegativeErrorMsg))
		} else if *spec.ProgressDeadlineSeconds <= spec.MinReadySeconds {
			errs = append(errs, field.Invalid(fldPath.Child("progressDeadlineSeconds"), *spec.ProgressDeadlineSeconds, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

func validateReplicaSetSpec(spec *appsv1.ReplicaSetSpec, fldPath *field.Path) field.ErrorList {
	errs := validateReplicas(spec.Replicas, fldPath.Child("replicas"))
	if spec.MinReadySeconds < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("minReadySeconds"), int64(spec.MinReadySeconds), isNegativeErrorMsg))
	}
	return append(errs, validateWorkloadTemplate(spec.Selector, &spec.Template, "deployment", fldPath)...)
}

func validateReplicas(replicas *int32, fldPath *field.Path) field.ErrorList {
	if replicas != nil && *replicas < 0 {
		return field.ErrorList{field.Invalid(fldPath, int64(*replicas), isNegativeErrorMsg)}
	}
	return nil
}

// validateWorkloadTemplate checks a controller's selector and pod template as
// ValidateDeploymentSpec / ValidateReplicaSetSpec do. Upstream's empty-selector
// text says "deployment" for ReplicaSets too.
func validateWorkloadTemplate(sel *metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, what string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	selPath := fldPath.Child("selector")
	if sel == nil {
		errs = append(errs, field.Required(selPath, ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, selPath)...)
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			errs = append(errs, field.Invalid(selPath, sel, "empty selector is invalid for "+what))
		}
	}
	// Like upstream, an unparsable selector stops here, and a missing one
	// (labels.Nothing) also reports the template as not matching.
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return append(errs, field.Invalid(selPath, sel, "invalid label selector"))
	}
	tmplPath := fldPath.Child("template")
	if !selector.Empty() && !selector.Matches(labels.Set(tmpl.Labels)) {
		errs = append(errs, field.Invalid(tmplPath.Child("metadata", "labels"), tmpl.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, metav1validation.ValidateLabels(tmpl.Labels, tmplPath.Child("metadata", "labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(tmpl.Annotations, tmplPath.Child("metadata", "annotations"))...)
	errs = append(errs, validatePodSpec(&tmpl.Spec, tmplPath.Child("spec"))...)
	if p := tmpl.Spec.RestartPolicy; p != "" && p != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tmplPath.Child("spec", "restartPolicy"), p, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	if tmpl.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tmplPath.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicaSet is not Supported"))
	}
	return errs
}

func validateDeploymentStrategy(s *appsv1.DeploymentStrategy, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.Type {
	case "", appsv1.RollingUpdateDeploymentStrategyType:
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			errs = append(errs, field.Forbidden(fldPath.Child("rollingUpdate"), "may not be specified when strategy `type` is '"+string(appsv1.RecreateDeploymentStrategyType+"'")))
		}
		return errs
	default:
		return field.ErrorList{field.NotSupported(fldPath.Child("type"), s.Type,
			[]appsv1.DeploymentStrategyType{appsv1.RecreateDeploymentStrategyType, appsv1.RollingUpdateDeploymentStrategyType})}
	}
	ru := s.RollingUpdate
	if ru == nil {
		return errs
	}
	rp := fldPath.Child("rollingUpdate")
	errs = append(errs, validateIntOrPercent(ru.MaxUnavailable, rp.Child("maxUnavailable"))...)
	errs = append(errs, validateIntOrPercent(ru.MaxSurge, rp.Child("maxSurge"))...)
	if intOrPercentIsZero(ru.MaxUnavailable) && intOrPercentIsZero(ru.MaxSurge) {
		errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), ru.MaxUnavailable, "may not be 0 when `maxSurge` is 0"))
	}
	if ru.MaxUnavailable != nil && ru.MaxUnavailable.Type == intstr.String {
		if v, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, 100, false); err == nil && v > 100 {
			errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), ru.MaxUnavailable, "must not be greater than 100%"))
		}
	}
	return errs
}

// validateIntOrPercent mirrors ValidatePositiveIntOrPercent.
func validateIntOrPercent(v *intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	switch v.Type {
	case intstr.String:
		for _, msg := range validation.IsValidPercent(v.StrVal) {
			return field.ErrorList{field.Invalid(fldPath, v, msg)}
		}
	case intstr.Int:
		if v.IntVal < 0 {
			return field.ErrorList{field.Invalid(fldPath, v, isNegativeErrorMsg)}
		}
	}
	return nil
}

func intOrPercentIsZero(v *intstr.IntOrString) bool {
	if v == nil {
		return false // defaulted to 25%
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, 100, false)
	return err == nil && n == 0
}

// validatePriorityClass follows ValidatePriorityClass: the system- prefix
// is reserved for the built-in classes exactly as defined, and user classes
// stay at or below HighestUserDefinablePriority.
func validatePriorityClass(pc *schedulingv1.PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if strings.HasPrefix(pc.Name, systemPriorityClassPrefix) {
		if err := knownSystemPriorityClass(pc); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"),
				"priority class names with '"+systemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > highestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"),
			fmt.Sprintf("maximum allowed value of a user defined priority is %v", highestUserDefinablePriority)))
	}
	if pc.PreemptionPolicy != nil {
		switch *pc.PreemptionPolicy {
		case corev1.PreemptLowerPriority, corev1.PreemptNever:
		default:
			errs = append(errs, field.NotSupported(field.NewPath("preemptionPolicy"), *pc.PreemptionPolicy,
				[]corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever}))
		}
	}
	return errs
}

// sortRuns orders each run of errors on the same field by text. apimachinery
// validates label and annotation maps in map order; this makes the output
// deterministic without disturbing the field-by-field order.
func sortRuns(errs field.ErrorList) {
	for i := 0; i < len(errs); {
		j := i + 1
		for j < len(errs) && errs[j].Field == errs[i].Field {
			j++
		}
		run := errs[i:j]
		sort.SliceStable(run, func(a, b int) bool { return run[a].Error() < run[b].Error() })
		i = j
	}
}

// Scheduling API constants (pkg/apis/scheduling).
const (
	highestUserDefinablePriority = int32(1000000000)
	systemPriorityClassPrefix    = "system-"
)

// systemPriorityClasses are the built-in classes' values, in upstream's order.
var systemPriorityClasses = []struct {
	name  string
	value int32
}{
	{"system-node-critical", 2*highestUserDefinablePriority + 1000},
	{"system-cluster-critical", 2 * highestUserDefinablePriority},
}

// knownSystemPriorityClass is IsKnownSystemPriorityClass's error, or nil.
func knownSystemPriorityClass(pc *schedulingv1.PriorityClass) error {
	for _, spc := range systemPriorityClasses {
		if spc.name != pc.Name {
			continue
		}
		if spc.value != pc.Value {
			return fmt.Errorf("value of %v PriorityClass must be %v", spc.name, spc.value)
		}
		if pc.GlobalDefault {
			return fmt.Errorf("globalDefault of %v PriorityClass must be %v", spc.name, false)
		}
		return nil
	}
	return fmt.Errorf("%v is not a known system priority class", pc.Name)
}

// ValidateAnnotations checks the annotations an object is sent with, once
// kubectl apply has added its last-applied configuration: their total size
// is where a large manifest first fails.
func ValidateAnnotations(obj Object, annotations map[string]string) error {
	errs := apivalidation.ValidateAnnotations(annotations, field.NewPath("metadata", "annotations"))
	if len(errs) == 0 {
		return nil
	}
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		out = append(out, &Error{Source: obj.Source, Object: obj.describe(), Err: oneLine(e)})
	}
	return errors.Join(out...)
}
