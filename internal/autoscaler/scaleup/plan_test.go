package scaleup

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/autoscaler/config"
)

var scalerTaint = corev1.Taint{Key: "role", Value: "scaler", Effect: corev1.TaintEffectNoSchedule}

func TestPlanEstimatorAndLimits(t *testing.T) {
	for _, tc := range []struct {
		name    string
		nodes   []*corev1.Node
		pending []*corev1.Pod
		groups  []Group
		opts    config.Options
		want    string
		// wantTriggered is how many pods get TriggeredScaleUp.
		wantTriggered int
		wantElsewhere int
		wantNoScaleUp string // message of the first pod's NotTriggerScaleUp
		version       string
	}{
		{name: "binpacking two per node", pending: testPods("web", 5, 1000, 512),
			groups: []Group{group("ng", 0, 10, 2, 8, nil)}, opts: opts(),
			want: "[{ng 0->3 (max: 10)}]", wantTriggered: 5},
		{name: "memory bound", pending: testPods("web", 4, 100, 3072),
			groups: []Group{group("ng", 1, 10, 4, 8, nil)}, opts: opts(),
			want: "[{ng 1->3 (max: 10)}]", wantTriggered: 4},
		{name: "max size caps the nodes and the pods helped", pending: testPods("web", 5, 1000, 512),
			groups: []Group{group("ng", 0, 2, 2, 8, nil)}, opts: opts(),
			want: "[{ng 0->2 (max: 2)}]", wantTriggered: 4},
		{name: "max-nodes-per-scaleup", pending: testPods("web", 5, 1000, 512),
			groups: []Group{group("ng", 0, 10, 2, 8, nil)}, opts: opts(func(o *config.Options) { o.MaxNodesPerScaleUp = 1 }),
			want: "[{ng 0->1 (max: 10)}]", wantTriggered: 2},
		{name: "max-nodes-total caps the scale-up", nodes: []*corev1.Node{testNode("full", 1, 1, nil, scalerTaint)},
			pending: testPods("web", 5, 1000, 512),
			groups:  []Group{group("ng", 0, 10, 2, 8, nil)}, opts: opts(func(o *config.Options) { o.MaxNodesTotal = 3 }),
			want: "[{ng 0->2 (max: 10)}]", wantTriggered: 4},
		{name: "max-nodes-total reached", nodes: []*corev1.Node{testNode("full", 1, 1, nil, scalerTaint)},
			pending: testPods("web", 1, 1000, 512),
			groups:  []Group{group("ng", 0, 10, 2, 8, nil)}, opts: opts(func(o *config.Options) { o.MaxNodesTotal = 1 }),
			want: "[]", wantNoScaleUp: "max total nodes in cluster reached"},
		// --cores-total caps the chosen option (3 nodes for 5 pods) to 2
		// nodes, yet all of the option's pods count as triggered, as in
		// cluster-autoscaler's orchestrator.
		{name: "cores-total", pending: testPods("web", 5, 1000, 512),
			groups: []Group{group("ng", 0, 10, 2, 8, nil)}, opts: opts(func(o *config.Options) { o.CoresMax = 4 }),
			want: "[{ng 0->2 (max: 10)}]", wantTriggered: 5},
		{name: "cores-total reached", nodes: []*corev1.Node{testNode("full", 4, 1, nil, scalerTaint)},
			pending: testPods("web", 1, 1000, 512),
			groups:  []Group{group("ng", 0, 10, 2, 8, nil)}, opts: opts(func(o *config.Options) { o.CoresMax = 5 }),
			want: "[]", wantNoScaleUp: "1 max cluster cpu limit reached"},
		{name: "memory-total reached", pending: testPods("web", 1, 1000, 512),
			groups: []Group{group("ng", 0, 10, 2, 8, nil)}, opts: opts(func(o *config.Options) { o.MemoryMaxGiB = 4 }),
			want: "[]", wantNoScaleUp: "1 max cluster memory limit reached"},
		{name: "fits an existing node", nodes: []*corev1.Node{testNode("roomy", 4, 8, nil)},
			pending: testPods("web", 3, 1000, 512),
			groups:  []Group{group("ng", 0, 10, 2, 8, nil)}, opts: opts(),
			want: "[]", wantElsewhere: 3},
		{name: "fits an upcoming node", pending: testPods("web", 2, 1000, 512),
			groups: []Group{{Name: "ng", MaxSize: 10, Target: 1, Registered: 0, Template: testNode("t", 2, 8, nil)}}, opts: opts(),
			want: "[]", wantElsewhere: 2},
		{name: "expendable pods trigger nothing", pending: testPods("web", 2, 1000, 512, func(p *corev1.Pod) {
			prio := int32(-100)
			p.Spec.Priority = &prio
		}), groups: []Group{group("ng", 0, 10, 2, 8, nil)}, opts: opts(), want: "[]"},
		{name: "too big for the template", pending: testPods("web", 1, 3000, 512),
			groups: []Group{group("ng", 0, 10, 2, 8, nil)}, opts: opts(),
			want: "[]", wantNoScaleUp: "1 Insufficient cpu"},
		{name: "untolerated taint and max size, rejected before skipped (1.30)", pending: testPods("batch", 1, 100, 64),
			groups: []Group{group("master", 2, 2, 4, 8, nil), group("scaler", 1, 5, 4, 8, nil, scalerTaint)}, opts: opts(),
			version: "1.30",
			want:    "[]", wantNoScaleUp: "1 node(s) had untolerated taint {role: scaler}, 1 max node group size reached"},
		{name: "untolerated taint and max size (1.36 hides the taint)", pending: testPods("batch", 1, 100, 64),
			groups: []Group{group("master", 2, 2, 4, 8, nil), group("scaler", 1, 5, 4, 8, nil, scalerTaint)}, opts: opts(),
			version: "1.36",
			want:    "[]", wantNoScaleUp: "1 node(s) had untolerated taint(s), 1 max node group size reached"},
		{name: "backoff", pending: testPods("web", 1, 100, 64),
			groups: []Group{func() Group { g := group("ng", 0, 5, 2, 8, nil); g.Backoff = true; return g }()}, opts: opts(),
			want: "[]", wantNoScaleUp: "1 in backoff after failed scale-up"},
		{name: "no template", pending: testPods("web", 1, 100, 64),
			groups: []Group{{Name: "ng", MaxSize: 5}}, opts: opts(),
			want: "[]", wantNoScaleUp: "1 not ready for scale-up"},
		{name: "same reason aggregated over groups", pending: testPods("web", 1, 100, 64, func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{"disk": "ssd"}
		}), groups: []Group{group("a", 0, 5, 2, 8, nil), group("b", 0, 5, 2, 8, nil)}, opts: opts(),
			want: "[]", wantNoScaleUp: "2 node(s) didn't match Pod's node affinity/selector"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Plan(Input{Nodes: tc.nodes, Pending: tc.pending, Groups: tc.groups, Options: tc.opts, Seed: 1, KubernetesVersion: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			if got := increases(res); got != tc.want {
				t.Errorf("increases %s, want %s", got, tc.want)
			}
			if len(res.Triggered) != tc.wantTriggered {
				t.Errorf("%d pods triggered, want %d", len(res.Triggered), tc.wantTriggered)
			}
			if len(res.FittingElsewhere) != tc.wantElsewhere {
				t.Errorf("%d pods fit elsewhere, want %d", len(res.FittingElsewhere), tc.wantElsewhere)
			}
			if tc.wantNoScaleUp != "" {
				if len(res.NoScaleUp) == 0 {
					t.Fatalf("no NotTriggerScaleUp, want %q", tc.wantNoScaleUp)
				}
				if got := res.NoScaleUp[0].Message; got != tc.wantNoScaleUp {
					t.Errorf("reasons %q, want %q", got, tc.wantNoScaleUp)
				}
			} else if len(res.NoScaleUp) != 0 {
				t.Errorf("unexpected NotTriggerScaleUp %q", res.NoScaleUp[0].Message)
			}
		})
	}
}

func TestPlanExpendableCounted(t *testing.T) {
	prio := int32(-11)
	pods := testPods("web", 2, 100, 64, func(p *corev1.Pod) { p.Spec.Priority = &prio })
	res, err := Plan(Input{Pending: pods, Groups: []Group{group("ng", 0, 5, 2, 8, nil)}, Options: opts(), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Expendable) != 2 || len(res.NoScaleUp) != 0 {
		t.Fatalf("expendable %d, no-scale-up %d; want 2 and 0", len(res.Expendable), len(res.NoScaleUp))
	}
}

func TestPlanDoesNotChangeInputs(t *testing.T) {
	g := group("ng", 0, 10, 2, 8, nil)
	pods := testPods("web", 3, 1000, 512)
	if _, err := Plan(Input{Pending: pods, Groups: []Group{g}, Options: opts(), Seed: 1}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			t.Fatalf("pod %s was bound to %s", p.Name, p.Spec.NodeName)
		}
	}
	if g.Target != 0 || g.Template.Name != "template-ng" {
		t.Fatalf("group changed: %+v", g)
	}
}
