// Package generator makes seeded cluster-autoscaler scenarios: several node
// groups of different EC2 shapes, labels, taints and sizes, existing nodes
// carrying pods (so some are under the scale-down threshold and some pods
// block removal), and pending pods in deployment-like batches with
// selectors, tolerations, zone affinity and requests that fit some groups,
// all or none. The same seed always gives the same scenario.
package generator

import (
	"fmt"
	"math/rand/v2"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-sim/berth/ca-conformance/scenario"
)

// shape is an EC2 instance type's size: vCPUs and GiB of memory.
type shape struct {
	name   string
	vcpu   int64
	memGiB int64
}

var shapes = []shape{
	{"t3.medium", 2, 4}, {"t3.large", 2, 8},
	{"m5.large", 2, 8}, {"m5.xlarge", 4, 16}, {"m5.2xlarge", 8, 32},
	{"c5.large", 2, 4}, {"c5.xlarge", 4, 8}, {"c5.2xlarge", 8, 16},
	{"r5.large", 2, 16}, {"r5.xlarge", 4, 32},
}

var (
	roles = []string{"web", "batch", "scaler", "data", "infra"}
	zones = []string{"us-west-2a", "us-west-2b", "us-west-2c"}
)

// Features bounds what Generate draws.
type Features struct {
	MinGroups, MaxGroups int
	// MaxNodesPerGroup caps a group's existing nodes.
	MaxNodesPerGroup int
	MinPods, MaxPods int
	// BatchSize caps how many identical pending pods a batch has.
	BatchSize int
	// Taint is the chance a group taints its nodes role=<role>:NoSchedule.
	Taint float64
	// Tolerate is the chance a batch aimed at a tainted role tolerates it.
	Tolerate float64
}

// Default is the quick CI mix.
var Default = Features{
	MinGroups: 2, MaxGroups: 6, MaxNodesPerGroup: 3,
	MinPods: 3, MaxPods: 30, BatchSize: 6,
	Taint: 0.3, Tolerate: 0.75,
}

// Bench is the benchmark's shape (issue 12): 50 node groups with at most one
// node each and 5,000 pending pods in batches of up to 50.
var Bench = Features{
	MinGroups: 50, MaxGroups: 50, MaxNodesPerGroup: 1,
	MinPods: 5000, MaxPods: 5000, BatchSize: 50,
	Taint: 0.3, Tolerate: 0.75,
}

// Small is the scenario of seed under Default.
func Small(seed uint64) *scenario.Scenario { return Generate(seed, Default) }

// Generate draws one scenario.
func Generate(seed uint64, f Features) *scenario.Scenario {
	r := rand.New(rand.NewPCG(seed, 0x6361676e))
	sc := &scenario.Scenario{Name: fmt.Sprintf("seed-%d", seed)}
	sc.Options = options(r)
	nGroups := f.MinGroups + r.IntN(f.MaxGroups-f.MinGroups+1)
	var tainted []string
	for i := range nGroups {
		g, taint := group(r, i, f)
		sc.NodeGroups = append(sc.NodeGroups, g)
		if taint {
			tainted = append(tainted, g.Template.Labels["role"])
		}
		size := 0
		if g.Size != nil {
			size = *g.Size
		}
		for j := range min(size, f.MaxNodesPerGroup) {
			sc.Nodes = append(sc.Nodes, node(r, &g, j))
		}
		// Groups whose nodes were capped keep the count honest.
		if size > f.MaxNodesPerGroup {
			*sc.NodeGroups[i].Size = f.MaxNodesPerGroup
		}
	}
	if sc.Options.Expander == "priority" || sc.Options.Expander == "priority,least-waste" {
		sc.Options.Priorities = priorities(r, sc.NodeGroups)
	}
	nPods := f.MinPods + r.IntN(f.MaxPods-f.MinPods+1)
	for batch := 0; len(sc.Pods) < nPods; batch++ {
		n := min(1+r.IntN(f.BatchSize), nPods-len(sc.Pods))
		sc.Pods = append(sc.Pods, pendingBatch(r, batch, n, tainted, f)...)
	}
	return sc
}

func options(r *rand.Rand) scenario.Options {
	o := scenario.Options{}
	o.Expander = pick(r, []string{"least-waste", "most-pods", "least-nodes", "priority", "priority,least-waste", ""})
	o.BalanceSimilarNodeGroups = r.Float64() < 0.3
	if r.Float64() < 0.2 {
		o.MaxNodesTotal = 4 + r.IntN(12)
	}
	if r.Float64() < 0.3 {
		o.ScaleDownUtilizationThreshold = float64(3+r.IntN(5)) / 10
	}
	if r.Float64() < 0.2 {
		no := false
		o.SkipNodesWithLocalStorage = &no
	}
	if r.Float64() < 0.2 {
		no := false
		o.SkipNodesWithSystemPods = &no
	}
	return o
}

func group(r *rand.Rand, i int, f Features) (scenario.NodeGroup, bool) {
	s := shapes[r.IntN(len(shapes))]
	role := roles[r.IntN(len(roles))]
	name := fmt.Sprintf("ng%d-%s-%s", i, role, dashed(s.name))
	zone := zones[r.IntN(len(zones))]
	minSize := r.IntN(2)
	maxSize := minSize + 1 + r.IntN(6)
	size := minSize + r.IntN(maxSize-minSize+1)
	labels := map[string]string{
		"role":                             role,
		"node.kubernetes.io/instance-type": s.name,
		"kubernetes.io/arch":               "amd64",
		"kubernetes.io/os":                 "linux",
		"topology.kubernetes.io/zone":      zone,
		"eks.amazonaws.com/nodegroup":      name,
	}
	// Templates follow CA's AWS scale-from-zero nodes: 110 pods, allocatable
	// equal to capacity.
	t := &scenario.Template{
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewQuantity(s.vcpu, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(s.memGiB<<30, resource.BinarySI),
			corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
		},
		Labels: labels,
	}
	taint := r.Float64() < f.Taint
	if taint {
		t.Taints = []corev1.Taint{{Key: "role", Value: role, Effect: corev1.TaintEffectNoSchedule}}
	}
	return scenario.NodeGroup{
		Name: name, Min: minSize, Max: maxSize, Size: &size,
		InstanceType: s.name, Zones: []string{zone}, Template: t,
	}, taint
}

// node is a registered instance of g with pods bound to it: an aws-node-like
// DaemonSet pod, then replicated pods up to a drawn utilization, sometimes a
// kube-system pod, a bare pod, local storage or a safe-to-evict annotation.
func node(r *rand.Rand, g *scenario.NodeGroup, j int) scenario.Node {
	capacity := g.Template.Capacity.DeepCopy()
	cpu := capacity.Cpu().MilliValue()
	mem := capacity.Memory().Value()
	// EKS-like reservations; any figure works, both sides read the numbers.
	allocCPU := cpu - 70 - 10*(cpu/1000)
	allocMem := mem - (255+11*29+100)<<20
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(allocCPU, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(allocMem, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(29, resource.DecimalSI),
	}
	capacity[corev1.ResourcePods] = *resource.NewQuantity(29, resource.DecimalSI)
	name := fmt.Sprintf("%s-n%d", g.Name, j)
	labels := map[string]string{"kubernetes.io/hostname": name}
	for k, v := range g.Template.Labels {
		labels[k] = v
	}
	n := scenario.Node{
		Name: name, Group: g.Name, Capacity: capacity, Allocatable: alloc,
		Labels: labels, Taints: g.Template.Taints,
	}
	if r.Float64() < 0.05 {
		n.Annotations = map[string]string{"cluster-autoscaler.kubernetes.io/scale-down-disabled": "true"}
	}
	n.Pods = append(n.Pods, scenario.Pod{
		Name: "aws-node-" + name, Namespace: "kube-system", Owner: scenario.OwnerDaemonSet,
		Requests: requests(25, 0), Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
	})
	target := allocCPU * int64(r.IntN(90)) / 100
	used := int64(25)
	for k := 0; ; k++ {
		c := int64(100 * (1 + r.IntN(10)))
		if used+c > target {
			break
		}
		used += c
		p := scenario.Pod{
			Name: fmt.Sprintf("%s-p%d", name, k), Owner: scenario.OwnerReplicaSet,
			Labels: map[string]string{"app": fmt.Sprintf("app%d", r.IntN(4))}, Requests: requests(c, c<<21),
			Tolerations: tolerateAll(g.Template.Taints),
		}
		switch x := r.Float64(); {
		case x < 0.05:
			p.Owner = scenario.OwnerNone
		case x < 0.10:
			p.Namespace = "kube-system"
		case x < 0.15:
			p.LocalStorage = true
		case x < 0.18:
			p.Annotations = map[string]string{"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}
		case x < 0.21:
			p.LocalStorage = true
			p.Annotations = map[string]string{"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}
		}
		n.Pods = append(n.Pods, p)
	}
	return n
}

// pendingBatch is n identical pending pods (one deployment's replicas).
func pendingBatch(r *rand.Rand, batch, n int, tainted []string, f Features) []scenario.Pod {
	cpu := pick(r, []int64{100, 250, 500, 1000, 1500, 2000, 3500, 7000, 12000})
	memMi := pick(r, []int64{128, 512, 1024, 2048, 4096, 12288, 40960})
	tmpl := scenario.Pod{
		Owner:    scenario.OwnerReplicaSet,
		Labels:   map[string]string{"app": fmt.Sprintf("batch%d", batch)},
		Requests: requests(cpu, memMi<<20),
	}
	switch x := r.Float64(); {
	case x < 0.35:
		role := roles[r.IntN(len(roles))]
		tmpl.NodeSelector = map[string]string{"role": role}
		if contains(tainted, role) && r.Float64() < f.Tolerate {
			tmpl.Tolerations = []corev1.Toleration{{Key: "role", Operator: corev1.TolerationOpEqual, Value: role, Effect: corev1.TaintEffectNoSchedule}}
		}
	case x < 0.5:
		tmpl.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn,
					Values: []string{zones[r.IntN(len(zones))]},
				}},
			}}},
		}}
	case x < 0.6 && len(tainted) > 0:
		// Tolerates every role taint without selecting a role: fits
		// tainted and untainted groups alike.
		tmpl.Tolerations = []corev1.Toleration{{Key: "role", Operator: corev1.TolerationOpExists}}
	}
	if r.Float64() < 0.05 {
		low := int32(-20)
		tmpl.Priority = &low
	}
	pods := make([]scenario.Pod, n)
	for i := range pods {
		p := tmpl
		p.Name = fmt.Sprintf("batch%d-%d", batch, i)
		pods[i] = p
	}
	return pods
}

func priorities(r *rand.Rand, groups []scenario.NodeGroup) map[int][]string {
	out := map[int][]string{}
	for _, g := range groups {
		if r.Float64() < 0.7 {
			p := 10 * (1 + r.IntN(5))
			out[p] = append(out[p], "^"+regexp.QuoteMeta(g.Name)+"$")
		}
	}
	return out
}

func requests(milliCPU, memBytes int64) corev1.ResourceList {
	l := corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(milliCPU, resource.DecimalSI)}
	if memBytes > 0 {
		l[corev1.ResourceMemory] = *resource.NewQuantity(memBytes, resource.BinarySI)
	}
	return l
}

func tolerateAll(taints []corev1.Taint) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range taints {
		out = append(out, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect})
	}
	return out
}

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func dashed(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '.' {
			b[i] = '-'
		}
	}
	return string(b)
}
