package scaledown

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/berth-sim/berth/internal/autoscaler/config"
)

// Unneeded follows cluster-autoscaler's planner over one loop; each case
// is a class of difference the genuine comparison found
// (ca-conformance/README.md, "Scale-down").
func TestUnneeded(t *testing.T) {
	withLabel := func(app string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Labels["app"] = app }
	}
	for _, tc := range []struct {
		name      string
		nodes     []*corev1.Node
		pods      []*corev1.Pod
		pdbs      []*policyv1.PodDisruptionBudget
		group     Group
		threshold float64
		// want is "node:verdict" by node in name order, verdict
		// "unneeded" or the reason (with the blocking pod's reason).
		want string
	}{
		{
			// a's small pod fits b, its large one nowhere: a stays and
			// b keeps its room for c's pod.
			name:  "a node that stays leaves no placement behind",
			nodes: []*corev1.Node{node("a", 8), node("b", 4), node("c", 4)},
			pods: []*corev1.Pod{pod("x", "a", 800, "ReplicaSet"), pod("y", "a", 7000, "ReplicaSet"),
				pod("busy", "b", 3000, "ReplicaSet"), pod("z", "c", 800, "ReplicaSet")},
			group: Group{Name: "ng", Target: 2, Nodes: []string{"a", "c"}}, threshold: 1,
			want: "a:NoPlaceToMovePods c:unneeded",
		},
		{
			// a's pod goes to b; removing b then moves it again, with
			// b's own, and c has room for one only.
			name:  "pods moved in by an earlier node move again",
			nodes: []*corev1.Node{node("a", 4), node("b", 4), node("c", 4)},
			pods: []*corev1.Pod{pod("x", "a", 1000, "ReplicaSet"), pod("y", "b", 1000, "ReplicaSet"),
				pod("busy", "c", 2500, "ReplicaSet")},
			group: Group{Name: "ng", Target: 2, Nodes: []string{"a", "b"}}, threshold: 0.5,
			want: "a:unneeded b:NoPlaceToMovePods",
		},
		{
			name:  "a PDB's disruptions are spent node by node",
			nodes: []*corev1.Node{node("a", 4), node("b", 4), node("c", 4)},
			pods:  []*corev1.Pod{pod("x", "a", 100, "ReplicaSet", withLabel("web")), pod("y", "b", 100, "ReplicaSet", withLabel("web"))},
			pdbs:  []*policyv1.PodDisruptionBudget{pdb("web", 1, "default")},
			group: Group{Name: "ng", Target: 2, Nodes: []string{"a", "b"}}, threshold: 0.5,
			want: "a:unneeded b:BlockedByPod/NotEnoughPdb",
		},
		{
			name:  "safe-to-evict true skips the PDB",
			nodes: []*corev1.Node{node("a", 4), node("c", 4)},
			pods:  []*corev1.Pod{pod("x", "a", 100, "ReplicaSet", withLabel("web"), annotate(AnnotationSafeToEvict, "true"))},
			pdbs:  []*policyv1.PodDisruptionBudget{pdb("web", 0, "default")},
			group: Group{Name: "ng", Target: 1, Nodes: []string{"a"}}, threshold: 0.5,
			want: "a:unneeded",
		},
		{
			name:  "not replicated is checked before safe-to-evict false",
			nodes: []*corev1.Node{node("a", 4), node("c", 4)},
			pods:  []*corev1.Pod{pod("x", "a", 100, "", annotate(AnnotationSafeToEvict, "false"))},
			group: Group{Name: "ng", Target: 1, Nodes: []string{"a"}}, threshold: 0.5,
			want: "a:BlockedByPod/NotReplicated",
		},
		{
			name:  "at the threshold is underutilized",
			nodes: []*corev1.Node{node("a", 4), node("c", 4)},
			pods:  []*corev1.Pod{pod("x", "a", 2000, "ReplicaSet")},
			group: Group{Name: "ng", Target: 1, Nodes: []string{"a"}}, threshold: 0.5,
			want: "a:unneeded",
		},
		{
			// Only Candidates applies the minimum, and a group at it is
			// not looked at.
			name:  "a group at its minimum is left out",
			nodes: []*corev1.Node{node("a", 4), node("c", 4)},
			group: Group{Name: "ng", MinSize: 1, Target: 1, Nodes: []string{"a"}}, threshold: 0.5,
			want: "",
		},
		{
			name:  "the minimum is not counted against the nodes found",
			nodes: []*corev1.Node{node("a", 4), node("b", 4), node("c", 4)},
			group: Group{Name: "ng", MinSize: 1, Target: 2, Nodes: []string{"a", "b"}}, threshold: 0.5,
			want: "a:unneeded b:unneeded",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := config.Defaults()
			o.ScaleDownUtilizationThreshold = tc.threshold
			in := Input{Nodes: tc.nodes, Pods: tc.pods, PDBs: tc.pdbs, Groups: []Group{tc.group}, Options: o}
			cands, stay, err := Unneeded(in)
			if err != nil {
				t.Fatal(err)
			}
			verdict := map[string]string{}
			for _, c := range cands {
				verdict[c.Node] = "unneeded"
			}
			for _, u := range stay {
				v := u.Reason
				if u.Blocking != nil {
					v += "/" + u.Blocking.Reason
				}
				verdict[u.Node] = v
			}
			var got []string
			for _, n := range tc.nodes {
				if v, ok := verdict[n.Name]; ok {
					got = append(got, n.Name+":"+v)
				}
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Fatalf("got %q, want %q", g, tc.want)
			}
		})
	}
}

// TestCandidatesMinSizeAfterUnneeded: Candidates keeps the first unneeded
// nodes the minimum allows and names the rest NodeGroupMinSizeReached.
func TestCandidatesMinSizeAfterUnneeded(t *testing.T) {
	in := Input{Nodes: []*corev1.Node{node("a", 4), node("b", 4), node("c", 4)},
		Groups:  []Group{{Name: "ng", MinSize: 1, Target: 2, Nodes: []string{"a", "b"}}},
		Options: config.Defaults()}
	cands, stay, err := Candidates(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 1 || cands[0].Node != "a" || len(stay) != 1 || stay[0].Node != "b" || stay[0].Reason != "NodeGroupMinSizeReached" {
		t.Fatalf("candidates %+v, unremovable %+v", cands, stay)
	}
}
