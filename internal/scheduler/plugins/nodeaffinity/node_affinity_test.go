package nodeaffinity

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func required(terms ...v1.NodeSelectorTerm) *v1.Affinity {
	return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
}

func nameIn(names ...string) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: names}}}
}

func labelIn(key string, values ...string) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}}
}

func TestPreFilterAndFilter(t *testing.T) {
	tests := []struct {
		name         string
		nodeSelector map[string]string
		affinity     *v1.Affinity
		nodeLabels   []string
		wantPreCode  framework.Code
		wantNames    sets.Set[string]
		wantFilter   framework.Code
	}{
		{name: "nothing to do", wantPreCode: framework.Skip, wantFilter: framework.Success},
		{name: "selector matches", nodeSelector: map[string]string{"kubernetes.io/arch": "arm64"}, nodeLabels: []string{"kubernetes.io/arch", "arm64"}, wantFilter: framework.Success},
		{name: "selector mismatch", nodeSelector: map[string]string{"kubernetes.io/arch": "arm64"}, nodeLabels: []string{"kubernetes.io/arch", "amd64"}, wantFilter: framework.UnschedulableAndUnresolvable},
		{name: "affinity In matches", affinity: required(labelIn("disk", "ssd")), nodeLabels: []string{"disk", "ssd"}, wantFilter: framework.Success},
		{name: "affinity terms ORed", affinity: required(labelIn("disk", "hdd"), labelIn("zone", "z1")), nodeLabels: []string{"zone", "z1"}, wantFilter: framework.Success},
		{name: "selector AND affinity", nodeSelector: map[string]string{"a": "b"}, affinity: required(labelIn("disk", "ssd")), nodeLabels: []string{"disk", "ssd"}, wantFilter: framework.UnschedulableAndUnresolvable},
		{name: "matchFields narrows", affinity: required(nameIn("n1"), nameIn("n9")), wantNames: sets.New("n1", "n9"), wantFilter: framework.Success},
		{name: "matchFields with two values never matches in Filter", affinity: required(nameIn("n1", "n9")), wantNames: sets.New("n1", "n9"), wantFilter: framework.UnschedulableAndUnresolvable},
		{name: "matchFields union over terms", affinity: required(nameIn("n2"), nameIn("n3")), wantNames: sets.New("n2", "n3"), wantFilter: framework.UnschedulableAndUnresolvable},
		{name: "term without matchFields allows all", affinity: required(nameIn("n2"), labelIn("disk", "ssd")), nodeLabels: []string{"disk", "ssd"}, wantFilter: framework.Success},
		{name: "conflicting matchFields", affinity: required(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n1"}},
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n2"}},
		}}), wantPreCode: framework.UnschedulableAndUnresolvable, wantFilter: framework.UnschedulableAndUnresolvable},
	}
	for _, tt := range tests {
		for _, tabled := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/tabled=%v", tt.name, tabled), func(t *testing.T) {
				p := plugintest.SizedPod("p", "", "")
				p.Spec.NodeSelector = tt.nodeSelector
				p.Spec.Affinity = tt.affinity
				pi := framework.NewPodInfo(p, true)
				node := plugintest.WithLabels(plugintest.SizedNode("n1", "1", "1Gi", 10), tt.nodeLabels...)
				ni := framework.NewNodeInfo(node)
				var h framework.Handle
				if tabled {
					hh := plugintest.NewHandle([]*v1.Node{node}, nil)
					h, ni = hh, hh.NodeInfos[0]
				}
				pl := New(h).(*NodeAffinity)
				cs := framework.NewCycleState()
				res, st := pl.PreFilter(cs, pi, []*framework.NodeInfo{ni})
				if st.Code() != tt.wantPreCode {
					t.Fatalf("PreFilter code %v, want %v", st.Code(), tt.wantPreCode)
				}
				if st.Code() == framework.UnschedulableAndUnresolvable {
					if st.Message() != ErrReasonConflict {
						t.Fatalf("PreFilter message %q", st.Message())
					}
					return
				}
				if tt.wantNames == nil && !res.AllNodes() || tt.wantNames != nil && (res.AllNodes() || !sets.KeySet(res.NodeNames).Equal(tt.wantNames)) {
					t.Fatalf("PreFilterResult %v, want %v", res, tt.wantNames)
				}
				fs := pl.Filter(cs, pi, ni)
				if fs.Code() != tt.wantFilter {
					t.Fatalf("Filter code %v, want %v", fs.Code(), tt.wantFilter)
				}
				if !fs.IsSuccess() && fs.Message() != ErrReasonPod {
					t.Fatalf("Filter message %q", fs.Message())
				}
			})
		}
	}
}

func TestScore(t *testing.T) {
	pref := func(w int32, key, val string) v1.PreferredSchedulingTerm {
		return v1.PreferredSchedulingTerm{Weight: w, Preference: labelIn(key, val)}
	}
	tests := []struct {
		name      string
		preferred []v1.PreferredSchedulingTerm
		labels    [][]string
		wantSkip  bool
		want      []int64
	}{
		{name: "no preferences skips", wantSkip: true, labels: [][]string{nil}},
		{name: "weights summed and scaled", preferred: []v1.PreferredSchedulingTerm{pref(10, "disk", "ssd"), pref(30, "zone", "z1")},
			labels: [][]string{{"disk", "ssd"}, {"zone", "z1"}, {"disk", "ssd", "zone", "z1"}, nil}, want: []int64{25, 75, 100, 0}},
		{name: "nothing matches", preferred: []v1.PreferredSchedulingTerm{pref(10, "disk", "ssd")}, labels: [][]string{nil, nil}, want: []int64{0, 0}},
	}
	for _, tt := range tests {
		for _, tabled := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/tabled=%v", tt.name, tabled), func(t *testing.T) {
				p := plugintest.SizedPod("p", "", "")
				if tt.preferred != nil {
					p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: tt.preferred}}
				}
				pi := framework.NewPodInfo(p, true)
				var nodes []*v1.Node
				for i, l := range tt.labels {
					nodes = append(nodes, plugintest.WithLabels(plugintest.SizedNode(string(rune('a'+i)), "1", "1Gi", 10), l...))
				}
				hh := plugintest.NewHandle(nodes, nil)
				nis := hh.NodeInfos
				var h framework.Handle
				if tabled {
					h = hh
				}
				pl := New(h).(*NodeAffinity)
				cs := framework.NewCycleState()
				st := pl.PreScore(cs, pi, nis)
				if st.IsSkip() != tt.wantSkip {
					t.Fatalf("skip = %v", st.IsSkip())
				}
				if tt.wantSkip {
					return
				}
				scores := make(framework.NodeScoreList, len(nis))
				for i, ni := range nis {
					s, _ := pl.Score(cs, pi, ni)
					scores[i] = framework.NodeScore{Name: ni.Name(), Score: s}
				}
				pl.NormalizeScore(cs, pi, scores)
				for i := range scores {
					if scores[i].Score != tt.want[i] {
						t.Fatalf("node %d: %d, want %d", i, scores[i].Score, tt.want[i])
					}
				}
			})
		}
	}
}
