package scheduler

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// plainScore hides a Score plugin's BatchScorePlugin side, and its
// normalizer's NameBlindNormalizer side, so that the framework scores it
// node by node and always fills the names: the computation ScoreNodes and
// the skipped names replace.
type plainScore struct{ framework.ScorePlugin }

type plainExtensions struct{ framework.ScoreExtensions }

func (p plainScore) ScoreExtensions() framework.ScoreExtensions {
	if ext := p.ScorePlugin.ScoreExtensions(); ext != nil {
		return plainExtensions{ext}
	}
	return nil
}

// scoreCluster builds a random cluster in which every default Score plugin
// has something to say: zones and sizes, PreferNoSchedule taints, images,
// labels for preferred node affinity, ReplicaSets and Services (default
// spreading), pods with their own spread constraints and preferred pod
// (anti-)affinity. The same seed builds the same cluster.
func scoreCluster(seed int64, nodes, pending int) *cluster.State {
	r := rand.New(rand.NewSource(seed))
	var ns []*v1.Node
	cpus := []string{"2", "4", "8", "16"}
	mems := []string{"4Gi", "8Gi", "16Gi", "64Gi"}
	images := []string{"nginx", "redis:7", "busybox:1.36", "registry.example/app/web"}
	for i := 0; i < nodes; i++ {
		n := plugintest.SizedNode(fmt.Sprintf("n%02d", i), cpus[r.Intn(len(cpus))], mems[r.Intn(len(mems))], 20+int64(r.Intn(90)))
		if r.Intn(8) != 0 { // a few nodes lack a zone
			zoned(n, fmt.Sprintf("z%d", r.Intn(3)))
		}
		if r.Intn(2) == 0 {
			plugintest.WithLabels(n, "disk", []string{"ssd", "hdd"}[r.Intn(2)])
		}
		if r.Intn(4) == 0 {
			plugintest.WithTaints(n, taint("soft", []string{"a", "b"}[r.Intn(2)], v1.TaintEffectPreferNoSchedule))
		}
		for _, img := range images {
			if r.Intn(3) == 0 {
				n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: []string{img}, SizeBytes: int64(50+r.Intn(900)) << 20})
			}
		}
		ns = append(ns, n)
	}
	apps := []string{"web", "db", "cache"}
	var pods []*v1.Pod
	newPod := func(name string) *v1.Pod {
		app := apps[r.Intn(len(apps))]
		p := labelled(plugintest.SizedPod(name, fmt.Sprintf("%dm", 50+r.Intn(900)), fmt.Sprintf("%dMi", 64+r.Intn(2000))), "app", app)
		if r.Intn(3) != 0 {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs-" + app, UID: types.UID("rs-" + app), Controller: boolPtr(true)}}
		}
		p.Spec.Containers[0].Image = images[r.Intn(len(images))]
		if r.Intn(4) == 0 {
			p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: int32(1 + r.Intn(2)), TopologyKey: []string{v1.LabelTopologyZone, v1.LabelHostname}[r.Intn(2)],
				WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
		}
		a := &v1.Affinity{}
		if r.Intn(4) == 0 {
			a.NodeAffinity = &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: int32(1 + r.Intn(50)),
				Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "disk", Operator: v1.NodeSelectorOpIn, Values: []string{"ssd"}}}}}}}
		}
		if r.Intn(5) == 0 {
			a.PodAntiAffinity = &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: int32(1 + r.Intn(100)), PodAffinityTerm: appTerm(app, v1.LabelHostname)}}}
		}
		if r.Intn(6) == 0 {
			a.PodAffinity = &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: int32(1 + r.Intn(100)), PodAffinityTerm: appTerm(apps[r.Intn(len(apps))], v1.LabelTopologyZone)}}}
		}
		if a.NodeAffinity != nil || a.PodAffinity != nil || a.PodAntiAffinity != nil {
			p.Spec.Affinity = a
		}
		if r.Intn(5) == 0 {
			p.Spec.Tolerations = []v1.Toleration{{Key: "soft", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectPreferNoSchedule}}
		}
		return p
	}
	for i := 0; i < nodes; i++ {
		pods = append(pods, plugintest.OnNode(newPod(fmt.Sprintf("bound%03d", i)), ns[r.Intn(len(ns))].Name))
	}
	for i := 0; i < pending; i++ {
		pods = append(pods, newPod(fmt.Sprintf("p%03d", i)))
	}
	s := newState("1.36", ns, pods...)
	for _, app := range apps {
		s.ReplicaSets["default/rs-"+app] = &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs-" + app, Namespace: "default", UID: types.UID("rs-" + app)},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
	}
	s.Services["default/svc-web"] = &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc-web", Namespace: "default"},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}}
	return s
}

// TestScoreNodesMatchesPerNodeScore schedules random clusters twice, once
// with the plugins' ScoreNodes and name-blind normalizers and once node by
// node with every name filled, and wants the same placements, and with
// RecordScores the same per-plugin scores and totals for every pod.
func TestScoreNodesMatchesPerNodeScore(t *testing.T) {
	for seed := int64(1); seed <= 12; seed++ {
		for _, record := range []bool{false, true} {
			t.Run(fmt.Sprintf("seed%d/record=%v", seed, record), func(t *testing.T) {
				var placed [2]map[string]string
				var scs [2]*Scheduler
				var states [2]*cluster.State
				for k := range scs {
					s := scoreCluster(seed, 12+int(seed)*3, 60)
					sc := New()
					sc.RecordScores = record
					if err := sc.ensureFramework(s); err != nil {
						t.Fatal(err)
					}
					if k == 1 {
						for i := range sc.fw.score {
							sc.fw.score[i].plugin = plainScore{sc.fw.score[i].plugin}
						}
					}
					if _, err := sc.Sync(s); err != nil {
						t.Fatal(err)
					}
					placed[k] = map[string]string{}
					for key, p := range s.Pods {
						placed[k][key] = p.Spec.NodeName
					}
					scs[k], states[k] = sc, s
				}
				if !reflect.DeepEqual(placed[0], placed[1]) {
					t.Fatalf("placements differ:\nbatch %v\nplain %v", placed[0], placed[1])
				}
				if !record {
					return
				}
				compared := 0
				for key := range states[0].Pods {
					d0, d1 := scs[0].LastDiagnosis(key), scs[1].LastDiagnosis(key)
					if d0 == nil && d1 == nil {
						continue
					}
					if d0 == nil || d1 == nil || !reflect.DeepEqual(d0.Totals, d1.Totals) || !reflect.DeepEqual(d0.Scores, d1.Scores) || d0.SelectedNode != d1.SelectedNode {
						t.Fatalf("%s: diagnoses differ:\nbatch %+v\nplain %+v", key, d0, d1)
					}
					if len(d0.Totals) > 1 {
						compared++
					}
				}
				if compared == 0 {
					t.Fatal("no pod was scored over several nodes")
				}
			})
		}
	}
}
