package manifest

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var taintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

// validatePodSpec covers the parts of ValidatePodSpec that placement reads.
func validatePodSpec(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateContainers(spec.Containers, fldPath.Child("containers"))...)
	if len(spec.InitContainers) > 0 {
		errs = append(errs, validateContainers(spec.InitContainers, fldPath.Child("initContainers"))...)
		// Init container names must not clash with app container names either.
		appNames := sets.New[string]()
		for _, c := range spec.Containers {
			appNames.Insert(c.Name)
		}
		for i, c := range spec.InitContainers {
			if c.Name != "" && appNames.Has(c.Name) {
				errs = append(errs, field.Duplicate(fldPath.Child("initContainers").Index(i).Child("name"), c.Name))
			}
		}
	}
	switch spec.RestartPolicy {
	case "", corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("restartPolicy"), spec.RestartPolicy,
			[]corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	}
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
	errs = append(errs, validateTolerations(spec.Tolerations, fldPath.Child("tolerations"))...)
	if spec.Affinity != nil {
		errs = append(errs, validateAffinity(spec.Affinity, fldPath.Child("affinity"))...)
	}
	errs = append(errs, validateTopologySpread(spec.TopologySpreadConstraints, fldPath.Child("topologySpreadConstraints"))...)
	if spec.NodeName != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(spec.NodeName, false) {
			errs = append(errs, field.Invalid(fldPath.Child("nodeName"), spec.NodeName, msg))
		}
	}
	if spec.PriorityClassName != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(spec.PriorityClassName, false) {
			errs = append(errs, field.Invalid(fldPath.Child("priorityClassName"), spec.PriorityClassName, msg))
		}
	}
	if spec.TerminationGracePeriodSeconds != nil && *spec.TerminationGracePeriodSeconds < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), *spec.TerminationGracePeriodSeconds, isNegativeErrorMsg))
	}
	if spec.Overhead != nil {
		errs = append(errs, validateResourceList(spec.Overhead, fldPath.Child("overhead"))...)
	}
	return errs
}

func validateContainers(containers []corev1.Container, fldPath *field.Path) field.ErrorList {
	if len(containers) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i, c := range containers {
		idx := fldPath.Index(i)
		namePath := idx.Child("name")
		if c.Name == "" {
			errs = append(errs, field.Required(namePath, ""))
		} else {
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(namePath, c.Name, msg))
			}
		}
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(namePath, c.Name))
		} else {
			names.Insert(c.Name)
		}
		if c.Image == "" {
			errs = append(errs, field.Required(idx.Child("image"), ""))
		}
		errs = append(errs, validateResources(&c.Resources, idx.Child("resources"))...)
		errs = append(errs, validateContainerPorts(c.Ports, idx.Child("ports"))...)
	}
	return errs
}

func validateContainerPorts(ports []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, p := range ports {
		idx := fldPath.Index(i)
		for _, msg := range validation.IsValidPortNum(int(p.ContainerPort)) {
			errs = append(errs, field.Invalid(idx.Child("containerPort"), p.ContainerPort, msg))
		}
		if p.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(p.HostPort)) {
				errs = append(errs, field.Invalid(idx.Child("hostPort"), p.HostPort, msg))
			}
		}
		switch p.Protocol {
		case "", corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		default:
			errs = append(errs, field.NotSupported(idx.Child("protocol"), p.Protocol,
				[]corev1.Protocol{corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP}))
		}
	}
	return errs
}

func validateTaintEffect(effect corev1.TaintEffect, allowEmpty bool, fldPath *field.Path) field.ErrorList {
	if !allowEmpty && effect == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	switch effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return nil
	}
	return field.ErrorList{field.NotSupported(fldPath, effect, taintEffects)}
}

// validateNodeTaints mirrors the API server's validateNodeTaints.
func validateNodeTaints(taints []corev1.Taint, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[corev1.TaintEffect]sets.Set[string]{}
	for i, t := range taints {
		idx := fldPath.Index(i)
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, idx.Child("key"))...)
		if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
			errs = append(errs, field.Invalid(idx.Child("value"), t.Value, strings.Join(msgs, ";")))
		}
		errs = append(errs, validateTaintEffect(t.Effect, false, idx.Child("effect"))...)
		if seen[t.Effect].Has(t.Key) {
			dup := field.Duplicate(idx, t)
			dup.Detail = "taints must be unique by key and effect pair"
			errs = append(errs, dup)
			continue
		}
		if seen[t.Effect] == nil {
			seen[t.Effect] = sets.New[string]()
		}
		seen[t.Effect].Insert(t.Key)
	}
	return errs
}

// validateTolerations mirrors the API server's ValidateTolerations.
func validateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		idx := fldPath.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, idx.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(idx.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(idx.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
				errs = append(errs, field.Invalid(idx.Child("operator"), t.Value, strings.Join(msgs, ";")))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(idx.Child("operator"), t, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(idx.Child("operator"), t.Operator,
				[]corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		if t.Effect != "" {
			errs = append(errs, validateTaintEffect(t.Effect, true, idx.Child("effect"))...)
		}
	}
	return errs
}

func validateAffinity(a *corev1.Affinity, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		p := fldPath.Child("nodeAffinity")
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			rp := p.Child("requiredDuringSchedulingIgnoredDuringExecution")
			if len(req.NodeSelectorTerms) == 0 {
				errs = append(errs, field.Required(rp.Child("nodeSelectorTerms"), "must have at least one node selector term"))
			}
			for i, term := range req.NodeSelectorTerms {
				errs = append(errs, validateNodeSelectorTerm(term, rp.Child("nodeSelectorTerms").Index(i))...)
			}
		}
		for i, pref := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			ip := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			if pref.Weight <= 0 || pref.Weight > 100 {
				errs = append(errs, field.Invalid(ip.Child("weight"), pref.Weight, "must be in the range 1-100"))
			}
			errs = append(errs, validateNodeSelectorTerm(pref.Preference, ip.Child("preference"))...)
		}
	}
	for _, pa := range []struct {
		name      string
		required  []corev1.PodAffinityTerm
		preferred []corev1.WeightedPodAffinityTerm
	}{
		{"podAffinity", podAffinityRequired(a.PodAffinity), podAffinityPreferred(a.PodAffinity)},
		{"podAntiAffinity", podAntiAffinityRequired(a.PodAntiAffinity), podAntiAffinityPreferred(a.PodAntiAffinity)},
	} {
		p := fldPath.Child(pa.name)
		for i, term := range pa.required {
			errs = append(errs, validatePodAffinityTerm(term, p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
		}
		for i, w := range pa.preferred {
			ip := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			if w.Weight <= 0 || w.Weight > 100 {
				errs = append(errs, field.Invalid(ip.Child("weight"), w.Weight, "must be in the range 1-100"))
			}
			errs = append(errs, validatePodAffinityTerm(w.PodAffinityTerm, ip.Child("podAffinityTerm"))...)
		}
	}
	return errs
}

func podAffinityRequired(a *corev1.PodAffinity) []corev1.PodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.RequiredDuringSchedulingIgnoredDuringExecution
}

func podAffinityPreferred(a *corev1.PodAffinity) []corev1.WeightedPodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.PreferredDuringSchedulingIgnoredDuringExecution
}

func podAntiAffinityRequired(a *corev1.PodAntiAffinity) []corev1.PodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.RequiredDuringSchedulingIgnoredDuringExecution
}

func podAntiAffinityPreferred(a *corev1.PodAntiAffinity) []corev1.WeightedPodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.PreferredDuringSchedulingIgnoredDuringExecution
}

func validateNodeSelectorTerm(term corev1.NodeSelectorTerm, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range term.MatchExpressions {
		errs = append(errs, validateNodeSelectorRequirement(r, fldPath.Child("matchExpressions").Index(i), true)...)
	}
	for i, r := range term.MatchFields {
		p := fldPath.Child("matchFields").Index(i)
		errs = append(errs, validateNodeSelectorRequirement(r, p, false)...)
		if r.Key != "metadata.name" {
			errs = append(errs, field.NotSupported(p.Child("key"), r.Key, []string{"metadata.name"}))
		}
	}
	return errs
}

func validateNodeSelectorRequirement(r corev1.NodeSelectorRequirement, fldPath *field.Path, labelKey bool) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(fldPath.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			errs = append(errs, field.Forbidden(fldPath.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(fldPath.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		} else if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
			errs = append(errs, field.Invalid(fldPath.Child("values").Index(0), r.Values[0], "must be an integer when `operator` is 'Lt' or 'Gt'"))
		}
	default:
		errs = append(errs, field.Invalid(fldPath.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	if labelKey {
		errs = append(errs, metav1validation.ValidateLabelName(r.Key, fldPath.Child("key"))...)
	}
	return errs
}

func validatePodAffinityTerm(term corev1.PodAffinityTerm, fldPath *field.Path) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs := metav1validation.ValidateLabelSelector(term.LabelSelector, opts, fldPath.Child("labelSelector"))
	errs = append(errs, metav1validation.ValidateLabelSelector(term.NamespaceSelector, opts, fldPath.Child("namespaceSelector"))...)
	for _, ns := range term.Namespaces {
		for _, msg := range apivalidation.ValidateNamespaceName(ns, false) {
			errs = append(errs, field.Invalid(fldPath.Child("namespaces"), ns, msg))
		}
	}
	if term.TopologyKey == "" {
		errs = append(errs, field.Required(fldPath.Child("topologyKey"), "can not be empty"))
	} else {
		errs = append(errs, metav1validation.ValidateLabelName(term.TopologyKey, fldPath.Child("topologyKey"))...)
	}
	return errs
}

func validateTopologySpread(constraints []corev1.TopologySpreadConstraint, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range constraints {
		p := fldPath.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		switch c.WhenUnsatisfiable {
		case corev1.DoNotSchedule, corev1.ScheduleAnyway:
		default:
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable,
				[]corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}))
		}
		if c.MinDomains != nil && *c.MinDomains <= 0 {
			errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains, "must be greater than 0"))
		}
		errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector,
			metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
	}
	return errs
}
