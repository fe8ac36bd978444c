package app

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/berth-sim/berth/internal/autoscaler/config"
	autoscaler "github.com/berth-sim/berth/internal/autoscaler/controller"
	"github.com/berth-sim/berth/internal/manifest"
)

// checkAutoscalerFlags refuses a cluster-autoscaler Deployment whose
// command line the binary would refuse: an unknown flag or a malformed
// value, named (docs/cluster-autoscaler.md#flags).
func checkAutoscalerFlags(o manifest.Object) error {
	d, ok := o.Object.(*appsv1.Deployment)
	if !ok {
		return nil
	}
	c := autoscaler.Container(d)
	if c == nil {
		return nil
	}
	if _, err := config.Parse(autoscaler.Args(c)); err != nil {
		return fmt.Errorf("%s: deployment %q, container %q: cluster-autoscaler would not start: %w", o.Source, d.Name, c.Name, err)
	}
	return nil
}
