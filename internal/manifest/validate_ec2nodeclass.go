package manifest

import (
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
)

// validateEC2NodeClass is karpenter.k8s.aws_ec2nodeclasses.yaml (v1.14.1):
// the selector terms, AMI family and alias rules, role/instanceProfile,
// tags, metadata options and block devices (docs/karpenter-apis.md).
func validateEC2NodeClass(nc *karpv1.EC2NodeClass) field.ErrorList {
	errs := validateMeta(&nc.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
	spec := field.NewPath("spec")
	s := &nc.Spec

	// subnetSelectorTerms
	p := spec.Child("subnetSelectorTerms")
	if s.SubnetSelectorTerms == nil {
		errs = append(errs, field.Required(p, ""))
	} else {
		errs = append(errs, schemaMaxItems(p, len(s.SubnetSelectorTerms), 30)...)
		allIDAndTags := len(s.SubnetSelectorTerms) > 0
		for i, t := range s.SubnetSelectorTerms {
			errs = append(errs, validateSelectorTags(t.Tags, p.Index(i).Child("tags"))...)
			if t.ID != "" {
				errs = append(errs, schemaPattern(p.Index(i).Child("id"), t.ID, "subnet-[0-9a-z]+")...)
			}
			allIDAndTags = allIDAndTags && t.ID != "" && t.Tags != nil
		}
		if len(s.SubnetSelectorTerms) == 0 {
			errs = append(errs, cel(p, "array", "subnetSelectorTerms cannot be empty"))
		}
		if !every(len(s.SubnetSelectorTerms), func(i int) bool {
			t := s.SubnetSelectorTerms[i]
			return t.Tags != nil || t.ID != ""
		}) {
			errs = append(errs, cel(p, "array", "expected at least one, got none, ['tags', 'id']"))
		}
		// Upstream's rule is !self.all(...): it fails only when every term
		// combines id with tags.
		if allIDAndTags {
			errs = append(errs, cel(p, "array", "'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term"))
		}
	}

	// securityGroupSelectorTerms
	p = spec.Child("securityGroupSelectorTerms")
	if s.SecurityGroupSelectorTerms == nil {
		errs = append(errs, field.Required(p, ""))
	} else {
		terms := s.SecurityGroupSelectorTerms
		errs = append(errs, schemaMaxItems(p, len(terms), 30)...)
		for i, t := range terms {
			errs = append(errs, validateSelectorTags(t.Tags, p.Index(i).Child("tags"))...)
			if t.ID != "" {
				errs = append(errs, schemaPattern(p.Index(i).Child("id"), t.ID, "sg-[0-9a-z]+")...)
			}
		}
		if len(terms) == 0 {
			errs = append(errs, cel(p, "array", "securityGroupSelectorTerms cannot be empty"))
		}
		if !every(len(terms), func(i int) bool { return terms[i].Tags != nil || terms[i].ID != "" || terms[i].Name != "" }) {
			errs = append(errs, cel(p, "array", "expected at least one, got none, ['tags', 'id', 'name']"))
		}
		if len(terms) > 0 && every(len(terms), func(i int) bool { return terms[i].ID != "" && (terms[i].Tags != nil || terms[i].Name != "") }) {
			errs = append(errs, cel(p, "array", "'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term"))
		}
		if len(terms) > 0 && every(len(terms), func(i int) bool { return terms[i].Name != "" && (terms[i].Tags != nil || terms[i].ID != "") }) {
			errs = append(errs, cel(p, "array", "'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term"))
		}
	}

	// amiSelectorTerms and amiFamily
	errs = append(errs, validateAMISelection(s, spec)...)

	// role / instanceProfile
	if s.InstanceProfile != nil && *s.InstanceProfile == "" {
		errs = append(errs, cel(spec.Child("instanceProfile"), "string", "instanceProfile cannot be empty"))
	}
	if (s.Role != "") == (s.InstanceProfile != nil) {
		errs = append(errs, cel(spec, "object", "must specify exactly one of ['role', 'instanceProfile']"))
	}

	errs = append(errs, validateNodeClassTags(s.Tags, spec.Child("tags"))...)
	errs = append(errs, validateMetadataOptions(s.MetadataOptions, spec.Child("metadataOptions"))...)
	errs = append(errs, validateBlockDeviceMappings(s.BlockDeviceMappings, spec.Child("blockDeviceMappings"))...)
	if s.InstanceStorePolicy != nil {
		errs = append(errs, schemaEnum(spec.Child("instanceStorePolicy"), *s.InstanceStorePolicy, "RAID0")...)
	}
	if s.IPPrefixCount != nil && *s.IPPrefixCount < 0 {
		errs = append(errs, schemaRange(spec.Child("ipPrefixCount"), int64(*s.IPPrefixCount), 0, 1<<31)...)
	}
	return errs
}

// every is CEL's self.all over n items.
func every(n int, f func(i int) bool) bool {
	for i := 0; i < n; i++ {
		if !f(i) {
			return false
		}
	}
	return true
}

// validateSelectorTags is a selector term's tags: at most 20, no empty key or value.
func validateSelectorTags(tags map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(tags) > 20 {
		errs = append(errs, field.TooMany(p, len(tags), 20))
	}
	for k, v := range tags {
		if k == "" || v == "" {
			errs = append(errs, cel(p, "object", "empty tag keys or values aren't supported"))
			break
		}
	}
	return errs
}

var amiAliasFamilies = map[string]string{
	"al2": "AL2", "al2023": "AL2023", "bottlerocket": "Bottlerocket",
	"windows2019": "Windows2019", "windows2022": "Windows2022", "windows2025": "Windows2025",
}

func validateAMISelection(s *karpv1.EC2NodeClassSpec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	p := spec.Child("amiSelectorTerms")
	terms := s.AMISelectorTerms
	if terms == nil {
		errs = append(errs, field.Required(p, ""))
	} else if len(terms) == 0 {
		errs = append(errs, field.Invalid(p, 0, p.String()+" in body should have at least 1 items"))
	}
	errs = append(errs, schemaMaxItems(p, len(terms), 30)...)
	hasAlias := false
	aliasFamily := ""
	for i, t := range terms {
		ip := p.Index(i)
		errs = append(errs, validateSelectorTags(t.Tags, ip.Child("tags"))...)
		if t.ID != "" {
			errs = append(errs, schemaPattern(ip.Child("id"), t.ID, "ami-[0-9a-z]+")...)
		}
		if t.Alias == "" {
			continue
		}
		hasAlias = true
		ap := ip.Child("alias")
		errs = append(errs, schemaMaxLength(ap, t.Alias, 30)...)
		if !compiled(`^[a-zA-Z0-9]+@.+$`).MatchString(t.Alias) {
			errs = append(errs, cel(ap, "string", "'alias' is improperly formatted, must match the format 'family@version'"))
		}
		family, version, _ := strings.Cut(t.Alias, "@")
		if _, ok := amiAliasFamilies[family]; !ok {
			errs = append(errs, cel(ap, "string", "family is not supported, must be one of the following: 'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'"))
		} else if aliasFamily == "" {
			aliasFamily = family
		}
		if strings.HasPrefix(family, "windows") && version != "latest" {
			errs = append(errs, cel(ap, "string", "windows families may only specify version 'latest'"))
		}
	}
	if !every(len(terms), func(i int) bool {
		t := terms[i]
		return t.Tags != nil || t.ID != "" || t.Name != "" || t.Alias != "" || t.SSMParameter != ""
	}) {
		errs = append(errs, cel(p, "array", "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']"))
	}
	for _, t := range terms {
		if t.ID != "" && (t.Alias != "" || t.Tags != nil || t.Name != "" || t.Owner != "") {
			errs = append(errs, cel(p, "array", "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms"))
			break
		}
	}
	for _, t := range terms {
		if t.Alias != "" && (t.ID != "" || t.Tags != nil || t.Name != "" || t.Owner != "") {
			errs = append(errs, cel(p, "array", "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms"))
			break
		}
	}
	if hasAlias && len(terms) != 1 {
		errs = append(errs, cel(p, "array", "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms"))
	}
	if s.AMIFamily != nil {
		errs = append(errs, schemaEnum(spec.Child("amiFamily"), *s.AMIFamily, "AL2", "AL2023", "Bottlerocket", "Custom", "Windows2019", "Windows2022", "Windows2025")...)
		if want := amiAliasFamilies[aliasFamily]; want != "" && *s.AMIFamily != want && *s.AMIFamily != "Custom" {
			errs = append(errs, cel(spec, "object", "if set, amiFamily must be '"+want+"' or 'Custom' when using "+aliasArticle(want)+want+" alias"))
		}
	} else if !hasAlias && terms != nil {
		errs = append(errs, cel(spec, "object", "must specify amiFamily if amiSelectorTerms does not contain an alias"))
	}
	return errs
}

// aliasArticle reproduces the CRD's wording: "an AL2 alias", "a Bottlerocket alias".
func aliasArticle(family string) string {
	if strings.HasPrefix(family, "AL") {
		return "an "
	}
	return "a "
}

// restrictedNodeClassTags are the tag rules of the CRD, in its order.
var restrictedNodeClassTags = []struct {
	bad     func(string) bool
	message string
}{
	{func(k string) bool { return k == "" }, "empty tag keys aren't supported"},
	{func(k string) bool { return k == "eks:eks-cluster-name" }, "tag contains a restricted tag matching eks:eks-cluster-name"},
	{func(k string) bool { return strings.HasPrefix(k, "kubernetes.io/cluster") }, "tag contains a restricted tag matching kubernetes.io/cluster/"},
	{func(k string) bool { return k == "karpenter.sh/nodepool" }, "tag contains a restricted tag matching karpenter.sh/nodepool"},
	{func(k string) bool { return k == "karpenter.sh/nodeclaim" }, "tag contains a restricted tag matching karpenter.sh/nodeclaim"},
	{func(k string) bool { return k == "karpenter.k8s.aws/ec2nodeclass" }, "tag contains a restricted tag matching karpenter.k8s.aws/ec2nodeclass"},
}

func validateNodeClassTags(tags map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	keys := sets.List(sets.KeySet(tags))
	for _, rule := range restrictedNodeClassTags {
		for _, k := range keys {
			if rule.bad(k) {
				errs = append(errs, cel(p, "object", rule.message))
				break
			}
		}
	}
	return errs
}

func validateMetadataOptions(m *karpv1.MetadataOptions, p *field.Path) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	if m.HTTPEndpoint != nil {
		errs = append(errs, schemaEnum(p.Child("httpEndpoint"), *m.HTTPEndpoint, "enabled", "disabled")...)
	}
	if m.HTTPProtocolIPv6 != nil {
		errs = append(errs, schemaEnum(p.Child("httpProtocolIPv6"), *m.HTTPProtocolIPv6, "enabled", "disabled")...)
	}
	if m.HTTPPutResponseHopLimit != nil {
		errs = append(errs, schemaRange(p.Child("httpPutResponseHopLimit"), *m.HTTPPutResponseHopLimit, 1, 64)...)
	}
	if m.HTTPTokens != nil {
		errs = append(errs, schemaEnum(p.Child("httpTokens"), *m.HTTPTokens, "required", "optional")...)
	}
	return errs
}

func validateBlockDeviceMappings(bdms []*karpv1.BlockDeviceMapping, p *field.Path) field.ErrorList {
	errs := schemaMaxItems(p, len(bdms), 50)
	roots := 0
	for i, b := range bdms {
		if b == nil {
			continue
		}
		if b.RootVolume {
			roots++
		}
		if b.EBS == nil {
			continue
		}
		ep := p.Index(i).Child("ebs")
		if b.EBS.SnapshotID == nil && b.EBS.VolumeSize == nil {
			errs = append(errs, cel(ep, "object", "snapshotID or volumeSize must be defined"))
		}
		if b.EBS.VolumeType != nil {
			errs = append(errs, schemaEnum(ep.Child("volumeType"), *b.EBS.VolumeType, "standard", "io1", "io2", "gp2", "sc1", "st1", "gp3")...)
		}
		if b.EBS.VolumeInitializationRate != nil && (b.EBS.SnapshotID == nil || *b.EBS.SnapshotID == "") {
			errs = append(errs, cel(ep, "object", "snapshotID must be set when volumeInitializationRate is set"))
		}
	}
	if roots > 1 {
		errs = append(errs, cel(p, "array", "must have only one blockDeviceMappings with rootVolume"))
	}
	return errs
}
