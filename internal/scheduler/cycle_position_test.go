package scheduler

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// TestFailedCyclesByPosition: a scheduler that keeps no scores records
// failed cycles' rejections by snapshot position; the messages and, read
// through LastDiagnosis, every failed pod's per-node statuses are those of
// a scheduler that records them by name.
func TestFailedCyclesByPosition(t *testing.T) {
	run := func(record bool) (string, int) {
		s := preemptionScenario()
		sc := New()
		sc.RecordScores = record
		sc.PercentageOfNodesToScore = 100
		if _, err := sc.Sync(s); err != nil {
			t.Fatal(err)
		}
		byPos := 0
		for _, d := range sc.diagnoses {
			if d.NodeToStatus.ByPosition != nil {
				byPos++
			}
		}
		// Successful attempts keep their statuses only with scores.
		var b strings.Builder
		keep := false
		for _, line := range strings.SplitAfter(diagnosisText(sc, s), "\n") {
			if !strings.HasPrefix(line, "  ") {
				keep = strings.Contains(line, `-> ""`)
			}
			if keep {
				b.WriteString(line)
			}
		}
		for _, key := range cluster.SortedKeys(s.Pods) {
			p := s.Pods[key]
			fmt.Fprintf(&b, "%s on %q nominated %q\n", key, p.Spec.NodeName, p.Status.NominatedNodeName)
		}
		return b.String(), byPos
	}
	want, _ := run(true)
	got, byPos := run(false)
	if got != want {
		t.Errorf("statuses by position changed the failed diagnoses:\n got %s\nwant %s", got, want)
	}
	if byPos == 0 || !strings.Contains(want, "Insufficient cpu") || !strings.Contains(want, `nominated "n`) {
		t.Errorf("no failed cycle kept its statuses by position (%d), or none was short of cpu:\n%s", byPos, want)
	}
}

// preemptionScenario: classScenario's kinds of nodes, half of them holding
// a low-priority pod, and pending pods of three priorities asking for more
// cpu than is free, so that cycles fail on taints, cordons, selectors and
// cpu alike and some preempt.
func preemptionScenario() *cluster.State {
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := 0; i < 24; i++ {
		n := plugintest.SizedNode(fmt.Sprintf("n%02d", i), "2", "4Gi", 110)
		n.Labels[v1.LabelHostname] = n.Name
		n.Labels[v1.LabelTopologyZone] = []string{"a", "b", "c"}[i%3]
		switch i % 4 {
		case 1:
			n.Spec.Taints = []v1.Taint{taint("gpu", "true", v1.TaintEffectNoSchedule)}
		case 2:
			n.Spec.Unschedulable = i%8 == 2
		}
		nodes = append(nodes, n)
		if i%2 == 0 {
			p := plugintest.OnNode(plugintest.WithPriority(plugintest.SizedPod(fmt.Sprintf("low%02d", i), "1", "1Gi"), int32(i%3)), n.Name)
			p.UID = types.UID(p.Name)
			pods = append(pods, p)
		}
	}
	for i := 0; i < 30; i++ {
		p := plugintest.WithPriority(plugintest.SizedPod(fmt.Sprintf("p%02d", i), "1500m", "1Gi"), []int32{0, 10, 100}[i%3])
		p.UID = types.UID(p.Name)
		if i%5 == 1 {
			p.Spec.NodeSelector = map[string]string{v1.LabelTopologyZone: "b"}
		}
		if i%4 == 2 {
			p.Spec.Tolerations = []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpExists}}
		}
		pods = append(pods, p)
	}
	return newState("1.36", nodes, pods...)
}
