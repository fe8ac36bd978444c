package scheduler

import (
	"math/rand"
	"reflect"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// TestSharedSkipSetsMatchPlugins runs PreFilter and PreScore for pods that
// skip different plugins, one after another as cycles do, and checks the
// shared sets each cycle gets (and the Filter flags derived from them)
// against each plugin's own answer on a fresh state; a set handed to an
// earlier cycle must not change.
func TestSharedSkipSetsMatchPlugins(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	s := memoState(r, 20, 40)
	sc := New()
	if err := sc.ensureFramework(s); err != nil {
		t.Fatal(err)
	}
	sc.buildSnapshot(s)
	fw, nodes := sc.fw, sc.handle.snap.nodes

	plain := plugintest.SizedPod("plain", "100m", "")
	spread := plugintest.SizedPod("spread", "100m", "")
	spread.Labels = map[string]string{"app": "a"}
	spread.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
		WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}}}
	affinity := plugintest.SizedPod("affinity", "100m", "")
	affinity.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}}}}}
	ports := plugintest.SizedPod("ports", "100m", "")
	ports.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	pods := []*v1.Pod{plain, spread, affinity, ports, plain, ownedPod(99), spread}

	type kept struct {
		set  map[string]struct{}
		want []string
	}
	var earlier []kept
	for k, pod := range pods {
		pi := framework.NewPodInfo(pod, true)
		var want []string
		for _, pl := range fw.preFilter {
			if _, st := pl.PreFilter(framework.NewCycleState(), pi, nodes); st.IsSkip() {
				want = append(want, pl.Name())
			}
		}
		state := framework.NewCycleState()
		if _, st, _ := fw.runPreFilterPlugins(state, pi, nodes); !st.IsSuccess() {
			t.Fatalf("pod %d: PreFilter %v", k, st.Message())
		}
		if got := setNames(state.SkipFilterPlugins); !reflect.DeepEqual(got, sorted(want)) {
			t.Fatalf("pod %d: skipped PreFilter %v, want %v", k, got, sorted(want))
		}
		flags := fw.filterSkips(state)
		for i, pl := range fw.filter {
			_, skip := state.SkipFilterPlugins[pl.Name()]
			if flags[i] != skip {
				t.Fatalf("pod %d: Filter %s flag %v, want %v", k, pl.Name(), flags[i], skip)
			}
		}
		earlier = append(earlier, kept{state.SkipFilterPlugins, sorted(want)})

		var wantScore []string
		for _, pl := range fw.preScore {
			if st := pl.PreScore(state.Clone(), pi, nodes); st.IsSkip() {
				wantScore = append(wantScore, pl.Name())
			}
		}
		if _, _, st := fw.runScorePlugins(state, pi, nodes, true, nil); !st.IsSuccess() {
			t.Fatalf("pod %d: scoring %v", k, st.Message())
		}
		if got := setNames(state.SkipScorePlugins); !reflect.DeepEqual(got, sorted(wantScore)) {
			t.Fatalf("pod %d: skipped PreScore %v, want %v", k, got, sorted(wantScore))
		}
	}
	distinct := map[string]bool{}
	for k, e := range earlier {
		if got := setNames(e.set); !reflect.DeepEqual(got, e.want) {
			t.Fatalf("pod %d's set changed to %v, want %v", k, got, e.want)
		}
		distinct[fmtNames(e.want)] = true
	}
	if len(distinct) < 3 {
		t.Fatalf("only %d distinct skip sets: the pods do not exercise sharing", len(distinct))
	}
}

func setNames(m map[string]struct{}) []string {
	out := []string{}
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func sorted(names []string) []string {
	out := append([]string{}, names...)
	sort.Strings(out)
	return out
}

func fmtNames(names []string) string {
	b := ""
	for _, n := range names {
		b += n + ","
	}
	return b
}
