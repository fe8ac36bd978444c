package scheduler

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func newState(kubeVersion string, nodes []*v1.Node, pods ...*v1.Pod) *cluster.State {
	s := cluster.New(kubeVersion, 42)
	for _, n := range nodes {
		s.Nodes[n.Name] = n
		s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, n.Name)
	}
	for _, p := range pods {
		s.Pods[cluster.Key(p.Namespace, p.Name)] = p
	}
	return s
}

func scheduledCondition(p *v1.Pod) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func taint(key, value string, effect v1.TaintEffect) v1.Taint {
	return v1.Taint{Key: key, Value: value, Effect: effect}
}

func labelled(p *v1.Pod, kv ...string) *v1.Pod {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Labels[kv[i]] = kv[i+1]
	}
	return p
}

func zoned(n *v1.Node, zone string) *v1.Node {
	return plugintest.WithLabels(n, v1.LabelTopologyZone, zone)
}

// messageCase is a verified upstream message (checked on the real scheduler) for a cluster.
type messageCase struct {
	name    string
	nodes   func() []*v1.Node
	pods    func() []*v1.Pod // bound pods
	pod     func() *v1.Pod   // the pod under test
	want    map[string]string
	wantSch bool // pod is scheduled
}

func TestVerifiedMessages(t *testing.T) {
	never := v1.PreemptNever
	cases := []messageCase{
		{
			name:  "S01 request larger than every node",
			nodes: func() []*v1.Node { return nodes3x2CPU() },
			pod:   func() *v1.Pod { return plugintest.SizedPod("p", "4", "") },
			want: map[string]string{
				"1.36": "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
				"1.34": "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
				"1.33": "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
			},
		},
		{
			name:  "S02 nodes used by equal-priority pods",
			nodes: func() []*v1.Node { return nodes3x2CPU() },
			pods: func() []*v1.Pod {
				return []*v1.Pod{
					plugintest.OnNode(plugintest.SizedPod("u1", "1500m", ""), "n1"),
					plugintest.OnNode(plugintest.SizedPod("u2", "1500m", ""), "n2"),
					plugintest.OnNode(plugintest.SizedPod("u3", "1500m", ""), "n3"),
				}
			},
			pod: func() *v1.Pod { return plugintest.SizedPod("p", "1", "") },
			want: map[string]string{
				"1.36": "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
				"1.33": "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
			},
		},
		{
			name: "S04 taint, cordon, selector, memory",
			nodes: func() []*v1.Node {
				n1 := plugintest.WithTaints(plugintest.WithLabels(plugintest.SizedNode("n1", "4", "8Gi", 110), "disk", "ssd"), taint("dedicated", "gpu", v1.TaintEffectNoSchedule))
				n2 := plugintest.WithLabels(plugintest.SizedNode("n2", "4", "8Gi", 110), "disk", "ssd")
				n2.Spec.Unschedulable = true
				n3 := plugintest.SizedNode("n3", "4", "8Gi", 110)
				n4 := plugintest.WithLabels(plugintest.SizedNode("n4", "4", "1Gi", 110), "disk", "ssd")
				return []*v1.Node{n1, n2, n3, n4}
			},
			pod: func() *v1.Pod {
				p := plugintest.SizedPod("p", "", "2Gi")
				p.Spec.NodeSelector = map[string]string{"disk": "ssd"}
				return p
			},
			want: map[string]string{
				"1.36": "0/4 nodes are available: 1 Insufficient memory, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable. no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
				"1.33": "0/4 nodes are available: 1 Insufficient memory, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable. preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling.",
			},
		},
		{
			name: "S05 host port and pod count",
			nodes: func() []*v1.Node {
				return []*v1.Node{plugintest.SizedNode("n1", "4", "8Gi", 110), plugintest.SizedNode("n2", "4", "8Gi", 1)}
			},
			pods: func() []*v1.Pod {
				return []*v1.Pod{plugintest.OnNode(withHostPort(plugintest.SizedPod("web", "", ""), 8080), "n1"), plugintest.OnNode(plugintest.SizedPod("other", "", ""), "n2")}
			},
			pod: func() *v1.Pod { return withHostPort(plugintest.SizedPod("p", "", ""), 8080) },
			want: map[string]string{
				"1.36": "0/2 nodes are available: 1 Too many pods, 1 node(s) didn't have free ports for the requested pod ports. no new claims to deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
				"1.33": "0/2 nodes are available: 1 Too many pods, 1 node(s) didn't have free ports for the requested pod ports. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
			},
		},
		{
			name: "S09 required anti-affinity on hostname",
			nodes: func() []*v1.Node {
				return []*v1.Node{plugintest.SizedNode("n1", "4", "8Gi", 110), plugintest.SizedNode("n2", "4", "8Gi", 110),
					plugintest.WithTaints(plugintest.SizedNode("n3", "4", "8Gi", 110), taint("k", "v", v1.TaintEffectNoExecute))}
			},
			pods: func() []*v1.Pod {
				return []*v1.Pod{plugintest.OnNode(labelled(plugintest.SizedPod("w1", "", ""), "app", "web"), "n1"), plugintest.OnNode(labelled(plugintest.SizedPod("w2", "", ""), "app", "web"), "n2")}
			},
			pod: func() *v1.Pod {
				p := labelled(plugintest.SizedPod("p", "", ""), "app", "web")
				p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{appTerm("web", v1.LabelHostname)}}}
				return p
			},
			want: map[string]string{
				"1.36": "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't match pod anti-affinity rules. no new claims to deallocate, preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.",
				"1.33": "0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.",
			},
		},
		{
			name: "S10 required affinity, no matching pod",
			nodes: func() []*v1.Node {
				return []*v1.Node{plugintest.SizedNode("n1", "4", "8Gi", 110), plugintest.SizedNode("n2", "4", "8Gi", 110)}
			},
			pod: func() *v1.Pod {
				p := labelled(plugintest.SizedPod("p", "", ""), "app", "web")
				p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{appTerm("db", v1.LabelHostname)}}}
				return p
			},
			want: map[string]string{
				"1.36": "0/2 nodes are available: 2 node(s) didn't match pod affinity rules. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
				"1.33": "0/2 nodes are available: 2 node(s) didn't match pod affinity rules. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
			},
		},
		{
			name: "S11 first pod of an affinity group",
			nodes: func() []*v1.Node {
				return []*v1.Node{plugintest.SizedNode("n1", "4", "8Gi", 110), plugintest.SizedNode("n2", "4", "8Gi", 110)}
			},
			pod: func() *v1.Pod {
				p := labelled(plugintest.SizedPod("p", "", ""), "app", "db")
				p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{appTerm("db", v1.LabelHostname)}}}
				return p
			},
			wantSch: true,
			want:    map[string]string{"1.36": "", "1.33": ""},
		},
		{
			name: "S12 existing pod's anti-affinity",
			nodes: func() []*v1.Node {
				return []*v1.Node{plugintest.SizedNode("n1", "4", "8Gi", 110), plugintest.WithTaints(plugintest.SizedNode("n2", "4", "8Gi", 110), taint("k", "v", v1.TaintEffectNoSchedule))}
			},
			pods: func() []*v1.Pod {
				e := plugintest.OnNode(plugintest.SizedPod("e", "", ""), "n1")
				e.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{appTerm("foo", v1.LabelHostname)}}}
				return []*v1.Pod{e}
			},
			pod: func() *v1.Pod { return labelled(plugintest.SizedPod("p", "", ""), "app", "foo") },
			want: map[string]string{
				"1.36": "0/2 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules, 1 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
				"1.33": "0/2 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules, 1 node(s) had untolerated taint {k: v}. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
			},
		},
		{
			name: "S13 zone spread DoNotSchedule",
			nodes: func() []*v1.Node {
				return []*v1.Node{zoned(plugintest.SizedNode("a1", "4", "8Gi", 110), "z1"), zoned(plugintest.SizedNode("a2", "4", "8Gi", 110), "z1"),
					plugintest.WithTaints(zoned(plugintest.SizedNode("b1", "4", "8Gi", 110), "z2"), taint("k", "v", v1.TaintEffectNoSchedule)),
					plugintest.SizedNode("nozone", "4", "8Gi", 110)}
			},
			pods: func() []*v1.Pod {
				return []*v1.Pod{plugintest.OnNode(labelled(plugintest.SizedPod("w1", "", ""), "app", "web"), "a1"), plugintest.OnNode(labelled(plugintest.SizedPod("w2", "", ""), "app", "web"), "a2")}
			},
			pod: func() *v1.Pod {
				p := labelled(plugintest.SizedPod("p", "", ""), "app", "web")
				p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
					WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
				return p
			},
			want: map[string]string{
				"1.36": "0/4 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label), 1 node(s) had untolerated taint(s), 2 node(s) didn't match pod topology spread constraints. no new claims to deallocate, preemption: 0/4 nodes are available: 2 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
				"1.33": "0/4 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label), 1 node(s) had untolerated taint {k: v}, 2 node(s) didn't match pod topology spread constraints. preemption: 0/4 nodes are available: 2 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
			},
		},
		{
			name:  "S16 no nodes",
			nodes: func() []*v1.Node { return nil },
			pod:   func() *v1.Pod { return plugintest.SizedPod("p", "", "") },
			want:  map[string]string{"1.36": "no nodes available to schedule pods", "1.33": "no nodes available to schedule pods"},
		},
		{
			name:  "S17 preemptionPolicy Never",
			nodes: func() []*v1.Node { return []*v1.Node{plugintest.SizedNode("n1", "2", "8Gi", 110)} },
			pods: func() []*v1.Pod {
				return []*v1.Pod{plugintest.OnNode(plugintest.SizedPod("e", "1500m", ""), "n1")}
			},
			pod: func() *v1.Pod {
				p := plugintest.WithPriority(plugintest.SizedPod("p", "1", ""), 100)
				p.Spec.PreemptionPolicy = &never
				return p
			},
			want: map[string]string{
				"1.36": "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never.",
				"1.33": "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.",
			},
		},
		{
			name: "S18 matchFields to a missing node",
			nodes: func() []*v1.Node {
				return []*v1.Node{plugintest.SizedNode("n1", "4", "8Gi", 110), plugintest.SizedNode("n2", "4", "8Gi", 110)}
			},
			pod: func() *v1.Pod {
				p := plugintest.SizedPod("p", "", "")
				p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
					NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n9"}}}}}}}}
				return p
			},
			want: map[string]string{
				"1.36": "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
				"1.33": "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
			},
		},
		{
			name: "S19 extended resource nobody has",
			nodes: func() []*v1.Node {
				return []*v1.Node{plugintest.SizedNode("n1", "4", "8Gi", 110), plugintest.SizedNode("n2", "4", "8Gi", 110)}
			},
			pod: func() *v1.Pod {
				p := plugintest.SizedPod("p", "", "")
				p.Spec.Containers[0].Resources.Requests["example.com/gpu"] = *resourceQty("1")
				return p
			},
			want: map[string]string{
				"1.36": "0/2 nodes are available: 2 Insufficient example.com/gpu. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
				"1.33": "0/2 nodes are available: 2 Insufficient example.com/gpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
			},
		},
		{
			name: "seed 000 graviton node group",
			nodes: func() []*v1.Node {
				var out []*v1.Node
				for _, n := range []string{"ip-10-42-10-1", "ip-10-42-11-2", "ip-10-42-12-3"} {
					out = append(out, plugintest.WithLabels(plugintest.SizedNode(n, "2", "4Gi", 17), v1.LabelArchStable, "amd64"))
				}
				arm := plugintest.WithLabels(plugintest.SizedNode("ip-10-42-10-138", "2", "4Gi", 17), v1.LabelArchStable, "arm64", "tainted", "yes")
				return append(out, plugintest.WithTaints(arm, taint("frontend", "true", v1.TaintEffectNoExecute)))
			},
			pod: func() *v1.Pod {
				p := plugintest.SizedPod("ui-659df48c56-z496x", "250m", "1Gi")
				p.Namespace = "ui"
				p.Spec.NodeSelector = map[string]string{v1.LabelArchStable: "arm64"}
				p.Spec.Tolerations = []v1.Toleration{
					{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr(300)},
					{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr(300)},
				}
				return p
			},
			want: map[string]string{
				"1.30": "0/4 nodes are available: 1 node(s) had untolerated taint {frontend: true}, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
				"1.36": "0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
			},
		},
	}
	for _, tc := range cases {
		for ver, want := range tc.want {
			t.Run(tc.name+"/"+ver, func(t *testing.T) {
				var bound []*v1.Pod
				if tc.pods != nil {
					bound = tc.pods()
				}
				pod := tc.pod()
				s := newState(ver, tc.nodes(), append(bound, pod)...)
				sc := New()
				if _, err := sc.Sync(s); err != nil {
					t.Fatal(err)
				}
				if tc.wantSch {
					if pod.Spec.NodeName == "" {
						t.Fatalf("not scheduled: %s", sc.LastDiagnosis(cluster.Key(pod.Namespace, pod.Name)).Message)
					}
					return
				}
				c := scheduledCondition(pod)
				if pod.Spec.NodeName != "" || c == nil {
					t.Fatalf("pod was scheduled to %q", pod.Spec.NodeName)
				}
				if c.Status != v1.ConditionFalse || c.Reason != v1.PodReasonUnschedulable || c.Message != want {
					t.Fatalf("condition %s/%s\n got  %q\n want %q", c.Status, c.Reason, c.Message, want)
				}
				ev := s.EventsFor("Pod", pod.Namespace, pod.Name)
				if len(ev) != 1 || ev[0].Reason != "FailedScheduling" || ev[0].Type != v1.EventTypeWarning || ev[0].Message != want || ev[0].Source.Component != "default-scheduler" {
					t.Fatalf("events %+v", ev)
				}
			})
		}
	}
}

func nodes3x2CPU() []*v1.Node {
	return []*v1.Node{plugintest.SizedNode("n1", "2", "8Gi", 110), plugintest.SizedNode("n2", "2", "8Gi", 110), plugintest.SizedNode("n3", "2", "8Gi", 110)}
}

func withHostPort(p *v1.Pod, port int32) *v1.Pod {
	p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: port, HostPort: port, Protocol: v1.ProtocolTCP}}
	return p
}

func appTerm(app, key string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, TopologyKey: key}
}

func ptr(v int64) *int64 { return &v }
