package manifest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	karpv1alpha5 "github.com/berth-sim/berth/internal/karpenter/apis/v1alpha5"
)

// The v1alpha5 era validated mostly in admission webhooks (knative
// FieldErrors), not in the CRD schema: kubernetes-sigs/karpenter@v0.32.10
// pkg/apis/v1alpha5/provisioner_validation.go (webhook
// validation.webhook.karpenter.sh) and aws/karpenter-provider-aws@v0.31.4
// pkg/apis/v1alpha1/*_validation.go (validation.webhook.karpenter.k8s.aws).
// See docs/karpenter-apis.md.

const (
	coreWebhook = "validation.webhook.karpenter.sh"
	awsWebhook  = "validation.webhook.karpenter.k8s.aws"
)

// webhookError is one knative FieldError as a webhook denial prints it.
type webhookError struct {
	webhook string
	// message and paths print as "message: path, path"; details follow.
	message string
	paths   []string
	details string
}

func (e webhookError) Error() string {
	paths := append([]string(nil), e.paths...)
	sort.Strings(paths) // knative sorts merged paths
	msg := fmt.Sprintf("admission webhook %q denied the request: validation failed: %s: %s", e.webhook, e.message, strings.Join(paths, ", "))
	if e.details != "" {
		msg += " " + e.details
	}
	return msg
}

// validateProvisionerSchema is what the v0.32 Provisioner CRD schema checks.
func validateProvisionerSchema(p *karpv1alpha5.Provisioner) field.ErrorList {
	errs := validateMeta(&p.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
	spec := field.NewPath("spec")
	if p.Spec.Weight != nil {
		errs = append(errs, schemaRange(spec.Child("weight"), int64(*p.Spec.Weight), 1, 100)...)
	}
	for i, r := range p.Spec.Requirements {
		if r.Key == "" {
			errs = append(errs, field.Required(spec.Child("requirements").Index(i).Child("key"), ""))
		}
		if r.Operator == "" {
			errs = append(errs, field.Required(spec.Child("requirements").Index(i).Child("operator"), ""))
		}
	}
	if kc := p.Spec.KubeletConfiguration; kc != nil {
		kp := spec.Child("kubeletConfiguration")
		if kc.MaxPods != nil && *kc.MaxPods < 0 {
			errs = append(errs, schemaRange(kp.Child("maxPods"), int64(*kc.MaxPods), 0, 1<<31)...)
		}
		if kc.PodsPerCore != nil && *kc.PodsPerCore < 0 {
			errs = append(errs, schemaRange(kp.Child("podsPerCore"), int64(*kc.PodsPerCore), 0, 1<<31)...)
		}
		if kc.ImageGCHighThresholdPercent != nil {
			errs = append(errs, schemaRange(kp.Child("imageGCHighThresholdPercent"), int64(*kc.ImageGCHighThresholdPercent), 0, 100)...)
		}
		if kc.ImageGCLowThresholdPercent != nil {
			errs = append(errs, schemaRange(kp.Child("imageGCLowThresholdPercent"), int64(*kc.ImageGCLowThresholdPercent), 0, 100)...)
		}
	}
	return errs
}

// provisionerWebhook is the core webhook's Provisioner.Validate, then the
// AWS webhook's check of an inline provider.
func provisionerWebhook(p *karpv1alpha5.Provisioner) []error {
	var errs []error
	add := func(message string, details string, paths ...string) {
		errs = append(errs, webhookError{webhook: coreWebhook, message: message, paths: paths, details: details})
	}
	s := &p.Spec
	if s.TTLSecondsUntilExpired != nil && *s.TTLSecondsUntilExpired < 0 {
		add("invalid value: cannot be negative", "", "spec.ttlSecondsUntilExpired")
	}
	switch {
	case s.TTLSecondsAfterEmpty != nil && *s.TTLSecondsAfterEmpty < 0:
		add("invalid value: cannot be negative", "", "spec.ttlSecondsAfterEmpty")
	case s.Consolidation != nil && s.Consolidation.Enabled != nil && *s.Consolidation.Enabled && s.TTLSecondsAfterEmpty != nil:
		// apis.ErrMultipleOneOf("ttlSecondsAfterEmpty", "consolidation.enabled")
		add("expected exactly one, got both", "", "spec.ttlSecondsAfterEmpty", "spec.consolidation.enabled")
	}
	switch {
	case s.Provider != nil && s.ProviderRef != nil:
		add("expected exactly one, got both", "", "spec.provider", "spec.providerRef")
	case s.Provider == nil && s.ProviderRef == nil:
		add("expected exactly one, got neither", "", "spec.provider", "spec.providerRef")
	}
	for _, key := range sets.List(sets.KeySet(s.Labels)) {
		if key == karpv1alpha5.ProvisionerNameLabelKey {
			add(fmt.Sprintf("invalid key name %q", key), "restricted", "spec.labels")
		}
		for _, msg := range validation.IsQualifiedName(key) {
			add(fmt.Sprintf("invalid key name %q", key), msg, "spec.labels")
		}
		for _, msg := range validation.IsValidLabelValue(s.Labels[key]) {
			add(fmt.Sprintf("invalid value: %s, %s", s.Labels[key], msg), "", fmt.Sprintf("spec.labels[%s]", key))
		}
	}
	type keyEffect struct {
		key    string
		effect corev1.TaintEffect
	}
	seen := map[keyEffect]bool{}
	for _, list := range []struct {
		name   string
		taints []corev1.Taint
	}{{"taints", s.Taints}, {"startupTaints", s.StartupTaints}} {
		for i, t := range list.taints {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				add("invalid value: "+msg, "", fmt.Sprintf("spec.%s[%d]", list.name, i))
			}
			if t.Value != "" {
				for _, msg := range validation.IsQualifiedName(t.Value) {
					add("invalid value: "+msg, "", fmt.Sprintf("spec.%s[%d]", list.name, i))
				}
			}
			switch t.Effect {
			case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute, "":
			default:
				// Upstream reports the path as "effect[i]", not under the taint.
				add("invalid value: "+string(t.Effect), "", fmt.Sprintf("spec.effect[%d]", i))
			}
			ke := keyEffect{t.Key, t.Effect}
			if seen[ke] {
				// ViaFieldIndex("taints", i) whichever list it is in.
				add(fmt.Sprintf("duplicate taint Key/Effect pair %s=%s", t.Key, t.Effect), "", fmt.Sprintf("spec.taints[%d]", i))
			}
			seen[ke] = true
		}
	}
	for i, r := range s.Requirements {
		path := fmt.Sprintf("spec.requirements[%d]", i)
		if r.Key == karpv1alpha5.ProvisionerNameLabelKey {
			add(fmt.Sprintf("invalid value: %s is restricted", r.Key), "", path)
		}
		if msgs := requirementProblems(r); len(msgs) > 0 {
			add("invalid value: "+strings.Join(msgs, "; "), "", path)
		}
	}
	if s.Provider != nil {
		for _, e := range awsProviderProblems(s.Provider, "provider") {
			errs = append(errs, e)
		}
	}
	return errs
}

// supportedNodeSelectorOps is v1alpha5.SupportedNodeSelectorOps in
// declaration order (upstream prints the set unordered).
var supportedNodeSelectorOps = []string{"In", "NotIn", "Gt", "Lt", "Exists", "DoesNotExist"}

// requirementProblems is v1alpha5.ValidateRequirement's errors (joined by
// multierr with "; "), without the restricted-label check whose message
// lists the registered well-known labels.
func requirementProblems(r corev1.NodeSelectorRequirement) []string {
	var out []string
	key := r.Key
	if n, ok := karpv1alpha5.NormalizedLabels[key]; ok {
		key = n
	}
	if !sets.New(supportedNodeSelectorOps...).Has(string(r.Operator)) {
		out = append(out, fmt.Sprintf("key %s has an unsupported operator %s not in %v", key, r.Operator, supportedNodeSelectorOps))
	}
	for _, msg := range validation.IsQualifiedName(key) {
		out = append(out, fmt.Sprintf("key %s is not a qualified name, %s", key, msg))
	}
	for _, v := range r.Values {
		for _, msg := range validation.IsValidLabelValue(v) {
			out = append(out, fmt.Sprintf("invalid value %s for key %s, %s", v, key, msg))
		}
	}
	if r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 0 {
		out = append(out, fmt.Sprintf("key %s with operator %s must have a value defined", key, r.Operator))
	}
	if r.Operator == corev1.NodeSelectorOpGt || r.Operator == corev1.NodeSelectorOpLt {
		ok := len(r.Values) == 1
		if ok {
			n, err := strconv.Atoi(r.Values[0])
			ok = err == nil && n >= 0
		}
		if !ok {
			out = append(out, fmt.Sprintf("key %s with operator %s must have a single positive integer value", key, r.Operator))
		}
	}
	return out
}

// awsAMIFamilies is v1alpha1.SupportedAMIFamilies at v0.31.4.
var awsAMIFamilies = []string{"Bottlerocket", "AL2", "Ubuntu", "Windows2019", "Windows2022", "Custom"}

// awsProviderProblems is v1alpha1.AWS.Validate, its paths under prefix
// ("provider" for an inline provider; "spec.provider" for an
// AWSNodeTemplate, whose spec validation adds "spec" to the provider's).
func awsProviderProblems(a *karpv1alpha5.AWS, prefix string) []error {
	var errs []error
	add := func(message string, paths ...string) {
		for i := range paths {
			paths[i] = prefix + "." + paths[i]
		}
		errs = append(errs, webhookError{webhook: awsWebhook, message: message, paths: paths})
	}
	if a.LaunchTemplateName != nil {
		if a.SecurityGroupSelector != nil {
			add("expected exactly one, got both", "launchTemplate", "securityGroupSelector")
		}
		if a.MetadataOptions != nil {
			add("expected exactly one, got both", "launchTemplate", "metadataOptions")
		}
		if a.AMIFamily != nil {
			add("expected exactly one, got both", "launchTemplate", "amiFamily")
		}
		if a.InstanceProfile != nil {
			add("expected exactly one, got both", "launchTemplate", "instanceProfile")
		}
		if len(a.BlockDeviceMappings) != 0 {
			add("expected exactly one, got both", "launchTemplate", "blockDeviceMappings")
		}
	}
	selector := func(name string, m map[string]string, idPattern string) {
		if m == nil {
			add("missing field(s)", name)
		}
		idKey := ""
		for _, k := range sets.List(sets.KeySet(m)) {
			if k == "" || m[k] == "" {
				add(`invalid value: ""`, fmt.Sprintf("%s['%s']", name, k))
			}
			if k == "aws-ids" || k == "aws::ids" {
				idKey = k
				for _, id := range strings.Split(m[k], ",") {
					if id = strings.TrimSpace(id); id != "" && !compiled(idPattern).MatchString(id) {
						// Upstream passes this sentence as the field path.
						what := strings.TrimSuffix(strings.SplitN(idPattern, "[", 2)[0], "-")
						add(fmt.Sprintf("invalid value: %q", id), fmt.Sprintf("%s['%s'] must be a valid %s-id (regex: %s)", name, k, what, idPattern))
					}
				}
			}
		}
		if idKey != "" && len(m) > 1 {
			add(fmt.Sprintf("%q filter is mutually exclusive, cannot be set with a combination of other filters in", idKey), name)
		}
	}
	selector("subnetSelector", a.SubnetSelector, "subnet-[0-9a-z]+")
	if a.LaunchTemplateName == nil {
		selector("securityGroupSelector", a.SecurityGroupSelector, "sg-[0-9a-z]+")
	}
	if mo := a.MetadataOptions; mo != nil {
		enum := func(v *string, name string, allowed ...string) {
			if v != nil && !sets.New(allowed...).Has(*v) {
				add(fmt.Sprintf("invalid value: %s not in %s", *v, strings.Join(allowed, ", ")), "metadataOptions."+name)
			}
		}
		enum(mo.HTTPEndpoint, "httpEndpoint", "disabled", "enabled")
		enum(mo.HTTPProtocolIPv6, "httpProtocolIPv6", "disabled", "enabled")
		if l := mo.HTTPPutResponseHopLimit; l != nil && (*l < 1 || *l > 64) {
			add(fmt.Sprintf("expected 1 <= %d <= 64", *l), "metadataOptions.httpPutResponseHopLimit")
		}
		enum(mo.HTTPTokens, "httpTokens", "optional", "required")
	}
	if a.AMIFamily != nil && !sets.New(awsAMIFamilies...).Has(*a.AMIFamily) {
		add(fmt.Sprintf("invalid value: %s not in %s", *a.AMIFamily, strings.Join(awsAMIFamilies, ", ")), "amiFamily")
	}
	return errs
}

// awsNodeTemplateWebhook is AWSNodeTemplate.Validate (the AWS webhook).
func awsNodeTemplateWebhook(t *karpv1alpha5.AWSNodeTemplate) []error {
	errs := awsProviderProblems(&t.Spec.AWS, "spec.provider")
	add := func(message string, paths ...string) {
		errs = append(errs, webhookError{webhook: awsWebhook, message: message, paths: paths})
	}
	if t.Spec.UserData != nil && t.Spec.LaunchTemplateName != nil {
		add("expected exactly one, got both", "spec.userData", "spec.launchTemplate")
	}
	if t.Spec.AMISelector != nil && t.Spec.LaunchTemplateName != nil {
		add("expected exactly one, got both", "spec.amiSelector", "spec.launchTemplate")
	}
	if t.Spec.AMIFamily != nil && *t.Spec.AMIFamily == "Custom" && t.Spec.AMISelector == nil {
		add("missing field(s)", "spec.amiSelector")
	}
	return errs
}
