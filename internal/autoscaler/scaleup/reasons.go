package scaleup

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Reasons cluster-autoscaler gives for skipping a group (its
// orchestrator's SkippedReasons, verbatim).
const (
	ReasonBackoff  = "in backoff after failed scale-up"
	ReasonMaxSize  = "max node group size reached"
	ReasonNotReady = "not ready for scale-up"
	// ReasonMaxTotal replaces every per-group reason when the cluster is
	// at --max-nodes-total.
	ReasonMaxTotal = "max total nodes in cluster reached"
)

// reasonResourceLimit is the skipped reason of a group whose next node
// would pass --cores-total or --memory-total.
func reasonResourceLimit(resources ...string) string {
	return fmt.Sprintf("max cluster %s limit reached", strings.Join(resources, ", "))
}

// PodReasons are why a pending pod triggered no scale-up.
type PodReasons struct {
	Pod     *corev1.Pod
	Reasons []CountedReason
	// Message is the text after "pod didn't trigger scale-up: ".
	Message string
}

// CountedReason is one reason and how many groups gave it.
type CountedReason struct {
	Reason string
	Count  int
}

// aggregate counts reasons over groups. cluster-autoscaler walks a map, so
// its order varies from run to run; berth keeps the order of first
// appearance, rejected groups (predicates) before skipped ones, each in
// group order (docs/cluster-autoscaler.md#events).
type aggregate struct {
	items []CountedReason
}

func (a *aggregate) add(reasons []string) {
	for _, r := range reasons {
		found := false
		for i := range a.items {
			if a.items[i].Reason == r {
				a.items[i].Count++
				found = true
				break
			}
		}
		if !found {
			a.items = append(a.items, CountedReason{Reason: r, Count: 1})
		}
	}
}

func (a *aggregate) String() string {
	parts := make([]string, len(a.items))
	for i, it := range a.items {
		parts[i] = fmt.Sprintf("%d %s", it.Count, it.Reason)
	}
	return strings.Join(parts, ", ")
}

// TriggeredMessage is the TriggeredScaleUp event's text.
func TriggeredMessage(increases []Increase) string {
	parts := make([]string, len(increases))
	for i, inc := range increases {
		parts[i] = inc.String()
	}
	return "pod triggered scale-up: [" + strings.Join(parts, " ") + "]"
}

// NotTriggeredMessage is the NotTriggerScaleUp event's text.
func NotTriggeredMessage(r PodReasons) string {
	return "pod didn't trigger scale-up: " + r.Message
}
