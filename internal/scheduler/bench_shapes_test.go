package scheduler

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
)

// shapeTemplates is how many templates the affinity and spread cases cycle
// through; pods of one template differ only in their names (and owner).
const shapeTemplates = 8

// affinityShape gives template t's placement: preferred and required pod
// (anti-)affinity on zone and hostname, and node affinity, as the affinity
// profile mixes them.
func affinityShape(p *v1.Pod, t int) {
	app := p.Labels["app"]
	a := &v1.Affinity{}
	switch t % 4 {
	case 0:
		a.PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{appTerm(app, v1.LabelHostname)}}
	case 1:
		a.PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{appTerm(app, v1.LabelTopologyZone)}}
	case 2:
		a.PodAffinity = &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
			{Weight: 50, PodAffinityTerm: appTerm(fmt.Sprintf("app-%d", (t+1)%shapeTemplates), v1.LabelTopologyZone)}}}
		a.PodAntiAffinity = &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
			{Weight: 20, PodAffinityTerm: appTerm(app, v1.LabelHostname)}}}
	case 3:
		a.NodeAffinity = &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: benchZones[:2]}}}}}}
		a.PodAntiAffinity = &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
			{Weight: 10, PodAffinityTerm: appTerm(fmt.Sprintf("app-%d", (t+2)%shapeTemplates), v1.LabelHostname)}}}
	}
	p.Spec.Affinity = a
}

// nodeAffinityShape gives template t node affinity as the affinity profile
// writes it: terms that name nodes (matchFields) ORed with label terms,
// node selectors, and preferred terms on zone and pool.
func nodeAffinityShape(p *v1.Pod, t int) {
	zoneIn := func(zones ...string) v1.NodeSelectorRequirement {
		return v1.NodeSelectorRequirement{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: zones}
	}
	name := func(op v1.NodeSelectorOperator, n int) v1.NodeSelectorTerm {
		return v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: op, Values: []string{fmt.Sprintf("node-%04d", n)}}}}
	}
	na := &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
		{Weight: int32(10 + t), Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{zoneIn(benchZones[t%3])}}},
		{Weight: 30, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "pool", Operator: v1.NodeSelectorOpDoesNotExist}}}},
	}}
	var terms []v1.NodeSelectorTerm
	switch t % 4 {
	case 0:
		terms = []v1.NodeSelectorTerm{name(v1.NodeSelectorOpNotIn, 7*t), {MatchExpressions: []v1.NodeSelectorRequirement{zoneIn(benchZones[0])}}}
	case 1:
		p.Spec.NodeSelector = map[string]string{v1.LabelTopologyRegion: "us-west-2"}
	case 2:
		terms = []v1.NodeSelectorTerm{name(v1.NodeSelectorOpIn, 11*t), {MatchExpressions: []v1.NodeSelectorRequirement{{Key: "pool", Operator: v1.NodeSelectorOpDoesNotExist}}}}
	case 3:
		terms = []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpNotIn, Values: benchZones[2:]}}}}
	}
	if terms != nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{NodeSelectorTerms: terms}
	}
	p.Spec.Affinity = &v1.Affinity{NodeAffinity: na}
}

// spreadShape gives template t one or two topology spread constraints over
// zone and hostname, hard and soft, as the spread profile does.
func spreadShape(p *v1.Pod, t int) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}}
	zone := v1.TopologySpreadConstraint{MaxSkew: int32(1 + t%2), TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: sel}
	host := v1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: sel}
	switch t % 3 {
	case 0:
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{zone}
	case 1:
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{host}
	default:
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{zone, host}
	}
}

// shapedPods returns the pods of a case: template i%shapeTemplates with the
// given shape, owned by one ReplicaSet per template or bare.
func shapedPods(shape func(*v1.Pod, int), owned bool) func(int) *v1.Pod {
	return func(i int) *v1.Pod {
		t := i % shapeTemplates
		p := plainPod(i)
		app := fmt.Sprintf("app-%d", t)
		p.Labels = map[string]string{"app": app}
		if owned {
			p.Labels["pod-template-hash"] = "5d4f8c7b9"
			yes := true
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet",
				Name: app + "-5d4f8c7b9", UID: types.UID("rs-" + app), Controller: &yes}}
		}
		shape(p, t)
		return p
	}
}

// addShapeOwners adds the ReplicaSets of shapedPods' owned pods.
func addShapeOwners(s *cluster.State) {
	for t := 0; t < shapeTemplates; t++ {
		app := fmt.Sprintf("app-%d", t)
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: app + "-5d4f8c7b9", Namespace: "default", UID: types.UID("rs-" + app)},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app, "pod-template-hash": "5d4f8c7b9"}}}}
		s.ReplicaSets[cluster.Key(rs.Namespace, rs.Name)] = rs
	}
}

// BenchmarkScheduleShapes measures the affinity and spread shapes with pods
// owned by ReplicaSets and as bare pods: sharing work between pods of one
// template must not depend on their having an owner.
func BenchmarkScheduleShapes(b *testing.B) {
	for _, bc := range []struct {
		name  string
		shape func(*v1.Pod, int)
		// ownedToo: also as owned pods (owned pods with node affinity take
		// PodTopologySpread's walk over the nodes, a cost of its own).
		ownedToo bool
	}{{"affinity", affinityShape, true}, {"spread", spreadShape, true}, {"nodeaffinity", nodeAffinityShape, false}} {
		for _, owned := range []bool{true, false} {
			if owned && !bc.ownedToo {
				continue
			}
			name := bc.name + "-bare"
			var setup func(*cluster.State)
			if owned {
				name, setup = bc.name+"-owned", addShapeOwners
			}
			b.Run(name, func(b *testing.B) { benchSync(b, shapedPods(bc.shape, owned), setup) })
		}
	}
}
