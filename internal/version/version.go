// Package version turns a cluster's Kubernetes version into the behaviour
// switches that make upstream releases differ observably
// (docs/scheduler.md#versions).
package version

import (
	"fmt"
	"strconv"
	"strings"
)

// Oldest and Newest bound the minor versions berth accepts.
const (
	OldestMinor = 24
	NewestMinor = 36
)

// Version is a parsed Kubernetes version. Patch is -1 when only major.minor was
// given; such a version behaves like the newest patch of its minor.
type Version struct {
	Major, Minor, Patch int
}

// Parse accepts "1.30", "1.34.1" and "v1.36.3".
func Parse(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.Split(t, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("invalid Kubernetes version %q: want MAJOR.MINOR or MAJOR.MINOR.PATCH", s)
	}
	nums := make([]int, 3)
	nums[2] = -1
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return Version{}, fmt.Errorf("invalid Kubernetes version %q: want MAJOR.MINOR or MAJOR.MINOR.PATCH", s)
		}
		nums[i] = n
	}
	v := Version{nums[0], nums[1], nums[2]}
	if v.Major != 1 || v.Minor < OldestMinor || v.Minor > NewestMinor {
		return Version{}, fmt.Errorf("unsupported Kubernetes version %q: berth models 1.%d to 1.%d", s, OldestMinor, NewestMinor)
	}
	return v, nil
}

func (v Version) String() string {
	if v.Patch < 0 {
		return fmt.Sprintf("%d.%d", v.Major, v.Minor)
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// AtLeast compares minor and patch (an unspecified patch counts as the newest).
func (v Version) AtLeast(minor, patch int) bool {
	if v.Minor != minor {
		return v.Minor > minor
	}
	return v.Patch < 0 || v.Patch >= patch
}

// Features are the observable differences between releases.
type Features struct {
	Version Version
	// TaintKeyValueText: the TaintToleration reason names the taint
	// ("node(s) had untolerated taint {k: v}") instead of "node(s) had untolerated taint(s)".
	TaintKeyValueText bool
	// DynamicResources: the DRA plugin is in the default profile, so its
	// PostFilter prepends "no new claims to deallocate, " and a PreFilter
	// rejection ends the message with ". not found".
	DynamicResources bool
	// InsufficientUnresolvable: a request larger than the node's allocatable is
	// UnschedulableAndUnresolvable (so preemption is "not helpful").
	InsufficientUnresolvable bool
	// BalancedAllocationDelta: NodeResourcesBalancedAllocation scores the change
	// in balance the pod causes (1.36) rather than the balance with the pod.
	BalancedAllocationDelta bool
	// PodLevelResources: spec.resources requests override container sums.
	PodLevelResources bool
	// NodeDeclaredFeatures: the NodeDeclaredFeatures filter is in the profile.
	NodeDeclaredFeatures bool
	// QueueingHints: SchedulerQueueingHints is on (1.32, GA 1.34): a cluster
	// event moves a parked pod only if a rejecting plugin's hint says Queue;
	// before, registering the event is enough (docs/scheduler.md#the-queue).
	QueueingHints bool
}

// FeaturesFor derives the switches for a version.
func FeaturesFor(v Version) Features {
	return Features{
		Version:                  v,
		TaintKeyValueText:        !v.AtLeast(34, 2),
		DynamicResources:         v.AtLeast(34, 0),
		InsufficientUnresolvable: v.AtLeast(34, 0),
		BalancedAllocationDelta:  v.AtLeast(36, 0),
		PodLevelResources:        v.AtLeast(34, 0),
		NodeDeclaredFeatures:     v.AtLeast(36, 0),
		QueueingHints:            v.AtLeast(32, 0),
	}
}

// MustFeatures parses s and derives features, panicking on a bad version;
// for tests and for state that was validated when it was created.
func MustFeatures(s string) Features {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return FeaturesFor(v)
}
