package generator

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// features is the probability of each pod feature; a profile zeroes some.
type features struct {
	resources, initContainers, sidecar, gpu, hostPort         float64
	nodeSelector, requiredNodeAffinity, preferredNodeAffinity float64
	tolerations, podAffinity, podAntiAffinity, preferredPod   float64
	spread, owned, priority                                   float64
	// statefulSet is the chance that a pod no ReplicaSet owns belongs to
	// its app's StatefulSet (drawn from gen.owners).
	statefulSet float64
}

var allFeatures = features{
	resources: 0.85, initContainers: 0.15, sidecar: 0.1, gpu: 0.1, hostPort: 0.12,
	nodeSelector: 0.15, requiredNodeAffinity: 0.2, preferredNodeAffinity: 0.25,
	tolerations: 0.4, podAffinity: 0.12, podAntiAffinity: 0.15, preferredPod: 0.2,
	spread: 0.25, owned: 0.6, priority: 0.4, statefulSet: 0.3,
}

// addWorkloads makes one ReplicaSet and one Service per app in each namespace.
func (g *gen) addWorkloads() {
	for _, ns := range namespaces {
		for _, app := range apps {
			sel := map[string]string{labelApp: app}
			g.sc.Services = append(g.sc.Services, &v1.Service{
				TypeMeta:   metav1.TypeMeta{Kind: "Service", APIVersion: "v1"},
				ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
				Spec: v1.ServiceSpec{Selector: sel, Type: v1.ServiceTypeClusterIP,
					Ports: []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}}},
			})
			hash := hashes[0]
			labels := map[string]string{labelApp: app, labelHash: hash}
			g.sc.ReplicaSets = append(g.sc.ReplicaSets, &appsv1.ReplicaSet{
				TypeMeta:   metav1.TypeMeta{Kind: "ReplicaSet", APIVersion: "apps/v1"},
				ObjectMeta: metav1.ObjectMeta{Name: rsName(app, hash), Namespace: ns, Labels: labels, UID: rsUID(ns, app, hash)},
				Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3),
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "registry.local/" + app + ":1"}}}}},
			})
		}
	}
}

// addStatefulSets makes one StatefulSet per app in each namespace. Its
// selector adds labelSet to the app label, so system-default spreading of
// its pods counts only the set's pods, not all the Service selects.
func (g *gen) addStatefulSets() {
	h := fnv.New64a()
	h.Write([]byte("statefulsets/" + g.sc.Name))
	s := h.Sum64()
	g.owners = rand.New(rand.NewPCG(s, s^0x2545f4914f6cdd1d))
	for _, ns := range namespaces {
		for _, app := range apps {
			labels := map[string]string{labelApp: app, labelSet: ssName(app)}
			g.sc.StatefulSets = append(g.sc.StatefulSets, &appsv1.StatefulSet{
				TypeMeta:   metav1.TypeMeta{Kind: "StatefulSet", APIVersion: "apps/v1"},
				ObjectMeta: metav1.ObjectMeta{Name: ssName(app), Namespace: ns, Labels: labels, UID: ssUID(ns, app)},
				Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), ServiceName: app,
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "registry.local/" + app + ":1"}}}}},
			})
		}
	}
}

func ssName(app string) string { return app + "-set" }

func ssUID(ns, app string) types.UID { return types.UID(fmt.Sprintf("ss-%s-%s", ns, app)) }

func rsName(app, hash string) string { return app + "-" + hash }

func rsUID(ns, app, hash string) types.UID {
	return types.UID(fmt.Sprintf("rs-%s-%s-%s", ns, app, hash))
}

// pendingPriority picks a class: with probability f.priority any class,
// otherwise none (priority 0). Pods may preempt lower-priority pods bound
// before them; both harness sides carry out the preemption.
func (g *gen) pendingPriority(f features) priorityClass {
	if !g.chance(f.priority) {
		return classes[4]
	}
	return pick(g, classes)
}

// newPod builds a pod of app in ns with the features drawn from f.
func (g *gen) newPod(name, ns string, f features, existing bool) *v1.Pod {
	app := pick(g, apps)
	hash := hashes[0]
	if g.chance(0.3) {
		hash = hashes[1]
	}
	pod := &v1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + ns + "-" + name), Labels: map[string]string{labelApp: app, labelHash: hash}},
		Spec:       v1.PodSpec{SchedulerName: v1.DefaultSchedulerName},
	}
	if g.chance(0.3) {
		pod.Labels[labelTier] = pick(g, tiers)
	}
	if g.chance(f.owned) && hash == hashes[0] {
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rsName(app, hash),
			UID: rsUID(ns, app, hash), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	}
	if g.owners != nil && pod.OwnerReferences == nil && g.owners.Float64() < f.statefulSet {
		pod.Labels[labelSet] = ssName(app)
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: ssName(app),
			UID: ssUID(ns, app), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	}
	main := v1.Container{Name: "app", Image: "registry.local/" + app + ":1"}
	if g.chance(0.3) {
		main.Image = pick(g, images)
	}
	if g.chance(f.resources) {
		main.Resources.Requests = g.requests(existing)
		if g.chance(f.gpu) {
			// Limits only: defaulting copies them into requests.
			main.Resources.Limits, main.Resources.Requests = main.Resources.Requests, nil
		}
	}
	if g.chance(f.gpu / 2) {
		if main.Resources.Requests == nil {
			main.Resources.Requests = v1.ResourceList{}
		}
		main.Resources.Requests[v1.ResourceEphemeralStorage] = qty([]string{"1Gi", "20Gi"}[g.r.IntN(2)])
	}
	if g.chance(f.gpu) {
		n := *resource.NewQuantity(int64(1+g.r.IntN(2)), resource.DecimalSI)
		if main.Resources.Requests == nil {
			main.Resources.Requests = v1.ResourceList{}
		}
		main.Resources.Requests[gpuResource] = n
		main.Resources.Limits = v1.ResourceList{gpuResource: n}
	}
	if g.chance(f.hostPort) {
		port := v1.ContainerPort{ContainerPort: 8080, HostPort: pick(g, []int32{8080, 9090}), Protocol: pick(g, []v1.Protocol{v1.ProtocolTCP, v1.ProtocolUDP})}
		if g.chance(0.3) {
			port.HostIP = pick(g, []string{"0.0.0.0", "10.0.0.1", "127.0.0.1"})
		}
		main.Ports = append(main.Ports, port)
	}
	pod.Spec.Containers = append(pod.Spec.Containers, main)
	if g.chance(0.2) {
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: "helper", Image: "registry.local/helper:1",
			Resources: v1.ResourceRequirements{Requests: g.requests(true)}})
	}
	if g.chance(f.initContainers) {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: "init", Image: "registry.local/init:1",
			Resources: v1.ResourceRequirements{Requests: g.requests(false)}})
	}
	if g.chance(f.sidecar) {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: "sidecar", Image: "registry.local/proxy:1",
			RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways), Resources: v1.ResourceRequirements{Requests: g.requests(true)}})
	}
	if g.chance(f.gpu / 2) {
		pod.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: qty("250m"), v1.ResourceMemory: qty("120Mi")}
	}
	if g.chance(f.gpu / 2) {
		// Pod-level requests override the containers' sum (1.34+).
		pod.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: qty("1"), v1.ResourceMemory: qty("1Gi")}}
	}
	if !existing {
		g.placement(pod, f)
	} else if g.chance(f.podAntiAffinity) {
		// Existing pods' own terms matter to incoming pods (symmetry).
		pod.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{g.podTerm(ns)}}}
	} else if g.chance(f.preferredPod) {
		pod.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: int32(1 + g.r.IntN(100)), PodAffinityTerm: g.podTerm(ns)}}}}
	}
	return pod
}

func (g *gen) requests(small bool) v1.ResourceList {
	cpu, mem := 50+g.r.IntN(1500), 64+g.r.IntN(3000)
	if small {
		cpu, mem = 10+g.r.IntN(300), 16+g.r.IntN(512)
	}
	rl := v1.ResourceList{}
	if g.chance(0.9) {
		rl[v1.ResourceCPU] = *resource.NewMilliQuantity(int64(cpu), resource.DecimalSI)
	}
	if g.chance(0.9) {
		rl[v1.ResourceMemory] = *resource.NewQuantity(int64(mem)*1024*1024, resource.BinarySI)
	}
	return rl
}

// placement adds the pending pod's constraints and preferences.
func (g *gen) placement(pod *v1.Pod, f features) {
	aff := &v1.Affinity{}
	if g.chance(f.nodeSelector) {
		pod.Spec.NodeSelector = map[string]string{}
		switch g.r.IntN(3) {
		case 0:
			pod.Spec.NodeSelector[labelTier] = pick(g, tiers)
		case 1:
			pod.Spec.NodeSelector[labelDisk] = pick(g, disks)
		default:
			pod.Spec.NodeSelector[v1.LabelTopologyZone] = pick(g, zones)
		}
	}
	if g.chance(f.requiredNodeAffinity) {
		var terms []v1.NodeSelectorTerm
		for k := 1 + g.r.IntN(2); k > 0; k-- {
			terms = append(terms, g.nodeSelectorTerm())
		}
		aff.NodeAffinity = &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}
	}
	if g.chance(f.preferredNodeAffinity) {
		if aff.NodeAffinity == nil {
			aff.NodeAffinity = &v1.NodeAffinity{}
		}
		for k := 1 + g.r.IntN(2); k > 0; k-- {
			term := g.nodeSelectorTerm()
			term.MatchFields = nil // preferred terms may not use matchFields
			if len(term.MatchExpressions) == 0 {
				term.MatchExpressions = []v1.NodeSelectorRequirement{g.nodeRequirement()}
			}
			aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				v1.PreferredSchedulingTerm{Weight: int32(1 + g.r.IntN(100)), Preference: term})
		}
	}
	if g.chance(f.podAffinity) {
		aff.PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{g.podTerm(pod.Namespace)}}
	}
	if g.chance(f.podAntiAffinity) {
		aff.PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{g.podTerm(pod.Namespace)}}
	}
	if g.chance(f.preferredPod) {
		w := v1.WeightedPodAffinityTerm{Weight: int32(1 + g.r.IntN(100)), PodAffinityTerm: g.podTerm(pod.Namespace)}
		if g.chance(0.5) {
			if aff.PodAffinity == nil {
				aff.PodAffinity = &v1.PodAffinity{}
			}
			aff.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, w)
		} else {
			if aff.PodAntiAffinity == nil {
				aff.PodAntiAffinity = &v1.PodAntiAffinity{}
			}
			aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, w)
		}
	}
	if aff.NodeAffinity != nil || aff.PodAffinity != nil || aff.PodAntiAffinity != nil {
		pod.Spec.Affinity = aff
	}
	if g.chance(f.tolerations) {
		for k := 1 + g.r.IntN(2); k > 0; k-- {
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, g.toleration())
		}
	}
	if g.chance(f.spread) {
		for k := 1 + g.r.IntN(2); k > 0; k-- {
			pod.Spec.TopologySpreadConstraints = append(pod.Spec.TopologySpreadConstraints, g.spreadConstraint(pod, k))
		}
	}
}

func (g *gen) nodeRequirement() v1.NodeSelectorRequirement {
	switch g.r.IntN(6) {
	case 0:
		return v1.NodeSelectorRequirement{Key: labelTier, Operator: v1.NodeSelectorOpIn, Values: []string{pick(g, tiers), pick(g, tiers)}}
	case 1:
		return v1.NodeSelectorRequirement{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpNotIn, Values: []string{pick(g, zones)}}
	case 2:
		return v1.NodeSelectorRequirement{Key: labelDisk, Operator: v1.NodeSelectorOpExists}
	case 3:
		return v1.NodeSelectorRequirement{Key: labelDisk, Operator: v1.NodeSelectorOpDoesNotExist}
	case 4:
		return v1.NodeSelectorRequirement{Key: labelGen, Operator: v1.NodeSelectorOpGt, Values: []string{fmt.Sprint(g.r.IntN(8))}}
	default:
		return v1.NodeSelectorRequirement{Key: labelGen, Operator: v1.NodeSelectorOpLt, Values: []string{fmt.Sprint(2 + g.r.IntN(8))}}
	}
}

func (g *gen) nodeSelectorTerm() v1.NodeSelectorTerm {
	var t v1.NodeSelectorTerm
	for k := g.r.IntN(3); k > 0; k-- {
		t.MatchExpressions = append(t.MatchExpressions, g.nodeRequirement())
	}
	if len(t.MatchExpressions) == 0 || g.chance(0.15) {
		names := []string{pick(g, g.nodeNames), pick(g, g.nodeNames), pick(g, g.nodeNames)}
		op := v1.NodeSelectorOpIn
		if g.chance(0.4) {
			op, names = v1.NodeSelectorOpNotIn, names[:1]
		}
		t.MatchFields = []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: op, Values: names}}
	}
	return t
}

func (g *gen) toleration() v1.Toleration {
	effects := []v1.TaintEffect{"", v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute}
	var t v1.Toleration
	switch g.r.IntN(5) {
	case 0: // tolerate everything
		t = v1.Toleration{Operator: v1.TolerationOpExists}
	case 1:
		t = v1.Toleration{Key: pick(g, taintKeys), Operator: v1.TolerationOpExists, Effect: pick(g, effects)}
	case 2:
		t = v1.Toleration{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}
	default:
		t = v1.Toleration{Key: pick(g, taintKeys), Operator: v1.TolerationOpEqual, Value: pick(g, taintValues), Effect: pick(g, effects)}
	}
	if t.Effect == v1.TaintEffectNoExecute && g.chance(0.5) {
		t.TolerationSeconds = ptr.To(int64(60 * (1 + g.r.IntN(10))))
	}
	return t
}

// podTerm is a pod (anti-)affinity term over zone or hostname, selecting an
// app, in the pod's namespace, a list, or by namespace selector.
func (g *gen) podTerm(ns string) v1.PodAffinityTerm {
	term := v1.PodAffinityTerm{TopologyKey: pick(g, []string{v1.LabelTopologyZone, v1.LabelHostname})}
	sel := &metav1.LabelSelector{}
	if g.chance(0.7) {
		sel.MatchLabels = map[string]string{labelApp: pick(g, apps)}
	} else {
		sel.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: labelApp, Operator: metav1.LabelSelectorOpIn, Values: []string{pick(g, apps), pick(g, apps)}}}
	}
	term.LabelSelector = sel
	switch g.r.IntN(5) {
	case 0:
		term.Namespaces = []string{pick(g, namespaces), pick(g, namespaces)}
	case 1:
		term.NamespaceSelector = &metav1.LabelSelector{}
	case 2:
		term.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{labelTeam: pick(g, tiers[:2])}}
	}
	if g.chance(0.15) {
		term.MatchLabelKeys = []string{labelHash}
	}
	return term
}

func (g *gen) spreadConstraint(pod *v1.Pod, k int) v1.TopologySpreadConstraint {
	keys := []string{v1.LabelTopologyZone, v1.LabelHostname}
	c := v1.TopologySpreadConstraint{
		MaxSkew:           int32(1 + g.r.IntN(3)),
		TopologyKey:       keys[k%2],
		WhenUnsatisfiable: pick(g, []v1.UnsatisfiableConstraintAction{v1.DoNotSchedule, v1.ScheduleAnyway}),
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: pod.Labels[labelApp]}},
	}
	if g.chance(0.2) {
		c.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: pick(g, apps)}}
	}
	if c.WhenUnsatisfiable == v1.DoNotSchedule && g.chance(0.3) {
		c.MinDomains = ptr.To(int32(2 + g.r.IntN(4)))
	}
	if g.chance(0.3) {
		c.NodeAffinityPolicy = ptr.To(pick(g, []v1.NodeInclusionPolicy{v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore}))
	}
	if g.chance(0.3) {
		c.NodeTaintsPolicy = ptr.To(pick(g, []v1.NodeInclusionPolicy{v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore}))
	}
	if g.chance(0.3) {
		c.MatchLabelKeys = []string{labelHash}
	}
	return c
}
