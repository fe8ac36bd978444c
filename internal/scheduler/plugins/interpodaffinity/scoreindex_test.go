package interpodaffinity

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// referenceScore is upstream's PreScore walk, pod by pod on every node, that
// the index must reproduce.
func referenceScore(pl *Plugin, pi *framework.PodInfo) scoreMap {
	affinity := resolveWeighted(pl, pi.PreferredAffinityTerms)
	antiAffinity := resolveWeighted(pl, pi.PreferredAntiAffinityTerms)
	nsLabels := pl.namespaceLabels(pi.Pod.Namespace)
	score := scoreMap{}
	add := func(t *framework.AffinityTerm, weight int32, pod *v1.Pod, nsl labels.Set, node *v1.Node, mult int32) {
		if !t.Matches(pod, nsl) {
			return
		}
		v, ok := node.Labels[t.TopologyKey]
		if !ok {
			return
		}
		if score[t.TopologyKey] == nil {
			score[t.TopologyKey] = map[string]int64{}
		}
		score[t.TopologyKey][v] += int64(weight * mult)
	}
	for _, ni := range pl.handle.Nodes() {
		if ni.Node == nil {
			continue
		}
		for _, e := range ni.Pods {
			for i := range affinity {
				add(&affinity[i].AffinityTerm, affinity[i].Weight, e.Pod, nil, ni.Node, 1)
			}
			for i := range antiAffinity {
				add(&antiAffinity[i].AffinityTerm, antiAffinity[i].Weight, e.Pod, nil, ni.Node, -1)
			}
			for i := range e.RequiredAffinityTerms {
				add(&e.RequiredAffinityTerms[i], pl.args.HardPodAffinityWeight, pi.Pod, nsLabels, ni.Node, 1)
			}
			for i := range e.PreferredAffinityTerms {
				add(&e.PreferredAffinityTerms[i].AffinityTerm, e.PreferredAffinityTerms[i].Weight, pi.Pod, nsLabels, ni.Node, 1)
			}
			for i := range e.PreferredAntiAffinityTerms {
				add(&e.PreferredAntiAffinityTerms[i].AffinityTerm, e.PreferredAntiAffinityTerms[i].Weight, pi.Pod, nsLabels, ni.Node, -1)
			}
		}
	}
	return score
}

// randomScoringPod draws labels and scoring terms from small pools, so that
// classes and terms repeat as replicas' do.
func randomScoringPod(r *rand.Rand, name, node string) *v1.Pod {
	apps := []string{"web", "db", "cache"}
	nss := []string{ns, "other"}
	p := pt.Pod(nss[r.IntN(2)], name, node, map[string]string{"app": apps[r.IntN(3)]})
	if r.IntN(2) == 0 {
		p.Labels["tier"] = "front"
	}
	keys := []string{pt.ZoneLabel, pt.HostLabel, "missing"}
	term := func() v1.PodAffinityTerm {
		t := pt.Term(keys[r.IntN(3)], map[string]string{"app": apps[r.IntN(3)]})
		switch r.IntN(4) {
		case 0:
			t.Namespaces = []string{"other"}
		case 1:
			t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
		}
		return t
	}
	a := &v1.Affinity{PodAffinity: &v1.PodAffinity{}, PodAntiAffinity: &v1.PodAntiAffinity{}}
	for k := r.IntN(3); k > 0; k-- {
		switch r.IntN(3) {
		case 0:
			a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term())
		case 1:
			a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, pt.Weighted(int32(1+r.IntN(3)), term()))
		default:
			a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, pt.Weighted(int32(1+r.IntN(3)), term()))
		}
	}
	p.Spec.Affinity = a
	return p
}

// TestScoreIndexMatchesPodWalk binds random pods one by one (through the
// pod log, as the scheduler does) and checks that PreScore's per-domain sums
// equal the pod-by-pod walk for random incoming pods, after every bind.
func TestScoreIndexMatchesPodWalk(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		var nodes []*v1.Node
		for i := 0; i < 8; i++ {
			lbl := map[string]string{pt.ZoneLabel: fmt.Sprintf("z%d", i%3)}
			if i == 5 {
				lbl = map[string]string{}
			}
			nodes = append(nodes, pt.Node(fmt.Sprintf("n%d", i), lbl))
		}
		h := &logHandle{Handle: pt.NewHandle(nodes, nil)}
		h.NamespaceObjs = []*v1.Namespace{
			{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"team": "a"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
		}
		weight := int32(1 + r.IntN(3))
		pl := NewWithArgs(h, Args{HardPodAffinityWeight: weight})
		for step := 0; step < 25; step++ {
			for k := 0; k < 3; k++ {
				incoming := framework.NewPodInfo(randomScoringPod(r, "in", ""), true)
				want := referenceScore(pl, incoming)
				cs := framework.NewCycleState()
				st := pl.PreScore(cs, incoming, h.Nodes())
				var got scoreMap
				if st.IsSuccess() {
					s, err := getPreScoreState(cs)
					if err != nil {
						t.Fatal(err)
					}
					got = s.topologyScore
					if s.fast != nil {
						got = s.fast.scoreMap()
					}
					// Score by node position equals Score through the labels.
					slow := &preScoreState{topologyScore: got}
					slowCS := framework.NewCycleState()
					slowCS.Write(preScoreStateKey, slow)
					for _, ni := range h.Nodes() {
						a, _ := pl.Score(cs, incoming, ni)
						b, _ := pl.Score(slowCS, incoming, ni)
						if a != b {
							t.Fatalf("seed %d step %d node %s: Score %d by position, %d by labels", seed, step, ni.Name(), a, b)
						}
						// A copy outside the snapshot list is read through its labels.
						c := framework.NewNodeInfo(ni.Node)
						c.Index = -1
						if d, _ := pl.Score(cs, incoming, c); d != b {
							t.Fatalf("seed %d step %d node %s: Score %d for a copy, %d by labels", seed, step, ni.Name(), d, b)
						}
					}
				} else if st.Code() != framework.Skip {
					t.Fatalf("seed %d step %d: PreScore %v", seed, step, st)
				}
				if len(want) == 0 {
					want = nil
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d step %d: index %v, pod walk %v", seed, step, got, want)
				}
			}
			h.bind(randomScoringPod(r, fmt.Sprintf("e%d", step), fmt.Sprintf("n%d", r.IntN(len(nodes)))))
		}
	}
}
