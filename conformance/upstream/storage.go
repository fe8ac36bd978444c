package upstream

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/conformance/scenario"
)

// createStorage creates the scenario's storage objects before any pod, as
// stored objects (status included: no PV controller runs in the harness).
// Pending pods must never need VolumeBinding's PreBind, which would wait for
// a PV controller; the generator only emits claims that are bound already or
// that make the pod unschedulable.
func (r *Runner) createStorage(s *scenario.Scenario) error {
	ctx, cs := r.ctx, r.client
	for _, o := range s.StorageClasses {
		if _, err := cs.StorageV1().StorageClasses().Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("upstream: storageclass %s: %w", o.Name, err)
		}
	}
	for _, o := range s.PersistentVolumes {
		if _, err := cs.CoreV1().PersistentVolumes().Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("upstream: persistentvolume %s: %w", o.Name, err)
		}
	}
	for _, o := range s.PersistentVolumeClaims {
		if _, err := cs.CoreV1().PersistentVolumeClaims(o.Namespace).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("upstream: persistentvolumeclaim %s/%s: %w", o.Namespace, o.Name, err)
		}
	}
	for _, o := range s.CSINodes {
		if _, err := cs.StorageV1().CSINodes().Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("upstream: csinode %s: %w", o.Name, err)
		}
	}
	return nil
}
