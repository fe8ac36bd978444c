package app

import (
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/eksctl"
	"github.com/berth-sim/berth/internal/fargate"
	"github.com/berth-sim/berth/internal/manifest"
)

// The EKS Fargate webhook mutates pods at creation, and Fargate nodes start
// pods with their own timing (docs/fargate.md).
func init() {
	admission.PodMutators = append(admission.PodMutators, fargate.Mutate)
	kubelet.NodeTiming = func(node *corev1.Node) (kubelet.Timing, bool) {
		sandbox, pull, start, ok := fargate.KubeletTiming(node)
		return kubelet.Timing{Sandbox: sandbox, Pull: pull, Start: start}, ok
	}
}

// applyFargateProfiles adds the config's new Fargate profiles, as `eksctl
// create fargateprofile` does, active from now on; a profile already in
// the state must be unchanged, since Fargate profiles cannot be changed
// (replace one by a new profile under another name). It reports whether it
// added any.
func applyFargateProfiles(s *cluster.State, cc *eksctl.ClusterConfig, src manifest.Source) (bool, error) {
	profiles, err := cc.ResolveFargateProfiles(s.Info)
	if err != nil {
		return false, fmt.Errorf("%s: %w", src, err)
	}
	added := false
	for _, p := range profiles {
		if existing := fargate.Profile(s, p.Name); existing != nil {
			if !sameProfile(existing, p) {
				return false, fmt.Errorf("%s: Fargate profile %q: Fargate profiles can't be changed; create a profile under another name (and delete this one with `berth delete fargateprofile %s`)", src, p.Name, p.Name)
			}
			continue
		}
		p.CreationTimestamp = metav1.NewTime(s.Now)
		p.ResourceVersion = s.Bump()
		s.NoteCreated(p.UID)
		if s.FargateProfiles == nil {
			s.FargateProfiles = map[string]*cluster.FargateProfile{}
		}
		s.FargateProfiles[p.Name] = p
		added = true
	}
	return added, nil
}

// sameProfile compares what a ClusterConfig says of a profile.
func sameProfile(a, b *cluster.FargateProfile) bool {
	return reflect.DeepEqual(a.Selectors, b.Selectors) && reflect.DeepEqual(a.Subnets, b.Subnets) &&
		a.PodExecutionRoleARN == b.PodExecutionRoleARN && reflect.DeepEqual(a.Tags, b.Tags)
}

// deleteFargateProfile removes a profile as `eksctl delete fargateprofile`
// does. EKS stops the pods running with the profile; berth deletes them, so
// their controllers create new pods that the webhook routes by the
// remaining profiles, or leaves to default-scheduler (where, with no room
// on EC2 nodes, they are Pending) (docs/fargate.md#deleting-a-profile).
func deleteFargateProfile(s *cluster.State, name string) {
	delete(s.FargateProfiles, name)
	for _, key := range cluster.SortedKeys(s.Pods) {
		if p := s.Pods[key]; p.Spec.SchedulerName == fargate.SchedulerName && p.Labels[fargate.LabelProfile] == name {
			s.DeletePod(p)
		}
	}
}
