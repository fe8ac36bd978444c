package app

import (
	"reflect"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
)

// The idle `advance` (docs/state.md#idle-advance): a state saved right
// after a pass of every controller changed nothing records so
// (cluster.Settled), and `advance d` over such a state with no timer due
// and no clock-driven change by the end only moves the clock: it reads and
// writes the state's head, not its objects.

// quietUntil is the first instant after s.Now at which a pass could change
// the settled state s with no timer due, other than by the kubelets'
// renewals (false: none). Controllers keep the timer contract
// (internal/sim), but for these:
//   - the kubelet renews leases and posts heartbeats on a grid of the
//     clock without timers (kubelet.NextHeartbeat, recorded apart: an
//     advance past it runs only the renewals, kubelet.Beat);
//   - Karpenter's controllers, cluster-autoscaler and Fargate keep
//     deadlines in their memory (deduplication windows, nominations,
//     unavailable offerings, backoffs) that they prune as the clock
//     passes; their timers have not been checked against that, so a state
//     where any of them has objects or memory is never idle (s.Now).
func quietUntil(s *cluster.State) (time.Time, bool) {
	if usesUnaudited(s) {
		return s.Now, true
	}
	if t, ok := kubelet.NextHeartbeat(s); ok && !t.After(s.Now) {
		return s.Now, true // leases to create or remove: a pass's work
	}
	return time.Time{}, false
}

// usesUnaudited reports whether the state gives Karpenter,
// cluster-autoscaler or Fargate anything to look at. Node groups alone do
// not: the ASGs act only on launches and removals cluster-autoscaler
// started (its memory), and cluster-autoscaler's first loop fills it.
func usesUnaudited(s *cluster.State) bool {
	karpenter := len(s.NodePools) + len(s.NodeClaims) + len(s.EC2NodeClasses) + len(s.Provisioners) + len(s.AWSNodeTemplates)
	fargate := len(s.FargateProfiles) + len(s.Fargate.Pods)
	return karpenter > 0 || !reflect.ValueOf(s.Karpenter).IsZero() ||
		!reflect.ValueOf(s.Autoscaler).IsZero() ||
		fargate > 0
}

// advanceIdle moves a head's clock to end and saves it, when the state is
// recorded settled and nothing is due by then but, perhaps, the kubelets'
// renewals (then it reads the nodes and leases too, renews, and saves those
// that changed); false when the controllers must run.
func (a *App) advanceIdle(d time.Duration) (bool, error) {
	h := a.head
	end := h.Now.Add(d)
	switch h.IdleThrough(end) {
	case cluster.NotIdle:
		return false, nil
	case cluster.HeartbeatsOnly:
		withNodes, err := cluster.LoadHead(a.opts.StateDir, true)
		if err != nil {
			return false, err
		}
		h = withNodes
		h.Now = end
		kubelet.Beat(h)
		if t, ok := kubelet.NextHeartbeat(h); ok {
			h.Settled.Heartbeat = &t
		} else {
			h.Settled.Heartbeat = nil
		}
	default:
		h.Now = end
	}
	h.Settled.At = end
	if err := h.SaveHead(a.opts.StateDir); err != nil {
		return false, err
	}
	a.head = h
	return true, nil
}

// loadRest replaces the head Open read with the whole state.
func (a *App) loadRest() error {
	s, err := cluster.Load(a.opts.StateDir)
	if err != nil {
		return err
	}
	a.state, a.head = s, nil
	return nil
}
