package podtopologyspread

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

const ns = "default"

var (
	web   = map[string]string{"app": "web"}
	zoneA = map[string]string{pt.ZoneLabel: "z1"}
	zoneB = map[string]string{pt.ZoneLabel: "z2"}
	zoneC = map[string]string{pt.ZoneLabel: "z3"}

	pass      = pt.Verdict{Code: framework.Success}
	skewFail  = pt.Verdict{Code: framework.Unschedulable, Reason: ErrReasonConstraintsNotMatch}
	labelFail = pt.Verdict{Code: framework.UnschedulableAndUnresolvable, Reason: ErrReasonNodeLabelNotMatch}
)

type tsc = v1.TopologySpreadConstraint

func spread(key string, maxSkew int32, action v1.UnsatisfiableConstraintAction, sel map[string]string) tsc {
	return tsc{TopologyKey: key, MaxSkew: maxSkew, WhenUnsatisfiable: action, LabelSelector: &metav1.LabelSelector{MatchLabels: sel}}
}

func withSpread(p *v1.Pod, cs ...tsc) *v1.Pod {
	p.Spec.TopologySpreadConstraints = cs
	return p
}

// s13 is the S13 cluster: z1 = a1, a2 with two matching pods; z2 = b1 (tainted, empty); nozone unlabelled.
func s13() ([]*v1.Node, []*v1.Pod) {
	return []*v1.Node{
			pt.Node("a1", zoneA), pt.Node("a2", zoneA),
			pt.Node("b1", zoneB, pt.NoSchedule("dedicated", "x")),
			pt.Node("nozone", nil),
		}, []*v1.Pod{
			pt.Pod(ns, "w1", "a1", web), pt.Pod(ns, "w2", "a2", web),
		}
}

func TestFilter(t *testing.T) {
	s13Nodes, s13Pods := s13()
	terminating := pt.Pod(ns, "gone", "b1", web)
	terminating.DeletionTimestamp = &metav1.Time{}
	honor := v1.NodeInclusionPolicyHonor
	ignore := v1.NodeInclusionPolicyIgnore
	tests := []struct {
		name     string
		nodes    []*v1.Node
		pods     []*v1.Pod
		pod      *v1.Pod
		wantSkip bool
		want     map[string]pt.Verdict
	}{
		{
			// nodeTaintsPolicy defaults to Ignore: tainted b1 keeps z2 a domain with 0 pods.
			name:  "S13 zone skew with tainted empty zone and an unlabelled node",
			nodes: s13Nodes, pods: s13Pods,
			pod:  withSpread(pt.Pod(ns, "p", "", web), spread(pt.ZoneLabel, 1, v1.DoNotSchedule, web)),
			want: map[string]pt.Verdict{"a1": skewFail, "a2": skewFail, "b1": pass, "nozone": labelFail},
		},
		{
			name:  "S13 with nodeTaintsPolicy Honor drops z2, so z1 fits",
			nodes: s13Nodes, pods: s13Pods,
			pod: withSpread(pt.Pod(ns, "p", "", web), func() tsc {
				c := spread(pt.ZoneLabel, 1, v1.DoNotSchedule, web)
				c.NodeTaintsPolicy = &honor
				return c
			}()),
			want: map[string]pt.Verdict{"a1": pass, "a2": pass, "b1": pass, "nozone": labelFail},
		},
		{
			name:  "a toleration keeps the tainted node in with nodeTaintsPolicy Honor",
			nodes: s13Nodes, pods: s13Pods,
			pod: func() *v1.Pod {
				c := spread(pt.ZoneLabel, 1, v1.DoNotSchedule, web)
				c.NodeTaintsPolicy = &honor
				p := withSpread(pt.Pod(ns, "p", "", web), c)
				p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
				return p
			}(),
			want: map[string]pt.Verdict{"a1": skewFail, "a2": skewFail, "b1": pass, "nozone": labelFail},
		},
		{
			name:  "a pod that does not match its own selector adds no self count",
			nodes: s13Nodes, pods: s13Pods,
			pod:  withSpread(pt.Pod(ns, "p", "", nil), spread(pt.ZoneLabel, 2, v1.DoNotSchedule, web)),
			want: map[string]pt.Verdict{"a1": pass, "a2": pass, "b1": pass, "nozone": labelFail},
		},
		{
			name:  "minDomains above the domain count makes the global minimum 0",
			nodes: []*v1.Node{pt.Node("a1", zoneA), pt.Node("b1", zoneB)},
			pods:  []*v1.Pod{pt.Pod(ns, "w1", "a1", web), pt.Pod(ns, "w2", "b1", web)},
			pod: withSpread(pt.Pod(ns, "p", "", web), func() tsc {
				c := spread(pt.ZoneLabel, 1, v1.DoNotSchedule, web)
				c.MinDomains = ptr.To[int32](3)
				return c
			}()),
			want: map[string]pt.Verdict{"a1": skewFail, "b1": skewFail},
		},
		{
			name:  "minDomains met keeps the real minimum",
			nodes: []*v1.Node{pt.Node("a1", zoneA), pt.Node("b1", zoneB)},
			pods:  []*v1.Pod{pt.Pod(ns, "w1", "a1", web), pt.Pod(ns, "w2", "b1", web)},
			pod: withSpread(pt.Pod(ns, "p", "", web), func() tsc {
				c := spread(pt.ZoneLabel, 1, v1.DoNotSchedule, web)
				c.MinDomains = ptr.To[int32](2)
				return c
			}()),
			want: map[string]pt.Verdict{"a1": pass, "b1": pass},
		},
		{
			name:  "other namespaces and terminating pods are not counted",
			nodes: []*v1.Node{pt.Node("a1", zoneA), pt.Node("b1", zoneB)},
			pods:  []*v1.Pod{pt.Pod("other", "o1", "a1", web), pt.Pod("other", "o2", "a1", web), terminating},
			pod:   withSpread(pt.Pod(ns, "p", "", web), spread(pt.ZoneLabel, 1, v1.DoNotSchedule, web)),
			want:  map[string]pt.Verdict{"a1": pass, "b1": pass},
		},
		{
			name:  "an empty selector counts no pods",
			nodes: []*v1.Node{pt.Node("a1", zoneA), pt.Node("b1", zoneB)},
			pods:  []*v1.Pod{pt.Pod(ns, "w1", "a1", web), pt.Pod(ns, "w2", "a1", web)},
			pod:   withSpread(pt.Pod(ns, "p", "", web), spread(pt.ZoneLabel, 1, v1.DoNotSchedule, map[string]string{})),
			// Counts are 0 everywhere, and the empty selector matches the pod itself: skew 1.
			want: map[string]pt.Verdict{"a1": pass, "b1": pass},
		},
		{
			name:  "nodeAffinityPolicy Honor leaves nodes outside the pod's nodeSelector out",
			nodes: []*v1.Node{pt.Node("a1", zoneA), pt.Node("b1", map[string]string{pt.ZoneLabel: "z2", "pool": "x"})},
			pods:  []*v1.Pod{pt.Pod(ns, "w1", "a1", web)},
			pod: func() *v1.Pod {
				p := withSpread(pt.Pod(ns, "p", "", web), spread(pt.ZoneLabel, 1, v1.DoNotSchedule, web))
				p.Spec.NodeSelector = map[string]string{"pool": "y"}
				return p
			}(),
			// Only z1 is a domain (count 1 = min); b1's unknown domain counts 0.
			want: map[string]pt.Verdict{"a1": pass, "b1": pass},
		},
		{
			name:  "nodeAffinityPolicy Ignore counts every node",
			nodes: []*v1.Node{pt.Node("a1", zoneA), pt.Node("b1", map[string]string{pt.ZoneLabel: "z2", "pool": "x"})},
			pods:  []*v1.Pod{pt.Pod(ns, "w1", "a1", web)},
			pod: func() *v1.Pod {
				c := spread(pt.ZoneLabel, 1, v1.DoNotSchedule, web)
				c.NodeAffinityPolicy = &ignore
				p := withSpread(pt.Pod(ns, "p", "", web), c)
				p.Spec.NodeSelector = map[string]string{"pool": "y"}
				return p
			}(),
			want: map[string]pt.Verdict{"a1": skewFail, "b1": pass},
		},
		{
			name:  "matchLabelKeys narrows the selector to the pod's own revision",
			nodes: []*v1.Node{pt.Node("a1", zoneA), pt.Node("b1", zoneB)},
			pods: []*v1.Pod{
				pt.Pod(ns, "old1", "b1", map[string]string{"app": "web", "rev": "1"}),
				pt.Pod(ns, "old2", "b1", map[string]string{"app": "web", "rev": "1"}),
				pt.Pod(ns, "new1", "a1", map[string]string{"app": "web", "rev": "2"}),
			},
			pod: withSpread(pt.Pod(ns, "p", "", map[string]string{"app": "web", "rev": "2"}), func() tsc {
				c := spread(pt.ZoneLabel, 1, v1.DoNotSchedule, web)
				c.MatchLabelKeys = []string{"rev"}
				return c
			}()),
			want: map[string]pt.Verdict{"a1": skewFail, "b1": pass},
		},
		{
			name:  "every constraint's key is required; hostname and zone together",
			nodes: []*v1.Node{pt.Node("a1", zoneA), pt.Node("a2", zoneA), pt.Node("b1", zoneB)},
			pods:  []*v1.Pod{pt.Pod(ns, "w1", "a1", web)},
			pod: withSpread(pt.Pod(ns, "p", "", web),
				spread(pt.ZoneLabel, 1, v1.DoNotSchedule, web),
				spread(pt.HostLabel, 1, v1.DoNotSchedule, web)),
			// zone: z1 has 1, z2 0 → z1 skew 2. hostname fine everywhere else.
			want: map[string]pt.Verdict{"a1": skewFail, "a2": skewFail, "b1": pass},
		},
		{
			name:  "ScheduleAnyway constraints do not filter",
			nodes: s13Nodes, pods: s13Pods,
			pod:      withSpread(pt.Pod(ns, "p", "", web), spread(pt.ZoneLabel, 1, v1.ScheduleAnyway, web)),
			wantSkip: true,
		},
		{
			name:  "system defaults are ScheduleAnyway, so no filtering",
			nodes: s13Nodes, pods: s13Pods,
			pod:      pt.Pod(ns, "p", "", web),
			wantSkip: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := pt.NewHandle(tt.nodes, tt.pods)
			pre, got := pt.RunFilter(New(h), h, tt.pod)
			if tt.wantSkip {
				if pre.Code() != framework.Skip {
					t.Fatalf("PreFilter = %v, want Skip", pre.Code())
				}
				return
			}
			if !pre.IsSuccess() {
				t.Fatalf("PreFilter = %v %q", pre.Code(), pre.Message())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("verdicts = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAddRemovePodAndClone(t *testing.T) {
	nodes := []*v1.Node{pt.Node("a1", zoneA), pt.Node("b1", zoneB), pt.Node("c1", zoneC)}
	victim := pt.Pod(ns, "w1", "a1", web)
	h := pt.NewHandle(nodes, []*v1.Pod{victim, pt.Pod(ns, "w2", "b1", web), pt.Pod(ns, "w3", "c1", web), pt.Pod(ns, "w4", "c1", web)})
	pl := New(h)
	pi := framework.NewPodInfo(withSpread(pt.Pod(ns, "p", "", web), spread(pt.ZoneLabel, 1, v1.DoNotSchedule, web)), true)
	cs := framework.NewCycleState()
	if _, st := pl.PreFilter(cs, pi, h.Nodes()); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	a1, b1, c1 := h.Node("a1"), h.Node("b1"), h.Node("c1")
	if got := pt.VerdictOf(pl.Filter(cs, pi, a1)); got != pass {
		t.Fatalf("a1 before = %v", got)
	}
	if got := pt.VerdictOf(pl.Filter(cs, pi, c1)); got != skewFail {
		t.Fatalf("c1 before = %v", got)
	}
	copyState := cs.Clone()
	// Removing a1's pod lowers the minimum to 0: a1 (0+1-0) fits, b1 (1+1-0) no longer does.
	if st := pl.RemovePod(cs, pi, framework.NewPodInfo(victim, true), a1); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	if got := pt.VerdictOf(pl.Filter(cs, pi, a1)); got != pass {
		t.Errorf("a1 after removal = %v, want pass", got)
	}
	if got := pt.VerdictOf(pl.Filter(cs, pi, b1)); got != skewFail {
		t.Errorf("b1 after removal = %v, want %v", got, skewFail)
	}
	// Adding two pods to a1 makes z1 2 and the minimum z2's 1: b1 fits again, a1 not.
	for _, n := range []string{"x1", "x2"} {
		if st := pl.AddPod(cs, pi, framework.NewPodInfo(pt.Pod(ns, n, "a1", web), true), a1); !st.IsSuccess() {
			t.Fatal(st.Message())
		}
	}
	if got := pt.VerdictOf(pl.Filter(cs, pi, b1)); got != pass {
		t.Errorf("b1 after adds = %v, want pass", got)
	}
	if got := pt.VerdictOf(pl.Filter(cs, pi, a1)); got != skewFail {
		t.Errorf("a1 after adds = %v, want %v", got, skewFail)
	}
	// A pod in another namespace changes nothing.
	pl.AddPod(cs, pi, framework.NewPodInfo(pt.Pod("other", "o", "b1", web), true), b1)
	if got := pt.VerdictOf(pl.Filter(cs, pi, b1)); got != pass {
		t.Errorf("b1 after foreign add = %v, want pass", got)
	}
	// The clone taken before is untouched.
	if got := pt.VerdictOf(pl.Filter(copyState, pi, b1)); got != pass {
		t.Errorf("clone b1 = %v, want pass", got)
	}
	if got := pt.VerdictOf(pl.Filter(copyState, pi, c1)); got != skewFail {
		t.Errorf("clone c1 = %v, want %v", got, skewFail)
	}
}
