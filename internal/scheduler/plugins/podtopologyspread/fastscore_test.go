package podtopologyspread

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/utils/ptr"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// syncHandle is a plugintest handle with a pod log, as the scheduler's
// snapshot keeps one; newSnapshot starts a new snapshot (new id, fresh
// NodeInfos), as a new Sync or a preemption does.
type syncHandle struct {
	*pt.Handle
	id    uint64
	added []helper.AddedPod
}

func (h *syncHandle) AddedPods() (uint64, []helper.AddedPod) { return h.id, h.added }

func (h *syncHandle) bind(p *v1.Pod) {
	ni := h.Node(p.Spec.NodeName)
	pi := framework.NewPodInfo(p, true)
	ni.AddPod(pi)
	h.added = append(h.added, helper.AddedPod{Node: ni, Pod: pi})
	h.Refresh()
}

func (h *syncHandle) newSnapshot(nodes []*v1.Node, pods []*v1.Pod) {
	fresh := pt.NewHandle(nodes, pods)
	fresh.ServiceObjs, fresh.ReplicaSetObjs = h.ServiceObjs, h.ReplicaSetObjs
	h.Handle, h.id, h.added = fresh, h.id+1, nil
}

// plainScores is upstream's scoring written out plainly: PreScore's walk
// over every node counting pods one by one, Score counting the node's pods,
// NormalizeScore. It is what the selections and fastScores must reproduce.
func plainScores(t *testing.T, pl *Plugin, h framework.Handle, pod *v1.Pod, feasible []*framework.NodeInfo) (bool, map[string]int64, map[string]int64) {
	t.Helper()
	cs, err := pl.constraintsFor(pod, v1.ScheduleAnyway)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) == 0 {
		return true, nil, nil
	}
	requireAll := len(pod.Spec.TopologySpreadConstraints) > 0 || !pl.systemDefaulted
	ignored := map[string]bool{}
	counts := make([]map[string]int64, len(cs))
	for i := range counts {
		counts[i] = map[string]int64{}
	}
	for _, ni := range feasible {
		if requireAll && !nodeHasAllKeys(ni.Node.Labels, cs) {
			ignored[ni.Node.Name] = true
			continue
		}
		for i := range cs {
			if cs[i].TopologyKey != v1.LabelHostname {
				counts[i][ni.Node.Labels[cs[i].TopologyKey]] = 0
			}
		}
	}
	weights := make([]float64, len(cs))
	for i := range cs {
		size := len(counts[i])
		if cs[i].TopologyKey == v1.LabelHostname {
			size = len(feasible) - len(ignored)
		}
		weights[i] = math.Log(float64(size + 2))
	}
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	for _, ni := range h.Nodes() {
		if ni.Node == nil || (requireAll && !nodeHasAllKeys(ni.Node.Labels, cs)) {
			continue
		}
		for i := range cs {
			v := ni.Node.Labels[cs[i].TopologyKey]
			if _, ok := counts[i][v]; !ok || !cs[i].matchNodeInclusionPolicies(pod, ni.Node, required) {
				continue
			}
			counts[i][v] += int64(countPodsMatchSelector(ni.Pods, cs[i].Selector, pod.Namespace))
		}
	}
	raw := map[string]int64{}
	for _, ni := range feasible {
		if ignored[ni.Node.Name] {
			raw[ni.Node.Name] = 0
			continue
		}
		var score float64
		for i := range cs {
			v, ok := ni.Node.Labels[cs[i].TopologyKey]
			if !ok {
				continue
			}
			n := counts[i][v]
			if cs[i].TopologyKey == v1.LabelHostname {
				n = int64(countPodsMatchSelector(ni.Pods, cs[i].Selector, pod.Namespace))
			}
			score += float64(n)*weights[i] + float64(cs[i].MaxSkew-1)
		}
		raw[ni.Node.Name] = int64(math.Round(score))
	}
	minScore, maxScore := int64(math.MaxInt64), int64(0)
	for name, v := range raw {
		if ignored[name] {
			continue
		}
		minScore, maxScore = min(minScore, v), max(maxScore, v)
	}
	norm := map[string]int64{}
	for name, v := range raw {
		switch {
		case ignored[name]:
			norm[name] = 0
		case maxScore == 0:
			norm[name] = framework.MaxNodeScore
		default:
			norm[name] = framework.MaxNodeScore * (maxScore + minScore - v) / maxScore
		}
	}
	return false, raw, norm
}

// runScores runs PreScore, Score (in the given order of feasible's
// indexes) and NormalizeScore through the plugin; between, when set, runs
// after PreScore.
func runScores(t *testing.T, pl *Plugin, pod *v1.Pod, feasible []*framework.NodeInfo, order []int, between func()) (bool, map[string]int64, map[string]int64) {
	t.Helper()
	cs := framework.NewCycleState()
	pi := framework.NewPodInfo(pod, true)
	st := pl.PreScore(cs, pi, feasible)
	if st.IsSkip() {
		return true, nil, nil
	}
	if !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st.Message())
	}
	if between != nil {
		between()
	}
	list := make(framework.NodeScoreList, len(feasible))
	if sort.IntsAreSorted(order) && len(order)%2 == 0 {
		// In order: half of these cycles go through ScoreNodes.
		if st := pl.ScoreNodes(cs, pi, feasible, list); !st.IsSuccess() {
			t.Fatalf("ScoreNodes: %v", st.Message())
		}
		for k := range list {
			list[k].Name = feasible[k].Node.Name
		}
		order = nil
	}
	for _, k := range order {
		v, st := pl.Score(cs, pi, feasible[k])
		if !st.IsSuccess() {
			t.Fatalf("Score: %v", st.Message())
		}
		list[k] = framework.NodeScore{Name: feasible[k].Node.Name, Score: v}
	}
	raw := pt.Scores(list)
	if st := pl.NormalizeScore(cs, pi, list); !st.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", st.Message())
	}
	return false, raw, pt.Scores(list)
}

// randomCluster draws nodes (zones present, empty or missing, a rack key on
// some, a few without a hostname label, some tainted) and pods in two
// namespaces with a few label values, some terminating.
func randomCluster(r *rand.Rand) ([]*v1.Node, []*v1.Pod) {
	var nodes []*v1.Node
	for i := 0; i < 6+r.Intn(30); i++ {
		name := fmt.Sprintf("n%02d", i)
		lbl := map[string]string{}
		switch z := r.Intn(10); {
		case z < 7:
			lbl[pt.ZoneLabel] = fmt.Sprintf("z%d", z%3)
		case z == 7:
			lbl[pt.ZoneLabel] = ""
		}
		if r.Intn(3) > 0 {
			lbl["rack"] = fmt.Sprintf("r%d", r.Intn(4))
		}
		var taints []v1.Taint
		if r.Intn(5) == 0 {
			taints = append(taints, pt.NoSchedule("dedicated", "x"))
		}
		n := pt.Node(name, lbl, taints...)
		if r.Intn(12) == 0 {
			n = pt.BareNode(name, lbl)
		}
		nodes = append(nodes, n)
	}
	var pods []*v1.Pod
	for i := 0; i < r.Intn(80); i++ {
		pods = append(pods, randomPod(r, fmt.Sprintf("p%03d", i), nodes[r.Intn(len(nodes))].Name))
	}
	return nodes, pods
}

func randomPod(r *rand.Rand, name, node string) *v1.Pod {
	namespace := ns
	if r.Intn(5) == 0 {
		namespace = "other"
	}
	lbl := map[string]string{"app": []string{"a", "b", "c"}[r.Intn(3)]}
	if r.Intn(2) == 0 {
		lbl["tier"] = []string{"x", "y"}[r.Intn(2)]
	}
	p := pt.Pod(namespace, name, node, lbl)
	if r.Intn(10) == 0 {
		p.DeletionTimestamp = &metav1.Time{}
	}
	if lbl["app"] == "a" && r.Intn(2) == 0 {
		ownedBy(p, "ReplicaSet", "rs-a")
	}
	return p
}

// randomIncoming draws the pod to score: owned (system defaults from the
// ReplicaSet and Service), or with its own constraints over zone, rack and
// hostname, selectors of every kind, inclusion policies, matchLabelKeys, a
// nodeSelector, required node affinity (labels or fields) or tolerations.
func randomIncoming(r *rand.Rand) *v1.Pod {
	p := randomPod(r, "incoming", "")
	p.DeletionTimestamp = nil
	if r.Intn(3) == 0 {
		p.Namespace = ns
		p.Labels["app"] = "a"
		return ownedBy(p, "ReplicaSet", "rs-a")
	}
	policy := func() *v1.NodeInclusionPolicy {
		switch r.Intn(3) {
		case 0:
			return ptr.To(v1.NodeInclusionPolicyHonor)
		case 1:
			return ptr.To(v1.NodeInclusionPolicyIgnore)
		}
		return nil
	}
	for j := 0; j < 1+r.Intn(3); j++ {
		c := v1.TopologySpreadConstraint{
			MaxSkew:            int32(1 + r.Intn(3)),
			TopologyKey:        []string{pt.ZoneLabel, pt.HostLabel, "rack"}[r.Intn(3)],
			WhenUnsatisfiable:  v1.ScheduleAnyway,
			NodeAffinityPolicy: policy(),
			NodeTaintsPolicy:   policy(),
		}
		if r.Intn(6) == 0 {
			c.WhenUnsatisfiable = v1.DoNotSchedule
		}
		switch r.Intn(5) {
		case 0:
			c.LabelSelector = &metav1.LabelSelector{}
		case 1:
			c.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"c", "a"}}}}
		case 2:
			c.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: metav1.LabelSelectorOpExists}}}
		default:
			c.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}}
		}
		if r.Intn(4) == 0 {
			c.MatchLabelKeys = []string{"tier"}
		}
		if r.Intn(4) == 0 {
			c.MinDomains = ptr.To(int32(2 + r.Intn(3)))
		}
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c)
	}
	if r.Intn(3) == 0 {
		p.Spec.NodeSelector = map[string]string{"rack": fmt.Sprintf("r%d", r.Intn(4))}
	}
	switch r.Intn(4) {
	case 0:
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
				{Key: pt.ZoneLabel, Operator: v1.NodeSelectorOpIn, Values: []string{fmt.Sprintf("z%d", r.Intn(3))}}}}}}}}
	case 1:
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
				{Key: "metadata.name", Operator: v1.NodeSelectorOpNotIn, Values: []string{fmt.Sprintf("n%02d", r.Intn(10))}}}}}}}}
	}
	if r.Intn(3) == 0 {
		p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
		if r.Intn(2) == 0 {
			p.Spec.Tolerations[0].Value, p.Spec.Tolerations[0].Operator = []string{"x", "y"}[r.Intn(2)], v1.TolerationOpEqual
		}
	}
	return p
}

// randomFeasible picks feasible nodes as the framework hands them over:
// snapshot order from a random start, some left out; sometimes shuffled
// (positions then come from the map). order is the Score call order:
// usually the feasible order, sometimes with two calls swapped (Score then
// computes the calls out of order without PreScore's table).
func randomFeasible(r *rand.Rand, all []*framework.NodeInfo) ([]*framework.NodeInfo, []int) {
	var out []*framework.NodeInfo
	start := r.Intn(len(all))
	for i := range all {
		if r.Intn(4) > 0 {
			out = append(out, all[(start+i)%len(all)])
		}
	}
	if len(out) == 0 {
		out = append(out, all[start])
	}
	if r.Intn(6) == 0 {
		r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	if r.Intn(8) == 0 {
		// A copy is no snapshot node: PreScore takes the general path.
		k := r.Intn(len(out))
		out[k] = out[k].Clone()
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	if r.Intn(6) == 0 {
		i, j := r.Intn(len(order)), r.Intn(len(order))
		order[i], order[j] = order[j], order[i]
	}
	return out, order
}

// TestScoresMatchPlainComputation scores random pods on random clusters
// through a plugin that follows a snapshot's pod log (selections, PreScore's
// raw score table) and compares with plainScores, and PreFilter's counts
// with plainWalk, while pods bind one by one and snapshots are replaced,
// as in a Sync.
func TestScoresMatchPlainComputation(t *testing.T) {
	rsA := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rs-a"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}}}
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "svc"},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": "a", "tier": "x"}}}
	compared := 0
	for seed := int64(0); seed < 150; seed++ {
		r := rand.New(rand.NewSource(seed))
		nodes, pods := randomCluster(r)
		h := &syncHandle{Handle: pt.NewHandle(nodes, pods), id: 1}
		h.ReplicaSetObjs = []*appsv1.ReplicaSet{rsA}
		if r.Intn(2) == 0 {
			h.ServiceObjs = []*v1.Service{svc}
		}
		pl := New(h)
		if r.Intn(4) == 0 {
			pl = NewWithDefaults(h, []v1.TopologySpreadConstraint{
				{TopologyKey: "rack", WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 2},
				{TopologyKey: pt.HostLabel, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 1}})
		}
		for step := 0; step < 12; step++ {
			pod := randomIncoming(r)
			feasible, order := randomFeasible(r, h.Nodes())
			wantSkip, wantRaw, wantNorm := plainScores(t, pl, h, pod, feasible)
			// The same plugin over the handle without its log walks every node.
			walk := &Plugin{handle: h.Handle, defaultConstraints: pl.defaultConstraints, systemDefaulted: pl.systemDefaulted,
				classes: helper.NewPodClassIndex(), index: helper.NewClassDomainIndex()}
			for name, run := range map[string]*Plugin{"indexed": pl, "walk": walk} {
				// PreFilter's counts read the selections too (walk.go).
				if want := plainWalk(run, pod, h.Nodes()); len(want) > 0 {
					cs := framework.NewCycleState()
					if _, st := run.PreFilter(cs, framework.NewPodInfo(pod, true), h.Nodes()); !st.IsSuccess() {
						t.Fatalf("seed %d step %d (%s): PreFilter %v", seed, step, name, st.Message())
					}
					if s, err := getPreFilterState(cs); err != nil || !reflect.DeepEqual(countMaps(s), want) {
						t.Fatalf("seed %d step %d (%s): PreFilter counts %v, want %v (%v)", seed, step, name, countMaps(s), want, err)
					}
				}
				// Now and then another pod's PreScore comes between (its
				// raw scores take the plugin's buffer).
				var between func()
				if r.Intn(8) == 0 {
					other, nodes := randomIncoming(r), append([]*framework.NodeInfo(nil), feasible...)
					between = func() { run.PreScore(framework.NewCycleState(), framework.NewPodInfo(other, true), nodes) }
				}
				gotSkip, gotRaw, gotNorm := runScores(t, run, pod, feasible, order, between)
				if gotSkip != wantSkip || !reflect.DeepEqual(gotRaw, wantRaw) || !reflect.DeepEqual(gotNorm, wantNorm) {
					t.Fatalf("seed %d step %d (%s): pod %+v\ngot skip=%v raw=%v norm=%v\nwant skip=%v raw=%v norm=%v",
						seed, step, name, pod.Spec.TopologySpreadConstraints, gotSkip, gotRaw, gotNorm, wantSkip, wantRaw, wantNorm)
				}
			}
			if !wantSkip {
				compared++
			}
			// Bind a few pods (the log), now and then start a new snapshot.
			for b := 0; b < r.Intn(4); b++ {
				p := randomPod(r, fmt.Sprintf("s%d-%d-%d", seed, step, b), nodes[r.Intn(len(nodes))].Name)
				pods = append(pods, p)
				h.bind(p)
			}
			if r.Intn(5) == 0 {
				if len(pods) > 0 {
					pods = pods[1:]
				}
				h.newSnapshot(nodes, pods)
			}
		}
	}
	if compared < 500 {
		t.Fatalf("only %d scored cases compared", compared)
	}
}

// TestIncluderMatchesPolicies asks one snapshot's inclusion verdicts for
// many random pods, so that pods whose inclusion shapes are spelled alike
// share verdicts, and checks every node against matchNodeInclusionPolicies.
func TestIncluderMatchesPolicies(t *testing.T) {
	compiled := 0
	defer func() {
		// Most shapes honouring node affinity take the compiled matcher.
		if !t.Failed() && compiled < 100 {
			t.Errorf("only %d includers used the compiled node affinity", compiled)
		}
	}()
	for seed := int64(0); seed < 20; seed++ {
		r := rand.New(rand.NewSource(seed))
		nodes, _ := randomCluster(r)
		h := pt.NewHandle(nodes, nil)
		x := helper.NewClassDomainIndex()
		x.Update(h, h.Nodes())
		sels := newSelections(x)
		for k := 0; k < 200; k++ {
			pod := randomIncoming(r)
			if r.Intn(3) == 0 {
				randomRequiredAffinity(r, pod)
			}
			if r.Intn(2) == 0 && len(pod.Spec.Tolerations) > 0 {
				pod.Spec.Tolerations[0].TolerationSeconds = ptr.To(int64(r.Intn(2)))
				pod.Spec.Tolerations[0].Effect = []v1.TaintEffect{"", v1.TaintEffectNoSchedule, v1.TaintEffectNoExecute}[r.Intn(3)]
			}
			cs, err := filterConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, v1.ScheduleAnyway)
			if err != nil {
				t.Fatal(err)
			}
			required := nodeaffinity.GetRequiredNodeAffinity(pod)
			for i := range cs {
				in := sels.includer(&cs[i], pod, required, h.Nodes())
				if in.fast != nil {
					compiled++
				}
				for p, ni := range h.Nodes() {
					if got, want := in.has(int32(p)), cs[i].matchNodeInclusionPolicies(pod, ni.Node, required); got != want {
						t.Fatalf("seed %d pod %d node %s: included %v, want %v", seed, k, ni.Name(), got, want)
					}
				}
			}
		}
	}
}
