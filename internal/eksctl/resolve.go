package eksctl

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/version"
)

// Defaults eksctl applies (pkg/apis/eksctl.io/v1alpha5/types.go).
const (
	DefaultNodeType              = "m5.large"
	DefaultNodeCount             = 2
	DefaultMaxSize               = 1
	DefaultNodeVolumeSize        = 80
	DefaultAMIFamily             = "AmazonLinux2023"
	DefaultCIDR                  = "192.168.0.0/16"
	MinRequiredAvailabilityZones = 2
	// AmazonLinux2EOLMinor is the first minor with no AmazonLinux2 AMIs.
	AmazonLinux2EOLMinor = 33

	// Labels eksctl puts on every node group's nodes.
	ClusterNameLabel   = "alpha.eksctl.io/cluster-name"
	NodeGroupNameLabel = "alpha.eksctl.io/nodegroup-name"
)

// recommendedZoneSuffixes stands in for eksctl's pick of three zones in the
// region (it asks EC2; berth is offline, so it takes a, b and c).
var recommendedZoneSuffixes = []string{"a", "b", "c"}

// amiFamilies are the families eksctl accepts; spelling is normalised
// case-insensitively, as eksctl's normalizeAMIFamily does.
var amiFamilies = []string{
	"AmazonLinux2023", "AmazonLinux2", "UbuntuPro2604", "Ubuntu2604", "UbuntuPro2404", "Ubuntu2404",
	"UbuntuPro2204", "Ubuntu2204", "UbuntuPro2004", "Ubuntu2004", "Ubuntu1804", "Bottlerocket",
	"BottlerocketFips", "WindowsServer2019CoreContainer", "WindowsServer2019FullContainer",
	"WindowsServer2022CoreContainer", "WindowsServer2022FullContainer", "WindowsServer2025CoreContainer",
	"WindowsServer2025FullContainer",
}

// Resolve validates the config and applies eksctl's defaults, returning the
// cluster description and its node groups (self-managed groups first, then
// managed ones, each in file order). Errors carry the config path
// (managedNodeGroups[1].taints[0]) and, where eksctl has one, its own text.
// source names the file and document for NodeGroup.Source.
func (c *ClusterConfig) Resolve(source string) (cluster.Info, []cluster.NodeGroup, error) {
	var info cluster.Info
	if c.Metadata.Name == "" {
		return info, nil, fmt.Errorf("metadata.name must be set")
	}
	if c.Metadata.Region == "" {
		return info, nil, fmt.Errorf("metadata.region must be set")
	}
	if err := checkRegion(c.Metadata.Region); err != nil {
		return info, nil, err
	}
	kubeVersion := string(c.Metadata.Version)
	if kubeVersion == "" {
		kubeVersion = cluster.DefaultKubernetesVersion
	}
	v, err := version.Parse(kubeVersion)
	if err != nil {
		return info, nil, fmt.Errorf("metadata.version: %v", err)
	}
	if len(c.AvailabilityZones) > 0 && len(c.AvailabilityZones) < MinRequiredAvailabilityZones {
		return info, nil, fmt.Errorf("only %d zone(s) specified %v, %d are required (can be non-unique)",
			len(c.AvailabilityZones), c.AvailabilityZones, MinRequiredAvailabilityZones)
	}
	if err := checkZones("availabilityZones", c.AvailabilityZones, c.Metadata.Region); err != nil {
		return info, nil, err
	}
	zones := append([]string(nil), c.AvailabilityZones...)
	if len(zones) == 0 {
		for _, s := range recommendedZoneSuffixes {
			zones = append(zones, c.Metadata.Region+s)
		}
	}
	cidr := DefaultCIDR
	if c.VPC != nil && c.VPC.CIDR != "" {
		cidr = c.VPC.CIDR
	}
	info = cluster.Info{
		Name:              c.Metadata.Name,
		Region:            c.Metadata.Region,
		KubernetesVersion: kubeVersion,
		Zones:             zones,
		VPCCIDR:           cidr,
	}

	for i, a := range c.Addons {
		if a == nil || a.Name == "" {
			return info, nil, fmt.Errorf("addons[%d].name must be set", i)
		}
	}

	// Names must be set and unique across both kinds of group.
	seen := map[string]bool{}
	checkName := func(path, name string) error {
		if name == "" {
			return fmt.Errorf("%s.name must be set", path)
		}
		if seen[name] {
			return fmt.Errorf("%s.name %q is not unique", path, name)
		}
		seen[name] = true
		return nil
	}
	for i, ng := range c.NodeGroups {
		if ng == nil {
			return info, nil, fmt.Errorf("nodeGroups[%d] must be an object", i)
		}
		if err := checkName(fmt.Sprintf("nodeGroups[%d]", i), ng.Name); err != nil {
			return info, nil, err
		}
	}
	for i, ng := range c.ManagedNodeGroups {
		if ng == nil {
			return info, nil, fmt.Errorf("managedNodeGroups[%d] must be an object", i)
		}
		if err := checkName(fmt.Sprintf("managedNodeGroups[%d]", i), ng.Name); err != nil {
			return info, nil, err
		}
	}

	var groups []cluster.NodeGroup
	for i, ng := range c.NodeGroups {
		g, err := c.resolveSelfManaged(fmt.Sprintf("nodeGroups[%d]", i), ng, v, zones)
		if err != nil {
			return info, nil, err
		}
		g.Source = source
		groups = append(groups, g)
	}
	for i, ng := range c.ManagedNodeGroups {
		g, err := c.resolveManaged(fmt.Sprintf("managedNodeGroups[%d]", i), ng, v, zones)
		if err != nil {
			return info, nil, err
		}
		g.Source = source
		groups = append(groups, g)
	}
	return info, groups, nil
}

func (c *ClusterConfig) resolveManaged(path string, ng *ManagedNodeGroup, v version.Version, zones []string) (cluster.NodeGroup, error) {
	g, err := c.resolveBase(path, &ng.NodeGroupBase, v, zones)
	if err != nil {
		return g, err
	}
	g.Managed = true
	g.Spot = ng.Spot
	if err := checkSizes(path, &ng.NodeGroupBase); err != nil {
		return g, err
	}
	min, max, desired, err := managedScaling(ng.MinSize, ng.MaxSize, ng.DesiredCapacity)
	if err != nil {
		return g, fmt.Errorf("%s: %w%s", path, err, flagWording)
	}
	g.MinSize, g.MaxSize, g.DesiredSize = min, max, desired
	switch {
	case ng.InstanceType != "" && len(ng.InstanceTypes) > 0:
		return g, fmt.Errorf("only one of instanceType or instanceTypes can be specified (%s)", path)
	case ng.InstanceType != "":
		g.InstanceTypes = []string{ng.InstanceType}
	case len(ng.InstanceTypes) > 0:
		g.InstanceTypes = append([]string(nil), ng.InstanceTypes...)
	default:
		g.InstanceTypes = []string{DefaultNodeType}
	}
	if err := checkAMIFamily(path, g.AMIFamily, g.InstanceTypes[0], true); err != nil {
		return g, err
	}
	if ng.Taints.MapForm {
		return g, fmt.Errorf("%s.taints: managed nodegroups accept only the list form [{key, value, effect}]", path)
	}
	if g.Taints, err = resolveTaints(path, ng.Taints.Items); err != nil {
		return g, err
	}
	return g, nil
}

func (c *ClusterConfig) resolveSelfManaged(path string, ng *NodeGroup, v version.Version, zones []string) (cluster.NodeGroup, error) {
	g, err := c.resolveBase(path, &ng.NodeGroupBase, v, zones)
	if err != nil {
		return g, err
	}
	if ng.Spot || len(ng.InstanceTypes) > 0 {
		return g, fmt.Errorf("%s: Unmanaged nodegroups do not support the spot and instanceTypes fields; use instancesDistribution", path)
	}
	if err := checkSizes(path, &ng.NodeGroupBase); err != nil {
		return g, err
	}
	min, max, desired, err := selfManagedScaling(ng.MinSize, ng.MaxSize, ng.DesiredCapacity)
	if err != nil {
		return g, fmt.Errorf("%s: %w%s", path, err, flagWording)
	}
	g.MinSize, g.MaxSize, g.DesiredSize = min, max, desired
	switch {
	case ng.InstancesDistribution != nil && len(ng.InstancesDistribution.InstanceTypes) > 0:
		if ng.InstanceType != "" && ng.InstanceType != "mixed" {
			return g, fmt.Errorf("%s.instanceType should be \"mixed\" or unset when using the instances distribution feature", path)
		}
		d := ng.InstancesDistribution
		g.InstanceTypes = append([]string(nil), d.InstanceTypes...)
		// All-Spot only when no on-demand capacity is asked for at all.
		g.Spot = d.OnDemandPercentageAboveBaseCapacity != nil && *d.OnDemandPercentageAboveBaseCapacity == 0 &&
			(d.OnDemandBaseCapacity == nil || *d.OnDemandBaseCapacity == 0)
	case ng.InstanceType != "":
		g.InstanceTypes = []string{ng.InstanceType}
	default:
		g.InstanceTypes = []string{DefaultNodeType}
	}
	if err := checkAMIFamily(path, g.AMIFamily, g.InstanceTypes[0], false); err != nil {
		return g, err
	}
	if g.Taints, err = resolveTaints(path, ng.Taints.Items); err != nil {
		return g, err
	}
	return g, nil
}

// resolveBase handles what both kinds of group share.
func (c *ClusterConfig) resolveBase(path string, ng *NodeGroupBase, v version.Version, zones []string) (cluster.NodeGroup, error) {
	g := cluster.NodeGroup{Name: ng.Name, MaxPodsPerNode: ng.MaxPodsPerNode}
	if ng.MaxPodsPerNode < 0 {
		return g, fmt.Errorf("%s.maxPodsPerNode cannot be negative", path)
	}
	if ng.VolumeSize != nil && *ng.VolumeSize <= 0 {
		return g, fmt.Errorf("%s.volumeSize must be a positive number of GiB", path)
	}
	g.AMIFamily = DefaultAMIFamily
	if ng.AMIFamily != "" {
		g.AMIFamily = ""
		for _, f := range amiFamilies {
			if strings.EqualFold(f, ng.AMIFamily) {
				g.AMIFamily = f
			}
		}
		if g.AMIFamily == "" {
			return g, fmt.Errorf("%s.amiFamily: %q is not supported; supported families are %s", path, ng.AMIFamily, strings.Join(amiFamilies, ", "))
		}
	}
	if g.AMIFamily == "AmazonLinux2" && v.Minor >= AmazonLinux2EOLMinor {
		return g, fmt.Errorf("%s: AmazonLinux2 is not supported for Kubernetes version %s", path, v)
	}
	if err := checkZones(path+".availabilityZones", ng.AvailabilityZones, c.Metadata.Region); err != nil {
		return g, err
	}
	if len(ng.AvailabilityZones) > 0 {
		g.Zones = append([]string(nil), ng.AvailabilityZones...)
	} else {
		g.Zones = append([]string(nil), zones...)
	}
	labels := map[string]string{}
	keys := make([]string, 0, len(ng.Labels))
	for k := range ng.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return g, fmt.Errorf("%s.labels: invalid label key %q: %s", path, k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(ng.Labels[k]); len(errs) > 0 {
			return g, fmt.Errorf("%s.labels: invalid label value %q for key %q: %s", path, ng.Labels[k], k, strings.Join(errs, "; "))
		}
		labels[k] = ng.Labels[k]
	}
	if err := checkKubeletLabels(ng.Labels, v); err != nil {
		return g, fmt.Errorf("%s.labels: the kubelet (Kubernetes %s) would refuse to start with these node labels, so the nodes would never join: %w", path, v, err)
	}
	labels[ClusterNameLabel] = c.Metadata.Name
	labels[NodeGroupNameLabel] = ng.Name
	g.Labels = labels
	if len(ng.Tags) > 0 {
		g.Tags = map[string]string{}
		for k, v := range ng.Tags {
			g.Tags[k] = v
		}
	}
	g.PropagateASGTags = ng.PropagateASGTags != nil && *ng.PropagateASGTags
	g.AutoScaler = ng.IAM != nil && ng.IAM.WithAddonPolicies != nil && ng.IAM.WithAddonPolicies.AutoScaler != nil &&
		*ng.IAM.WithAddonPolicies.AutoScaler
	return g, nil
}

// flagWording follows eksctl's sizing errors, which name its command-line
// flags even when the sizes came from the config file.
const flagWording = " (eksctl names its flags here: --nodes-min is minSize, --nodes-max is maxSize, --nodes is desiredCapacity)"

// checkSizes refuses negative sizes before they are used to derive the others.
func checkSizes(path string, ng *NodeGroupBase) error {
	return checkNotNegative(path, namedSize{"minSize", ng.MinSize}, namedSize{"maxSize", ng.MaxSize},
		namedSize{"desiredCapacity", ng.DesiredCapacity})
}

// scalingRules are the parts of eksctl's node-group sizing that differ between
// managed groups (ValidateManagedNodeGroup) and self-managed ones (the
// CloudFormation builder, pkg/cfn/builder/nodegroup.go): the error texts, and
// whether a derived max of 0 becomes DefaultMaxSize.
type scalingRules struct {
	desiredBelowMin, desiredAboveMax, maxBelowMin func(min, desired, max int) string
	zeroMaxDefaults                               bool
}

var managedRules = scalingRules{
	desiredBelowMin: func(min, desired, _ int) string {
		return fmt.Sprintf("cannot use --nodes-min=%d and --nodes=%d at the same time", min, desired)
	},
	desiredAboveMax: func(_, desired, max int) string {
		return fmt.Sprintf("cannot use --nodes-max=%d and --nodes=%d at the same time", max, desired)
	},
	maxBelowMin: func(min, _, max int) string {
		return fmt.Sprintf("cannot use --nodes-min=%d and --nodes-max=%d at the same time", min, max)
	},
	zeroMaxDefaults: true,
}

var selfManagedRules = scalingRules{
	desiredBelowMin: func(min, desired, _ int) string {
		return fmt.Sprintf("--nodes value (%d) cannot be lower than --nodes-min value (%d)", desired, min)
	},
	desiredAboveMax: func(_, desired, max int) string {
		return fmt.Sprintf("--nodes value (%d) cannot be greater than --nodes-max value (%d)", desired, max)
	},
	maxBelowMin: func(min, _, max int) string {
		return fmt.Sprintf("--nodes-min value (%d) cannot be greater than --nodes-max value (%d)", min, max)
	},
}

func managedScaling(minP, maxP, desiredP *int) (min, max, desired int, err error) {
	return managedRules.resolve(minP, maxP, desiredP)
}

func selfManagedScaling(minP, maxP, desiredP *int) (min, max, desired int, err error) {
	return selfManagedRules.resolve(minP, maxP, desiredP)
}

// resolve derives missing sizes from the others, as eksctl does.
func (r scalingRules) resolve(minP, maxP, desiredP *int) (min, max, desired int, err error) {
	switch {
	case minP != nil:
		min = *minP
		if desiredP != nil && *desiredP < min {
			return 0, 0, 0, errors.New(r.desiredBelowMin(min, *desiredP, 0))
		}
	case desiredP != nil:
		min = *desiredP
	default:
		min = DefaultNodeCount
	}
	switch {
	case maxP == nil:
		max = min
		if desiredP != nil {
			max = *desiredP
		}
		if max == 0 && r.zeroMaxDefaults {
			max = DefaultMaxSize
		}
	case desiredP != nil && *desiredP > *maxP:
		return 0, 0, 0, errors.New(r.desiredAboveMax(min, *desiredP, *maxP))
	case *maxP < min:
		return 0, 0, 0, errors.New(r.maxBelowMin(min, 0, *maxP))
	default:
		max = *maxP
	}
	desired = min
	if desiredP != nil {
		desired = *desiredP
	}
	if min < 0 || desired < 0 {
		return 0, 0, 0, fmt.Errorf("minSize and desiredCapacity cannot be negative (minSize=%d, desiredCapacity=%d)", min, desired)
	}
	return min, max, desired, nil
}

// resolveTaints validates like eksctl's taints.Validate and normalises the
// effect to its Kubernetes spelling.
func resolveTaints(path string, in []Taint) ([]corev1.Taint, error) {
	var out []corev1.Taint
	for i, t := range in {
		p := fmt.Sprintf("%s.taints[%d]", path, i)
		if t.Key == "" {
			return nil, fmt.Errorf("%s: taint key must be non-empty", p)
		}
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return nil, fmt.Errorf("%s: invalid taint key: %v, %s", p, t.Key, strings.Join(errs, "; "))
		}
		if t.Value != "" {
			if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
				return nil, fmt.Errorf("%s: invalid taint value: %v, %s", p, t.Value, strings.Join(errs, "; "))
			}
		}
		effect, ok := effects[t.Effect]
		if !ok {
			return nil, fmt.Errorf("%s: invalid taint effect: %v, unsupported taint effect. Valid taint effects are: %s, %s and %s",
				p, t.Effect, corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute, corev1.TaintEffectPreferNoSchedule)
		}
		out = append(out, corev1.Taint{Key: t.Key, Value: t.Value, Effect: effect})
	}
	return out, nil
}
