package scheduler

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/defaultpreemption"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// randomPreemptionPod is a pod of random priority, size and app label,
// sometimes with a host port, a hostname or zone spread over web pods, or
// hostname anti-affinity to db pods.
func randomPreemptionPod(r *rand.Rand, name string) *v1.Pod {
	cpus := []string{"300m", "700m", "1200m", "1900m"}
	p := plugintest.WithPriority(plugintest.SizedPod(name, cpus[r.IntN(len(cpus))], "1Gi"), []int32{0, 10, 100, 1000}[r.IntN(4)])
	app := []string{"web", "db"}[r.IntN(2)]
	p.Labels = map[string]string{"app": app}
	if r.IntN(4) == 0 {
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	}
	switch r.IntN(4) {
	case 0:
		key := []string{v1.LabelHostname, v1.LabelTopologyZone}[r.IntN(2)]
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	case 1:
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
			plugintest.Term(v1.LabelHostname, map[string]string{"app": "db"})}}}
	}
	return p
}

// TestPrefixVerdictMatchesSelectVictimsOnNode compares, on random clusters
// of mixed priorities with nominated pods, SelectVictims' cheaper verdict
// with SelectVictimsOnNode on copies, node by node: same victims, same PDB
// violations, same status code and message.
func TestPrefixVerdictMatchesSelectVictimsOnNode(t *testing.T) {
	decided, compared := 0, 0
	for seed := uint64(1); seed <= 12; seed++ {
		r := rand.New(rand.NewPCG(seed, 5))
		var nodes []*v1.Node
		for i := 0; i < 12; i++ {
			n := plugintest.SizedNode(fmt.Sprintf("n%02d", i), "2", "8Gi", 6)
			n.Labels[v1.LabelTopologyZone] = fmt.Sprintf("z%d", i%3)
			nodes = append(nodes, n)
		}
		var pods []*v1.Pod
		for i := 0; i < 30; i++ {
			pods = append(pods, plugintest.OnNode(randomPreemptionPod(r, fmt.Sprintf("b%02d", i)), nodes[r.IntN(len(nodes))].Name))
		}
		for i := 0; i < 3; i++ {
			p := plugintest.WithPriority(plugintest.SizedPod(fmt.Sprintf("nom%d", i), "500m", "1Gi"), 1000)
			p.Status.NominatedNodeName = nodes[r.IntN(len(nodes))].Name
			pods = append(pods, p)
		}
		s := newState("1.36", nodes, pods...)
		sc := New()
		if err := sc.ensureFramework(s); err != nil {
			t.Fatal(err)
		}
		sc.buildSnapshot(s)
		var pl *defaultpreemption.DefaultPreemption
		for _, p := range sc.fw.postFilter {
			if d, ok := p.(*defaultpreemption.DefaultPreemption); ok {
				pl = d
			}
		}
		if pl == nil {
			t.Fatal("no DefaultPreemption in the profile")
		}
		for k := 0; k < 8; k++ {
			pod := randomPreemptionPod(r, fmt.Sprintf("in%d", k))
			// Mostly one priority, so that later pods meet the node copies
			// earlier ones left (shared until edited); now and then a pod
			// is bound in between, which changes its node.
			prio := []int32{500, 500, 500, 100}[r.IntN(4)]
			pod.Spec.Priority = ptrTo(prio)
			if k > 0 && r.IntN(3) == 0 {
				bound := randomPreemptionPod(r, fmt.Sprintf("bound%d", k))
				sc.handle.snap.AddPod(framework.NewPodInfo(bound, true), nodes[r.IntN(len(nodes))].Name)
			}
			pi := framework.NewPodInfo(pod, true)
			state := framework.NewCycleState()
			if _, st, _ := sc.fw.runPreFilterPlugins(state, pi, sc.handle.snap.nodes); !st.IsSuccess() {
				continue
			}
			for _, ni := range sc.handle.snap.nodes {
				wantV, wantN, wantSt := pl.SelectVictimsOnNode(state.Clone(), pi, ni.Clone(), nil)
				gotV, gotN, gotSt := pl.SelectVictims(state, pi, ni, nil, true)
				if !reflect.DeepEqual(gotV, wantV) || gotN != wantN || gotSt.Code() != wantSt.Code() || gotSt.Message() != wantSt.Message() {
					t.Fatalf("seed %d pod %d node %s: got %d victims, %d violations, %v %q; want %d, %d, %v %q", seed, k, ni.Name(),
						len(gotV), gotN, gotSt.Code(), gotSt.Message(), len(wantV), wantN, wantSt.Code(), wantSt.Message())
				}
				compared++
				trial := ni.Clone()
				for _, p := range ni.Pods {
					if *p.Pod.Spec.Priority < prio {
						trial.RemovePod(p.Pod)
					}
				}
				if _, ok := sc.handle.RunFilterPluginsBeforeExtensions(state, pi, trial); ok && len(trial.Pods) < len(ni.Pods) {
					decided++
				}
			}
		}
	}
	if decided == 0 || decided == compared {
		t.Fatalf("the cheap verdict decided %d of %d nodes; the test needs both kinds", decided, compared)
	}
}

func ptrTo[T any](v T) *T { return &v }
