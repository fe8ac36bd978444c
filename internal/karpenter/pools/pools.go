// Package pools turns the Karpenter objects in the state — v1 NodePools
// with their EC2NodeClasses, and legacy v1alpha5 Provisioners with their
// inline provider or AWSNodeTemplate — into one shape the provisioner,
// the NodeClaim lifecycle and disruption all work from
// (docs/karpenter-apis.md#one-shape-for-both-apis).
package pools

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/apis/v1alpha5"
	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/provisioning"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// API versions a pool can come from.
const (
	APIVersionV1       = "karpenter.sh/v1"
	APIVersionV1alpha5 = "karpenter.sh/v1alpha5"
)

// NodeClassLabelKey is the label naming a v1 node's EC2NodeClass.
const NodeClassLabelKey = karpv1.AWSGroup + "/ec2nodeclass"

// Pool is a NodePool or a Provisioner as Karpenter runs it.
type Pool struct {
	Name       string
	UID        types.UID
	APIVersion string
	Kind       string
	// Solver is the pool as the provisioning solve sees it (instance types
	// filled in by Catalog.Resolve).
	Solver *provisioning.NodePool
	// NodeClass drives the instance types' capacity; NodeClassRef names its
	// source ("EC2NodeClass/default", "AWSNodeTemplate/x", "provider").
	NodeClass    instancetype.NodeClassOptions
	NodeClassRef string
	// Annotations are the template's, copied to NodeClaims and nodes.
	Annotations map[string]string
	// Disruption: ConsolidateAfter and ExpireAfter are nil for Never.
	ConsolidationPolicy karpv1.ConsolidationPolicy
	ConsolidateAfter    *time.Duration
	ExpireAfter         *time.Duration
	// ExpireAfterSpec is expireAfter as a NodeClaim spells it ("720h",
	// "Never").
	ExpireAfterSpec karpv1.NillableDuration
	Budgets         []karpv1.Budget
	// TTLSecondsAfterEmpty is a v1alpha5 Provisioner's emptiness TTL.
	TTLSecondsAfterEmpty *int64
	// NotReady says why the pool cannot launch ("" when it can).
	NotReady string
}

// List returns every pool of the state, v1 NodePools and v1alpha5
// Provisioners alike, by name (a NodePool before a Provisioner of the same
// name). Pools being deleted are left out.
func List(s *cluster.State) []*Pool {
	var out []*Pool
	for _, name := range cluster.SortedKeys(s.NodePools) {
		if np := s.NodePools[name]; np.DeletionTimestamp == nil {
			out = append(out, fromNodePool(s, np))
		}
	}
	for _, name := range cluster.SortedKeys(s.Provisioners) {
		if p := s.Provisioners[name]; p.DeletionTimestamp == nil {
			out = append(out, fromProvisioner(s, p))
		}
	}
	return out
}

// Of returns the pool a node or NodeClaim with these labels belongs to.
func Of(pools []*Pool, labels map[string]string) *Pool {
	for _, p := range pools {
		if labels[p.Solver.PoolLabel] == p.Name {
			return p
		}
	}
	return nil
}

func fromNodePool(s *cluster.State, np *karpv1.NodePool) *Pool {
	t := np.Spec.Template
	p := &Pool{Name: np.Name, UID: np.UID, APIVersion: APIVersionV1, Kind: "NodePool", Annotations: t.Annotations,
		ConsolidationPolicy: np.Spec.Disruption.ConsolidationPolicy, Budgets: np.Spec.Disruption.Budgets,
		ConsolidateAfter: nillable(string(np.Spec.Disruption.ConsolidateAfter)), ExpireAfter: nillable(string(t.Spec.ExpireAfter))}
	sp := &provisioning.NodePool{Name: np.Name, UID: np.UID, Labels: t.Labels, Taints: t.Spec.Taints, StartupTaints: t.Spec.StartupTaints,
		PoolLabel: scheduling.NodePoolLabelKey}
	if np.Spec.Weight != nil {
		sp.Weight = *np.Spec.Weight
	}
	if np.Spec.Limits != nil {
		sp.Limits = corev1.ResourceList(np.Spec.Limits).DeepCopy()
	}
	for _, r := range t.Spec.Requirements {
		sp.Requirements = append(sp.Requirements, scheduling.NodeSelectorRequirementWithMinValues{
			NodeSelectorRequirement: corev1.NodeSelectorRequirement{Key: r.Key, Operator: r.Operator, Values: r.Values}, MinValues: r.MinValues})
	}
	p.ExpireAfterSpec = t.Spec.ExpireAfter
	if p.ExpireAfterSpec == "" {
		p.ExpireAfterSpec = "720h"
	}
	p.Solver = sp
	ref := t.Spec.NodeClassRef
	if ref == nil {
		p.NotReady = "the NodePool has no nodeClassRef"
		return p
	}
	sp.NodeClassLabel = ref.Group + "/" + strings.ToLower(ref.Kind)
	sp.NodeClassName = ref.Name
	p.NodeClassRef = ref.Kind + "/" + ref.Name
	nc, ok := s.EC2NodeClasses[ref.Name]
	if !ok || ref.Kind != "EC2NodeClass" {
		p.NotReady = fmt.Sprintf("%s %q not found", ref.Kind, ref.Name)
		return p
	}
	p.NodeClass = nodeClassOptions(s, nc)
	// As Karpenter's NodePool readiness, the class's own Ready condition
	// decides (the status controller sets it; docs/karpenter-apis.md#status).
	if c := meta.FindStatusCondition(nc.Status.Conditions, "Ready"); c != nil && c.Status == metav1.ConditionFalse {
		p.NotReady = fmt.Sprintf("EC2NodeClass %q is not ready: %s", ref.Name, c.Message)
	}
	return p
}

func fromProvisioner(s *cluster.State, pr *v1alpha5.Provisioner) *Pool {
	spec := pr.Spec
	p := &Pool{Name: pr.Name, UID: pr.UID, APIVersion: APIVersionV1alpha5, Kind: "Provisioner", Annotations: spec.Annotations,
		TTLSecondsAfterEmpty: spec.TTLSecondsAfterEmpty}
	// The migration guide's mapping (docs/karpenter-apis.md#legacy-v1alpha5-provisioner-and-awsnodetemplate).
	switch {
	case spec.Consolidation != nil && spec.Consolidation.Enabled != nil && *spec.Consolidation.Enabled:
		p.ConsolidationPolicy = karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized
		zero := time.Duration(0)
		p.ConsolidateAfter = &zero
	case spec.TTLSecondsAfterEmpty != nil:
		p.ConsolidationPolicy = karpv1.ConsolidationPolicyWhenEmpty
		d := time.Duration(*spec.TTLSecondsAfterEmpty) * time.Second
		p.ConsolidateAfter = &d
	}
	p.ExpireAfterSpec = karpv1.Never
	if spec.TTLSecondsUntilExpired != nil {
		d := time.Duration(*spec.TTLSecondsUntilExpired) * time.Second
		p.ExpireAfter = &d
		p.ExpireAfterSpec = karpv1.NillableDuration(fmt.Sprintf("%ds", *spec.TTLSecondsUntilExpired))
	}
	sp := &provisioning.NodePool{Name: pr.Name, UID: pr.UID, Labels: spec.Labels, Taints: spec.Taints, StartupTaints: spec.StartupTaints,
		PoolLabel: v1alpha5.ProvisionerNameLabelKey}
	if spec.Weight != nil {
		sp.Weight = *spec.Weight
	}
	if spec.Limits != nil && spec.Limits.Resources != nil {
		sp.Limits = spec.Limits.Resources.DeepCopy()
	}
	for _, r := range spec.Requirements {
		sp.Requirements = append(sp.Requirements, scheduling.NodeSelectorRequirementWithMinValues{NodeSelectorRequirement: r})
	}
	p.Solver = sp
	var provider *v1alpha5.AWS
	switch {
	case spec.Provider != nil:
		provider, p.NodeClassRef = spec.Provider, "provider"
	case spec.ProviderRef != nil:
		p.NodeClassRef = "AWSNodeTemplate/" + spec.ProviderRef.Name
		t, ok := s.AWSNodeTemplates[spec.ProviderRef.Name]
		if !ok {
			p.NotReady = fmt.Sprintf("AWSNodeTemplate %q not found", spec.ProviderRef.Name)
			return p
		}
		provider = &t.Spec.AWS
	default:
		p.NotReady = "the Provisioner has neither provider nor providerRef"
		return p
	}
	p.NodeClass = legacyNodeClass(s, provider, spec.KubeletConfiguration)
	return p
}

// nillable parses "720h"-style durations; "Never" and "" give nil.
func nillable(v string) *time.Duration {
	if v == "" || v == string(karpv1.Never) {
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return nil
	}
	return &d
}

// subnetZones are the zones of the cluster's private subnets: berth does
// not model subnet tags, so every selector term selects them all
// (docs/karpenter-apis.md#subnets).
func subnetZones(s *cluster.State) []instancetype.Zone {
	return instancetype.ZonesOf(Zones(s)...)
}

// Region is where pools launch: the ClusterConfig's region, else the
// region of the EC2 nodes the state holds (nodes exported from another
// cluster), else none, and Karpenter launches nothing.
func Region(s *cluster.State) string {
	if s.Info.Region != "" {
		return s.Info.Region
	}
	for _, name := range cluster.SortedKeys(s.Nodes) {
		if n := s.Nodes[name]; aws.IsEC2Node(n) {
			if r := n.Labels[corev1.LabelTopologyRegion]; r != "" {
				return r
			}
			if z := n.Labels[corev1.LabelTopologyZone]; z != "" {
				return aws.RegionOfZone(z)
			}
		}
	}
	return ""
}

// Zones are the cluster's zones: the ClusterConfig's, else those of its
// EC2 nodes in the region, else the region's default three.
func Zones(s *cluster.State) []string {
	if len(s.Info.Zones) > 0 || s.Info.Region != "" {
		return aws.ClusterZones(s.Info)
	}
	region := Region(s)
	seen := map[string]bool{}
	var zones []string
	for _, name := range cluster.SortedKeys(s.Nodes) {
		n := s.Nodes[name]
		if z := n.Labels[corev1.LabelTopologyZone]; aws.IsEC2Node(n) && z != "" && aws.RegionOfZone(z) == region && !seen[z] {
			seen[z] = true
			zones = append(zones, z)
		}
	}
	if len(zones) == 0 && region != "" {
		return aws.DefaultZones(region)
	}
	sort.Strings(zones)
	return zones
}

// RegionZones are the zones EC2 offers instance types in: the region's
// default three and the cluster's.
func RegionZones(s *cluster.State) []instancetype.Zone {
	zones := aws.DefaultZones(Region(s))
	have := map[string]bool{}
	for _, z := range zones {
		have[z] = true
	}
	for _, z := range Zones(s) {
		if !have[z] {
			zones = append(zones, z)
		}
	}
	sort.Strings(zones)
	return instancetype.ZonesOf(zones...)
}

// amiFamilyOfAlias maps an amiSelectorTerms alias ("al2023@latest") to its
// family.
func amiFamilyOfAlias(alias string) string {
	family, _, _ := strings.Cut(alias, "@")
	switch family {
	case "al2":
		return instancetype.AMIFamilyAL2
	case "al2023":
		return instancetype.AMIFamilyAL2023
	case "bottlerocket":
		return instancetype.AMIFamilyBottlerocket
	case "windows2019":
		return "Windows2019"
	case "windows2022":
		return "Windows2022"
	case "windows2025":
		return "Windows2025"
	}
	return ""
}

// ephemeralDevice is the family's device that backs ephemeral storage.
func ephemeralDevice(family string) string {
	switch {
	case family == instancetype.AMIFamilyBottlerocket:
		return "/dev/xvdb"
	case strings.HasPrefix(family, "Windows"):
		return "/dev/sda1"
	}
	return "/dev/xvda"
}

func nodeClassOptions(s *cluster.State, nc *karpv1.EC2NodeClass) instancetype.NodeClassOptions {
	o := instancetype.NodeClassOptions{SubnetZones: subnetZones(s)}
	for _, term := range nc.Spec.AMISelectorTerms {
		if term.Alias != "" {
			o.AMIFamily = amiFamilyOfAlias(term.Alias)
		}
	}
	if o.AMIFamily == "" && nc.Spec.AMIFamily != nil {
		o.AMIFamily = *nc.Spec.AMIFamily
	}
	k := nc.Spec.Kubelet
	o.MaxPods = intOf(k["maxPods"])
	o.PodsPerCore = intOf(k["podsPerCore"])
	o.KubeReserved = resourcesOf(k["kubeReserved"])
	o.SystemReserved = resourcesOf(k["systemReserved"])
	o.EvictionHard = stringsOf(k["evictionHard"])
	o.EvictionSoft = stringsOf(k["evictionSoft"])
	device := ephemeralDevice(o.AMIFamily)
	for _, m := range nc.Spec.BlockDeviceMappings {
		if m == nil || m.EBS == nil || m.EBS.VolumeSize == nil {
			continue
		}
		if m.RootVolume || (m.DeviceName != nil && *m.DeviceName == device && o.RootVolumeSize.IsZero()) {
			o.RootVolumeSize = *m.EBS.VolumeSize
		}
	}
	if nc.Spec.InstanceStorePolicy != nil {
		o.InstanceStorePolicy = *nc.Spec.InstanceStorePolicy
	}
	return o
}

// legacyNodeClass is a v1alpha5 provider with the Provisioner's kubelet
// settings; its era's default AMI family is AL2.
func legacyNodeClass(s *cluster.State, provider *v1alpha5.AWS, kubelet *v1alpha5.KubeletConfiguration) instancetype.NodeClassOptions {
	o := instancetype.NodeClassOptions{SubnetZones: subnetZones(s), AMIFamily: instancetype.AMIFamilyAL2}
	if provider.AMIFamily != nil && *provider.AMIFamily != "" {
		o.AMIFamily = *provider.AMIFamily
	}
	if kubelet != nil {
		if kubelet.MaxPods != nil {
			o.MaxPods = int(*kubelet.MaxPods)
		}
		if kubelet.PodsPerCore != nil {
			o.PodsPerCore = int(*kubelet.PodsPerCore)
		}
		o.KubeReserved, o.SystemReserved = kubelet.KubeReserved, kubelet.SystemReserved
		o.EvictionHard, o.EvictionSoft = kubelet.EvictionHard, kubelet.EvictionSoft
	}
	device := ephemeralDevice(o.AMIFamily)
	for _, m := range provider.BlockDeviceMappings {
		if m != nil && m.EBS != nil && m.EBS.VolumeSize != nil && m.DeviceName != nil && *m.DeviceName == device {
			o.RootVolumeSize = *m.EBS.VolumeSize
		}
	}
	return o
}

func intOf(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case int:
		return n
	case int64:
		return int(n)
	}
	return 0
}

func stringsOf(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		out[k] = fmt.Sprint(x)
	}
	return out
}

func resourcesOf(v any) corev1.ResourceList {
	m := stringsOf(v)
	if m == nil {
		return nil
	}
	out := corev1.ResourceList{}
	for k, x := range m {
		if q, err := resource.ParseQuantity(x); err == nil {
			out[corev1.ResourceName(k)] = q
		}
	}
	return out
}

// Catalog lists instance types per node class, reusing a list while the
// class, prices and unavailable offerings are unchanged.
type Catalog struct {
	Pricing     *instancetype.Pricing
	Unavailable *instancetype.UnavailableOfferings
	cache       map[string]instancetype.InstanceTypes
	// pricingKey fingerprints the state's spot prices Pricing was built
	// from (catalog_state.go).
	pricingKey string
}

// NewCatalog returns an empty catalog with default prices.
func NewCatalog() *Catalog {
	return &Catalog{Unavailable: instancetype.NewUnavailableOfferings(), cache: map[string]instancetype.InstanceTypes{}}
}

// SharedOrNew is c, or a private catalog when c is nil (controllers built
// alone, as in their tests).
func SharedOrNew(c *Catalog) *Catalog {
	if c == nil {
		return NewCatalog()
	}
	return c
}

// InstanceTypes lists the types a pool can launch in the state's region.
func (c *Catalog) InstanceTypes(s *cluster.State, p *Pool) instancetype.InstanceTypes {
	if p.NotReady != "" {
		return nil
	}
	region := Region(s)
	if region == "" {
		return nil
	}
	c.syncState(s)
	key := fmt.Sprintf("%s|%d|%s|%#v", region, c.Unavailable.SeqNum, c.pricingKey, p.NodeClass)
	if its, ok := c.cache[key]; ok {
		return its
	}
	its := instancetype.List(region, RegionZones(s), p.NodeClass, c.Pricing, c.Unavailable, s.Now)
	c.cache[key] = its
	return its
}

// Resolve fills every ready pool's instance types.
func (c *Catalog) Resolve(s *cluster.State, pools []*Pool) {
	for _, p := range pools {
		p.Solver.InstanceTypes = c.InstanceTypes(s, p)
	}
}

// Usage sums the capacity of the pool's nodes and in-flight claims, as
// NodePoolResourcesFor does, with "nodes" counting them; it also returns
// the count.
func Usage(s *cluster.State, p *Pool) (corev1.ResourceList, int64) {
	out := corev1.ResourceList{}
	count := int64(0)
	add := func(l corev1.ResourceList) {
		for k, v := range l {
			cur := out[k]
			cur.Add(v)
			out[k] = cur
		}
		count++
	}
	seen := map[string]bool{}
	for _, name := range cluster.SortedKeys(s.NodeClaims) {
		nc := s.NodeClaims[name]
		if nc.Labels[p.Solver.PoolLabel] != p.Name {
			continue
		}
		if nc.Status.NodeName != "" {
			seen[nc.Status.NodeName] = true
			if n := s.Nodes[nc.Status.NodeName]; n != nil {
				add(n.Status.Capacity)
				continue
			}
		}
		add(nc.Status.Capacity)
	}
	for _, name := range cluster.SortedKeys(s.Nodes) {
		if n := s.Nodes[name]; !seen[name] && n.Labels[p.Solver.PoolLabel] == p.Name {
			add(n.Status.Capacity)
		}
	}
	out["nodes"] = *resource.NewQuantity(count, resource.DecimalSI)
	return out, count
}
