package kubelet

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/sim"
)

// bumper stands for the other controllers of a start-up: one write per
// instant, so every instant has a second kubelet round, as in a real run.
type bumper struct{ last time.Time }

func (b *bumper) Name() string { return "bumper" }

func (b *bumper) Sync(s *cluster.State) (bool, error) {
	if b.last.Equal(s.Now) {
		return false, nil
	}
	b.last = s.Now
	s.Bump()
	return true, nil
}

// BenchmarkStartup starts 4,000 pods of 20 images on 200 nodes, from bound
// to Ready (the kubelet's share of the 100k file, scaled down).
func BenchmarkStartup(b *testing.B) {
	b.Run("remembered", func(b *testing.B) { benchStartup(b) })
	b.Run("visited", func(b *testing.B) {
		rememberWaits = false
		defer func() { rememberWaits = true }()
		benchStartup(b)
	})
}

func benchStartup(b *testing.B) {
	for range b.N {
		b.StopTimer()
		s := controllertest.NewState()
		for i := range 200 {
			controllertest.AddNode(s, fmt.Sprintf("n%03d", i), "64", "256Gi", nil)
		}
		for i := range 4000 {
			boundPod(s, fmt.Sprintf("p%04d", i), fmt.Sprintf("n%03d", i%200), "10m", func(p *corev1.Pod) {
				p.Spec.Containers[0].Image = fmt.Sprintf("app-%d:1.0", i%20)
			})
		}
		ctrls := []sim.Controller{New(), &bumper{}}
		b.StartTimer()
		if err := sim.Settle(s, ctrls, time.Hour); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSecondRound is a kubelet round at an instant whose first round
// started 20,000 pods: every pod waits for its sandbox.
func BenchmarkSecondRound(b *testing.B) {
	for _, remember := range []bool{true, false} {
		b.Run(fmt.Sprintf("remember=%v", remember), func(b *testing.B) {
			rememberWaits = remember
			defer func() { rememberWaits = true }()
			s := controllertest.NewState()
			for i := range 500 {
				controllertest.AddNode(s, fmt.Sprintf("n%03d", i), "640", "2560Gi", nil)
			}
			for i := range 20000 {
				boundPod(s, fmt.Sprintf("p%05d", i), fmt.Sprintf("n%03d", i%500), "10m")
			}
			c := New()
			if _, err := c.Sync(s); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				s.Bump()
				if _, err := c.Sync(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
