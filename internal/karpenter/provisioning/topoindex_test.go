package provisioning

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

func TestSelectorBucket(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sel    *metav1.LabelSelector
		bucket string
		ok     bool
	}{
		{"nil selects nothing, left general", nil, "", false},
		{"empty selects everything", &metav1.LabelSelector{}, "", false},
		{"smallest matchLabels pair", &metav1.LabelSelector{MatchLabels: map[string]string{"b": "2", "a": "1"}}, "a=1", true},
		{"single-value In counts", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}}}, "app=web", true},
		{"multi-value In does not", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}}}, "", false},
		{"Exists does not", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpExists}}}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket, ok := selectorBucket(tc.sel)
			if bucket != tc.bucket || ok != tc.ok {
				t.Errorf("selectorBucket = %q, %v; want %q, %v", bucket, ok, tc.bucket, tc.ok)
			}
		})
	}
}

// TestSelectingMatchesWalk checks the label-bucket index against a plain
// walk over every group, in the same order.
func TestSelectingMatchesWalk(t *testing.T) {
	pods := benchPods(60)
	for i, p := range pods {
		if i%6 == 5 {
			// An expression selector lands in the general list.
			p.Labels["tier"] = "a"
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "tier", Operator: metav1.LabelSelectorOpExists}}}}}
		}
	}
	top, err := newTopology(&Cluster{}, []*NodePool{pool("default", 0)}, pods, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		var want []string
		for _, g := range top.groups {
			if g.selects(p) {
				want = append(want, g.id)
			}
		}
		var got []string
		for _, g := range top.selecting(p) {
			got = append(got, g.id)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: selecting = %q, walk = %q", p.Name, got, want)
		}
	}
}

// TestHostGuardAgreesWithCanAdd packs pods with hostname anti-affinity and
// hostname spread into claims the way the solver does, and checks that
// every claim the guard rules out is one canAdd refuses.
func TestHostGuardAgreesWithCanAdd(t *testing.T) {
	pods := benchPods(60)
	for i, p := range pods {
		if i%10 == 6 {
			p.Labels["app"] = "host-spread"
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: corev1.LabelHostname,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "host-spread"}}}}
		}
	}
	np := pool("default", 0)
	top, err := newTopology(&Cluster{}, []*NodePool{np}, pods, false)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := newNodePoolTemplate(np)
	tmpl.instanceTypes = np.InstanceTypes
	cache := newFilterCache()
	var claims []*nodeClaim
	rejected := 0
	for i, p := range pods {
		requests := requestsForPods(p)
		data := &podData{requests: requests, vec: newRequestVec(requests), requirements: scheduling.NewPodRequirements(p),
			strictRequirements: scheduling.NewStrictPodRequirements(p)}
		guard := top.hostGuardFor(p, data)
		placed := false
		for _, n := range claims {
			reqs, its, err := n.canAdd(p, data, false)
			if guard.rejects(n) {
				rejected++
				if err == nil {
					t.Fatalf("%s: guard rejects %s, canAdd accepts", p.Name, n.hostname)
				}
			}
			if err == nil && !placed {
				n.add(p, data, reqs, its)
				placed = true
			}
		}
		if !placed {
			n := newNodeClaim(tmpl, top, fmt.Sprintf("hostname-placeholder-%04d", i), corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")},
				newHostPortUsage(), tmpl.instanceTypes, cache)
			reqs, its, err := n.canAdd(p, data, false)
			if err != nil {
				t.Fatalf("%s: new claim: %v", p.Name, err)
			}
			n.add(p, data, reqs, its)
			claims = append(claims, n)
		}
	}
	if rejected == 0 {
		t.Fatal("the guard never ruled a claim out; the test exercises nothing")
	}
}

func TestLimitCacheFollowsRemaining(t *testing.T) {
	tmpl := newNodePoolTemplate(pool("default", 0))
	tmpl.instanceTypes = euTypes
	c := limitCache{}
	big := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")}
	all := c.withinLimits(tmpl, big)
	if len(all) != len(euTypes) {
		t.Fatalf("1000 CPUs left: %d types, want all %d", len(all), len(euTypes))
	}
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
	few := c.withinLimits(tmpl, small)
	if want := filterByRemainingResources(euTypes, small); len(few) != len(want) || len(few) >= len(all) {
		t.Fatalf("4 CPUs left: %d types, want %d (< %d)", len(few), len(want), len(all))
	}
	if again := c.withinLimits(tmpl, small); len(again) != len(few) {
		t.Fatalf("same remainder: %d types, want %d", len(again), len(few))
	}
}
