package app

import (
	"fmt"
	"reflect"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/eksctl"
	"github.com/berth-sim/berth/internal/fargate"
	"github.com/berth-sim/berth/internal/manifest"
)

// The EKS Fargate webhook mutates pods at creation (docs/fargate.md).
func init() { admission.PodMutators = append(admission.PodMutators, fargate.Mutate) }

// applyFargateProfiles adds the config's new Fargate profiles, as `eksctl
// create fargateprofile` does, active from now on; a profile already in
// the state must be unchanged, since Fargate profiles cannot be changed
// (replace one by a new profile under another name). It reports whether it
// added any.
func applyFargateProfiles(s *cluster.State, cc *eksctl.ClusterConfig, src manifest.Source) (bool, error) {
	profiles, err := cc.ResolveFargateProfiles(s.Info, src.String())
	if err != nil {
		return false, fmt.Errorf("%s: %w", src, err)
	}
	added := false
	for _, p := range profiles {
		if existing := fargate.Profile(s, p.Name); existing != nil {
			p.Source, p.CreatedAt = existing.Source, existing.CreatedAt
			if !reflect.DeepEqual(*existing, p) {
				return false, fmt.Errorf("%s: Fargate profile %q: Fargate profiles can't be changed; create a profile under another name (and delete this one with `berth reset`)", src, p.Name)
			}
			continue
		}
		p.CreatedAt = s.Now
		s.FargateProfiles = append(s.FargateProfiles, p)
		added = true
	}
	return added, nil
}
