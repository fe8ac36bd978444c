package controllerutil

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// SyncEach runs sync on every object of a workload map in creation order,
// skipping objects being deleted, as a controller's FIFO work queue drains
// the objects its informer delivered (docs/ordering.md). It reports whether
// any sync changed something; the first error names the object.
func SyncEach[T metav1.Object](s *cluster.State, objects map[string]T, kind string, sync func(T) (bool, error)) (bool, error) {
	changed := false
	for _, key := range cluster.CreationOrder(s, objects) {
		obj, ok := objects[key]
		if !ok || obj.GetDeletionTimestamp() != nil {
			// Deleted by an earlier sync of this pass (cascading deletion).
			continue
		}
		ch, err := sync(obj)
		if err != nil {
			return changed, fmt.Errorf("%s %s: %w", strings.ToLower(kind), key, err)
		}
		changed = changed || ch
	}
	return changed, nil
}
