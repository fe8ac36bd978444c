package generator

import (
	"bytes"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

func TestSmallIsDeterministic(t *testing.T) {
	for _, seed := range []uint64{1, 2, 77} {
		a, err := YAML(Small(seed))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := YAML(Small(seed))
		if !bytes.Equal(a, b) {
			t.Errorf("seed %d: two runs differ", seed)
		}
		c, _ := YAML(Small(seed + 1000))
		if bytes.Equal(a, c) {
			t.Errorf("seed %d and %d give the same scenario", seed, seed+1000)
		}
	}
}

func TestSmallSizes(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		sc := Small(seed)
		if n := len(sc.Nodes); n < 5 || n > 30 {
			t.Errorf("seed %d: %d nodes", seed, n)
		}
		if n := len(sc.Pending); n < 10 || n > 40 {
			t.Errorf("seed %d: %d pending pods", seed, n)
		}
		if sc.PercentageOfNodesToScore != 100 || sc.KubernetesVersion != "1.36" {
			t.Errorf("seed %d: settings %d %q", seed, sc.PercentageOfNodesToScore, sc.KubernetesVersion)
		}
		for _, p := range sc.Existing {
			if p.Spec.NodeName == "" {
				t.Errorf("seed %d: existing pod %s unbound", seed, p.Name)
			}
		}
	}
}

func TestYAMLRoundTrip(t *testing.T) {
	for _, seed := range []uint64{3, 4, 5} {
		sc := Small(seed)
		data, err := YAML(sc)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Read(data)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if back.Name != sc.Name || back.PercentageOfNodesToScore != 100 || back.KubernetesVersion != "1.36" {
			t.Errorf("seed %d: header lost: %+v", seed, back.Name)
		}
		if !equality.Semantic.DeepEqual(sc.Pending, back.Pending) || !equality.Semantic.DeepEqual(sc.Nodes, back.Nodes) ||
			!equality.Semantic.DeepEqual(sc.Existing, back.Existing) || len(back.Services) != len(sc.Services) ||
			len(back.ReplicaSets) != len(sc.ReplicaSets) || len(back.StatefulSets) != len(sc.StatefulSets) || len(back.Namespaces) != len(sc.Namespaces) ||
			len(back.PriorityClasses) != len(sc.PriorityClasses) {
			t.Errorf("seed %d: round trip changed the scenario", seed)
		}
	}
}

// TestCoverage checks that a few hundred seeds exercise every feature the
// differential test promises.
func TestCoverage(t *testing.T) {
	seen := map[string]bool{}
	mark := func(k string, ok bool) {
		if ok {
			seen[k] = true
		}
	}
	for seed := uint64(0); seed < 200; seed++ {
		sc := Small(seed)
		for _, n := range sc.Nodes {
			mark("unschedulable node", n.Spec.Unschedulable)
			mark("gpu node", !n.Status.Capacity.Name(gpuResource, "").IsZero())
			_, zoned := n.Labels[v1.LabelTopologyZone]
			mark("node without zone", !zoned)
			for _, tt := range n.Spec.Taints {
				mark("taint "+string(tt.Effect), true)
			}
		}
		for _, p := range sc.Pending {
			mark("nodeSelector", len(p.Spec.NodeSelector) > 0)
			mark("init container", len(p.Spec.InitContainers) > 0)
			for _, c := range p.Spec.InitContainers {
				mark("sidecar", c.RestartPolicy != nil)
			}
			for _, c := range p.Spec.Containers {
				for _, port := range c.Ports {
					mark("host port", port.HostPort > 0)
				}
				mark("extended resource", !c.Resources.Requests.Name(gpuResource, "").IsZero())
			}
			mark("priority class", p.Spec.PriorityClassName != "")
			mark("preemptionPolicy Never", *p.Spec.PreemptionPolicy == v1.PreemptNever)
			for _, o := range p.OwnerReferences {
				mark("owned by "+o.Kind, true)
			}
			for _, tol := range p.Spec.Tolerations {
				mark("toleration "+string(tol.Operator)+"/"+string(tol.Effect), tol.TolerationSeconds == nil)
			}
			if a := p.Spec.Affinity; a != nil {
				if na := a.NodeAffinity; na != nil {
					if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
						for _, term := range r.NodeSelectorTerms {
							for _, e := range term.MatchExpressions {
								mark("required "+string(e.Operator), true)
							}
							mark("matchFields", len(term.MatchFields) > 0)
						}
					}
					mark("preferred node affinity", len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0)
				}
				if pa := a.PodAffinity; pa != nil {
					for _, term := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
						mark("pod affinity "+term.TopologyKey, true)
						mark("namespaceSelector", term.NamespaceSelector != nil)
					}
					mark("preferred pod affinity", len(pa.PreferredDuringSchedulingIgnoredDuringExecution) > 0)
				}
				if pa := a.PodAntiAffinity; pa != nil {
					for _, term := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
						mark("anti-affinity "+term.TopologyKey, true)
						mark("affinity matchLabelKeys", len(term.MatchLabelKeys) > 0)
					}
					mark("preferred anti-affinity", len(pa.PreferredDuringSchedulingIgnoredDuringExecution) > 0)
				}
			}
			for _, c := range p.Spec.TopologySpreadConstraints {
				mark("spread "+string(c.WhenUnsatisfiable), true)
				mark("minDomains", c.MinDomains != nil)
				mark("nodeAffinityPolicy", c.NodeAffinityPolicy != nil)
				mark("nodeTaintsPolicy", c.NodeTaintsPolicy != nil)
				mark("spread matchLabelKeys", len(c.MatchLabelKeys) > 0)
			}
		}
	}
	want := []string{"unschedulable node", "gpu node", "node without zone", "taint NoSchedule", "taint PreferNoSchedule",
		"taint NoExecute", "nodeSelector", "init container", "sidecar", "host port", "extended resource", "priority class",
		"preemptionPolicy Never", "owned by ReplicaSet", "owned by StatefulSet", "toleration Exists/", "toleration Equal/NoSchedule",
		"toleration Equal/PreferNoSchedule", "toleration Exists/NoExecute",
		"required In", "required NotIn", "required Exists", "required DoesNotExist", "required Gt", "required Lt",
		"matchFields", "preferred node affinity", "pod affinity " + v1.LabelTopologyZone, "pod affinity " + v1.LabelHostname,
		"namespaceSelector", "preferred pod affinity", "anti-affinity " + v1.LabelTopologyZone, "anti-affinity " + v1.LabelHostname,
		"affinity matchLabelKeys", "preferred anti-affinity", "spread DoNotSchedule", "spread ScheduleAnyway", "minDomains",
		"nodeAffinityPolicy", "nodeTaintsPolicy", "spread matchLabelKeys"}
	for _, k := range want {
		if !seen[k] {
			t.Errorf("no scenario in 200 seeds has %s", k)
		}
	}
}

// TestPendingMayPreempt: some pending pods that may preempt have a higher
// priority than a pod bound before them, so preemption is exercised.
func TestPendingMayPreempt(t *testing.T) {
	above := 0
	for seed := uint64(0); seed < 100; seed++ {
		sc := Small(seed)
		lowest := int32(1 << 30)
		for _, p := range sc.Existing {
			lowest = min(lowest, *p.Spec.Priority)
		}
		for _, p := range sc.Pending {
			if *p.Spec.PreemptionPolicy != v1.PreemptNever && *p.Spec.Priority > lowest {
				above++
			}
			lowest = min(lowest, *p.Spec.Priority)
		}
	}
	if above < 100 {
		t.Fatalf("only %d pending pods in 100 seeds could preempt", above)
	}
}

func TestProfiles(t *testing.T) {
	for _, name := range Profiles {
		sc, err := Profile(name, 200, 300, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(sc.Nodes) != 200 || len(sc.Pending) != 300 || len(sc.Existing) != 0 {
			t.Errorf("%s: %d nodes %d pending %d existing", name, len(sc.Nodes), len(sc.Pending), len(sc.Existing))
		}
		count := func(f func(*v1.Pod) bool) int {
			n := 0
			for _, p := range sc.Pending {
				if f(p) {
					n++
				}
			}
			return n
		}
		spread := count(func(p *v1.Pod) bool { return len(p.Spec.TopologySpreadConstraints) > 0 })
		affinity := count(func(p *v1.Pod) bool { return p.Spec.Affinity != nil })
		switch name {
		case "basic":
			if spread+affinity != 0 {
				t.Errorf("basic has %d spread and %d affinity pods", spread, affinity)
			}
		case "spread":
			if spread < 200 {
				t.Errorf("spread has only %d spread pods", spread)
			}
		case "affinity":
			if affinity < 100 {
				t.Errorf("affinity has only %d affinity pods", affinity)
			}
		}
	}
	if _, err := Profile("nope", 1, 1, 1); err == nil {
		t.Error("unknown profile accepted")
	}
}
