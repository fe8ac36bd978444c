package app

import (
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/addons"
	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/capacity/nodegroups"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/eksctl"
	"github.com/berth-sim/berth/internal/manifest"
)

// applyClusterConfig creates the cluster's node groups the first time, and
// afterwards adds new node groups; changing an existing group is refused
// until node-group updates are modelled. The first ClusterConfig also gives
// the state its region, zones and VPC, even when Node manifests came first
// (a state built from nodes alone has none; docs/pod-networking.md).
func applyClusterConfig(s *cluster.State, cc *eksctl.ClusterConfig, src manifest.Source) (string, error) {
	info, groups, err := cc.Resolve(src.String())
	if err != nil {
		return "", fmt.Errorf("%s: %w", src, err)
	}
	if s.Info.Name != "" && s.Info.Name != info.Name {
		return "", fmt.Errorf("%s: this state already holds cluster %q; run `berth reset` (or use another --state) to simulate cluster %q", src, s.Info.Name, info.Name)
	}
	created := s.Info.Name == ""
	if created {
		info.KubernetesVersion = s.Info.KubernetesVersion
		s.Info = info
	}
	changed := false
	for _, ng := range groups {
		existing := findGroup(s.NodeGroups, ng.Name)
		if existing != nil {
			ng.Source = existing.Source
			ng.CreatedAt = existing.CreatedAt
			if resizedByAutoscaler(s, ng.Name) {
				// cluster-autoscaler owns the desired capacity once it
				// resized the group, as on EKS; re-applying the same
				// ClusterConfig is no change (docs/cluster-autoscaler.md#node-groups).
				ng.DesiredSize = existing.DesiredSize
			}
			if !reflect.DeepEqual(*existing, ng) {
				return "", fmt.Errorf("%s: node group %q: changing an existing node group is not modelled yet; run `berth reset` to recreate the cluster", src, ng.Name)
			}
			continue
		}
		ng.CreatedAt = s.Now
		s.NodeGroups = append(s.NodeGroups, ng)
		if _, err := nodegroups.CreateNodes(s, ng); err != nil {
			return "", err
		}
		changed = true
	}
	profilesAdded, err := applyFargateProfiles(s, cc, src)
	if err != nil {
		return "", err
	}
	changed = changed || profilesAdded
	if created {
		names, disableDefaults := cc.SelectedAddons()
		if err := installAddons(s, addons.AddonsSelection{Addons: names, DisableDefaultAddons: disableDefaults}); err != nil {
			return "", fmt.Errorf("%s: add-ons: %w", src, err)
		}
	}
	switch {
	case created:
		return "created", nil
	case changed:
		return "configured", nil
	}
	return "unchanged", nil
}

func findGroup(groups []cluster.NodeGroup, name string) *cluster.NodeGroup {
	for i := range groups {
		if groups[i].Name == name {
			return &groups[i]
		}
	}
	return nil
}

// installAddons creates what EKS and eksctl install into a new cluster (the
// VPC CNI and kube-proxy DaemonSets, CoreDNS, and any add-on the config
// selects), with the service accounts their pods run as.
func installAddons(s *cluster.State, sel addons.AddonsSelection) error {
	for _, obj := range addons.Objects(s.Info, sel) {
		if sa := podServiceAccount(obj); sa != "" {
			m := obj.(metav1.Object)
			if _, ok := s.ServiceAccounts[cluster.Key(m.GetNamespace(), sa)]; !ok {
				account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: m.GetNamespace()}}
				if err := admission.Create(s, account); err != nil {
					return err
				}
			}
		}
		if err := admission.Create(s, obj); err != nil {
			return err
		}
	}
	return nil
}

func podServiceAccount(obj runtime.Object) string {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return o.Spec.Template.Spec.ServiceAccountName
	case *appsv1.DaemonSet:
		return o.Spec.Template.Spec.ServiceAccountName
	}
	return ""
}

// resizedByAutoscaler reports whether cluster-autoscaler changed the
// group's desired capacity.
func resizedByAutoscaler(s *cluster.State, group string) bool {
	_, up := s.Autoscaler.LastGroupScaleUp[group]
	_, down := s.Autoscaler.LastGroupScaleDown[group]
	return up || down
}
