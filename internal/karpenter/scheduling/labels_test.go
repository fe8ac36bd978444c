package scheduling

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestRestrictedLabels(t *testing.T) {
	for _, tc := range []struct {
		key                 string
		vocab               *Vocabulary
		nodeLabel, nodePool bool // IsRestrictedNodeLabel, IsRestrictedLabel
	}{
		// Well-known keys: Karpenter does not write them, but NodePools may use them.
		{corev1.LabelTopologyZone, CoreVocabulary, true, false},
		{NodePoolLabelKey, CoreVocabulary, true, false},
		{CapacityTypeLabelKey, CoreVocabulary, true, false},
		{corev1.LabelWindowsBuild, CoreVocabulary, true, false},
		{LabelInstanceFamily, AWSVocabulary, true, false},
		{LabelTopologyZoneID, AWSVocabulary, true, false},
		// Restricted domains (sub-domains included).
		{"karpenter.sh/custom", CoreVocabulary, true, true},
		{"kubernetes.io/custom", CoreVocabulary, true, true},
		{"foo.kubernetes.io/custom", CoreVocabulary, true, true},
		{"k8s.io/custom", CoreVocabulary, true, true},
		{"karpenter.k8s.aws/custom", AWSVocabulary, true, true},
		{LabelNodeClass, AWSVocabulary, true, true},
		// Only the AWS vocabulary restricts the AWS group; zone-id's domain is not restricted.
		{"karpenter.k8s.aws/custom", CoreVocabulary, false, false},
		{LabelInstanceFamily, CoreVocabulary, false, false},
		{LabelTopologyZoneID, CoreVocabulary, false, false},
		// Exceptions.
		{"node.kubernetes.io/pool", CoreVocabulary, false, false},
		{"node-restriction.kubernetes.io/team", CoreVocabulary, false, false},
		{"kops.k8s.io/instancegroup", CoreVocabulary, false, false},
		// The hostname is restricted outright (its domain would be too).
		{corev1.LabelHostname, AWSVocabulary, true, true},
		// Custom keys.
		{"example.com/team", AWSVocabulary, false, false},
		{"team", AWSVocabulary, false, false},
	} {
		if got := tc.vocab.IsRestrictedNodeLabel(tc.key); got != tc.nodeLabel {
			t.Errorf("%s: IsRestrictedNodeLabel = %v", tc.key, got)
		}
		if got := tc.vocab.IsRestrictedLabel(tc.key); got != tc.nodePool {
			t.Errorf("%s: IsRestrictedLabel = %v", tc.key, got)
		}
	}
}

func TestVocabularies(t *testing.T) {
	if got, want := CoreVocabulary.WellKnownLabels.Len(), len(CoreWellKnownLabels); got != want {
		t.Errorf("core well-known = %d, want %d", got, want)
	}
	// windows-build is in both lists; the union counts it once.
	if got, want := AWSVocabulary.WellKnownLabels.Len(), len(CoreWellKnownLabels)+len(AWSWellKnownLabels)-1; got != want {
		t.Errorf("AWS well-known = %d, want %d", got, want)
	}
	if !AWSVocabulary.WellKnownLabels.HasAll(CoreWellKnownLabels...) || !AWSVocabulary.RestrictedLabelDomains.Has(AWSGroup) {
		t.Error("AWS vocabulary does not extend the core")
	}
	// Extend copies: the core stays cloud-neutral.
	if CoreVocabulary.WellKnownLabels.Has(LabelInstanceCPU) || CoreVocabulary.RestrictedLabelDomains.Has(AWSGroup) {
		t.Error("Extend mutated the core vocabulary")
	}
	if AWSVocabulary.WellKnownLabels.Has(LabelNodeClass) {
		t.Error("ec2nodeclass is not well-known")
	}
	if !WellKnownValuesForRequirements[CapacityTypeLabelKey].HasAll("spot", "on-demand", "reserved") {
		t.Error("capacity-type values")
	}
}

func TestLabelDomain(t *testing.T) {
	for key, want := range map[string]string{"a.b/c": "a.b", "c": "", "a/b/c": "a", "/x": ""} {
		if got := LabelDomain(key); got != want {
			t.Errorf("LabelDomain(%q) = %q, want %q", key, got, want)
		}
	}
}
