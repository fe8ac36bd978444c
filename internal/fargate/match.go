// Package fargate models AWS Fargate on EKS: which profile takes a pod
// (wildcards and precedence), what the EKS Fargate webhook does to a pod at
// creation, what cannot run on Fargate, the size a pod is given, the node
// object EKS registers for it and what that capacity costs. The controller
// that runs pods on their own nodes is internal/fargate/controller; the
// facts are in docs/fargate.md.
package fargate

import (
	"sort"

	"github.com/berth-sim/berth/internal/cluster"
)

// Names EKS uses (docs/fargate.md).
const (
	// SchedulerName is the scheduler the webhook hands matched pods to.
	SchedulerName = "fargate-scheduler"
	// LabelProfile names the profile that took a pod; a pod created with
	// it asks for that profile.
	LabelProfile = "eks.amazonaws.com/fargate-profile"
	// LabelComputeType is on Fargate nodes (value fargate) and, as a pod
	// annotation with value ec2, keeps a pod off Fargate.
	LabelComputeType   = "eks.amazonaws.com/compute-type"
	ComputeTypeFargate = "fargate"
	ComputeTypeEC2     = "ec2"
)

// Glob reports whether s matches pattern, where * stands for any run of
// characters (also none) and ? for exactly one; everything else is literal
// (docs/fargate.md#profiles).
func Glob(pattern, s string) bool {
	// Iterative matching with one backtrack point: linear in practice and
	// never exponential.
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// SelectorMatches reports whether a pod in namespace with labels matches
// sel: the namespace matches, and every label pattern pair is matched by
// some label of the pod (key and value).
func SelectorMatches(sel cluster.FargateSelector, namespace string, labels map[string]string) bool {
	if !Glob(sel.Namespace, namespace) {
		return false
	}
	for kp, vp := range sel.Labels {
		found := false
		for k, v := range labels {
			if Glob(kp, k) && Glob(vp, v) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// ProfileMatches reports whether any selector of p matches.
func ProfileMatches(p *cluster.FargateProfile, namespace string, labels map[string]string) bool {
	for _, sel := range p.Selectors {
		if SelectorMatches(sel, namespace, labels) {
			return true
		}
	}
	return false
}

// Choose returns the profile that takes a pod, or nil. A pod labelled
// with LabelProfile is taken only by that profile, and only if it matches
// one of its selectors; otherwise the first matching profile in
// alphanumeric order of names wins.
func Choose(profiles []*cluster.FargateProfile, namespace string, labels map[string]string) *cluster.FargateProfile {
	if want, ok := labels[LabelProfile]; ok {
		for _, p := range profiles {
			if p.Name == want && ProfileMatches(p, namespace, labels) {
				return p
			}
		}
		return nil
	}
	sorted := append([]*cluster.FargateProfile(nil), profiles...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].Name < sorted[b].Name })
	for _, p := range sorted {
		if ProfileMatches(p, namespace, labels) {
			return p
		}
	}
	return nil
}

// Profiles returns the state's profiles in name order.
func Profiles(s *cluster.State) []*cluster.FargateProfile {
	out := make([]*cluster.FargateProfile, 0, len(s.FargateProfiles))
	for _, name := range cluster.SortedKeys(s.FargateProfiles) {
		out = append(out, s.FargateProfiles[name])
	}
	return out
}

// Profile returns the named profile of the state, or nil.
func Profile(s *cluster.State, name string) *cluster.FargateProfile {
	return s.FargateProfiles[name]
}
