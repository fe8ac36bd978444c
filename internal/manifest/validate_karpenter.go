package manifest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
)

// Karpenter's v1 kinds are CRDs: the API server checks them against the
// OpenAPI schema and the x-kubernetes-validations (CEL) rules of the CRDs in
// aws/karpenter-provider-aws pkg/apis/crds (v1.14.1), with these messages.
// See docs/karpenter-apis.md for what is checked.

// The schema patterns, as written in the CRDs.
const (
	nillableDurationPattern = `^(([0-9]+(s|m|h))+|Never)$`
	durationPattern         = `^([0-9]+(s|m|h))+$`
	budgetNodesPattern      = `^((100|[0-9]{1,2})%|[0-9]+)$`
	budgetSchedulePattern   = `^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$`
	budgetDurationPattern   = `^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$`
	requirementKeyPattern   = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
	labelValuePattern       = `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	nodeClassGroupPattern   = `^[^/]*$`
)

// patterns caches compiled patterns; it is safe for concurrent use.
var patterns sync.Map

func compiled(p string) *regexp.Regexp {
	if re, ok := patterns.Load(p); ok {
		return re.(*regexp.Regexp)
	}
	re, _ := patterns.LoadOrStore(p, regexp.MustCompile(p))
	return re.(*regexp.Regexp)
}

// schemaPattern is the OpenAPI "pattern" check and its message.
func schemaPattern(p *field.Path, value, pattern string) field.ErrorList {
	if compiled(pattern).MatchString(value) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, value, fmt.Sprintf("%s in body should match '%s'", p, pattern))}
}

// schemaRange is the OpenAPI minimum/maximum check and its messages.
func schemaRange(p *field.Path, v, lo, hi int64) field.ErrorList {
	switch {
	case v < lo:
		return field.ErrorList{field.Invalid(p, v, fmt.Sprintf("%s in body should be greater than or equal to %d", p, lo))}
	case v > hi:
		return field.ErrorList{field.Invalid(p, v, fmt.Sprintf("%s in body should be less than or equal to %d", p, hi))}
	}
	return nil
}

// schemaMaxLength is the OpenAPI maxLength check.
func schemaMaxLength(p *field.Path, value string, max int) field.ErrorList {
	if len(value) > max {
		return field.ErrorList{field.TooLong(p, value, max)}
	}
	return nil
}

// schemaMaxItems is the OpenAPI maxItems check.
func schemaMaxItems(p *field.Path, n, max int) field.ErrorList {
	if n > max {
		return field.ErrorList{field.TooMany(p, n, max)}
	}
	return nil
}

// schemaEnum is the OpenAPI enum check.
func schemaEnum(p *field.Path, value string, allowed ...string) field.ErrorList {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(p, value, allowed)}
}

// cel is a failed x-kubernetes-validations rule: the API server reports the
// schema type of the field the rule sits on as the value.
func cel(p *field.Path, schemaType, message string) *field.Error {
	return field.Invalid(p, schemaType, message)
}

// validateNodePool is the karpenter.sh_nodepools.yaml schema and CEL rules.
func validateNodePool(np *karpv1.NodePool) field.ErrorList {
	errs := validateMeta(&np.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
	spec := field.NewPath("spec")
	tmpl := spec.Child("template")
	errs = append(errs, validateTemplateLabels(np.Spec.Template.Labels, tmpl.Child("metadata", "labels"))...)
	ts := tmpl.Child("spec")
	t := &np.Spec.Template.Spec
	errs = append(errs, validateRequirementsV1(t.Requirements, ts.Child("requirements"))...)
	errs = append(errs, validateNodeClassRef(t.NodeClassRef, ts.Child("nodeClassRef"))...)
	errs = append(errs, validateCRDTaints(t.Taints, ts.Child("taints"))...)
	errs = append(errs, validateCRDTaints(t.StartupTaints, ts.Child("startupTaints"))...)
	if t.ExpireAfter != "" {
		errs = append(errs, schemaPattern(ts.Child("expireAfter"), string(t.ExpireAfter), nillableDurationPattern)...)
	}
	if t.TerminationGracePeriod != nil {
		errs = append(errs, schemaPattern(ts.Child("terminationGracePeriod"), string(*t.TerminationGracePeriod), durationPattern)...)
	}
	errs = append(errs, validateDisruption(&np.Spec.Disruption, spec.Child("disruption"))...)
	if np.Spec.Weight != nil {
		errs = append(errs, schemaRange(spec.Child("weight"), int64(*np.Spec.Weight), 1, 100)...)
	}
	if np.Spec.Replicas != nil {
		if *np.Spec.Replicas < 0 {
			errs = append(errs, schemaRange(spec.Child("replicas"), *np.Spec.Replicas, 0, 1<<62)...)
		}
		if _, onlyNodes := np.Spec.Limits["nodes"]; len(np.Spec.Limits) > 1 || (len(np.Spec.Limits) == 1 && !onlyNodes) {
			errs = append(errs, cel(spec, "object", "only 'limits.nodes' is supported on static NodePools"))
		}
		if np.Spec.Weight != nil {
			errs = append(errs, cel(spec, "object", "'weight' is not supported on static NodePools"))
		}
	}
	return errs
}

// validateNodeClaim is the karpenter.sh_nodeclaims.yaml schema. Users do not
// apply NodeClaims; this holds berth's own controllers to the CRD.
func validateNodeClaim(nc *karpv1.NodeClaim) field.ErrorList {
	errs := validateMeta(&nc.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
	spec := field.NewPath("spec")
	errs = append(errs, validateRequirementsV1(nc.Spec.Requirements, spec.Child("requirements"))...)
	errs = append(errs, validateNodeClassRef(nc.Spec.NodeClassRef, spec.Child("nodeClassRef"))...)
	errs = append(errs, validateCRDTaints(nc.Spec.Taints, spec.Child("taints"))...)
	errs = append(errs, validateCRDTaints(nc.Spec.StartupTaints, spec.Child("startupTaints"))...)
	if nc.Spec.ExpireAfter != "" {
		errs = append(errs, schemaPattern(spec.Child("expireAfter"), string(nc.Spec.ExpireAfter), nillableDurationPattern)...)
	}
	if nc.Spec.TerminationGracePeriod != nil {
		errs = append(errs, schemaPattern(spec.Child("terminationGracePeriod"), string(*nc.Spec.TerminationGracePeriod), durationPattern)...)
	}
	return errs
}

// restrictedLabelRules are the CEL rules on template labels and requirement
// keys, in the CRD's order.
var restrictedLabelRules = []struct {
	bad     func(key string) bool
	message string
}{
	{func(k string) bool {
		return k != "karpenter.sh/capacity-type" && k != "karpenter.sh/nodepool" && strings.HasSuffix(labelDomain(k), "karpenter.sh")
	}, `label domain "karpenter.sh" is restricted`},
	{func(k string) bool { return k == "karpenter.sh/nodepool" }, `label "karpenter.sh/nodepool" is restricted`},
	{func(k string) bool { return k == corev1.LabelHostname }, `label "kubernetes.io/hostname" is restricted`},
	{func(k string) bool {
		return !awsWellKnownLabels[k] && strings.HasSuffix(labelDomain(k), "karpenter.k8s.aws")
	}, `label domain "karpenter.k8s.aws" is restricted`},
}

// labelDomain is CEL's x.find("^([^/]+)"): everything before the first
// slash, or the whole key.
func labelDomain(key string) string {
	d, _, _ := strings.Cut(key, "/")
	return d
}

// awsWellKnownLabels are the karpenter.k8s.aws keys the AWS CRD allows.
var awsWellKnownLabels = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range []string{"instance-tenancy", "capacity-reservation-type", "capacity-reservation-id",
		"capacity-reservation-interruptible", "ec2nodeclass", "instance-encryption-in-transit-supported",
		"nitro-sandbox", "instance-category", "instance-hypervisor", "instance-family", "instance-generation",
		"instance-local-nvme", "instance-size", "instance-cpu", "instance-cpu-manufacturer",
		"instance-cpu-sustained-clock-speed-mhz", "instance-memory", "instance-ebs-bandwidth",
		"instance-network-bandwidth", "instance-gpu-name", "instance-gpu-manufacturer", "instance-gpu-count",
		"instance-gpu-memory", "instance-accelerator-name", "instance-accelerator-manufacturer",
		"instance-accelerator-count", "instance-capability-flex", "placement-group-id", "placement-group-partition"} {
		m["karpenter.k8s.aws/"+s] = true
	}
	return m
}()

// validateTemplateLabels: values by pattern, keys by the restricted-label
// rules (each rule fails once for the whole map, as CEL's self.all does).
func validateTemplateLabels(labels map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	keys := sets.List(sets.KeySet(labels))
	for _, k := range keys {
		errs = append(errs, schemaMaxLength(p.Key(k), labels[k], 63)...)
		errs = append(errs, schemaPattern(p.Key(k), labels[k], labelValuePattern)...)
	}
	if len(labels) > 100 {
		errs = append(errs, field.TooMany(p, len(labels), 100))
	}
	for _, rule := range restrictedLabelRules {
		for _, k := range keys {
			if rule.bad(k) {
				errs = append(errs, cel(p, "object", rule.message))
				break
			}
		}
	}
	return errs
}

// validateRequirementsV1 is NodeSelectorRequirementWithMinValues: per-item
// schema, then the list's CEL rules.
func validateRequirementsV1(reqs []karpv1.NodeSelectorRequirementWithMinValues, p *field.Path) field.ErrorList {
	if reqs == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	errs := schemaMaxItems(p, len(reqs), 100)
	for i, r := range reqs {
		ip := p.Index(i)
		if r.Key == "" {
			errs = append(errs, field.Required(ip.Child("key"), ""))
		} else {
			errs = append(errs, schemaMaxLength(ip.Child("key"), r.Key, 316)...)
			errs = append(errs, schemaPattern(ip.Child("key"), r.Key, requirementKeyPattern)...)
			for _, rule := range restrictedLabelRules {
				if rule.bad(r.Key) {
					errs = append(errs, cel(ip.Child("key"), "string", rule.message))
				}
			}
		}
		if r.Operator == "" {
			errs = append(errs, field.Required(ip.Child("operator"), ""))
		} else {
			errs = append(errs, schemaEnum(ip.Child("operator"), string(r.Operator), "Gte", "Lte", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")...)
		}
		for j, v := range r.Values {
			errs = append(errs, schemaMaxLength(ip.Child("values").Index(j), v, 63)...)
			errs = append(errs, schemaPattern(ip.Child("values").Index(j), v, labelValuePattern)...)
		}
		if r.MinValues != nil {
			errs = append(errs, schemaRange(ip.Child("minValues"), int64(*r.MinValues), 1, 50)...)
		}
	}
	in, numeric, minValues := false, false, false
	for _, r := range reqs {
		switch r.Operator {
		case corev1.NodeSelectorOpIn:
			in = in || len(r.Values) == 0
			minValues = minValues || (r.MinValues != nil && len(r.Values) < *r.MinValues)
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt, "Gte", "Lte":
			numeric = numeric || !singleNonNegativeInt(r.Values)
		}
	}
	if in {
		errs = append(errs, cel(p, "array", "requirements with operator 'In' must have a value defined"))
	}
	if numeric {
		errs = append(errs, cel(p, "array", "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value"))
	}
	if minValues {
		errs = append(errs, cel(p, "array", "requirements with 'minValues' must have at least that many values specified in the 'values' field"))
	}
	return errs
}

// singleNonNegativeInt is the rule's x.values.size() == 1 && int(x.values[0]) >= 0
// (a value CEL cannot convert fails the rule too).
func singleNonNegativeInt(values []string) bool {
	if len(values) != 1 {
		return false
	}
	n, err := strconv.ParseInt(values[0], 10, 64)
	return err == nil && n >= 0
}

func validateNodeClassRef(ref *karpv1.NodeClassReference, p *field.Path) field.ErrorList {
	if ref == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if ref.Group == "" {
		errs = append(errs, cel(p.Child("group"), "string", "group may not be empty"))
	} else {
		errs = append(errs, schemaPattern(p.Child("group"), ref.Group, nodeClassGroupPattern)...)
	}
	if ref.Kind == "" {
		errs = append(errs, cel(p.Child("kind"), "string", "kind may not be empty"))
	}
	if ref.Name == "" {
		errs = append(errs, cel(p.Child("name"), "string", "name may not be empty"))
	}
	return errs
}

// validateCRDTaints is the CRD's taint schema: key and effect required, key
// and value by pattern, effect by enum (no uniqueness rule, unlike a Node).
func validateCRDTaints(taints []corev1.Taint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range taints {
		ip := p.Index(i)
		if t.Key == "" {
			errs = append(errs, field.Required(ip.Child("key"), ""))
		} else {
			errs = append(errs, schemaPattern(ip.Child("key"), t.Key, requirementKeyPattern)...)
		}
		if t.Value != "" {
			errs = append(errs, schemaPattern(ip.Child("value"), t.Value, requirementKeyPattern)...)
		}
		if t.Effect == "" {
			errs = append(errs, field.Required(ip.Child("effect"), ""))
		} else {
			errs = append(errs, schemaEnum(ip.Child("effect"), string(t.Effect), "NoSchedule", "PreferNoSchedule", "NoExecute")...)
		}
	}
	return errs
}

func validateDisruption(d *karpv1.Disruption, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if d.ConsolidateAfter != "" {
		errs = append(errs, schemaPattern(p.Child("consolidateAfter"), string(d.ConsolidateAfter), nillableDurationPattern)...)
	}
	if d.ConsolidationPolicy != "" {
		errs = append(errs, schemaEnum(p.Child("consolidationPolicy"), string(d.ConsolidationPolicy), "WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced")...)
	}
	bp := p.Child("budgets")
	errs = append(errs, schemaMaxItems(bp, len(d.Budgets), 50)...)
	scheduleWithoutDuration := false
	for i, b := range d.Budgets {
		ip := bp.Index(i)
		if b.Nodes == "" {
			errs = append(errs, field.Required(ip.Child("nodes"), ""))
		} else {
			errs = append(errs, schemaPattern(ip.Child("nodes"), b.Nodes, budgetNodesPattern)...)
		}
		if b.Schedule != nil {
			errs = append(errs, schemaPattern(ip.Child("schedule"), *b.Schedule, budgetSchedulePattern)...)
		}
		if b.Duration != nil {
			errs = append(errs, schemaPattern(ip.Child("duration"), string(*b.Duration), budgetDurationPattern)...)
		}
		errs = append(errs, schemaMaxItems(ip.Child("reasons"), len(b.Reasons), 50)...)
		for j, r := range b.Reasons {
			errs = append(errs, schemaEnum(ip.Child("reasons").Index(j), string(r), "Underutilized", "Empty", "Drifted")...)
		}
		scheduleWithoutDuration = scheduleWithoutDuration || (b.Schedule != nil) != (b.Duration != nil)
	}
	if scheduleWithoutDuration {
		errs = append(errs, cel(bp, "array", "'schedule' must be set with 'duration'"))
	}
	return errs
}
