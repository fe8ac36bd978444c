package generator

import (
	"bytes"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/berth-sim/berth/ca-conformance/scenario"
)

func TestDeterministic(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		a, _ := yaml.Marshal(Small(seed))
		b, _ := yaml.Marshal(Small(seed))
		if !bytes.Equal(a, b) {
			t.Fatalf("seed %d: two draws differ", seed)
		}
		c, _ := yaml.Marshal(Small(seed + 1000))
		if bytes.Equal(a, c) {
			t.Fatalf("seeds %d and %d drew the same scenario", seed, seed+1000)
		}
	}
}

// Every generated scenario is valid and survives a YAML round trip (what
// cadiff prints is what a scenario file holds), and over many seeds every
// kind of input the comparison is meant to exercise turns up.
func TestValidAndVaried(t *testing.T) {
	seen := map[string]int{}
	for seed := uint64(1); seed <= 300; seed++ {
		sc := Small(seed)
		if err := sc.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if seed <= 30 {
			data, err := yaml.Marshal(sc)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := scenario.Parse(data); err != nil {
				t.Fatalf("seed %d: round trip: %v", seed, err)
			}
		}
		seen["expander "+sc.Options.Expander]++
		if sc.Options.BalanceSimilarNodeGroups {
			seen["balance"]++
		}
		if sc.Options.MaxNodesTotal > 0 {
			seen["max-nodes-total"]++
		}
		for _, g := range sc.NodeGroups {
			if len(g.Template.Taints) > 0 {
				seen["tainted group"]++
			}
			if size, _ := sc.GroupSize(g.Name); size == 0 {
				seen["empty group"]++
			} else if size == g.Max {
				seen["group at max"]++
			}
		}
		for _, n := range sc.Nodes {
			for _, p := range n.Pods {
				switch {
				case p.LocalStorage:
					seen["local storage"]++
				case p.Owner == "":
					seen["bare pod"]++
				case p.Annotations["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "false":
					seen["safe-to-evict false"]++
				}
			}
		}
		for _, p := range sc.Pods {
			switch {
			case p.NodeSelector != nil && p.Tolerations != nil:
				seen["selector with toleration"]++
			case p.NodeSelector != nil:
				seen["selector"]++
			case p.Affinity != nil:
				seen["zone affinity"]++
			case p.Tolerations != nil:
				seen["toleration only"]++
			}
			if p.Priority != nil {
				seen["expendable"]++
			}
		}
	}
	for _, k := range []string{
		"expander least-waste", "expander most-pods", "expander least-nodes", "expander priority",
		"expander priority,least-waste", "expander ", "balance", "max-nodes-total", "tainted group",
		"empty group", "group at max", "local storage", "bare pod", "safe-to-evict false",
		"selector with toleration", "selector", "zone affinity", "toleration only", "expendable",
	} {
		if seen[k] == 0 {
			t.Errorf("no %q in 300 seeds", k)
		}
	}
}

func TestBenchShape(t *testing.T) {
	sc := Generate(1, Bench)
	if len(sc.NodeGroups) != 50 || len(sc.Pods) != 5000 || len(sc.Nodes) > 50 {
		t.Fatalf("bench: %d groups, %d nodes, %d pods", len(sc.NodeGroups), len(sc.Nodes), len(sc.Pods))
	}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestPlan5000x50Shape(t *testing.T) {
	sc := Plan5000x50()
	if len(sc.NodeGroups) != 50 || len(sc.Pods) != 5000 || len(sc.Nodes) != 50 {
		t.Fatalf("plan: %d groups, %d nodes, %d pods", len(sc.NodeGroups), len(sc.Nodes), len(sc.Pods))
	}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
}
