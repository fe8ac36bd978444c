package scheduler

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// memoState is a few hundred nodes of mixed sizes, some with
// PreferNoSchedule taints and images, and pods of a few shapes (requests,
// tolerations, images), some owned so that the default spread applies.
func memoState(r *rand.Rand, nodes, pods int) *cluster.State {
	s := cluster.New("1.36", 1)
	sizes := []struct{ cpu, mem string }{{"2", "8Gi"}, {"4", "16Gi"}, {"8", "16Gi"}, {"16", "64Gi"}}
	for i := 0; i < nodes; i++ {
		sz := sizes[r.Intn(len(sizes))]
		n := plugintest.SizedNode(fmt.Sprintf("node-%03d", i), sz.cpu, sz.mem, 30)
		n.Labels[v1.LabelTopologyZone] = benchZones[i%len(benchZones)]
		if r.Intn(4) == 0 {
			n.Spec.Taints = []v1.Taint{{Key: "spot", Value: fmt.Sprint(r.Intn(2)), Effect: v1.TaintEffectPreferNoSchedule}}
		}
		if r.Intn(3) == 0 {
			n.Status.Images = []v1.ContainerImage{{Names: []string{"docker.io/library/nginx:1.27"}, SizeBytes: int64(100+r.Intn(900)) << 20}}
		}
		s.Nodes[n.Name] = n
		s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, n.Name)
	}
	addMemoPods(r, s, 0, pods)
	addOwners(s)
	return s
}

// addMemoPods adds pods from..to-1, a template per run of consecutive pods.
func addMemoPods(r *rand.Rand, s *cluster.State, from, to int) {
	cpus := []string{"100m", "250m", "500m", "1", "2", "3"}
	for i := from; i < to; {
		run := 1 + r.Intn(30)
		cpu, mem := cpus[r.Intn(len(cpus))], fmt.Sprintf("%dMi", 128<<r.Intn(4))
		tolerate, image, owned := r.Intn(3) == 0, r.Intn(2) == 0, r.Intn(2) == 0
		for ; run > 0 && i < to; run, i = run-1, i+1 {
			var p *v1.Pod
			if owned {
				p = ownedPod(i)
				p.Spec.Containers[0].Resources.Requests = plugintest.SizedPod("x", cpu, mem).Spec.Containers[0].Resources.Requests
			} else {
				p = plugintest.SizedPod(fmt.Sprintf("pod-%05d", i), cpu, mem)
			}
			if tolerate {
				p.Spec.Tolerations = []v1.Toleration{{Key: "spot", Operator: v1.TolerationOpEqual, Value: "1", Effect: v1.TaintEffectPreferNoSchedule}}
			}
			if image {
				p.Spec.Containers[0].Image = "nginx:1.27"
			}
			p.UID = types.UID(fmt.Sprintf("uid-%05d", i))
			s.Pods[cluster.Key(p.Namespace, p.Name)] = p
		}
	}
}

// TestScoreMemoMatchesPlain schedules the same pods twice, with the memo
// and with every score computed, over three Syncs (new snapshots, pods
// bound in between); every list the memo answers is also checked against
// the plugin's own computation on the spot, and the placements must agree.
func TestScoreMemoMatchesPlain(t *testing.T) {
	verdicts, rejections := 0, 0
	for _, seed := range []int64{1, 2, 3} {
		run := func(plain bool) (map[string]string, int) {
			r := rand.New(rand.NewSource(seed))
			s := memoState(r, 60, 200)
			sc := New()
			if err := sc.ensureFramework(s); err != nil {
				t.Fatal(err)
			}
			sc.fw.plainScores, sc.fw.plainFilters = plain, plain
			answered := 0
			sc.fw.fmemo.verify = func(pl framework.FilterPlugin, state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo, kept *framework.Status) {
				answered++
				verdicts++
				want := pl.Filter(state, pod, ni)
				if want.Code() != kept.Code() || !reflect.DeepEqual(want.Reasons(), kept.Reasons()) {
					t.Fatalf("seed %d, %s on %s for %s: kept %v, computed %v", seed, pl.Name(), ni.Name(), pod.Pod.Name, kept, want)
				}
				if !want.IsSuccess() {
					rejections++
				}
			}
			sc.fw.memo.verify = func(k int, state *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo, kept any) {
				answered++
				// fresh is plugin k's raw scores, computed in batch and node by node.
				fresh := func(k int) []int64 {
					pl := sc.fw.score[k].plugin
					batch := make(framework.NodeScoreList, len(nodes))
					if st := pl.(framework.BatchScorePlugin).ScoreNodes(state, pod, nodes, batch); !st.IsSuccess() {
						t.Fatalf("%s: %v", pl.Name(), st)
					}
					out := make([]int64, len(nodes))
					for i, ni := range nodes {
						one, st := pl.Score(state, pod, ni)
						if !st.IsSuccess() || one != batch[i].Score {
							t.Fatalf("%s on %s: ScoreNodes %d, Score %d %v", pl.Name(), ni.Name(), batch[i].Score, one, st)
						}
						out[i] = one
					}
					return out
				}
				if k >= 0 {
					want := fresh(k)
					for i, ns := range kept.(framework.NodeScoreList) {
						if ns.Score != want[i] {
							t.Fatalf("seed %d, %s on %s for %s: kept %d, computed %d", seed, sc.fw.score[k].plugin.Name(), nodes[i].Name(), pod.Pod.Name, ns.Score, want[i])
						}
					}
					return
				}
				// The totals so far are the weighted sums of the local
				// plugins without a normalizer.
				want := make([]int64, len(nodes))
				for k, ws := range sc.fw.score {
					nl, ok := ws.plugin.(framework.NodeLocalScorePlugin)
					if _, skip := state.SkipScorePlugins[ws.plugin.Name()]; skip || !ok || ws.plugin.ScoreExtensions() != nil {
						continue
					}
					if _, ok := nl.AppendScoreShape(state, pod, nil); !ok {
						continue
					}
					for i, v := range fresh(k) {
						want[i] += v * ws.weight
					}
				}
				for i, v := range kept.([]int64) {
					if v != want[i] {
						t.Fatalf("seed %d, sums on %s for %s: kept %d, computed %d", seed, nodes[i].Name(), pod.Pod.Name, v, want[i])
					}
				}
			}
			for round := 0; round < 3; round++ {
				if round > 0 {
					addMemoPods(r, s, 200*round, 200*(round+1))
				}
				if _, err := sc.Sync(s); err != nil {
					t.Fatal(err)
				}
			}
			out := map[string]string{}
			for k, p := range s.Pods {
				out[k] = p.Spec.NodeName
			}
			return out, answered
		}
		memo, answered := run(false)
		plain, none := run(true)
		if answered == 0 || none != 0 {
			t.Fatalf("seed %d: the memo answered %d lists with it on, %d with it off", seed, answered, none)
		}
		bound := 0
		for k, n := range plain {
			if memo[k] != n {
				t.Fatalf("seed %d: %s went to %q with the memo, %q without", seed, k, memo[k], n)
			}
			if n != "" {
				bound++
			}
		}
		if bound < 300 {
			t.Fatalf("seed %d: only %d pods bound", seed, bound)
		}
	}
	t.Logf("filter memo: %d verdicts, %d rejections", verdicts, rejections)
	if verdicts == 0 || rejections == 0 {
		t.Fatalf("the filter memo gave %d verdicts, %d of them rejections", verdicts, rejections)
	}
}

// TestRecycledShapeStartsClean: a shape's array recycled for a shape of
// another record width holds no record that looks valid, even where an
// old score equals the new epoch and Generation.
func TestRecycledShapeStartsClean(t *testing.T) {
	var nodes []*framework.NodeInfo
	for i := 0; i < 8; i++ {
		nodes = append(nodes, framework.NewNodeInfo(plugintest.SizedNode(fmt.Sprintf("n%d", i), "1", "1Gi", 10)))
	}
	sn := NewSnapshot(nodes)
	m := &scoreMemo{}
	use := func(key string, width int) *shapeScores {
		m.key, m.norm = []byte(key), make([]int, width)
		m.shape(sn)
		return m.shape(sn)
	}
	for i := 0; i < maxShapes; i++ {
		use(fmt.Sprint("old", i), 1)
	}
	for _, sh := range m.shapes {
		// Every value the stamp of what comes next.
		for j := range sh.e {
			sh.e[j] = m.epochs + 1
		}
	}
	sh := use("new", 0)
	for p := range nodes {
		r := sh.e[p*(sh.width+3):]
		if r[0] == sh.epoch {
			t.Fatalf("position %d of the recycled array looks valid: %v", p, r[:sh.width+3])
		}
	}
}
