package scheduling

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Karpenter core label keys and values (cloud-neutral).
const (
	Group = "karpenter.sh"

	NodePoolLabelKey            = Group + "/nodepool"
	NodeInitializedLabelKey     = Group + "/initialized"
	NodeRegisteredLabelKey      = Group + "/registered"
	NodeDoNotSyncTaintsLabelKey = Group + "/do-not-sync-taints"
	CapacityTypeLabelKey        = Group + "/capacity-type"

	ArchitectureAmd64    = "amd64"
	ArchitectureArm64    = "arm64"
	CapacityTypeSpot     = "spot"
	CapacityTypeOnDemand = "on-demand"
	CapacityTypeReserved = "reserved"
)

// NormalizedLabels maps deprecated aliases to the keys Karpenter reasons
// about; every constructor applies it, so a pod selecting on
// failure-domain.beta.kubernetes.io/zone meets zone requirements.
// docs/karpenter-requirements.md#normalisation
var NormalizedLabels = map[string]string{
	corev1.LabelFailureDomainBetaZone:   corev1.LabelTopologyZone,
	corev1.LabelFailureDomainBetaRegion: corev1.LabelTopologyRegion,
	"beta.kubernetes.io/arch":           corev1.LabelArchStable,
	"beta.kubernetes.io/os":             corev1.LabelOSStable,
	corev1.LabelInstanceType:            corev1.LabelInstanceTypeStable,
}

// CoreWellKnownLabels are the keys core Karpenter knows values for on every
// instance type/offering.
var CoreWellKnownLabels = []string{
	NodePoolLabelKey,
	corev1.LabelTopologyZone,
	corev1.LabelTopologyRegion,
	corev1.LabelInstanceTypeStable,
	corev1.LabelArchStable,
	corev1.LabelOSStable,
	CapacityTypeLabelKey,
	corev1.LabelWindowsBuild,
}

// CoreRestrictedLabelDomains are prohibited by the kubelet or reserved by
// Karpenter (v1.0–v1.8 restrict kubernetes.io and k8s.io too).
var CoreRestrictedLabelDomains = []string{"kubernetes.io", "k8s.io", Group}

// CoreLabelDomainExceptions are sub-domains of restricted domains that may
// still be set, because the kubelet accepts them.
var CoreLabelDomainExceptions = []string{
	"kops.k8s.io",
	corev1.LabelNamespaceSuffixNode,
	corev1.LabelNamespaceNodeRestriction,
}

// RestrictedLabels may never be set: Karpenter uses kubernetes.io/hostname
// internally (a per-NodeClaim placeholder domain).
var RestrictedLabels = sets.New(corev1.LabelHostname)

// WellKnownValuesForRequirements lists the only meaningful values of some
// well-known keys.
var WellKnownValuesForRequirements = map[string]sets.Set[string]{
	CapacityTypeLabelKey: sets.New(CapacityTypeOnDemand, CapacityTypeSpot, CapacityTypeReserved),
}

// Vocabulary is one cloud provider's view of labels: which keys are
// well-known (values known per instance type) and which domains are
// restricted. Upstream mutates package globals from the provider's init;
// berth keeps one value per provider instead. Treat the sets as read-only.
// docs/karpenter-requirements.md#well-known-and-restricted-labels
type Vocabulary struct {
	WellKnownLabels        sets.Set[string]
	RestrictedLabelDomains sets.Set[string]
	LabelDomainExceptions  sets.Set[string]
	RestrictedLabels       sets.Set[string]
}

// CoreVocabulary is the cloud-neutral vocabulary (what a provider with no
// labels of its own, like kwok, sees).
var CoreVocabulary = &Vocabulary{
	WellKnownLabels:        sets.New(CoreWellKnownLabels...),
	RestrictedLabelDomains: sets.New(CoreRestrictedLabelDomains...),
	LabelDomainExceptions:  sets.New(CoreLabelDomainExceptions...),
	RestrictedLabels:       RestrictedLabels,
}

// Extend returns a copy of v with a provider's well-known labels and
// restricted domains added.
func (v *Vocabulary) Extend(wellKnown, restrictedDomains []string) *Vocabulary {
	return &Vocabulary{
		WellKnownLabels:        v.WellKnownLabels.Clone().Insert(wellKnown...),
		RestrictedLabelDomains: v.RestrictedLabelDomains.Clone().Insert(restrictedDomains...),
		LabelDomainExceptions:  v.LabelDomainExceptions.Clone(),
		RestrictedLabels:       v.RestrictedLabels.Clone(),
	}
}

// IsRestrictedNodeLabel reports whether Karpenter must not write key as a
// node label itself: well-known keys (the cloud provider supplies them),
// keys in restricted domains (unless an exception's sub-domain) and the
// restricted labels.
func (v *Vocabulary) IsRestrictedNodeLabel(key string) bool {
	if v.WellKnownLabels.Has(key) {
		return true
	}
	domain := LabelDomain(key)
	for d := range v.LabelDomainExceptions {
		if strings.HasSuffix(domain, d) {
			return false
		}
	}
	for d := range v.RestrictedLabelDomains {
		if strings.HasSuffix(domain, d) {
			return true
		}
	}
	return v.RestrictedLabels.Has(key)
}

// IsRestrictedLabel reports whether key may not appear in NodePool labels or
// requirements: restricted for node labels and not well-known.
func (v *Vocabulary) IsRestrictedLabel(key string) bool {
	return !v.WellKnownLabels.Has(key) && v.IsRestrictedNodeLabel(key)
}

// LabelDomain is the prefix before the first "/", or "" for an unprefixed key.
func LabelDomain(key string) string {
	if domain, _, ok := strings.Cut(key, "/"); ok {
		return domain
	}
	return ""
}
