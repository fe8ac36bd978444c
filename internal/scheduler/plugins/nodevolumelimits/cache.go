package nodevolumelimits

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// attachedVolume is one attachable volume: its unique name (driver/handle)
// and its driver.
type attachedVolume struct {
	unique, driver string
}

// cachedVolumes is a pod's attachable volumes (without repeats) for one
// variant: node with or without a CSINode, pod being scheduled or assigned.
type cachedVolumes struct {
	vols []attachedVolume
	// stale is set when a claim or volume it was derived from is written.
	stale bool
}

// nodeVolumes is what Filter needs of a node: its CSINode and, cached, the
// volumes attached by the pods on it.
type nodeVolumes struct {
	csiNode   *storagev1.CSINode
	limits    []driverLimit
	hasLimits bool
	// attached is valid while the NodeInfo's Generation is gen and none of
	// the pods' entries is stale.
	valid    bool
	gen      int64
	pods     []*cachedVolumes
	attached []attachedVolume
}

// maxCachedNodes bounds the node entries (preemption's NodeInfo copies
// come and go); beyond it they start afresh.
const maxCachedNodes = 1 << 16

// volumeCache keeps pods' and nodes' volumes for one storage epoch. In an
// epoch storage objects change only through the writes the epoch lists, so
// an entry stays exact until one of the claims or volumes it read is
// written; CSINodes and classes do not change at all.
type volumeCache struct {
	source  framework.StorageEpoch
	epoch   uint64
	applied int
	byPod   map[*framework.PodInfo]*[4]*cachedVolumes
	// byObject lists the entries derived from a claim or volume.
	byObject map[string][]*cachedVolumes
	nodes    map[*framework.NodeInfo]*nodeVolumes
}

func claimKey(namespace, name string) string { return "pvc\x00" + namespace + "\x00" + name }
func volumeKey(name string) string           { return "pv\x00" + name }

// sync drops the entries the epoch's new writes made stale, or everything
// when the epoch changed.
func (c *volumeCache) sync() {
	epoch, writes := c.source.StorageEpoch()
	if epoch != c.epoch || c.byPod == nil || c.applied > len(writes) {
		c.epoch, c.applied = epoch, len(writes)
		c.byPod = map[*framework.PodInfo]*[4]*cachedVolumes{}
		c.byObject = map[string][]*cachedVolumes{}
		c.nodes = map[*framework.NodeInfo]*nodeVolumes{}
		return
	}
	for _, w := range writes[c.applied:] {
		key := claimKey(w.Namespace, w.Name)
		if w.Volume {
			key = volumeKey(w.Name)
		}
		for _, cv := range c.byObject[key] {
			cv.stale = true
		}
		delete(c.byObject, key)
	}
	c.applied = len(writes)
	if len(c.nodes) > maxCachedNodes {
		c.nodes = map[*framework.NodeInfo]*nodeVolumes{}
	}
}

func (c *volumeCache) get(pi *framework.PodInfo, variant int) *cachedVolumes {
	if entries := c.byPod[pi]; entries != nil {
		if cv := entries[variant]; cv != nil && !cv.stale {
			return cv
		}
	}
	return nil
}

func (c *volumeCache) put(pi *framework.PodInfo, variant int, cv *cachedVolumes, deps []string) {
	entries := c.byPod[pi]
	if entries == nil {
		entries = &[4]*cachedVolumes{}
		c.byPod[pi] = entries
	}
	entries[variant] = cv
	for _, key := range deps {
		c.byObject[key] = append(c.byObject[key], cv)
	}
}

// recordingLister notes the claims and volumes looked up.
type recordingLister struct {
	framework.StorageLister
	record bool
	deps   []string
}

func (r *recordingLister) PersistentVolumeClaim(namespace, name string) *v1.PersistentVolumeClaim {
	if r.record {
		r.deps = append(r.deps, claimKey(namespace, name))
	}
	return r.StorageLister.PersistentVolumeClaim(namespace, name)
}

func (r *recordingLister) PersistentVolume(name string) *v1.PersistentVolume {
	if r.record {
		r.deps = append(r.deps, volumeKey(name))
	}
	return r.StorageLister.PersistentVolume(name)
}
