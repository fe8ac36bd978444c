package scaleup

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/autoscaler/config"
)

// Which pods remain unschedulable, which await evaluation and which get
// NotTriggerScaleUp, as cluster-autoscaler's scale-up status reports them
// (docs/cluster-autoscaler.md#scale-up).
func TestPlanPodStatus(t *testing.T) {
	notReady := testNode("sick", 1, 1, nil, scalerTaint)
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	big := testPods("big", 1, 3000, 512)
	for _, tc := range []struct {
		name    string
		nodes   []*corev1.Node
		pending []*corev1.Pod
		groups  []Group
		opts    config.Options
		want    string
		// priorities is the priority expander's configuration.
		priorities string
		// counts of Remaining, Awaiting and NoScaleUp pods.
		remaining, awaiting, noScaleUp int
	}{
		// Two of five pods are cut from the option by the group's max
		// size: they fit the template, so they are in no list.
		{name: "cut by max size: neither remaining nor awaiting", pending: testPods("web", 5, 1000, 512),
			groups: []Group{group("ng", 0, 2, 2, 8, nil)}, opts: opts(),
			want: "[{ng 0->2 (max: 2)}]"},
		{name: "fits no template: remaining", pending: append(testPods("web", 1, 1000, 512), testPods("huge", 1, 9000, 512)...),
			groups: []Group{group("ng", 0, 5, 2, 8, nil)}, opts: opts(),
			want: "[{ng 0->1 (max: 5)}]", remaining: 1},
		// The priority expander picks a; the big pod fits only b's
		// template: it awaits. The small pods fit a: not awaiting.
		{name: "fits another group only: awaiting", pending: append(testPods("web", 2, 1000, 512), big...),
			groups:     []Group{group("a", 0, 5, 2, 8, nil), group("b", 0, 5, 4, 8, nil)},
			opts:       opts(func(o *config.Options) { o.Expanders = []string{config.ExpanderPriority} }),
			priorities: "10:\n  - ^a$\n",
			want:       "[{a 0->1 (max: 5)}]", awaiting: 1},
		// --max-nodes-total 2 with one Ready and one not-ready node: the
		// loop goes on, the estimator finds no room, the pod fits the
		// template, so nothing at all is reported for it.
		{name: "max-nodes-total counts Ready nodes in the loop", nodes: []*corev1.Node{testNode("full", 1, 1, nil, scalerTaint), notReady},
			pending: testPods("web", 1, 1000, 512),
			groups:  []Group{group("ng", 0, 10, 2, 8, nil)}, opts: opts(func(o *config.Options) { o.MaxNodesTotal = 2 }),
			want: "[]"},
		{name: "max-nodes-total reached by Ready nodes", nodes: []*corev1.Node{testNode("full", 1, 1, nil, scalerTaint), testNode("full2", 1, 1, nil, scalerTaint)},
			pending: testPods("web", 1, 1000, 512),
			groups:  []Group{group("ng", 0, 10, 2, 8, nil)}, opts: opts(func(o *config.Options) { o.MaxNodesTotal = 2 }),
			want: "[]", remaining: 1, noScaleUp: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Plan(Input{Nodes: tc.nodes, Pending: tc.pending, Groups: tc.groups, Options: tc.opts, Priorities: tc.priorities, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := increases(res); got != tc.want {
				t.Errorf("increases %s, want %s", got, tc.want)
			}
			if len(res.Remaining) != tc.remaining {
				t.Errorf("%d remaining, want %d", len(res.Remaining), tc.remaining)
			}
			if len(res.Awaiting) != tc.awaiting {
				t.Errorf("%d awaiting, want %d", len(res.Awaiting), tc.awaiting)
			}
			if len(res.NoScaleUp) != tc.noScaleUp {
				t.Errorf("%d NotTriggerScaleUp, want %d", len(res.NoScaleUp), tc.noScaleUp)
			}
		})
	}
}
