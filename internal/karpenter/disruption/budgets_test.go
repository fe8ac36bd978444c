package disruption

import (
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/pools"
)

func ptr[T any](v T) *T { return &v }

func TestAllowedByBudgets(t *testing.T) {
	// 2026-01-01 was a Thursday; times are UTC.
	at := func(h, m int) time.Time { return time.Date(2026, 1, 1, h, m, 0, 0, time.UTC) }
	nightly := karpv1.Budget{Nodes: "0", Schedule: ptr("0 0 * * *"), Duration: ptr(karpv1.Duration("2h"))}
	cases := []struct {
		name    string
		budgets []karpv1.Budget
		now     time.Time
		nodes   int
		reason  karpv1.DisruptionReason
		want    int
	}{
		{"no budget is unlimited", nil, at(12, 0), 5, karpv1.DisruptionReasonEmpty, math.MaxInt32},
		{"percent rounds up", []karpv1.Budget{{Nodes: "10%"}}, at(12, 0), 5, karpv1.DisruptionReasonEmpty, 1},
		{"smallest wins", []karpv1.Budget{{Nodes: "3"}, {Nodes: "50%"}}, at(12, 0), 19, karpv1.DisruptionReasonEmpty, 3},
		{"other reason ignored", []karpv1.Budget{{Nodes: "0", Reasons: []karpv1.DisruptionReason{karpv1.DisruptionReasonDrifted}}}, at(12, 0), 4,
			karpv1.DisruptionReasonUnderutilized, math.MaxInt32},
		{"listed reason applies", []karpv1.Budget{{Nodes: "0", Reasons: []karpv1.DisruptionReason{karpv1.DisruptionReasonDrifted}}}, at(12, 0), 4,
			karpv1.DisruptionReasonDrifted, 0},
		{"window open at its start", []karpv1.Budget{nightly}, at(0, 0), 4, karpv1.DisruptionReasonEmpty, 0},
		{"window open inside", []karpv1.Budget{nightly}, at(1, 59), 4, karpv1.DisruptionReasonEmpty, 0},
		{"window closed after duration", []karpv1.Budget{nightly}, at(2, 1), 4, karpv1.DisruptionReasonEmpty, math.MaxInt32},
		{"weekday schedule", []karpv1.Budget{{Nodes: "1", Schedule: ptr("0 9 * * mon-fri"), Duration: ptr(karpv1.Duration("8h"))}},
			at(10, 0), 4, karpv1.DisruptionReasonEmpty, 1},
		{"macro schedule", []karpv1.Budget{{Nodes: "2", Schedule: ptr("@daily"), Duration: ptr(karpv1.Duration("30m"))}},
			at(0, 10), 4, karpv1.DisruptionReasonEmpty, 2},
		{"invalid cron blocks", []karpv1.Budget{{Nodes: "5", Schedule: ptr("not a cron"), Duration: ptr(karpv1.Duration("1h"))}},
			at(0, 10), 4, karpv1.DisruptionReasonEmpty, 0},
	}
	for _, c := range cases {
		if got := allowedByBudgets(c.budgets, c.now, c.nodes, c.reason); got != c.want {
			t.Errorf("%s: allowed %d, want %d", c.name, got, c.want)
		}
	}
}

func TestBudgetChange(t *testing.T) {
	nightly := karpv1.Budget{Nodes: "0", Schedule: ptr("0 0 * * *"), Duration: ptr(karpv1.Duration("2h"))}
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	if got, want := budgetChange(nightly, now), time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("inside the window: next change %s, want its end %s", got, want)
	}
	now = time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)
	if got, want := budgetChange(nightly, now), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("outside the window: next change %s, want the next start %s", got, want)
	}
}

func TestBudgetsCountDisrupting(t *testing.T) {
	s := fixture(4, []karpv1.Budget{{Nodes: "2"}}, "0s")
	s.Nodes["ip-0"].Spec.Taints = []corev1.Taint{{Key: "karpenter.sh/disrupted", Effect: corev1.TaintEffectNoSchedule}}
	s.Nodes["ip-1"].Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}
	if got := budgets(s, pools.List(s), karpv1.DisruptionReasonEmpty)["default"]; got != 0 {
		t.Fatalf("allowed %d with two of four nodes disrupting under a budget of 2", got)
	}
	s.Nodes["ip-1"].Status.Conditions = nil
	if got := budgets(s, pools.List(s), karpv1.DisruptionReasonEmpty)["default"]; got != 1 {
		t.Fatalf("allowed %d, want 1", got)
	}
	_ = metav1.Now
}
