package scheduler

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestAppendClassKey(t *testing.T) {
	base := func(name string) *v1.Node {
		n := plugintest.SizedNode(name, "4", "8Gi", 110)
		n.Labels[v1.LabelHostname] = name
		n.Labels[v1.LabelTopologyZone] = "a"
		return n
	}
	tainted := base("t")
	tainted.Spec.Taints = []v1.Taint{taint("k", "v", v1.TaintEffectNoSchedule)}
	cordoned := base("c")
	cordoned.Spec.Unschedulable = true
	zoneB := base("z")
	zoneB.Labels[v1.LabelTopologyZone] = "b"
	noZone := base("n")
	delete(noZone.Labels, v1.LabelTopologyZone)
	emptyZone := base("n")
	emptyZone.Labels[v1.LabelTopologyZone] = ""
	extra := base("e")
	extra.Labels["pool"] = "x"
	zone := []string{v1.LabelTopologyZone}
	tests := []struct {
		name string
		node *v1.Node
		keys []string
		same bool
	}{
		{"only name and hostname differ", base("other"), zone, true},
		{"taint", tainted, zone, false},
		{"unschedulable", cordoned, zone, false},
		{"label value of a named key", zoneB, zone, false},
		{"label value of a key not named", zoneB, nil, true},
		{"named key missing", noZone, zone, false},
		{"named key empty", emptyZone, zone, false},
		{"extra label not named", extra, zone, true},
		{"extra label named", extra, []string{"pool", v1.LabelTopologyZone}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref := appendClassKey(nil, base("ref"), tc.keys)
			if got := string(appendClassKey(nil, tc.node, tc.keys)) == string(ref); got != tc.same {
				t.Errorf("same class = %v, want %v", got, tc.same)
			}
		})
	}
	if string(appendClassKey(nil, noZone, zone)) == string(appendClassKey(nil, emptyZone, zone)) {
		t.Error("a missing key and an empty value share a class")
	}
}

func TestClassBlind(t *testing.T) {
	withRequired := func(req v1.NodeSelectorRequirement, fields bool) *v1.Pod {
		p := plugintest.SizedPod("p", "1", "1Gi")
		term := v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{req}}
		if fields {
			term = v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{req}}
		}
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{term}}}}
		return p
	}
	zoneIn := v1.NodeSelectorRequirement{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}
	hostIn := v1.NodeSelectorRequirement{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{"n1"}}
	nameIn := v1.NodeSelectorRequirement{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{"n1"}}
	named := plugintest.SizedPod("p", "1", "1Gi")
	named.Spec.NodeName = "n1"
	hostSel := plugintest.SizedPod("p", "1", "1Gi")
	hostSel.Spec.NodeSelector = map[string]string{v1.LabelHostname: "n1"}
	tests := []struct {
		name string
		pod  *v1.Pod
		want bool
	}{
		{"plain", plugintest.SizedPod("p", "1", "1Gi"), true},
		{"zone affinity", withRequired(zoneIn, false), true},
		{"hostname affinity", withRequired(hostIn, false), false},
		{"matchFields", withRequired(nameIn, true), false},
		{"nodeName", named, false},
		{"hostname selector", hostSel, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := classBlind(tc.pod); got != tc.want {
				t.Errorf("classBlind = %v, want %v", got, tc.want)
			}
		})
	}
}

// classScenario: nodes in a few classes (zones, taints, cordons) and pods
// whose static verdicts differ by class, some unschedulable.
func classScenario() *cluster.State {
	var nodes []*v1.Node
	for i := 0; i < 24; i++ {
		n := plugintest.SizedNode(fmt.Sprintf("n%02d", i), "2", "4Gi", 110)
		n.Labels[v1.LabelHostname] = n.Name
		n.Labels[v1.LabelTopologyZone] = []string{"a", "b", "c"}[i%3]
		switch i % 4 {
		case 1:
			n.Spec.Taints = []v1.Taint{taint("gpu", "true", v1.TaintEffectNoSchedule)}
		case 2:
			n.Spec.Unschedulable = i%8 == 2
		}
		nodes = append(nodes, n)
	}
	var pods []*v1.Pod
	for i := 0; i < 42; i++ {
		p := plugintest.SizedPod(fmt.Sprintf("p%02d", i), "700m", "1Gi")
		p.UID = types.UID(p.Name)
		switch i % 7 {
		case 1:
			p.Spec.NodeSelector = map[string]string{v1.LabelTopologyZone: "b"}
		case 2:
			p.Spec.Tolerations = []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpExists}}
		case 3:
			p.Spec.NodeSelector = map[string]string{v1.LabelHostname: "n05"}
		case 4:
			p.Spec.NodeSelector = map[string]string{v1.LabelTopologyZone: "z"}
		case 5, 6:
			// Name-dependent through NodeAffinity only: the plugins before
			// it are kept per class, NodeAffinity runs per node.
			other := v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"c"}}}}
			names := v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpNotIn, Values: []string{fmt.Sprintf("n%02d", i%24)}}}}
			if i%7 == 6 {
				names.MatchFields[0].Operator = v1.NodeSelectorOpIn
				p.Spec.Tolerations = []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpExists}}
			}
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{names, other}}}}
		}
		pods = append(pods, p)
	}
	return newState("1.36", nodes, pods...)
}

// diagnosisText renders every pod's outcome and per-node statuses.
func diagnosisText(sc *Scheduler, s *cluster.State) string {
	var b strings.Builder
	for _, key := range cluster.SortedKeys(s.Pods) {
		d := sc.LastDiagnosis(key)
		if d == nil {
			continue
		}
		fmt.Fprintf(&b, "%s -> %q %q\n", key, d.SelectedNode, d.Message)
		var names []string
		for n := range d.NodeToStatus.Statuses {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			st := d.NodeToStatus.Statuses[n]
			fmt.Fprintf(&b, "  %s %s %d %v\n", n, st.Plugin(), st.Code(), st.Reasons())
		}
	}
	return b.String()
}

// TestNodeClassesMatchPerNodeVerdicts: with the class cache the whole
// diagnosis (outcomes, messages, every node's status) is what per-node
// evaluation gives.
func TestNodeClassesMatchPerNodeVerdicts(t *testing.T) {
	split := 0
	run := func(off bool) string {
		s := classScenario()
		sc := New()
		sc.perNodeStatic = off
		sc.RecordScores = true
		sc.PercentageOfNodesToScore = 100
		if _, err := sc.Sync(s); err != nil {
			t.Fatal(err)
		}
		for _, c := range sc.static {
			if c.keyless != nil && c.classOf == nil && c.sharedUpTo < sc.fw.staticFilters {
				split++
			}
		}
		return diagnosisText(sc, s)
	}
	want, got := run(true), run(false)
	if got != want {
		t.Errorf("class cache changed the diagnosis:\n got %s\nwant %s", got, want)
	}
	if split == 0 {
		t.Error("no template kept its verdicts per class up to NodeAffinity")
	}
	if !strings.Contains(want, "untolerated") || !strings.Contains(want, "unschedulable") {
		t.Errorf("scenario does not exercise taints and cordons:\n%s", want)
	}
}

// TestNodeClassesRebuiltPerSync: a label change between Syncs is seen (the
// classes and verdicts belong to one snapshot).
func TestNodeClassesRebuiltPerSync(t *testing.T) {
	nodes := []*v1.Node{plugintest.SizedNode("n1", "2", "4Gi", 110), plugintest.SizedNode("n2", "2", "4Gi", 110)}
	p := plugintest.SizedPod("p", "1", "1Gi")
	p.UID = types.UID(p.Name)
	p.Spec.NodeSelector = map[string]string{"pool": "x"}
	s := newState("1.36", nodes, p)
	sc := New()
	if _, err := sc.Sync(s); err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != "" {
		t.Fatalf("scheduled to %s before any node matched", p.Spec.NodeName)
	}
	sn := sc.handle.snap
	if _, n := sn.nodeClassesOn([]string{"pool"}); n != 1 {
		t.Fatalf("classes = %d, want 1", n)
	}
	old := s.Nodes["n2"].DeepCopy()
	s.Nodes["n2"].Labels["pool"] = "x"
	s.NodeUpdated(old, s.Nodes["n2"])
	s.Now = s.Now.Add(10 * 60e9)
	for i := 0; i < 3 && p.Spec.NodeName == ""; i++ {
		if _, err := sc.Sync(s); err != nil {
			t.Fatal(err)
		}
		s.Now = s.Now.Add(10 * 60e9)
	}
	if p.Spec.NodeName != "n2" {
		t.Errorf("pod on %q after the label change, want n2", p.Spec.NodeName)
	}
	if _, n := sc.handle.snap.nodeClassesOn([]string{"pool"}); n != 2 {
		t.Errorf("classes after change = %d, want 2", n)
	}
}

// TestNarrowedKeepsTreeOrder: the looked-up narrowing gives what testing
// every node gives, including names of no node and NodeInfos replaced
// after the snapshot numbered its list.
func TestNarrowedKeepsTreeOrder(t *testing.T) {
	var infos []*framework.NodeInfo
	for i := 0; i < 200; i++ {
		infos = append(infos, framework.NewNodeInfo(plugintest.SizedNode(fmt.Sprintf("n%03d", (i*37)%200), "1", "1Gi", 10)))
	}
	sn := NewSnapshot(infos)
	want := func(names map[string]struct{}) []string {
		var out []string
		for _, ni := range sn.nodes {
			if _, ok := names[ni.Name()]; ok {
				out = append(out, ni.Name())
			}
		}
		return out
	}
	check := func(names map[string]struct{}) {
		t.Helper()
		var got []string
		for _, ni := range sn.narrowed(names) {
			got = append(got, ni.Name())
		}
		if fmt.Sprint(got) != fmt.Sprint(want(names)) {
			t.Fatalf("narrowed(%v) = %v, want %v", names, got, want(names))
		}
	}
	check(map[string]struct{}{})
	check(map[string]struct{}{"n005": {}, "n150": {}, "n077": {}, "absent": {}})
	check(map[string]struct{}{"absent": {}})
	many := map[string]struct{}{}
	for i := 0; i < 100; i += 3 {
		many[fmt.Sprintf("n%03d", i)] = struct{}{}
	}
	check(many)
	// A replaced NodeInfo (as after preemption) has no valid Index.
	fresh := framework.NewNodeInfo(sn.nodes[50].Node)
	sn.nodes[50], sn.byName[fresh.Name()] = fresh, fresh
	check(map[string]struct{}{fresh.Name(): {}, "n005": {}})
}

// TestClassesBySelectorKeysMatchPerNodeVerdicts: on random clusters where
// every node's full label set is unique (a serial label), templates
// selecting on random keys with random operators, tolerations (some
// cordon-tolerating), hostname selectors and matchFields get the whole
// diagnosis per-node evaluation gives, while the class-blind ones share
// verdicts among far fewer classes than nodes and templates with equal
// tolerations share the verdicts of the plugins before NodeAffinity.
func TestClassesBySelectorKeysMatchPerNodeVerdicts(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		build := func() *cluster.State {
			r := rand.New(rand.NewSource(seed))
			keys := []string{v1.LabelTopologyZone, "disk", "tier", "pool"}
			vals := []string{"a", "b", "c", "1", "7"}
			effects := []v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectNoExecute, v1.TaintEffectPreferNoSchedule}
			var nodes []*v1.Node
			for i := 0; i < 40; i++ {
				n := plugintest.SizedNode(fmt.Sprintf("n%02d", i), "4", "8Gi", 110)
				n.Labels["serial"] = fmt.Sprint(i)
				for _, k := range keys {
					if r.Intn(5) != 0 {
						n.Labels[k] = vals[r.Intn(len(vals))]
					}
				}
				if r.Intn(4) == 0 {
					n.Spec.Taints = append(n.Spec.Taints, taint([]string{"gpu", "spot"}[r.Intn(2)], vals[r.Intn(2)], effects[r.Intn(3)]))
				}
				n.Spec.Unschedulable = r.Intn(10) == 0
				nodes = append(nodes, n)
			}
			ops := []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt}
			requirement := func() v1.NodeSelectorRequirement {
				req := v1.NodeSelectorRequirement{Key: keys[r.Intn(len(keys))], Operator: ops[r.Intn(len(ops))]}
				switch req.Operator {
				case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
					req.Values = []string{vals[r.Intn(len(vals))], vals[r.Intn(len(vals))]}
				case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
					req.Values = []string{fmt.Sprint(r.Intn(9))}
				}
				return req
			}
			var pods []*v1.Pod
			for i := 0; i < 60; i++ {
				p := plugintest.SizedPod(fmt.Sprintf("p%02d", i), "100m", "128Mi")
				p.UID = types.UID(p.Name)
				if r.Intn(2) == 0 {
					p.Spec.NodeSelector = map[string]string{keys[r.Intn(len(keys))]: vals[r.Intn(len(vals))]}
				}
				if r.Intn(2) == 0 {
					var terms []v1.NodeSelectorTerm
					for j := 1 + r.Intn(2); j > 0; j-- {
						term := v1.NodeSelectorTerm{}
						for k := 1 + r.Intn(2); k > 0; k-- {
							term.MatchExpressions = append(term.MatchExpressions, requirement())
						}
						if r.Intn(8) == 0 {
							term.MatchFields = []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpNotIn, Values: []string{fmt.Sprintf("n%02d", r.Intn(40))}}}
						}
						terms = append(terms, term)
					}
					p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
				}
				if r.Intn(10) == 0 {
					if p.Spec.NodeSelector == nil {
						p.Spec.NodeSelector = map[string]string{}
					}
					p.Spec.NodeSelector[v1.LabelHostname] = fmt.Sprintf("n%02d", r.Intn(40))
				}
				if r.Intn(3) == 0 {
					p.Spec.Tolerations = []v1.Toleration{{Key: []string{"gpu", "spot"}[r.Intn(2)], Operator: v1.TolerationOpExists}}
				}
				if r.Intn(12) == 0 {
					p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule})
				}
				pods = append(pods, p)
			}
			return newState("1.36", nodes, pods...)
		}
		narrow, shared := 0, 0
		run := func(perNode bool) string {
			s := build()
			sc := New()
			sc.perNodeStatic = perNode
			sc.RecordScores = true
			sc.PercentageOfNodesToScore = 100
			if _, err := sc.Sync(s); err != nil {
				t.Fatal(err)
			}
			users := map[*sharedVerdicts]int{}
			for _, c := range sc.static {
				if c.classOf != nil && len(c.byClass) <= len(s.Nodes)/2 {
					narrow++
				}
				if c.shared != nil {
					users[c.shared]++
				}
			}
			for _, n := range users {
				if n > 1 {
					shared++
				}
			}
			return diagnosisText(sc, s)
		}
		want, got := run(true), run(false)
		if got != want {
			t.Fatalf("seed %d: classes by selector keys changed the diagnosis:\n got %s\nwant %s", seed, got, want)
		}
		if narrow == 0 {
			t.Fatalf("seed %d: no template shared verdicts among few classes", seed)
		}
		if shared == 0 {
			t.Fatalf("seed %d: no two templates shared their tolerations' verdicts", seed)
		}
	}
}
