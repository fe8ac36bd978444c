package helper

import (
	"testing"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

func TestDefaultNormalizeScore(t *testing.T) {
	tests := []struct {
		name    string
		reverse bool
		in      []int64
		want    []int64
	}{
		{"all zero", false, []int64{0, 0}, []int64{0, 0}},
		{"all zero reversed", true, []int64{0, 0}, []int64{100, 100}},
		{"scaled", false, []int64{10, 5, 0}, []int64{100, 50, 0}},
		{"scaled reversed", true, []int64{3, 1, 0}, []int64{0, 67, 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := make(framework.NodeScoreList, len(tt.in))
			for i, s := range tt.in {
				l[i].Score = s
			}
			DefaultNormalizeScore(100, tt.reverse, l)
			for i := range l {
				if l[i].Score != tt.want[i] {
					t.Fatalf("score %d = %d, want %d", i, l[i].Score, tt.want[i])
				}
			}
		})
	}
}

func TestFitErrorMessage(t *testing.T) {
	un := func(r ...string) *framework.Status { return framework.NewStatus(framework.Unschedulable, r...) }
	tests := []struct {
		name string
		fe   FitError
		want string
	}{
		{
			name: "histogram sorted bytewise with absent nodes",
			fe: FitError{NumAllNodes: 13, NodeToStatus: framework.NodeToStatus{
				Statuses: map[string]*framework.Status{"a": un("Too many pods", "Insufficient cpu"), "b": un("Insufficient cpu")},
				Absent:   framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) [NodeAffinity]"),
			}, PostFilterMsg: "preemption: x"},
			want: "0/13 nodes are available: 1 Too many pods, 11 node(s) didn't satisfy plugin(s) [NodeAffinity], 2 Insufficient cpu. preemption: x",
		},
		{
			name: "shared status objects count once per node",
			fe: func() FitError {
				shared, other := un("Insufficient cpu", "Too many pods"), un("Insufficient cpu")
				return FitError{NumAllNodes: 5, NodeToStatus: framework.NodeToStatus{
					Statuses: map[string]*framework.Status{"a": shared, "b": shared, "c": shared, "d": other, "e": nil},
				}}
			}(),
			want: "0/5 nodes are available: 3 Too many pods, 4 Insufficient cpu.",
		},
		{
			name: "prefilter message replaces histogram",
			fe:   FitError{NumAllNodes: 2, PreFilterMsg: "pod has unbound immediate PersistentVolumeClaims", PostFilterMsg: "not found"},
			want: "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.fe.Error(); got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
