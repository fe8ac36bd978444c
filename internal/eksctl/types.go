// Package eksctl reads the part of an eksctl ClusterConfig (eksctl.io/v1alpha5)
// that decides where pods can go: the cluster's region, zones and Kubernetes
// version, and its node groups with their sizes, labels and taints. Resolve
// applies eksctl's defaults and validation and turns the config into the
// cluster.Info and cluster.NodeGroup values berth simulates.
//
// Keys berth does not need (iam, addons, ssh, ...) are accepted and ignored, as
// they change no placement; keys eksctl itself does not know are refused, as
// eksctl's strict decoding does (strict.go).
package eksctl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// GroupVersionKind identifies a ClusterConfig document.
var GroupVersionKind = schema.GroupVersionKind{Group: "eksctl.io", Version: "v1alpha5", Kind: "ClusterConfig"}

// ClusterConfig is the subset of eksctl's ClusterConfig that berth models.
type ClusterConfig struct {
	metav1.TypeMeta `json:",inline"`

	Metadata          ClusterMeta         `json:"metadata"`
	AvailabilityZones []string            `json:"availabilityZones,omitempty"`
	VPC               *ClusterVPC         `json:"vpc,omitempty"`
	NodeGroups        []*NodeGroup        `json:"nodeGroups,omitempty"`
	ManagedNodeGroups []*ManagedNodeGroup `json:"managedNodeGroups,omitempty"`
	FargateProfiles   []*FargateProfile   `json:"fargateProfiles,omitempty"`
	Addons            []*Addon            `json:"addons,omitempty"`
	AddonsConfig      *AddonsConfig       `json:"addonsConfig,omitempty"`
}

// Addon is an entry of addons; only the name decides what runs on the
// nodes (the other keys are IAM and versioning, parsed and ignored).
type Addon struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

// AddonsConfig is the addonsConfig block.
type AddonsConfig struct {
	// DisableDefaultAddons skips vpc-cni, kube-proxy and coredns unless
	// addons lists them.
	DisableDefaultAddons bool `json:"disableDefaultAddons,omitempty"`
}

// SelectedAddons returns the names listed under addons (in file order) and
// whether the default add-ons are disabled.
func (c *ClusterConfig) SelectedAddons() (names []string, disableDefaults bool) {
	for _, a := range c.Addons {
		if a != nil {
			names = append(names, a.Name)
		}
	}
	return names, c.AddonsConfig != nil && c.AddonsConfig.DisableDefaultAddons
}

// ClusterMeta is the config's metadata block.
type ClusterMeta struct {
	Name    string            `json:"name,omitempty"`
	Region  string            `json:"region,omitempty"`
	Version KubeVersion       `json:"version,omitempty"`
	Tags    map[string]string `json:"tags,omitempty"`
}

// ClusterVPC holds the VPC settings berth uses (the CIDR, for node IPs).
type ClusterVPC struct {
	CIDR string `json:"cidr,omitempty"`
}

// NodeGroupBase holds the fields shared by managed and self-managed groups.
type NodeGroupBase struct {
	Name              string            `json:"name,omitempty"`
	AMIFamily         string            `json:"amiFamily,omitempty"`
	InstanceType      string            `json:"instanceType,omitempty"`
	AvailabilityZones []string          `json:"availabilityZones,omitempty"`
	DesiredCapacity   *int              `json:"desiredCapacity,omitempty"`
	MinSize           *int              `json:"minSize,omitempty"`
	MaxSize           *int              `json:"maxSize,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	MaxPodsPerNode    int               `json:"maxPodsPerNode,omitempty"`
	VolumeSize        *int              `json:"volumeSize,omitempty"`
	// Tags are the group's AWS resource tags; with PropagateASGTags eksctl
	// also writes the labels and taints as cluster-autoscaler node-template
	// tags on the Auto Scaling group (docs/cluster-autoscaler.md#node-groups).
	Tags             map[string]string `json:"tags,omitempty"`
	PropagateASGTags *bool             `json:"propagateASGTags,omitempty"`
	IAM              *NodeGroupIAM     `json:"iam,omitempty"`
}

// NodeGroupIAM is the part of a group's iam block that changes its Auto
// Scaling group: withAddonPolicies.autoScaler makes eksctl add the
// cluster-autoscaler discovery tags. The other keys are accepted and ignored.
type NodeGroupIAM struct {
	WithAddonPolicies *AddonPolicies `json:"withAddonPolicies,omitempty"`
}

// AddonPolicies is iam.withAddonPolicies; only autoScaler matters to berth.
type AddonPolicies struct {
	AutoScaler *bool `json:"autoScaler,omitempty"`
}

// ManagedNodeGroup is an entry of managedNodeGroups. Its taints are list-form only.
type ManagedNodeGroup struct {
	NodeGroupBase `json:",inline"`

	InstanceTypes []string `json:"instanceTypes,omitempty"`
	Spot          bool     `json:"spot,omitempty"`
	Taints        Taints   `json:"taints,omitempty"`
}

// NodeGroup is an entry of nodeGroups (self-managed). Its taints may be given
// in list or map form. InstanceTypes and Spot are not eksctl fields for these
// groups; they are decoded only so that Resolve can refuse them instead of
// silently dropping them.
type NodeGroup struct {
	NodeGroupBase `json:",inline"`

	Taints                Taints                 `json:"taints,omitempty"`
	InstancesDistribution *InstancesDistribution `json:"instancesDistribution,omitempty"`
	InstanceTypes         []string               `json:"instanceTypes,omitempty"`
	Spot                  bool                   `json:"spot,omitempty"`
}

// InstancesDistribution is the mixed-instances policy of a self-managed group.
type InstancesDistribution struct {
	InstanceTypes                       []string `json:"instanceTypes,omitempty"`
	OnDemandBaseCapacity                *int     `json:"onDemandBaseCapacity,omitempty"`
	OnDemandPercentageAboveBaseCapacity *int     `json:"onDemandPercentageAboveBaseCapacity,omitempty"`
}

// Taint is one node-group taint as written in the config. Effect keeps the
// user's spelling until Resolve normalises it.
type Taint struct {
	Key    string `json:"key,omitempty"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect,omitempty"`
}

// Taints decodes both eksctl taint forms. MapForm records that the map form
// ({key: "value:Effect"}) was used, which only self-managed groups accept.
type Taints struct {
	Items   []Taint
	MapForm bool
}

// UnmarshalJSON accepts a list of {key, value, effect} or a map of
// key -> "value:Effect" / ":Effect" / "Effect" (eksctl's parseTaint). Map
// entries are sorted by key so that the result never depends on map order.
func (t *Taints) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		*t = Taints{}
		return nil
	}
	var asMap map[string]string
	if err := json.Unmarshal(data, &asMap); err == nil {
		keys := make([]string, 0, len(asMap))
		for k := range asMap {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := Taints{MapForm: true, Items: make([]Taint, 0, len(keys))}
		for _, k := range keys {
			out.Items = append(out.Items, parseMapTaint(k, asMap[k]))
		}
		*t = out
		return nil
	}
	var list []Taint
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&list); err != nil {
		return fmt.Errorf("taints must be a {string: string} or a [{key, value, effect}]: %w", err)
	}
	*t = Taints{Items: list}
	return nil
}

// MarshalJSON writes the list form.
func (t Taints) MarshalJSON() ([]byte, error) {
	if t.Items == nil {
		return []byte("null"), nil
	}
	return json.Marshal(t.Items)
}

// parseMapTaint splits "value:Effect"; a single part is the effect alone.
// Anything with more colons leaves the effect empty, which validation rejects.
func parseMapTaint(key, valueEffect string) Taint {
	parts := strings.Split(valueEffect, ":")
	switch len(parts) {
	case 1:
		return Taint{Key: key, Effect: parts[0]}
	case 2:
		return Taint{Key: key, Value: parts[0], Effect: parts[1]}
	default:
		return Taint{Key: key}
	}
}

// KubeVersion is metadata.version. YAML reads an unquoted 1.30 as the number
// 1.3, so a number is refused with a hint rather than silently misread.
type KubeVersion string

// UnmarshalJSON accepts only strings.
func (v *KubeVersion) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("metadata.version must be a string such as \"1.34\" (quote it: YAML reads 1.30 as the number 1.3), got %s", bytes.TrimSpace(data))
	}
	*v = KubeVersion(s)
	return nil
}

// DeepCopyObject implements runtime.Object. The config is small and plain
// data, so a JSON round trip is an exact copy.
func (c *ClusterConfig) DeepCopyObject() runtime.Object {
	if c == nil {
		return nil
	}
	data, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("eksctl: cannot copy ClusterConfig: %v", err))
	}
	out := &ClusterConfig{}
	if err := json.Unmarshal(data, out); err != nil {
		panic(fmt.Sprintf("eksctl: cannot copy ClusterConfig: %v", err))
	}
	return out
}

// Decode reads one ClusterConfig document (YAML or JSON). Keys eksctl does
// not know are errors (*UnknownFieldError), as in eksctl's strict decoding;
// keys eksctl knows but berth does not model are ignored; known keys with
// the wrong shape are errors.
func Decode(data []byte) (*ClusterConfig, error) {
	asJSON, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	if err := checkKnownFields(asJSON); err != nil {
		return nil, err
	}
	cfg := &ClusterConfig{}
	if err := yaml.Unmarshal(asJSON, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// effects maps both accepted spellings to the Kubernetes one.
var effects = map[string]corev1.TaintEffect{
	"NoSchedule":         corev1.TaintEffectNoSchedule,
	"PreferNoSchedule":   corev1.TaintEffectPreferNoSchedule,
	"NoExecute":          corev1.TaintEffectNoExecute,
	"NO_SCHEDULE":        corev1.TaintEffectNoSchedule,
	"PREFER_NO_SCHEDULE": corev1.TaintEffectPreferNoSchedule,
	"NO_EXECUTE":         corev1.TaintEffectNoExecute,
}
