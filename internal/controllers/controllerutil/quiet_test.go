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
		anyTime bool                                  // and whether the clock mattered to it
		then    func(s *cluster.State) *cluster.State // what happens before the next pass
		skip    bool
	}{
		{"nothing changed, nothing moved", false, false, func(s *cluster.State) *cluster.State { return s }, true},
		{"the last pass changed something", true, false, func(s *cluster.State) *cluster.State { return s }, false},
		{"a write since", false, false, func(s *cluster.State) *cluster.State { s.Bump(); return s }, false},
		{"the clock moved", false, false, func(s *cluster.State) *cluster.State { s.Now = s.Now.Add(time.Second); return s }, false},
		{"another state", false, false, func(s *cluster.State) *cluster.State { return cluster.New("", 1) }, false},
		{"the clock moved, clock-free pass", false, true, func(s *cluster.State) *cluster.State { s.Now = s.Now.Add(time.Hour); return s }, true},
		{"a write since, clock-free pass", false, true, func(s *cluster.State) *cluster.State { s.Bump(); return s }, false},
		{"changed, clock-free pass", true, true, func(s *cluster.State) *cluster.State { return s }, false},
		{"another state, clock-free pass", false, true, func(s *cluster.State) *cluster.State { return cluster.New("", 1) }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := cluster.New("", 1)
			var q Quiet
			if q.Skip(s) {
				t.Fatal("a first pass is never skipped")
			}
			q.DoneAnyTime(s, tc.changed, tc.anyTime)
			if got := q.Skip(tc.then(s)); got != tc.skip {
				t.Fatalf("Skip = %v, want %v", got, tc.skip)
			}
		})
	}
}
