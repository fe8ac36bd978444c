// Package volumezone rejects nodes outside the zones and regions a bound
// PersistentVolume is labelled with (upstream's plugins/volumezone).
package volumezone

import (
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Name is the plugin's name in the profile.
const Name = "VolumeZone"

// ErrReasonConflict is the Filter reason.
const ErrReasonConflict = "node(s) had no available volume zone"

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// topologyLabels are the PV labels read, beta first, in upstream's order.
var topologyLabels = []string{
	v1.LabelFailureDomainBetaZone,
	v1.LabelFailureDomainBetaRegion,
	v1.LabelTopologyZone,
	v1.LabelTopologyRegion,
}

// multiZoneDelimiter separates the zones of a multi-zone PV label value.
const multiZoneDelimiter = "__"

// VolumeZone is the plugin.
type VolumeZone struct {
	storage framework.StorageLister
}

// New builds the plugin over the handle's storage view.
func New(h framework.Handle) framework.Plugin { return &VolumeZone{storage: framework.Storage(h)} }

func (*VolumeZone) Name() string { return Name }

type pvTopology struct {
	key    string
	values sets.Set[string]
}

type stateData struct {
	topologies []pvTopology
}

func (d *stateData) Clone() framework.StateData { return d }

// PreFilter collects the zone labels of the pod's bound volumes; unbound
// WaitForFirstConsumer claims are skipped, and Filter too when nothing is left.
func (pl *VolumeZone) PreFilter(state *framework.CycleState, pi *framework.PodInfo, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	tops, st := pl.pvTopologies(pi.Pod)
	if !st.IsSuccess() {
		return nil, st
	}
	if len(tops) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, &stateData{topologies: tops})
	return nil, nil
}

func (pl *VolumeZone) pvTopologies(pod *v1.Pod) ([]pvTopology, *framework.Status) {
	var out []pvTopology
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		name := vol.PersistentVolumeClaim.ClaimName
		if name == "" {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no name")
		}
		pvc := pl.storage.PersistentVolumeClaim(pod.Namespace, name)
		if pvc == nil {
			return nil, notFound("persistentvolumeclaim", "", name)
		}
		pvName := pvc.Spec.VolumeName
		if pvName == "" {
			scName := storagehelpers.GetPersistentVolumeClaimClass(pvc)
			if scName == "" {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no pv name and storageClass name")
			}
			class := pl.storage.StorageClass(scName)
			if class == nil {
				return nil, notFound("storageclass", storagev1.GroupName, scName)
			}
			if class.VolumeBindingMode == nil {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("VolumeBindingMode not set for StorageClass %q", scName))
			}
			if *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
				continue
			}
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolume had no name")
		}
		pv := pl.storage.PersistentVolume(pvName)
		if pv == nil {
			return nil, notFound("persistentvolume", "", pvName)
		}
		for _, key := range topologyLabels {
			value, ok := pv.Labels[key]
			if !ok {
				continue
			}
			values, err := labelZonesToSet(value)
			if err != nil {
				continue // upstream logs and ignores a malformed label
			}
			out = append(out, pvTopology{key: key, values: values})
		}
	}
	return out, nil
}

// labelZonesToSet splits a "__"-delimited zone list; an empty entry is an error.
func labelZonesToSet(value string) (sets.Set[string], error) {
	out := sets.New[string]()
	for _, z := range strings.Split(value, multiZoneDelimiter) {
		z = strings.TrimSpace(z)
		if z == "" {
			return nil, errors.New("empty zone in label value")
		}
		out.Insert(z)
	}
	return out, nil
}

// notFound is the lister's NotFound error as an U&U status.
func notFound(resource, group, name string) *framework.Status {
	err := apierrors.NewNotFound(schemaGroupResource(group, resource), name)
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
}

// PreFilterExtensions: none.
func (pl *VolumeZone) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter passes nodes without any zone or region label; others must carry
// every volume's key (or its GA twin) with one of its values.
func (pl *VolumeZone) Filter(state *framework.CycleState, pi *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	if len(pi.Pod.Spec.Volumes) == 0 {
		return nil
	}
	var tops []pvTopology
	if d, ok := state.Read(preFilterStateKey).(*stateData); ok {
		tops = d.topologies
	} else {
		var st *framework.Status
		if tops, st = pl.pvTopologies(pi.Pod); !st.IsSuccess() {
			return st
		}
	}
	labels := ni.Node.Labels
	constrained := false
	for _, l := range topologyLabels {
		if _, ok := labels[l]; ok {
			constrained = true
			break
		}
	}
	if !constrained {
		return nil
	}
	for _, t := range tops {
		v, ok := labels[t.key]
		if !ok {
			v, ok = labels[translateToGALabel(t.key)]
		}
		if !ok || !t.values.Has(v) {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonConflict)
		}
	}
	return nil
}

func translateToGALabel(label string) string {
	switch label {
	case v1.LabelFailureDomainBetaRegion:
		return v1.LabelTopologyRegion
	case v1.LabelFailureDomainBetaZone:
		return v1.LabelTopologyZone
	}
	return label
}

func schemaGroupResource(group, resource string) schema.GroupResource {
	return schema.GroupResource{Group: group, Resource: resource}
}
