package provisioning

import (
	"errors"
	"sort"
	"strconv"
)

// Volumes are persistent volume claims ("namespace/name") by the CSI
// driver that attaches them. Only existing nodes are checked against their
// drivers' attach limits (docs/karpenter-provisioning.md#volume-limits).
type Volumes map[string]map[string]bool

// Add records a claim of a driver.
func (v Volumes) Add(driver, claim string) {
	if v[driver] == nil {
		v[driver] = map[string]bool{}
	}
	v[driver][claim] = true
}

// union is a new set holding the claims of both.
func (v Volumes) union(o Volumes) Volumes {
	out := Volumes{}
	for _, src := range []Volumes{v, o} {
		for driver, claims := range src {
			for c := range claims {
				out.Add(driver, c)
			}
		}
	}
	return out
}

var errVolumeLimit = errors.New("would exceed volume limit")

// exceedsVolumeLimits tells whether the node's claims and the pod's together
// pass a driver's limit; claims shared between pods count once. A node
// already past a limit takes no pod, even one without volumes.
func exceedsVolumeLimits(used, pod Volumes, limits map[string]int) error {
	if len(limits) == 0 {
		return nil
	}
	all := used
	if len(pod) > 0 {
		all = used.union(pod)
	}
	for _, driver := range sortedVolumeDrivers(all) {
		if limit, ok := limits[driver]; ok && len(all[driver]) > limit {
			return withValues(errVolumeLimit, "provisioner", driver, "volume-count", strconv.Itoa(len(all[driver])), "volume-limit", strconv.Itoa(limit))
		}
	}
	return nil
}

func sortedVolumeDrivers(v Volumes) []string {
	out := make([]string, 0, len(v))
	for d := range v {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
