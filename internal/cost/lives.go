package cost

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// Life is one node's stretch of virtual time with its price: a deleted
// node from the ledger, or a live node up to now. The HTML report
// (docs/report.md) draws cost over virtual time from these.
type Life struct {
	Name string
	// Group is what brought the node, as --by nodegroup names it
	// ("nodepool/NAME", "nodegroup/NAME", "fargateprofile/NAME" or NoGroup).
	Group      string
	Start, End time.Time
	Live       bool
	Price      Price
}

// Lives lists every node life berth knows, priced as `berth cost` prices
// them: the ledger's deleted nodes in the order they ended, then the live
// nodes by name (their End is the state's now). It only reads s.
func Lives(s *cluster.State) []Life {
	var out []Life
	for _, l := range nodeLives(s, NewPricer(s)) {
		out = append(out, Life{Name: l.name, Group: l.group, Start: l.start, End: l.end, Live: l.live, Price: l.price})
	}
	return out
}

// WorkloadOf names the pod's owning workload as --by workload does
// (deployment/NAME through its ReplicaSet, statefulset/NAME, pod/NAME for
// a bare pod).
func WorkloadOf(s *cluster.State, pod *corev1.Pod) string { return workloadOf(s, pod) }
