package eksctl

import (
	"fmt"
	"strings"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
)

// FargateProfile is an entry of fargateProfiles (eksctl's FargateProfile).
type FargateProfile struct {
	Name                string                   `json:"name,omitempty"`
	PodExecutionRoleARN string                   `json:"podExecutionRoleARN,omitempty"`
	Selectors           []FargateProfileSelector `json:"selectors,omitempty"`
	Subnets             []string                 `json:"subnets,omitempty"`
	Tags                map[string]string        `json:"tags,omitempty"`
	Status              string                   `json:"status,omitempty"`
}

// FargateProfileSelector is one selector of a profile.
type FargateProfileSelector struct {
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// Limits of the EKS API (CreateFargateProfile; docs/fargate.md).
const (
	// ReservedProfileNamePrefix is refused by eksctl (names AWS keeps).
	ReservedProfileNamePrefix = "eks-"
	MaxFargateSelectors       = 5
	MaxFargateSelectorLabels  = 5
)

// ResolveFargateProfiles validates fargateProfiles as eksctl does (its
// texts: "invalid Fargate profile ...") and as the EKS API does (selector
// limits, private subnets only), and resolves each profile's subnets: the
// subnet IDs given, else every private subnet of the cluster. info is the
// resolved cluster (its zones and VPC give the subnets).
func (c *ClusterConfig) ResolveFargateProfiles(info cluster.Info) ([]*cluster.FargateProfile, error) {
	subnets, err := aws.VPCSubnets(info.VPCCIDR, aws.ClusterZones(info))
	if err != nil {
		return nil, fmt.Errorf("fargateProfiles: %w", err)
	}
	var private []string
	kind := map[string]bool{} // subnet ID -> private
	for _, sn := range subnets {
		id := aws.VPCSubnetID(info.Name, sn)
		kind[id] = sn.Private
		if sn.Private {
			private = append(private, id)
		}
	}
	seen := map[string]bool{}
	var out []*cluster.FargateProfile
	for i, fp := range c.FargateProfiles {
		path := fmt.Sprintf("fargateProfiles[%d]", i)
		if fp == nil {
			return nil, fmt.Errorf("%s must be an object", path)
		}
		if err := validateFargateProfile(fp); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if seen[fp.Name] {
			return nil, fmt.Errorf("%s.name %q is not unique", path, fp.Name)
		}
		seen[fp.Name] = true
		p := &cluster.FargateProfile{PodExecutionRoleARN: fp.PodExecutionRoleARN, Status: cluster.FargateProfileActive}
		p.APIVersion, p.Kind = cluster.FargateProfileGVK.GroupVersion().String(), cluster.FargateProfileGVK.Kind
		p.Name, p.UID = fp.Name, cluster.FargateProfileUID(info.Name, fp.Name)
		for _, sel := range fp.Selectors {
			p.Selectors = append(p.Selectors, cluster.FargateSelector{Namespace: sel.Namespace, Labels: copyLabels(sel.Labels)})
		}
		if len(fp.Tags) > 0 {
			p.Tags = copyLabels(fp.Tags)
		}
		if len(fp.Subnets) == 0 {
			p.Subnets = append([]string(nil), private...)
		}
		for j, id := range fp.Subnets {
			isPrivate, known := kind[id]
			switch {
			case !known:
				return nil, fmt.Errorf("%s.subnets[%d]: subnet %q is not a subnet of cluster %q (its private subnets are %s)",
					path, j, id, info.Name, strings.Join(private, ", "))
			case !isPrivate:
				// The EKS API refuses the profile (CreateFargateProfile).
				return nil, fmt.Errorf("%s.subnets[%d]: InvalidParameterException: Subnet %s provided in Fargate Profile is not a private subnet", path, j, id)
			}
			p.Subnets = append(p.Subnets, id)
		}
		out = append(out, p)
	}
	return out, nil
}

// validateFargateProfile is eksctl's FargateProfile.Validate, with the EKS
// API's limits on selectors after it (berth's texts for those).
func validateFargateProfile(fp *FargateProfile) error {
	if fp.Name == "" {
		return fmt.Errorf("invalid Fargate profile: empty name")
	}
	if strings.HasPrefix(fp.Name, ReservedProfileNamePrefix) {
		return fmt.Errorf("invalid Fargate profile %q: name should NOT start with %q", fp.Name, ReservedProfileNamePrefix)
	}
	if len(fp.Selectors) == 0 {
		return fmt.Errorf("invalid Fargate profile %q: no profile selector", fp.Name)
	}
	for i, sel := range fp.Selectors {
		if sel.Namespace == "" {
			return fmt.Errorf("invalid Fargate profile %q: invalid profile selector at index #%d: empty namespace", fp.Name, i)
		}
	}
	if len(fp.Selectors) > MaxFargateSelectors {
		return fmt.Errorf("invalid Fargate profile %q: %d selectors; EKS accepts up to %d per profile", fp.Name, len(fp.Selectors), MaxFargateSelectors)
	}
	for i, sel := range fp.Selectors {
		if len(sel.Labels) > MaxFargateSelectorLabels {
			return fmt.Errorf("invalid Fargate profile %q: selector at index #%d has %d labels; EKS accepts up to %d per selector",
				fp.Name, i, len(sel.Labels), MaxFargateSelectorLabels)
		}
	}
	return nil
}

func copyLabels(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
