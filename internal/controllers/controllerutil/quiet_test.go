package controllerutil

import (
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
)

func TestQuiet(t *testing.T) {
	tests := []struct {
		name    string
		changed bool                                  // what the last pass reported
		then    func(s *cluster.State) *cluster.State // what happens before the next pass
		skip    bool
	}{
		{"nothing changed, nothing moved", false, func(s *cluster.State) *cluster.State { return s }, true},
		{"the last pass changed something", true, func(s *cluster.State) *cluster.State { return s }, false},
		{"a write since", false, func(s *cluster.State) *cluster.State { s.Bump(); return s }, false},
		{"the clock moved", false, func(s *cluster.State) *cluster.State { s.Now = s.Now.Add(time.Second); return s }, false},
		{"another state", false, func(s *cluster.State) *cluster.State { return cluster.New("", 1) }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := cluster.New("", 1)
			var q Quiet
			if q.Skip(s) {
				t.Fatal("a first pass is never skipped")
			}
			q.Done(s, tc.changed)
			if got := q.Skip(tc.then(s)); got != tc.skip {
				t.Fatalf("Skip = %v, want %v", got, tc.skip)
			}
		})
	}
}
