package berthrun

import (
	"github.com/berth-sim/berth/conformance/scenario"
	"github.com/berth-sim/berth/internal/cluster"
)

// loadStorage stores the scenario's storage classes, volumes, claims and
// CSINodes as given (phases included: no PV controller runs).
func loadStorage(s *cluster.State, sc *scenario.Scenario) {
	for _, o := range sc.StorageClasses {
		c := o.DeepCopy()
		stamp(s, c)
		s.StorageClasses[c.Name] = c
	}
	for _, o := range sc.PersistentVolumes {
		c := o.DeepCopy()
		stamp(s, c)
		s.PersistentVolumes[c.Name] = c
	}
	for _, o := range sc.PersistentVolumeClaims {
		c := o.DeepCopy()
		stamp(s, c)
		s.PersistentVolumeClaims[cluster.Key(c.Namespace, c.Name)] = c
	}
	for _, o := range sc.CSINodes {
		c := o.DeepCopy()
		stamp(s, c)
		s.CSINodes[c.Name] = c
	}
}
