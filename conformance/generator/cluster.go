// Package generator makes seeded random scenarios for the differential test
// and the benchmarks: a cluster (namespaces, nodes over zones, services,
// replicasets, priority classes, bound pods) and a sequence of pending pods
// that draws from every scheduling feature the default profile evaluates.
//
// Pods are emitted as the API server would store them: berth's admission
// defaulting, priority resolution, default tolerations and the merge of
// pod-affinity matchLabelKeys are applied here, so that a harness that
// creates them without admission (upstream over a fake clientset) and berth
// see identical objects.
package generator

import (
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/conformance/scenario"
	"github.com/berth-sim/berth/internal/admission"
)

// Vocabulary shared by nodes and pods, small on purpose so that selectors,
// taints and tolerations often meet.
const (
	region      = "us-east-1"
	gpuResource = v1.ResourceName("example.com/gpu")
	labelTier   = "tier"
	labelGen    = "gen"
	labelDisk   = "disk"
	labelApp    = "app"
	labelTeam   = "team"
	labelHash   = "pod-template-hash"
	// labelSet marks the pods of a StatefulSet; its selector needs it, so
	// the set selects fewer pods than the app's Service does.
	labelSet = "statefulset"
)

var (
	zones         = []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	tiers         = []string{"a", "b", "c"}
	disks         = []string{"ssd", "hdd"}
	apps          = []string{"web", "api", "db", "cache", "batch"}
	hashes        = []string{"7d9f", "5c6b"}
	taintKeys     = []string{"dedicated", "spot", "gpu"}
	taintValues   = []string{"infra", "ml", ""}
	instanceTypes = []string{"m5.large", "m5.xlarge", "c5.2xlarge", "r5.large"}
	// The untagged name is looked up as ":latest" for pods but stored as
	// listed for nodes, so it never matches: a quirk both sides must share.
	images = []string{"registry.local/web:1", "registry.local/api:2", "registry.local/db:3", "registry.local/tools",
		"registry.local/tools:latest"}
	namespaces = []string{metav1.NamespaceDefault, "team-a", "team-b"}
	teamOf     = map[string]string{metav1.NamespaceDefault: "", "team-a": "a", "team-b": "b"}
)

// priorityClass is a class the generator defines; never means preemptionPolicy Never.
type priorityClass struct {
	name  string
	value int32
	never bool
}

var classes = []priorityClass{
	{"critical-never", 5000, true},
	{"high", 1000, false},
	{"medium", 500, false},
	{"low", 100, false},
	{"", 0, false}, // no class: priority 0
	{"scavenger-never", -10, true},
	{"scavenger", -10, false},
}

// gen carries the random source and the scenario being built.
type gen struct {
	r         *rand.Rand
	sc        *scenario.Scenario
	nodeNames []string
	// storage is set when the scenario has volumes (volumes.go).
	storage *storageGen
	// owners draws which pods a StatefulSet owns (pods.go), apart from r so
	// that adding StatefulSets left every other draw of a seed unchanged.
	owners *rand.Rand
}

func newGen(name string, seed uint64) *gen {
	return &gen{
		r:  rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		sc: &scenario.Scenario{Name: name, KubernetesVersion: "1.36"},
	}
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func pick[T any](g *gen, xs []T) T { return xs[g.r.IntN(len(xs))] }

func (g *gen) addNamespaces() {
	for _, name := range namespaces {
		ns := &v1.Namespace{TypeMeta: metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
		if t := teamOf[name]; t != "" {
			ns.Labels = map[string]string{labelTeam: t}
		}
		admission.DefaultNamespace(ns)
		g.sc.Namespaces = append(g.sc.Namespaces, ns)
	}
}

func (g *gen) addPriorityClasses() {
	for _, c := range classes {
		if c.name == "" {
			continue
		}
		policy := v1.PreemptLowerPriority
		if c.never {
			policy = v1.PreemptNever
		}
		g.sc.PriorityClasses = append(g.sc.PriorityClasses, &schedulingv1.PriorityClass{
			TypeMeta:   metav1.TypeMeta{Kind: "PriorityClass", APIVersion: "scheduling.k8s.io/v1"},
			ObjectMeta: metav1.ObjectMeta{Name: c.name}, Value: c.value, PreemptionPolicy: &policy,
		})
	}
}

// nodeShape tunes how varied nodes are.
type nodeShape struct {
	taintP, unschedulableP, gpuP, noZoneP, imageP float64
}

var variedNodes = nodeShape{taintP: 0.3, unschedulableP: 0.05, gpuP: 0.25, noZoneP: 0.07, imageP: 0.3}

func qty(s string) resource.Quantity { return resource.MustParse(s) }

func (g *gen) addNodes(n int, shape nodeShape) {
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("node-%03d", i)
		labels := map[string]string{
			v1.LabelHostname:           name,
			v1.LabelOSStable:           "linux",
			v1.LabelArchStable:         "amd64",
			v1.LabelInstanceTypeStable: pick(g, instanceTypes),
			labelTier:                  pick(g, tiers),
			labelGen:                   fmt.Sprint(1 + g.r.IntN(9)),
		}
		if !g.chance(shape.noZoneP) {
			labels[v1.LabelTopologyZone] = zones[i%len(zones)]
			if g.chance(0.2) {
				labels[v1.LabelTopologyZone] = pick(g, zones)
			}
			labels[v1.LabelTopologyRegion] = region
		}
		if g.chance(0.6) {
			labels[labelDisk] = pick(g, disks)
		}
		cpu := []string{"2", "4", "8", "16"}[g.r.IntN(4)]
		mem := []string{"4Gi", "8Gi", "16Gi", "32Gi", "64Gi"}[g.r.IntN(5)]
		pods := []int64{8, 17, 29, 58, 110}[g.r.IntN(5)]
		capacity := v1.ResourceList{v1.ResourceCPU: qty(cpu), v1.ResourceMemory: qty(mem),
			v1.ResourcePods: *resource.NewQuantity(pods, resource.DecimalSI)}
		if g.chance(shape.gpuP) {
			capacity[v1.ResourceEphemeralStorage] = qty([]string{"10Gi", "50Gi"}[g.r.IntN(2)])
		}
		if g.chance(shape.gpuP) {
			capacity[gpuResource] = *resource.NewQuantity(int64(1+g.r.IntN(4)), resource.DecimalSI)
		}
		node := &v1.Node{
			TypeMeta:   metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Status: v1.NodeStatus{Capacity: capacity, Allocatable: capacity.DeepCopy(),
				Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
		}
		if g.chance(shape.taintP) {
			for k := 1 + g.r.IntN(2); k > 0; k-- {
				node.Spec.Taints = appendTaint(node.Spec.Taints, v1.Taint{Key: pick(g, taintKeys), Value: pick(g, taintValues),
					Effect: pick(g, []v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute})})
			}
		}
		if g.chance(shape.unschedulableP) {
			node.Spec.Unschedulable = true
			if g.chance(0.5) {
				node.Spec.Taints = appendTaint(node.Spec.Taints, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule})
			}
		}
		if g.chance(shape.imageP) {
			for _, img := range images {
				if g.chance(0.5) {
					node.Status.Images = append(node.Status.Images, v1.ContainerImage{Names: []string{img},
						SizeBytes: int64(50+g.r.IntN(900)) * 1024 * 1024})
				}
			}
		}
		g.sc.Nodes = append(g.sc.Nodes, node)
		g.nodeNames = append(g.nodeNames, name)
	}
}

// appendTaint skips a duplicate key and effect, which validation forbids.
func appendTaint(ts []v1.Taint, t v1.Taint) []v1.Taint {
	for _, o := range ts {
		if o.Key == t.Key && o.Effect == t.Effect {
			return ts
		}
	}
	return append(ts, t)
}

// admit mutates a pod as the API server would on create (see package doc).
func (g *gen) admit(pod *v1.Pod, class priorityClass) {
	admission.DefaultPod(pod)
	pod.Spec.PriorityClassName = class.name
	prio, policy := class.value, v1.PreemptLowerPriority
	if class.never {
		policy = v1.PreemptNever
	}
	pod.Spec.Priority, pod.Spec.PreemptionPolicy = &prio, &policy
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = "default"
	}
	admission.AddDefaultTolerations(pod)
	admission.ApplyMatchLabelKeys(pod)
}
