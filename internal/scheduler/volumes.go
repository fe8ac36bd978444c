package scheduler

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// reserveAndPreBind runs Reserve, then PreBind, on the chosen node. A
// rejected Reserve fails the pod as upstream's one-node FitError does; any
// failure unreserves. Upstream runs PreBind in the asynchronous binding
// cycle and waits there for volumes; berth binds right after it and leaves
// the waiting to the kubelet.
func (fw *Framework) reserveAndPreBind(state *framework.CycleState, pi *framework.PodInfo, node string) *framework.Status {
	for _, pl := range fw.reserve {
		st := pl.Reserve(state, pi, node)
		if st.IsSuccess() {
			continue
		}
		fw.unreserve(state, pi, node)
		if st.IsRejected() {
			msg := fmt.Sprintf("0/1 nodes are available: 1 %s.", st.Message())
			return framework.NewStatus(st.Code(), msg).WithPlugin(pl.Name())
		}
		return framework.AsStatus(fmt.Errorf("running Reserve plugin %q: %s", pl.Name(), st.Message())).WithPlugin(pl.Name())
	}
	for _, pl := range fw.preBind {
		if st := pl.PreBind(state, pi, node); !st.IsSuccess() {
			fw.unreserve(state, pi, node)
			return framework.AsStatus(fmt.Errorf("running PreBind plugin %q: %s", pl.Name(), st.Message())).WithPlugin(pl.Name())
		}
	}
	return nil
}

// unreserve runs Unreserve in reverse order, as upstream does.
func (fw *Framework) unreserve(state *framework.CycleState, pi *framework.PodInfo, node string) {
	for i := len(fw.reserve) - 1; i >= 0; i-- {
		fw.reserve[i].Unreserve(state, pi, node)
	}
}

var _ framework.StorageLister = (*handle)(nil)

func (h *handle) PersistentVolumeClaim(namespace, name string) *v1.PersistentVolumeClaim {
	return h.state.PersistentVolumeClaims[cluster.Key(namespace, name)]
}

func (h *handle) PersistentVolume(name string) *v1.PersistentVolume {
	return h.state.PersistentVolumes[name]
}

// PersistentVolumes lists the volumes by name; the list is built once per
// Sync and kept in step with PreBind's updates. Callers must not modify it.
func (h *handle) PersistentVolumes() []*v1.PersistentVolume {
	if h.pvs == nil {
		h.pvs = make([]*v1.PersistentVolume, 0, len(h.state.PersistentVolumes))
		for _, k := range cluster.SortedKeys(h.state.PersistentVolumes) {
			h.pvs = append(h.pvs, h.state.PersistentVolumes[k])
		}
	}
	return h.pvs
}

// StorageEpoch implements framework.StorageEpoch: within one Sync only
// PreBind writes storage objects, and it replaces them.
func (h *handle) StorageEpoch() (uint64, []framework.StorageWrite) { return h.epoch, h.writes }

func (h *handle) StorageClass(name string) *storagev1.StorageClass {
	return h.state.StorageClasses[name]
}

func (h *handle) CSINode(name string) *storagev1.CSINode { return h.state.CSINodes[name] }

// IsPVCUsedByPods asks the snapshot's claim index; only pods with a
// ReadWriteOncePod claim ask.
func (h *handle) IsPVCUsedByPods(key string) bool {
	return h.snap.claimUsers()[key] > 0
}

// UpdatePersistentVolume stores PreBind's PV (claimRef set); the PV
// controller completes the binding.
func (h *handle) UpdatePersistentVolume(pv *v1.PersistentVolume) error {
	if _, ok := h.state.PersistentVolumes[pv.Name]; !ok {
		return fmt.Errorf("persistentvolumes %q not found", pv.Name)
	}
	pv.ResourceVersion = h.state.Bump()
	h.state.PersistentVolumes[pv.Name] = pv
	h.writes = append(h.writes, framework.StorageWrite{Volume: true, Name: pv.Name})
	if h.pvs != nil {
		i := sort.Search(len(h.pvs), func(i int) bool { return h.pvs[i].Name >= pv.Name })
		h.pvs[i] = pv
	}
	return nil
}

// UpdatePersistentVolumeClaim stores PreBind's claim (selected-node set);
// the provisioner takes it from there.
func (h *handle) UpdatePersistentVolumeClaim(pvc *v1.PersistentVolumeClaim) error {
	key := cluster.Key(pvc.Namespace, pvc.Name)
	if _, ok := h.state.PersistentVolumeClaims[key]; !ok {
		return fmt.Errorf("persistentvolumeclaims %q not found", pvc.Name)
	}
	pvc.ResourceVersion = h.state.Bump()
	h.state.PersistentVolumeClaims[key] = pvc
	h.writes = append(h.writes, framework.StorageWrite{Namespace: pvc.Namespace, Name: pvc.Name})
	return nil
}
