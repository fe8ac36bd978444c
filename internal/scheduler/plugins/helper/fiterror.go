package helper

import (
	"fmt"
	"sort"
	"strings"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// NoNodeAvailableMsg opens every FailedScheduling message.
const NoNodeAvailableMsg = "0/%v nodes are available"

// FitError describes why no node fits a pod, the way kube-scheduler prints it.
type FitError struct {
	NumAllNodes int
	// PreFilterMsg is set when the pod was rejected before Filter; it replaces
	// the per-node histogram.
	PreFilterMsg string
	// NodeToStatus holds the nodes that got an explicit status; every other
	// node of NumAllNodes counts with the Absent status.
	NodeToStatus framework.NodeToStatus
	// PostFilterMsg is appended after a space, without a closing period.
	PostFilterMsg string
	// Counted sums the reasons of CountedNodes further nodes that have no
	// entry in NodeToStatus (a summary where one status per node would
	// only be counted again).
	Counted      map[string]int
	CountedNodes int
}

// Error renders "0/N nodes are available: <count> <reason>, ... . <postfilter>".
func (f *FitError) Error() string {
	msg := fmt.Sprintf(NoNodeAvailableMsg+":", f.NumAllNodes)
	if f.PreFilterMsg != "" {
		msg += " " + f.PreFilterMsg + "."
	} else if list := f.histogram(); len(list) > 0 {
		msg += " " + strings.Join(list, ", ") + "."
	}
	if f.PostFilterMsg != "" {
		msg += " " + f.PostFilterMsg
	}
	return msg
}

// histogram counts reasons over nodes; the "<count> <reason>" strings are
// sorted byte-wise, so "10 ..." sorts before "2 ...", exactly as upstream.
func (f *FitError) histogram() []string {
	counts := make(map[string]int, len(f.Counted)+2)
	for r, n := range f.Counted {
		counts[r] += n
	}
	explicit := f.CountedNodes + f.NodeToStatus.Len()
	// Nodes rejected alike often share one status object (per class or per
	// cycle): count objects first, then their reasons once each. A run of
	// nodes with the same object is counted once.
	byStatus := make(map[*framework.Status]int, 8)
	var last *framework.Status
	run := 0
	f.NodeToStatus.Each(func(_ string, st *framework.Status) {
		if st != last {
			if run > 0 {
				byStatus[last] += run
			}
			last, run = st, 0
		}
		run++
	})
	if run > 0 {
		byStatus[last] += run
	}
	for st, n := range byStatus {
		for _, r := range st.Reasons() {
			counts[r] += n
		}
	}
	if rest := f.NumAllNodes - explicit; rest > 0 && f.NodeToStatus.Absent != nil {
		for _, r := range f.NodeToStatus.Absent.Reasons() {
			counts[r] += rest
		}
	}
	list := make([]string, 0, len(counts))
	for r, n := range counts {
		list = append(list, fmt.Sprintf("%v %v", n, r))
	}
	sort.Strings(list)
	return list
}

// StatusOf returns the status a node got: its explicit one or the absent one.
func StatusOf(m framework.NodeToStatus, node string) *framework.Status {
	if st, ok := m.Lookup(node); ok {
		return st
	}
	return m.Absent
}
