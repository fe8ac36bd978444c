// Package generator builds seeded Karpenter provisioning scenarios: NodePools
// over berth's catalog, existing nodes with bound pods, DaemonSets, volumes
// and pending pods exercising the constraint kinds provisioning handles.
//
// A scenario is a pure function of (profile, seed). Features draws the
// probability of each constraint kind, so new kinds are added as a field, a
// draw in pod(), and a default in SmallFeatures.
package generator

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/karpenter-conformance/scenario"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// Region and the zones scenarios use.
const Region = "us-west-2"

var zones = []string{"us-west-2a", "us-west-2b", "us-west-2c"}

// Features are per-group probabilities of each constraint kind.
type Features struct {
	NodeSelector, RequiredNodeAffinity, PreferredNodeAffinity float64
	Tolerations                                               float64
	ZoneSpread, HostnameSpread                                float64
	HostnameAntiAffinity, PreferredAntiAffinity               float64
	ZoneAffinity                                              float64
	Volumes                                                   float64
	// The kinds below are drawn from their own random streams after
	// everything else, so the draws above (and the scenarios of generator
	// versions before them, where none applies) are unchanged.
	//
	// VolumeLimits is per existing node: a CSINode with a small EBS attach
	// limit, and bound claims on some of its pods.
	VolumeLimits float64
	// NotInitialized and InFlight are per managed node: registered but not
	// initialized (with the not-ready taint Karpenter ignores until then),
	// or a launched NodeClaim whose node has not registered.
	NotInitialized, InFlight float64
	// HostPorts and GPUs are per group (a host port shared by the group, one
	// nvidia.com/gpu per pod); DaemonSetHostPorts per DaemonSet; MinValues
	// per NodePool (minValues 2-5 on instance family or type).
	HostPorts, GPUs, DaemonSetHostPorts, MinValues float64
}

// SmallFeatures puts every kind in play.
var SmallFeatures = Features{
	NodeSelector: 0.25, RequiredNodeAffinity: 0.2, PreferredNodeAffinity: 0.2,
	Tolerations: 0.4, ZoneSpread: 0.25, HostnameSpread: 0.15,
	HostnameAntiAffinity: 0.15, PreferredAntiAffinity: 0.1, ZoneAffinity: 0.1,
	Volumes: 0.15, VolumeLimits: 0.4,
	NotInitialized: 0.15, InFlight: 0.15,
	HostPorts: 0.1, GPUs: 0.05, DaemonSetHostPorts: 0.2, MinValues: 0.2,
}

type gen struct {
	r     *rand.Rand
	sc    *scenario.Scenario
	f     Features
	pools []poolInfo
}

type poolInfo struct {
	name  string
	taint *corev1.Taint
	team  string
}

func newGen(name string, seed uint64, f Features) *gen {
	return &gen{
		r:  rand.New(rand.NewPCG(seed, 0x6b61727065)),
		f:  f,
		sc: &scenario.Scenario{Name: name, Region: Region, Zones: append([]string(nil), zones...)},
	}
}

// Small returns the quick differential scenario for seed: 1–3 NodePools,
// 0–4 existing nodes, 0–2 DaemonSets, 5–50 pending pods, full catalog.
func Small(seed uint64) *scenario.Scenario {
	return SmallWith(fmt.Sprintf("seed-%d", seed), seed, SmallFeatures)
}

// NoTopology is SmallFeatures without topology spread and pod (anti-)affinity:
// the constraint kinds whose tie-breaking upstream leaves to map order, so
// genuine Karpenter's result for these scenarios is a function of the input.
var NoTopology = func() Features {
	f := SmallFeatures
	f.ZoneSpread, f.HostnameSpread = 0, 0
	f.HostnameAntiAffinity, f.PreferredAntiAffinity, f.ZoneAffinity = 0, 0, 0
	return f
}()

// SmallWith is Small with other feature probabilities.
func SmallWith(name string, seed uint64, f Features) *scenario.Scenario {
	g := newGen(name, seed, f)
	nPools := 1 + g.r.IntN(3)
	for i := range nPools {
		g.pool(i)
	}
	g.storage()
	for i := range g.r.IntN(5) {
		g.node(i)
	}
	for i := range g.r.IntN(3) {
		g.daemonSet(i)
	}
	g.pods(5 + g.r.IntN(46))
	g.extras(seed)
	g.volumeLimits(seed)
	return g.sc
}

// Mixed returns the benchmark scenario: two NodePools over the full catalog,
// no existing nodes, one DaemonSet and n pending pods with mixed constraints
// (no volumes, so every run is the same batch shape).
func Mixed(n int, seed uint64) *scenario.Scenario {
	f := SmallFeatures
	f.Volumes = 0
	g := newGen(fmt.Sprintf("mixed-%d-seed-%d", n, seed), seed, f)
	g.pool(0)
	g.pool(1)
	g.daemonSet(0)
	g.pods(n)
	return g.sc
}

func (g *gen) pick(vals []string) string { return vals[g.r.IntN(len(vals))] }

// subset returns a non-empty random subset of vals, in vals order.
func (g *gen) subset(vals []string) []string {
	for {
		var out []string
		for _, v := range vals {
			if g.r.IntN(2) == 0 {
				out = append(out, v)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
}

func req(key string, op corev1.NodeSelectorOperator, vals ...string) karpv1.NodeSelectorRequirementWithMinValues {
	return karpv1.NodeSelectorRequirementWithMinValues{
		NodeSelectorRequirement: corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: vals},
	}
}

func (g *gen) pool(i int) {
	name := fmt.Sprintf("pool-%d", i)
	info := poolInfo{name: name, team: fmt.Sprintf("team-%d", i)}
	np := &karpv1.NodePool{
		TypeMeta:   metav1.TypeMeta{APIVersion: "karpenter.sh/v1", Kind: "NodePool"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: karpv1.NodePoolSpec{
			Template: karpv1.NodeClaimTemplate{
				ObjectMeta: karpv1.ObjectMeta{Labels: map[string]string{"team": info.team}},
				Spec: karpv1.NodeClaimTemplateSpec{
					NodeClassRef: &karpv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
					// The CRD defaults, spelled out: an unset NillableDuration
					// serialises as "Never", which is not what the API server stores.
					ExpireAfter: karpv1.MustParseNillableDuration("720h"),
				},
			},
			Disruption: karpv1.Disruption{
				ConsolidationPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized,
				ConsolidateAfter:    karpv1.MustParseNillableDuration("0s"),
				Budgets:             []karpv1.Budget{{Nodes: "10%"}},
			},
		},
	}
	if g.r.IntN(3) > 0 {
		w := int32(1 + g.r.IntN(100))
		np.Spec.Weight = &w
	}
	spec := &np.Spec.Template.Spec
	// The EKS best-practice default: linux, and a capacity-type choice.
	spec.Requirements = append(spec.Requirements, req(corev1.LabelOSStable, corev1.NodeSelectorOpIn, "linux"))
	switch g.r.IntN(3) {
	case 0:
		spec.Requirements = append(spec.Requirements, req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "on-demand"))
	case 1:
		spec.Requirements = append(spec.Requirements, req(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot", "on-demand"))
	}
	if g.r.IntN(2) == 0 {
		spec.Requirements = append(spec.Requirements, req(corev1.LabelArchStable, corev1.NodeSelectorOpIn, g.subset([]string{"amd64", "arm64"})...))
	}
	if g.r.IntN(3) > 0 {
		spec.Requirements = append(spec.Requirements, req("karpenter.k8s.aws/instance-category", corev1.NodeSelectorOpIn, g.subset([]string{"c", "m", "r", "t"})...))
	}
	if g.r.IntN(3) == 0 {
		spec.Requirements = append(spec.Requirements, req("karpenter.k8s.aws/instance-generation", corev1.NodeSelectorOpGt, strconv.Itoa(3+g.r.IntN(4))))
	}
	if g.r.IntN(4) == 0 {
		spec.Requirements = append(spec.Requirements, req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, g.subset(zones)...))
	}
	if g.r.IntN(5) == 0 {
		spec.Requirements = append(spec.Requirements, req("karpenter.k8s.aws/instance-size", corev1.NodeSelectorOpNotIn, "metal", "24xlarge", "48xlarge"))
	}
	if g.r.IntN(3) == 0 {
		t := corev1.Taint{Key: "dedicated", Value: info.team, Effect: corev1.TaintEffectNoSchedule}
		if g.r.IntN(4) == 0 {
			t.Effect = corev1.TaintEffectPreferNoSchedule
		}
		spec.Taints = []corev1.Taint{t}
		info.taint = &t
	}
	if g.r.IntN(3) == 0 {
		np.Spec.Limits = karpv1.Limits{corev1.ResourceCPU: resource.MustParse(strconv.Itoa(16 + 16*g.r.IntN(8)))}
	}
	g.sc.NodePools = append(g.sc.NodePools, np)
	g.pools = append(g.pools, info)
}

// storage adds a WaitForFirstConsumer EBS class, sometimes zone-restricted.
func (g *gen) storage() {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	sc := &storagev1.StorageClass{
		TypeMeta:          metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass"},
		ObjectMeta:        metav1.ObjectMeta{Name: "gp3"},
		Provisioner:       "ebs.csi.aws.com",
		Parameters:        map[string]string{"type": "gp3"},
		VolumeBindingMode: &wffc,
	}
	if g.r.IntN(3) == 0 {
		sc.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
			{Key: corev1.LabelTopologyZone, Values: g.subset(zones)},
		}}}
	}
	g.sc.StorageClasses = append(g.sc.StorageClasses, sc)
}

// nodeTypes are the shapes existing nodes use.
var nodeTypes = []string{"m5.large", "m5.xlarge", "c5.xlarge", "r5.large", "m6g.large", "c6g.2xlarge", "t3.medium"}

func (g *gen) node(i int) {
	it, _ := aws.Lookup(g.pick(nodeTypes))
	zone := g.pick(zones)
	name := fmt.Sprintf("ip-10-0-%d-%d.%s.compute.internal", 1+i, 10+g.r.IntN(240), Region)
	capacity, allocatable := aws.KarpenterResources(it, aws.KarpenterOptions{AMIFamily: "AL2023"})
	labels := map[string]string{
		corev1.LabelArchStable:         it.Arch,
		corev1.LabelOSStable:           "linux",
		corev1.LabelHostname:           name,
		corev1.LabelInstanceTypeStable: it.Name,
		corev1.LabelTopologyZone:       zone,
		corev1.LabelTopologyRegion:     Region,
	}
	n := &scenario.Node{Node: &corev1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///%s/i-%016x", zone, g.r.Uint64())},
		Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: allocatable},
	}}
	// Half the nodes belong to a pool (with its labels and taints), half are
	// unmanaged (e.g. a managed node group).
	if g.r.IntN(2) == 0 && len(g.pools) > 0 {
		p := g.pools[g.r.IntN(len(g.pools))]
		n.Managed = true
		labels[karpv1.NodePoolLabelKey] = p.name
		labels["team"] = p.team
		labels[karpv1.CapacityTypeLabelKey] = g.pick([]string{"spot", "on-demand"})
		if p.taint != nil {
			n.Node.Spec.Taints = []corev1.Taint{*p.taint}
		}
	} else {
		labels["eks.amazonaws.com/nodegroup"] = "system"
	}
	for j := range g.r.IntN(4) {
		pod := g.basePod(fmt.Sprintf("bound-%d-%d", i, j), map[string]string{"app": fmt.Sprintf("bound-%d", i%2)}, 100*(1+g.r.IntN(5)), 128*(1+g.r.IntN(8)))
		if len(n.Node.Spec.Taints) > 0 {
			pod.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		}
		n.Pods = append(n.Pods, pod)
	}
	g.sc.Nodes = append(g.sc.Nodes, n)
}

func (g *gen) daemonSet(i int) {
	name := fmt.Sprintf("ds-%d", i)
	labels := map[string]string{"app": name}
	tmpl := g.basePod(name, labels, 50*(1+g.r.IntN(4)), 64*(1+g.r.IntN(4)))
	if g.r.IntN(2) == 0 {
		tmpl.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	}
	if g.r.IntN(4) == 0 {
		tmpl.Spec.NodeSelector = map[string]string{corev1.LabelArchStable: g.pick([]string{"amd64", "arm64"})}
	}
	g.sc.DaemonSets = append(g.sc.DaemonSets, &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: tmpl.Spec},
		},
	})
}

func (g *gen) basePod(name string, labels map[string]string, cpuMilli, memMi int) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "public.ecr.aws/docker/library/busybox:latest",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(cpuMilli), resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(int64(memMi)<<20, resource.BinarySI),
			}},
		}}},
	}
}

var cpuChoices = []int{100, 250, 500, 1000, 1500, 2000, 4000}
var memChoices = []int{128, 256, 512, 1024, 2048, 4096, 8192}

// pods adds n pending pods in groups (a deployment's replicas share a shape
// and constraints), each group drawing its constraint kinds from g.f.
func (g *gen) pods(n int) {
	for gi := 0; n > 0; gi++ {
		size := min(n, 1+g.r.IntN(8))
		n -= size
		g.group(gi, size)
	}
}

func (g *gen) group(gi, size int) {
	app := fmt.Sprintf("app-%d", gi)
	labels := map[string]string{"app": app}
	proto := g.basePod(app, labels, cpuChoices[g.r.IntN(len(cpuChoices))], memChoices[g.r.IntN(len(memChoices))])
	spec := &proto.Spec
	chance := func(p float64) bool { return g.r.Float64() < p }
	affinity := func() *corev1.Affinity {
		if spec.Affinity == nil {
			spec.Affinity = &corev1.Affinity{}
		}
		return spec.Affinity
	}
	if chance(g.f.NodeSelector) {
		spec.NodeSelector = map[string]string{}
		switch g.r.IntN(4) {
		case 0:
			spec.NodeSelector[corev1.LabelArchStable] = g.pick([]string{"amd64", "arm64"})
		case 1:
			spec.NodeSelector[karpv1.CapacityTypeLabelKey] = g.pick([]string{"spot", "on-demand"})
		case 2:
			spec.NodeSelector[corev1.LabelTopologyZone] = g.pick(zones)
		case 3:
			spec.NodeSelector["team"] = g.pools[g.r.IntN(len(g.pools))].team
		}
	}
	if chance(g.f.RequiredNodeAffinity) {
		var term corev1.NodeSelectorTerm
		switch g.r.IntN(3) {
		case 0:
			term.MatchExpressions = []corev1.NodeSelectorRequirement{{Key: "karpenter.k8s.aws/instance-category", Operator: corev1.NodeSelectorOpIn, Values: g.subset([]string{"c", "m", "r"})}}
		case 1:
			term.MatchExpressions = []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: g.subset(zones)}}
		case 2:
			term.MatchExpressions = []corev1.NodeSelectorRequirement{{Key: "karpenter.k8s.aws/instance-cpu", Operator: corev1.NodeSelectorOpGt, Values: []string{strconv.Itoa(1 + g.r.IntN(8))}}}
		}
		affinity().NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}}}
	}
	if chance(g.f.PreferredNodeAffinity) {
		a := affinity()
		if a.NodeAffinity == nil {
			a.NodeAffinity = &corev1.NodeAffinity{}
		}
		key, vals := corev1.LabelTopologyZone, []string{g.pick(zones)}
		if g.r.IntN(2) == 0 {
			key, vals = karpv1.CapacityTypeLabelKey, []string{g.pick([]string{"spot", "on-demand"})}
		}
		a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.PreferredSchedulingTerm{{
			Weight: int32(1 + g.r.IntN(100)),
			Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: key, Operator: corev1.NodeSelectorOpIn, Values: vals,
			}}},
		}}
	}
	if chance(g.f.Tolerations) {
		if g.r.IntN(3) == 0 {
			spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		} else {
			p := g.pools[g.r.IntN(len(g.pools))]
			spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: p.team}}
		}
	}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	if chance(g.f.ZoneSpread) {
		spec.TopologySpreadConstraints = append(spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			MaxSkew: int32(1 + g.r.IntN(2)), TopologyKey: corev1.LabelTopologyZone, LabelSelector: sel,
			WhenUnsatisfiable: g.whenUnsatisfiable(),
		})
	}
	if chance(g.f.HostnameSpread) {
		spec.TopologySpreadConstraints = append(spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			MaxSkew: 1, TopologyKey: corev1.LabelHostname, LabelSelector: sel,
			WhenUnsatisfiable: g.whenUnsatisfiable(),
		})
	}
	if chance(g.f.HostnameAntiAffinity) {
		affinity().PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: sel, TopologyKey: corev1.LabelHostname,
		}}}
	} else if chance(g.f.PreferredAntiAffinity) {
		affinity().PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 50, PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: sel, TopologyKey: corev1.LabelHostname},
		}}}
	}
	if chance(g.f.ZoneAffinity) {
		// Self-affinity, as Karpenter's benchmark uses, so the group can always
		// place its first pod.
		affinity().PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: sel, TopologyKey: corev1.LabelTopologyZone,
		}}}
	}
	volumes := chance(g.f.Volumes) && len(g.sc.StorageClasses) > 0
	for i := range size {
		p := proto.DeepCopy()
		p.Name = fmt.Sprintf("%s-%d", app, i)
		if volumes {
			g.volume(p)
		}
		g.sc.Pods = append(g.sc.Pods, p)
	}
}

func (g *gen) whenUnsatisfiable() corev1.UnsatisfiableConstraintAction {
	if g.r.IntN(3) == 0 {
		return corev1.ScheduleAnyway
	}
	return corev1.DoNotSchedule
}

// volumeLimits gives some existing nodes a CSINode with an EBS attach
// limit of 1-4 and bound claims (volumes in the node's zone) on some of
// their pods, from its own random stream.
func (g *gen) volumeLimits(seed uint64) {
	if g.f.VolumeLimits == 0 {
		return
	}
	r := rand.New(rand.NewPCG(seed, 0x6562736c696d))
	for _, n := range g.sc.Nodes {
		if n.State == scenario.NodeInFlight || r.Float64() >= g.f.VolumeLimits {
			continue
		}
		count := int32(1 + r.IntN(4))
		g.sc.CSINodes = append(g.sc.CSINodes, &storagev1.CSINode{
			TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSINode"},
			ObjectMeta: metav1.ObjectMeta{Name: n.Node.Name},
			Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{
				Name: "ebs.csi.aws.com", NodeID: fmt.Sprintf("i-%016x", r.Uint64()),
				TopologyKeys: []string{corev1.LabelTopologyZone},
				Allocatable:  &storagev1.VolumeNodeResources{Count: &count},
			}}},
		})
		zone := n.Node.Labels[corev1.LabelTopologyZone]
		for _, p := range n.Pods {
			if r.IntN(2) == 0 {
				continue
			}
			claim, pv := g.claim(p, fmt.Sprintf("vol-%016x", r.Uint64()), zone)
			g.sc.PersistentVolumes = append(g.sc.PersistentVolumes, pv)
			g.mount(p, claim)
		}
	}
}

// claim is p's claim bound to a zonal EBS volume.
func (g *gen) claim(p *corev1.Pod, handle, zone string) (*corev1.PersistentVolumeClaim, *corev1.PersistentVolume) {
	class := g.sc.StorageClasses[0].Name
	claim := &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: "data-" + p.Name, Namespace: p.Namespace},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
			VolumeName:       "pv-" + p.Name,
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
	pv := &corev1.PersistentVolume{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: metav1.ObjectMeta{Name: "pv-" + p.Name},
		Spec: corev1.PersistentVolumeSpec{
			StorageClassName: class,
			Capacity:         corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			ClaimRef:         &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: claim.Namespace, Name: claim.Name},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: "ebs.csi.aws.com", VolumeHandle: handle,
			}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}},
			}}}},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	return claim, pv
}

// volume gives p a claim: usually an unbound WaitForFirstConsumer claim,
// sometimes one already bound to a zonal PV (which pins the pod's zone).
func (g *gen) volume(p *corev1.Pod) {
	if g.r.IntN(3) == 0 {
		handle := fmt.Sprintf("vol-%016x", g.r.Uint64())
		claim, pv := g.claim(p, handle, g.pick(zones))
		g.sc.PersistentVolumes = append(g.sc.PersistentVolumes, pv)
		g.mount(p, claim)
		return
	}
	class := g.sc.StorageClasses[0].Name
	g.mount(p, &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: "data-" + p.Name, Namespace: p.Namespace},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
		},
	})
}

// mount adds claim to the scenario and to p's volumes.
func (g *gen) mount(p *corev1.Pod, claim *corev1.PersistentVolumeClaim) {
	g.sc.PersistentVolumeClaims = append(g.sc.PersistentVolumeClaims, claim)
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name},
	}})
}
