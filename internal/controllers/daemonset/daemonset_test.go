package daemonset

import (
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/sim"
)

func newDS(mutate func(*appsv1.DaemonSet)) *appsv1.DaemonSet {
	labels := map[string]string{"k8s-app": "agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent:1.0"}}}},
		},
	}
	if mutate != nil {
		mutate(ds)
	}
	return ds
}

func ctrls() []sim.Controller { return []sim.Controller{New(), controllertest.Binder{}, kubelet.New()} }

func settle(t *testing.T, s *cluster.State) {
	t.Helper()
	if err := sim.Settle(s, ctrls(), time.Hour); err != nil {
		t.Fatal(err)
	}
}

// podsByNode returns the DaemonSet's active pods keyed by target node.
func podsByNode(s *cluster.State, ds *appsv1.DaemonSet) map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for n, pods := range nodeToDaemonPods(s, ds) {
		out[n] = activeOnly(pods)
	}
	return out
}

func taint(key string, effect corev1.TaintEffect) corev1.Taint {
	return corev1.Taint{Key: key, Value: "true", Effect: effect}
}

func TestPlacement(t *testing.T) {
	cases := []struct {
		name      string
		ds        func(*appsv1.DaemonSet)
		nodes     map[string][]corev1.Taint
		labels    map[string]map[string]string
		wantNodes []string
		wantMiss  int32
	}{
		{name: "every node", nodes: map[string][]corev1.Taint{"a": nil, "b": nil}, wantNodes: []string{"a", "b"}},
		{
			name:      "untolerated NoSchedule and NoExecute taints keep pods off",
			nodes:     map[string][]corev1.Taint{"a": nil, "b": {taint("dedicated", corev1.TaintEffectNoSchedule)}, "c": {taint("gpu", corev1.TaintEffectNoExecute)}},
			wantNodes: []string{"a"},
		},
		{
			name: "automatic tolerations admit cordoned and pressured nodes",
			nodes: map[string][]corev1.Taint{
				"a": {{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}},
				"b": {{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}},
				"c": {{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}},
			},
			wantNodes: []string{"a", "b"},
		},
		{
			name:      "hostNetwork also tolerates network-unavailable",
			ds:        func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.HostNetwork = true },
			nodes:     map[string][]corev1.Taint{"c": {{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}}},
			wantNodes: []string{"c"},
		},
		{
			name: "template toleration",
			ds: func(ds *appsv1.DaemonSet) {
				ds.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
			},
			nodes:     map[string][]corev1.Taint{"a": {taint("dedicated", corev1.TaintEffectNoSchedule)}, "b": {taint("gpu", corev1.TaintEffectNoExecute)}},
			wantNodes: []string{"a", "b"},
		},
		{
			name:      "nodeSelector",
			ds:        func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.NodeSelector = map[string]string{"role": "master"} },
			nodes:     map[string][]corev1.Taint{"a": nil, "b": nil},
			labels:    map[string]map[string]string{"b": {"role": "master"}},
			wantNodes: []string{"b"},
		},
		{
			name: "required node affinity",
			ds: func(ds *appsv1.DaemonSet) {
				ds.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"1a"}}}}}}}}
			},
			nodes:     map[string][]corev1.Taint{"a": nil, "b": nil},
			labels:    map[string]map[string]string{"a": {"zone": "1a"}},
			wantNodes: []string{"a"},
		},
		{
			name:      "template nodeName",
			ds:        func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.NodeName = "b" },
			nodes:     map[string][]corev1.Taint{"a": nil, "b": nil},
			wantNodes: []string{"b"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := controllertest.NewState()
			for _, n := range cluster.SortedKeys(c.nodes) {
				controllertest.AddNode(s, n, "2", "4Gi", c.labels[n], c.nodes[n]...)
			}
			if err := admission.Create(s, newDS(c.ds)); err != nil {
				t.Fatal(err)
			}
			settle(t, s)
			ds := s.DaemonSets["kube-system/agent"]
			byNode := podsByNode(s, ds)
			var got []string
			for _, n := range cluster.SortedKeys(byNode) {
				if len(byNode[n]) != 1 {
					t.Errorf("node %s has %d pods", n, len(byNode[n]))
				}
				if byNode[n][0].Spec.NodeName != n || byNode[n][0].Status.Phase != corev1.PodRunning {
					t.Errorf("pod for %s bound to %q, phase %s", n, byNode[n][0].Spec.NodeName, byNode[n][0].Status.Phase)
				}
				got = append(got, n)
			}
			if !reflect.DeepEqual(got, c.wantNodes) {
				t.Fatalf("pods on %v, want %v", got, c.wantNodes)
			}
			want := int32(len(c.wantNodes))
			st := ds.Status
			if st.DesiredNumberScheduled != want || st.CurrentNumberScheduled != want || st.NumberReady != want ||
				st.NumberAvailable != want || st.UpdatedNumberScheduled != want || st.NumberMisscheduled != 0 ||
				st.NumberUnavailable != 0 || st.ObservedGeneration != 1 {
				t.Errorf("status %+v", st)
			}
			events := s.EventsFor("DaemonSet", "kube-system", "agent")
			if len(events) != len(c.wantNodes) {
				t.Fatalf("want %d events, got %d", len(c.wantNodes), len(events))
			}
			for _, e := range events {
				name := strings.TrimPrefix(e.Message, "Created pod: ")
				if e.Reason != SuccessfulCreateReason || e.Source.Component != Name || s.Pods[cluster.Key("kube-system", name)] == nil {
					t.Errorf("event %s %q", e.Reason, e.Message)
				}
			}
		})
	}
}

func TestPodShape(t *testing.T) {
	for _, hostNetwork := range []bool{false, true} {
		s := controllertest.NewState()
		controllertest.AddNode(s, "a", "2", "4Gi", nil)
		ds := newDS(func(ds *appsv1.DaemonSet) {
			ds.Spec.Template.Spec.HostNetwork = hostNetwork
			// A user toleration with the same key/effect/operator is replaced.
			ds.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(60))}}
		})
		if err := admission.Create(s, ds); err != nil {
			t.Fatal(err)
		}
		if _, err := New().Sync(s); err != nil {
			t.Fatal(err)
		}
		pods := podsByNode(s, ds)["a"]
		if len(pods) != 1 {
			t.Fatalf("want one pod, got %d", len(pods))
		}
		p := pods[0]
		var tols []string
		for _, tol := range p.Spec.Tolerations {
			if tol.TolerationSeconds != nil || tol.Operator != corev1.TolerationOpExists {
				t.Errorf("toleration %+v has seconds or is not Exists", tol)
			}
			tols = append(tols, tol.Key+":"+string(tol.Effect))
		}
		want := []string{"node.kubernetes.io/not-ready:NoExecute", "node.kubernetes.io/unreachable:NoExecute",
			"node.kubernetes.io/disk-pressure:NoSchedule", "node.kubernetes.io/memory-pressure:NoSchedule",
			"node.kubernetes.io/pid-pressure:NoSchedule", "node.kubernetes.io/unschedulable:NoSchedule"}
		if hostNetwork {
			want = append(want, "node.kubernetes.io/network-unavailable:NoSchedule")
		}
		if !reflect.DeepEqual(tols, want) {
			t.Errorf("hostNetwork=%v tolerations %v, want %v", hostNetwork, tols, want)
		}
		terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		wantTerms := []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}
		if !reflect.DeepEqual(terms, wantTerms) {
			t.Errorf("affinity %+v", terms)
		}
		if p.Labels[RevisionHashLabel] != Hash(ds) || p.Labels[TemplateGenerationLabel] != "1" || p.Labels["k8s-app"] != "agent" {
			t.Errorf("labels %v", p.Labels)
		}
		if !strings.HasPrefix(p.Name, "agent-") || len(p.Name) != len("agent-")+5 || p.Spec.NodeName != "" {
			t.Errorf("pod %s nodeName %q: want generated name and no nodeName (the scheduler binds)", p.Name, p.Spec.NodeName)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestNodeChanges(t *testing.T) {
	s := controllertest.NewState()
	controllertest.AddNode(s, "a", "2", "4Gi", nil)
	ds := newDS(nil)
	if err := admission.Create(s, ds); err != nil {
		t.Fatal(err)
	}
	settle(t, s)

	// A new node gets its daemon pod.
	controllertest.AddNode(s, "b", "2", "4Gi", nil)
	settle(t, s)
	if n := len(podsByNode(s, ds)["b"]); n != 1 || ds.Status.DesiredNumberScheduled != 2 || ds.Status.NumberReady != 2 {
		t.Fatalf("new node: %d pods, status %+v", n, ds.Status)
	}

	// An untolerated NoSchedule taint keeps the pod but marks it misscheduled.
	s.Nodes["a"].Spec.Taints = []corev1.Taint{taint("dedicated", corev1.TaintEffectNoSchedule)}
	settle(t, s)
	if n := len(podsByNode(s, ds)["a"]); n != 1 || ds.Status.NumberMisscheduled != 1 || ds.Status.DesiredNumberScheduled != 1 {
		t.Fatalf("NoSchedule: %d pods, status %+v", n, ds.Status)
	}

	// An untolerated NoExecute taint evicts it.
	s.Nodes["a"].Spec.Taints = []corev1.Taint{taint("dedicated", corev1.TaintEffectNoExecute)}
	settle(t, s)
	if n := len(podsByNode(s, ds)["a"]); n != 0 || ds.Status.NumberMisscheduled != 0 || ds.Status.CurrentNumberScheduled != 1 {
		t.Fatalf("NoExecute: %d pods, status %+v", n, ds.Status)
	}
	last := s.EventsFor("DaemonSet", "kube-system", "agent")
	if e := last[len(last)-1]; e.Reason != SuccessfulDeleteReason || !strings.HasPrefix(e.Message, "Deleted pod: agent-") {
		t.Errorf("last event %s %q", e.Reason, e.Message)
	}

	// The node's own not-ready taint is tolerated: the pod stays.
	s.Nodes["b"].Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}}
	settle(t, s)
	if n := len(podsByNode(s, ds)["b"]); n != 1 {
		t.Fatalf("not-ready: %d pods", n)
	}
}

func TestRollingUpdate(t *testing.T) {
	cases := []struct {
		name           string
		maxUnavailable intstr.IntOrString
		maxSurge       intstr.IntOrString
		// wantFirst is how many pods exist right after the first controller pass.
		wantFirst   int
		wantDeleted int
	}{
		{name: "maxUnavailable 1", maxUnavailable: intstr.FromInt32(1), maxSurge: intstr.FromInt32(0), wantFirst: 3, wantDeleted: 1},
		{name: "maxUnavailable 50%", maxUnavailable: intstr.FromString("50%"), maxSurge: intstr.FromInt32(0), wantFirst: 2, wantDeleted: 2},
		{name: "maxSurge 1", maxUnavailable: intstr.FromInt32(0), maxSurge: intstr.FromInt32(1), wantFirst: 5, wantDeleted: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := controllertest.NewState()
			for _, n := range []string{"a", "b", "c", "d"} {
				controllertest.AddNode(s, n, "2", "4Gi", nil)
			}
			ds := newDS(func(ds *appsv1.DaemonSet) {
				ds.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &c.maxUnavailable, MaxSurge: &c.maxSurge}
			})
			if err := admission.Create(s, ds); err != nil {
				t.Fatal(err)
			}
			settle(t, s)
			oldHash := Hash(ds)

			updated := ds.DeepCopy()
			updated.Spec.Template.Spec.Containers[0].Image = "agent:2.0"
			if _, err := admission.Update(s, updated); err != nil {
				t.Fatal(err)
			}
			ds = s.DaemonSets["kube-system/agent"]
			if ds.Annotations[TemplateGenerationAnnotation] != "2" || ds.Generation != 2 {
				t.Fatalf("template generation %q, generation %d", ds.Annotations[TemplateGenerationAnnotation], ds.Generation)
			}
			// First pass: status only is stale, rolling update acts.
			c1 := New()
			if _, err := c1.Sync(s); err != nil {
				t.Fatal(err)
			}
			total := 0
			for _, pods := range podsByNode(s, ds) {
				total += len(pods)
			}
			if total != c.wantFirst {
				t.Fatalf("after the first pass %d pods, want %d", total, c.wantFirst)
			}
			settle(t, s)
			newHash := Hash(ds)
			if newHash == oldHash {
				t.Fatal("hash did not change with the template")
			}
			for n, pods := range podsByNode(s, ds) {
				if len(pods) != 1 || pods[0].Labels[RevisionHashLabel] != newHash || pods[0].Spec.Containers[0].Image != "agent:2.0" ||
					pods[0].Labels[TemplateGenerationLabel] != "2" {
					t.Errorf("node %s not updated: %d pods", n, len(pods))
				}
			}
			st := ds.Status
			if st.UpdatedNumberScheduled != 4 || st.NumberAvailable != 4 || st.ObservedGeneration != 2 {
				t.Errorf("status %+v", st)
			}
		})
	}
}

func TestOnDelete(t *testing.T) {
	s := controllertest.NewState()
	controllertest.AddNode(s, "a", "2", "4Gi", nil)
	controllertest.AddNode(s, "b", "2", "4Gi", nil)
	ds := newDS(func(ds *appsv1.DaemonSet) {
		ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	})
	if err := admission.Create(s, ds); err != nil {
		t.Fatal(err)
	}
	settle(t, s)
	updated := ds.DeepCopy()
	updated.Spec.Template.Spec.Containers[0].Image = "agent:2.0"
	if _, err := admission.Update(s, updated); err != nil {
		t.Fatal(err)
	}
	ds = s.DaemonSets["kube-system/agent"]
	settle(t, s)
	if ds.Status.UpdatedNumberScheduled != 0 || ds.Status.NumberAvailable != 2 {
		t.Fatalf("OnDelete replaced pods: %+v", ds.Status)
	}
	victim := podsByNode(s, ds)["a"][0]
	delete(s.Pods, cluster.Key(victim.Namespace, victim.Name))
	settle(t, s)
	if p := podsByNode(s, ds)["a"]; len(p) != 1 || p[0].Spec.Containers[0].Image != "agent:2.0" || ds.Status.UpdatedNumberScheduled != 1 {
		t.Fatalf("replacement not at the new revision: %+v", ds.Status)
	}
}

func TestAdoptsAndReleases(t *testing.T) {
	s := controllertest.NewState()
	controllertest.AddNode(s, "a", "2", "4Gi", nil)
	ds := newDS(nil)
	if err := admission.Create(s, ds); err != nil {
		t.Fatal(err)
	}
	settle(t, s)
	p := podsByNode(s, ds)["a"][0]
	p.Labels = map[string]string{"k8s-app": "other"}
	settle(t, s)
	if metav1.GetControllerOf(p) != nil {
		t.Fatal("pod no longer matching the selector was not released")
	}
	if n := len(podsByNode(s, ds)["a"]); n != 1 {
		t.Fatalf("want a replacement pod, got %d", n)
	}
}
