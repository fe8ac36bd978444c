package scaleup

import (
	"fmt"
	"testing"

	"github.com/berth-sim/berth/internal/autoscaler/config"
)

// Three pending pods of 1 cpu: "small" (2 cpu nodes, max 1 more node)
// helps 2 pods with 1 node; "medium" (2 cpu, max 5) helps all 3 with 2
// nodes; "large" (8 cpu) helps all 3 with 1 node.
func expanderGroups() []Group {
	return []Group{
		group("large", 0, 5, 8, 32, map[string]string{"size": "large"}),
		group("medium", 0, 5, 2, 8, map[string]string{"size": "medium"}),
		group("small", 0, 1, 2, 8, map[string]string{"size": "small"}),
	}
}

func TestExpanders(t *testing.T) {
	for _, tc := range []struct {
		name       string
		expanders  []string
		priorities string
		want       []string // any of these
	}{
		// waste: large (8-3)/8+(32-1.5)/32 ~ 1.58; medium (4-3)/4+(16-1.5)/16 ~ 1.16; small (2-2)/2+... ~ 0.875+0=... lowest
		{name: "least-waste", expanders: []string{config.ExpanderLeastWaste}, want: []string{"[{small 0->1 (max: 1)}]"}},
		{name: "least-nodes ties large and small, random settles", expanders: []string{config.ExpanderLeastNodes},
			want: []string{"[{large 0->1 (max: 5)}]", "[{small 0->1 (max: 1)}]"}},
		{name: "most-pods ties large and medium", expanders: []string{config.ExpanderMostPods},
			want: []string{"[{large 0->1 (max: 5)}]", "[{medium 0->2 (max: 5)}]"}},
		{name: "chain most-pods then least-nodes", expanders: []string{config.ExpanderMostPods, config.ExpanderLeastNodes},
			want: []string{"[{large 0->1 (max: 5)}]"}},
		{name: "chain most-pods then least-waste", expanders: []string{config.ExpanderMostPods, config.ExpanderLeastWaste},
			want: []string{"[{medium 0->2 (max: 5)}]"}},
		{name: "priority", expanders: []string{config.ExpanderPriority}, priorities: "10:\n- ^med.*\n50:\n- ^large$\n",
			want: []string{"[{large 0->1 (max: 5)}]"}},
		{name: "priority: highest level that matches an option", expanders: []string{config.ExpanderPriority},
			priorities: "10:\n- medium\n50:\n- nothing-matches\n", want: []string{"[{medium 0->2 (max: 5)}]"}},
		{name: "priority then least-waste among equals", expanders: []string{config.ExpanderPriority, config.ExpanderLeastWaste},
			priorities: "10:\n- medium\n- large\n", want: []string{"[{medium 0->2 (max: 5)}]"}},
		{name: "random", expanders: []string{config.ExpanderRandom},
			want: []string{"[{large 0->1 (max: 5)}]", "[{medium 0->2 (max: 5)}]", "[{small 0->1 (max: 1)}]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(func(o *config.Options) { o.Expanders = tc.expanders })
			var first string
			for seed := int64(0); seed < 8; seed++ {
				res, err := Plan(Input{Pending: testPods("web", 3, 1000, 512), Groups: expanderGroups(), Options: o,
					Priorities: tc.priorities, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Options) != 3 {
					t.Fatalf("%d options, want 3", len(res.Options))
				}
				got := increases(res)
				ok := false
				for _, w := range tc.want {
					ok = ok || got == w
				}
				if !ok {
					t.Fatalf("seed %d: %s, want one of %v", seed, got, tc.want)
				}
				if seed == 0 {
					first = got
				}
				again, _ := Plan(Input{Pending: testPods("web", 3, 1000, 512), Groups: expanderGroups(), Options: o,
					Priorities: tc.priorities, Seed: seed})
				if increases(again) != got {
					t.Fatalf("seed %d: not deterministic: %s then %s", seed, got, increases(again))
				}
			}
			_ = first
		})
	}
}

func TestPriorityExpanderErrors(t *testing.T) {
	for _, prios := range []string{"not: [yaml", "10:\n- '('\n"} {
		o := opts(func(o *config.Options) { o.Expanders = []string{config.ExpanderPriority} })
		if _, err := Plan(Input{Pending: testPods("web", 3, 1000, 512), Groups: expanderGroups(), Options: o,
			Priorities: prios, Seed: 1}); err == nil {
			t.Errorf("priorities %q: no error", prios)
		}
	}
}

func TestBalanceSimilarNodeGroups(t *testing.T) {
	zoneA := map[string]string{"topology.kubernetes.io/zone": "a", "eks.amazonaws.com/nodegroup": "ng-a"}
	zoneB := map[string]string{"topology.kubernetes.io/zone": "b", "eks.amazonaws.com/nodegroup": "ng-b"}
	other := map[string]string{"topology.kubernetes.io/zone": "c", "team": "x"}
	for _, tc := range []struct {
		name    string
		balance bool
		groups  []Group
		want    string
	}{
		{name: "off: one group takes all", groups: []Group{group("ng-a", 0, 10, 2, 8, zoneA), group("ng-b", 0, 10, 2, 8, zoneB)},
			want: "[{ng-a 0->3 (max: 10)}]|[{ng-b 0->3 (max: 10)}]"},
		// CA's order: smaller group first, as the message lists them.
		{name: "on: spread, smaller group first", balance: true,
			groups: []Group{group("ng-a", 1, 10, 2, 8, zoneA), group("ng-b", 0, 10, 2, 8, zoneB)},
			want:   "[{ng-b 0->2 (max: 10)} {ng-a 1->2 (max: 10)}]"},
		{name: "on: max size respected", balance: true,
			groups: []Group{group("ng-a", 0, 1, 2, 8, zoneA), group("ng-b", 0, 10, 2, 8, zoneB)},
			want:   "[{ng-a 0->1 (max: 1)} {ng-b 0->2 (max: 10)}]"},
		{name: "on: a custom label opts out", balance: true,
			groups: []Group{group("ng-a", 0, 10, 2, 8, zoneA), group("ng-c", 0, 10, 2, 8, other)},
			want:   "[{ng-a 0->3 (max: 10)}]|[{ng-c 0->3 (max: 10)}]"},
		{name: "on: memory too different", balance: true,
			groups: []Group{group("ng-a", 0, 10, 2, 8, zoneA), group("ng-b", 0, 10, 2, 16, zoneB)},
			want:   "[{ng-a 0->3 (max: 10)}]|[{ng-b 0->3 (max: 10)}]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(func(o *config.Options) {
				o.BalanceSimilarNodeGroups = tc.balance
				o.Expanders = []string{config.ExpanderRandom}
			})
			res, err := Plan(Input{Pending: testPods("web", 6, 1000, 512), Groups: tc.groups, Options: o, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			got := increases(res)
			ok := false
			for _, w := range splitAlt(tc.want) {
				ok = ok || got == w
			}
			if !ok {
				t.Fatalf("%s, want %s", got, tc.want)
			}
		})
	}
}

// spread follows cluster-autoscaler's balancing walk: the chosen group
// (first) leads the groups of its size, a full group leaves the walk, the
// increases come in the walk's order.
func TestSpread(t *testing.T) {
	g := func(name string, target, max int) *Group { return &Group{Name: name, Target: target, MaxSize: max} }
	for _, tc := range []struct {
		name   string
		groups []*Group
		n      int
		want   string
	}{
		{"alone", []*Group{g("a", 1, 5)}, 3, "[{a 1->4 (max: 5)}]"},
		{"capped by max", []*Group{g("a", 1, 5)}, 9, "[{a 1->5 (max: 5)}]"},
		{"chosen leads its size", []*Group{g("b", 0, 5), g("a", 0, 5)}, 3, "[{b 0->2 (max: 5)} {a 0->1 (max: 5)}]"},
		// The cursor moves on only past a group that has grown beyond
		// the next; on a tie it goes back to the start, so b takes the
		// fourth node while a, level with c, gets none (CA's walk).
		{"smaller first, back to the start on a tie", []*Group{g("a", 2, 9), g("b", 0, 9), g("c", 1, 9)}, 4,
			"[{b 0->3 (max: 9)} {c 1->2 (max: 9)}]"},
		{"at max left out", []*Group{g("a", 3, 3), g("b", 0, 4)}, 2, "[{b 0->2 (max: 4)}]"},
		{"full group swapped out of the walk", []*Group{g("a", 0, 1), g("b", 0, 6), g("c", 0, 6)}, 5,
			"[{a 0->1 (max: 1)} {b 0->2 (max: 6)} {c 0->2 (max: 6)}]"},
		{"room caps the total", []*Group{g("a", 0, 1), g("b", 1, 2)}, 5, "[{a 0->1 (max: 1)} {b 1->2 (max: 2)}]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(spread(tc.groups, tc.n)); got != tc.want {
				t.Errorf("spread = %s, want %s", got, tc.want)
			}
		})
	}
}

// A similar group joins only when it accepts every pod group the other
// accepts; accepting more is fine (upstream's matching of schedulable pod
// groups is a subset check).
func TestAcceptsAll(t *testing.T) {
	a, b, c := &equivalence{}, &equivalence{}, &equivalence{}
	for _, tc := range []struct {
		name     string
		sim, its []*equivalence
		want     bool
	}{
		{"same", []*equivalence{a, b}, []*equivalence{b, a}, true},
		{"more", []*equivalence{a, b, c}, []*equivalence{a, b}, true},
		{"fewer", []*equivalence{a}, []*equivalence{a, b}, false},
		{"other", []*equivalence{c}, []*equivalence{a}, false},
	} {
		if got := acceptsAll(tc.sim, tc.its); got != tc.want {
			t.Errorf("%s: acceptsAll = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func splitAlt(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '|' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
