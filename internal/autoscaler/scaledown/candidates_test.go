package scaledown

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/autoscaler/config"
)

func node(name string, cpu int64) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(8<<30, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	return &corev1.Node{
		TypeMeta:   metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity.DeepCopy(),
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

// pod is a running pod on nodeName requesting milliCPU, owned by a
// ReplicaSet unless kind says otherwise ("" = no owner).
func pod(name, nodeName string, milliCPU int64, kind string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	yes := true
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: *resource.NewMilliQuantity(milliCPU, resource.DecimalSI)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if kind != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: "owner-" + name,
			UID: types.UID("owner-" + name), Controller: &yes}}
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func annotate(k, v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}

func inKubeSystem(p *corev1.Pod) { p.Namespace = metav1.NamespaceSystem }

func withVolume(v corev1.VolumeSource) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "data", VolumeSource: v})
	}
}

func pdb(app string, allowed int32, ns string) *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "pdb-" + app, Namespace: ns},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
}

// TestCandidates: node "a" (4 cpu) holds the pod under test; node "b"
// (4 cpu, busy at 3 cpu and in no group) has room for one 1-cpu pod.
func TestCandidates(t *testing.T) {
	busy := pod("busy", "b", 3000, "ReplicaSet")
	for _, tc := range []struct {
		name   string
		pods   []*corev1.Pod
		pdbs   []*policyv1.PodDisruptionBudget
		opts   func(*config.Options)
		target int
		min    int
		// want is "candidate" (with the moved pods' count) or the
		// unremovable reason (with the blocking pod's reason).
		want string
	}{
		{name: "empty node", want: "candidate 0"},
		{name: "replicated pod moves", pods: []*corev1.Pod{pod("web", "a", 500, "ReplicaSet")}, want: "candidate 1"},
		{name: "over the threshold", pods: []*corev1.Pod{pod("web", "a", 2100, "ReplicaSet")}, want: "NotUnderutilized"},
		// At the threshold a node is underutilized (CA: above it is not);
		// the 2-cpu pod then finds no room on b, where busy takes 3 of 4 cpus.
		{name: "at the threshold", pods: []*corev1.Pod{pod("web", "a", 2000, "ReplicaSet")}, want: "NoPlaceToMovePods"},
		{name: "at the threshold, safe-to-evict false", pods: []*corev1.Pod{pod("web", "a", 2000, "ReplicaSet", annotate(AnnotationSafeToEvict, "false"))},
			want: "BlockedByPod NotSafeToEvictAnnotation"},
		{name: "threshold flag", pods: []*corev1.Pod{pod("web", "a", 1000, "ReplicaSet")},
			opts: func(o *config.Options) { o.ScaleDownUtilizationThreshold = 0.2 }, want: "NotUnderutilized"},
		{name: "daemonset pods count toward utilization", pods: []*corev1.Pod{pod("ds", "a", 2500, "DaemonSet")}, want: "NotUnderutilized"},
		{name: "daemonset pods ignored with the flag", pods: []*corev1.Pod{pod("ds", "a", 2500, "DaemonSet")},
			opts: func(o *config.Options) { o.IgnoreDaemonSetsUtilization = true }, want: "candidate 0"},
		{name: "no room elsewhere", pods: []*corev1.Pod{pod("web", "a", 1500, "ReplicaSet")}, want: "NoPlaceToMovePods"},
		{name: "pods already moved count", pods: []*corev1.Pod{pod("w1", "a", 600, "ReplicaSet"), pod("w2", "a", 600, "ReplicaSet")},
			want: "NoPlaceToMovePods"},
		{name: "unreplicated pod", pods: []*corev1.Pod{pod("bare", "a", 100, "")}, want: "BlockedByPod NotReplicated"},
		{name: "custom controller", pods: []*corev1.Pod{pod("custom", "a", 100, "Rollout")}, want: "BlockedByPod NotReplicated"},
		{name: "custom controller allowed", pods: []*corev1.Pod{pod("custom", "a", 100, "Rollout")},
			opts: func(o *config.Options) { o.SkipNodesWithCustomControllerPods = false }, want: "candidate 1"},
		{name: "safe-to-evict false", pods: []*corev1.Pod{pod("web", "a", 100, "ReplicaSet", annotate(AnnotationSafeToEvict, "false"))},
			want: "BlockedByPod NotSafeToEvictAnnotation"},
		{name: "safe-to-evict true overrides no controller", pods: []*corev1.Pod{pod("bare", "a", 100, "", annotate(AnnotationSafeToEvict, "true"))},
			want: "candidate 1"},
		{name: "kube-system pod without pdb", pods: []*corev1.Pod{pod("dns", "a", 100, "ReplicaSet", inKubeSystem)},
			want: "BlockedByPod UnmovableKubeSystemPod"},
		{name: "kube-system pod with pdb", pods: []*corev1.Pod{pod("dns", "a", 100, "ReplicaSet", inKubeSystem)},
			pdbs: []*policyv1.PodDisruptionBudget{pdb("dns", 1, metav1.NamespaceSystem)}, want: "candidate 1"},
		{name: "kube-system pod allowed by flag", pods: []*corev1.Pod{pod("dns", "a", 100, "ReplicaSet", inKubeSystem)},
			opts: func(o *config.Options) { o.SkipNodesWithSystemPods = false }, want: "candidate 1"},
		{name: "pdb without disruptions", pods: []*corev1.Pod{pod("web", "a", 100, "ReplicaSet")},
			pdbs: []*policyv1.PodDisruptionBudget{pdb("web", 0, "default")}, want: "BlockedByPod NotEnoughPdb"},
		{name: "pdb in another namespace", pods: []*corev1.Pod{pod("web", "a", 100, "ReplicaSet")},
			pdbs: []*policyv1.PodDisruptionBudget{pdb("web", 0, "other")}, want: "candidate 1"},
		{name: "emptyDir", pods: []*corev1.Pod{pod("web", "a", 100, "ReplicaSet", withVolume(corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}))},
			want: "BlockedByPod LocalStorageRequested"},
		{name: "emptyDir in memory", pods: []*corev1.Pod{pod("web", "a", 100, "ReplicaSet", withVolume(corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}))}, want: "candidate 1"},
		{name: "hostPath", pods: []*corev1.Pod{pod("web", "a", 100, "ReplicaSet", withVolume(corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}))},
			want: "BlockedByPod LocalStorageRequested"},
		{name: "local volume named safe", pods: []*corev1.Pod{pod("web", "a", 100, "ReplicaSet",
			withVolume(corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}), annotate(AnnotationSafeToEvictLocalVolumes, "data"))},
			want: "candidate 1"},
		{name: "local storage allowed by flag", pods: []*corev1.Pod{pod("web", "a", 100, "ReplicaSet", withVolume(corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}))},
			opts: func(o *config.Options) { o.SkipNodesWithLocalStorage = false }, want: "candidate 1"},
		{name: "mirror pod neither moves nor blocks", pods: []*corev1.Pod{pod("static", "a", 100, "", annotate("kubernetes.io/config.mirror", "x"))},
			want: "candidate 0"},
		{name: "min size", target: 1, min: 1, want: "NodeGroupMinSizeReached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := config.Defaults()
			if tc.opts != nil {
				tc.opts(&o)
			}
			target := tc.target
			if target == 0 {
				target = 2
			}
			a := node("a", 4)
			in := Input{Nodes: []*corev1.Node{a, node("b", 4)}, Pods: append([]*corev1.Pod{busy}, tc.pods...), PDBs: tc.pdbs,
				Groups: []Group{{Name: "ng", MinSize: tc.min, Target: target, Nodes: []string{"a"}}}, Options: o}
			cands, stay, err := Candidates(in)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			switch {
			case len(cands) == 1:
				got = fmt.Sprintf("candidate %d", len(cands[0].PodsToMove))
				for _, d := range cands[0].Destinations {
					if d != "b" {
						t.Errorf("moved to %s, want b", d)
					}
				}
			case len(stay) == 1:
				got = stay[0].Reason
				if stay[0].Blocking != nil {
					got += " " + stay[0].Blocking.Reason
				}
			default:
				t.Fatalf("candidates %v, unremovable %v", cands, stay)
			}
			if got != tc.want {
				t.Fatalf("%s, want %s", got, tc.want)
			}
		})
	}
}

// TestCandidatesMinSizeCountsTaken: of three empty nodes in a group of
// target 3 and min size 1, two go and the third stays.
func TestCandidatesMinSizeCountsTaken(t *testing.T) {
	in := Input{Nodes: []*corev1.Node{node("a", 2), node("b", 2), node("c", 2)},
		Groups:  []Group{{Name: "ng", MinSize: 1, Target: 3, Nodes: []string{"c", "a", "b"}}},
		Options: config.Defaults()}
	cands, stay, err := Candidates(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 2 || cands[0].Node != "a" || cands[1].Node != "b" {
		t.Fatalf("candidates %+v, want a and b", cands)
	}
	if len(stay) != 1 || stay[0].Node != "c" || stay[0].Reason != "NodeGroupMinSizeReached" {
		t.Fatalf("unremovable %+v, want c at min size", stay)
	}
}

// TestCandidatesMovedPodsNotOntoRemoved: a pod from a never lands on b once
// b is itself a candidate.
func TestCandidatesMovedPodsNotOntoRemoved(t *testing.T) {
	in := Input{Nodes: []*corev1.Node{node("a", 4), node("b", 4)},
		Pods:    []*corev1.Pod{pod("w1", "a", 500, "ReplicaSet"), pod("w2", "b", 500, "ReplicaSet")},
		Groups:  []Group{{Name: "ng", Target: 2, Nodes: []string{"a", "b"}}},
		Options: config.Defaults()}
	cands, stay, err := Candidates(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 1 || cands[0].Node != "a" || cands[0].Destinations[0] != "b" {
		t.Fatalf("candidates %+v", cands)
	}
	if len(stay) != 1 || stay[0].Node != "b" || stay[0].Reason != "NoPlaceToMovePods" {
		t.Fatalf("unremovable %+v", stay)
	}
}

func TestUtilization(t *testing.T) {
	n := node("a", 4)
	pods := []*corev1.Pod{pod("web", "a", 1000, "ReplicaSet"), pod("ds", "a", 1000, "DaemonSet"),
		pod("static", "a", 1000, "", annotate("kubernetes.io/config.mirror", "x"))}
	for _, tc := range []struct {
		name string
		opts func(*config.Options)
		want float64
	}{
		{name: "all count", want: 0.75},
		{name: "without daemonsets", opts: func(o *config.Options) { o.IgnoreDaemonSetsUtilization = true }, want: 0.5},
		{name: "without mirror pods", opts: func(o *config.Options) { o.IgnoreMirrorPodsUtilization = true }, want: 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := config.Defaults()
			if tc.opts != nil {
				tc.opts(&o)
			}
			if got := Utilization(n, pods, o); got != tc.want {
				t.Fatalf("utilization %v, want %v", got, tc.want)
			}
		})
	}
}
