// Package queuesort orders the active queue: higher priority first, then the
// pod that entered the queue earlier.
package queuesort

import (
	"time"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Name is the plugin's name in the profile.
const Name = "PrioritySort"

// PrioritySort is the plugin.
type PrioritySort struct{}

// New builds the plugin.
func New(framework.Handle) framework.Plugin { return &PrioritySort{} }

func (*PrioritySort) Name() string { return Name }

// Less reports whether pod 1 (queued at t1) goes before pod 2 (queued at t2);
// a nil spec.priority counts as 0.
func (*PrioritySort) Less(p1 *v1.Pod, t1 time.Time, p2 *v1.Pod, t2 time.Time) bool {
	a, b := corev1helpers.PodPriority(p1), corev1helpers.PodPriority(p2)
	return a > b || (a == b && t1.Before(t2))
}
