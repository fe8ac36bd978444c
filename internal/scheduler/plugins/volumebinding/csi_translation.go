package volumebinding

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/berth-sim/berth/internal/aws"
)

// CSI migration of the in-tree AWS EBS plugin, as k8s.io/csi-translation-lib
// does it: the only in-tree plugin an EKS cluster meets. Other in-tree
// plugins (GCE PD, Azure Disk, Cinder, Portworx) are left untranslated.

// In-tree plugin and CSI driver names (the aws package's), and the driver's zone key.
const (
	InTreeEBSPluginName = aws.InTreeEBSProvisioner
	EBSCSIDriverName    = aws.EBSCSIDriver
	EBSTopologyKey      = aws.EBSZoneTopologyKey
)

var awsVolumeID = regexp.MustCompile("^vol-[^/]*$")

// IsMigratableEBS reports whether a PV is an in-tree EBS volume.
func IsMigratableEBS(pv *v1.PersistentVolume) bool {
	return pv != nil && pv.Spec.AWSElasticBlockStore != nil
}

// PluginMigratedOnNode reports whether the node's CSINode lists the
// in-tree plugin in its migrated-plugins annotation.
func PluginMigratedOnNode(plugin string, csiNode *storagev1.CSINode) bool {
	if csiNode == nil {
		return false
	}
	mpa := csiNode.Annotations[v1.MigratedPluginsAnnotationKey]
	if mpa == "" {
		return false
	}
	for _, p := range strings.Split(mpa, ",") {
		if p == plugin {
			return true
		}
	}
	return false
}

// EBSVolumeHandle turns "aws://<zone>/vol-..." (or a bare ID) into the
// CSI volume handle.
func EBSVolumeHandle(kubernetesID string) (string, error) {
	if !strings.HasPrefix(kubernetesID, "aws://") {
		return kubernetesID, nil
	}
	u, err := url.Parse(kubernetesID)
	if err != nil {
		return "", fmt.Errorf("Invalid disk name (%s): %v", kubernetesID, err)
	}
	if u.Scheme != "aws" {
		return "", fmt.Errorf("Invalid scheme for AWS volume (%s)", kubernetesID)
	}
	id := strings.Trim(u.Path, "/")
	if !awsVolumeID.MatchString(id) {
		return "", fmt.Errorf("Invalid format for AWS volume (%s)", kubernetesID)
	}
	return id, nil
}

// TranslateEBSPVToCSI returns a CSI copy of an in-tree EBS PV: the volume
// source becomes the driver's, and the zone key of the node affinity (or of
// the PV's zone label when the affinity has none) becomes the driver's.
func TranslateEBSPVToCSI(pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	if !IsMigratableEBS(pv) {
		return nil, fmt.Errorf("pv is nil or AWS EBS not defined on pv")
	}
	pv = pv.DeepCopy()
	src := pv.Spec.AWSElasticBlockStore
	handle, err := EBSVolumeHandle(src.VolumeID)
	if err != nil {
		return nil, fmt.Errorf("failed to translate Kubernetes ID to EBS Volume ID %v", err)
	}
	translateTopology(pv, EBSTopologyKey)
	pv.Spec.AWSElasticBlockStore = nil
	pv.Spec.CSI = &v1.CSIPersistentVolumeSource{
		Driver: EBSCSIDriverName, VolumeHandle: handle, ReadOnly: src.ReadOnly, FSType: src.FSType,
		VolumeAttributes: map[string]string{"partition": strconv.FormatInt(int64(src.Partition), 10)},
	}
	return pv, nil
}

// translateTopology is translateTopologyFromInTreeToCSI.
func translateTopology(pv *v1.PersistentVolume, csiKey string) {
	zoneKey, regionKey := topologyLabels(pv)
	if len(topologyValues(pv, zoneKey)) > 0 {
		replaceTopology(pv, zoneKey, csiKey)
	} else if label, ok := pv.Labels[zoneKey]; ok {
		addTopology(pv, csiKey, strings.Split(label, "__"))
	}
	if regionKey == v1.LabelFailureDomainBetaRegion && len(topologyValues(pv, regionKey)) > 0 {
		replaceTopology(pv, regionKey, v1.LabelTopologyRegion)
	}
}

// topologyLabels picks GA or beta keys: node affinity first, then labels.
func topologyLabels(pv *v1.PersistentVolume) (zone, region string) {
	switch {
	case affinityHasKey(pv, v1.LabelTopologyZone):
		return v1.LabelTopologyZone, v1.LabelTopologyRegion
	case affinityHasKey(pv, v1.LabelFailureDomainBetaZone):
		return v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaRegion
	}
	if _, ok := pv.Labels[v1.LabelTopologyZone]; ok {
		return v1.LabelTopologyZone, v1.LabelTopologyRegion
	}
	if _, ok := pv.Labels[v1.LabelFailureDomainBetaZone]; ok {
		return v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaRegion
	}
	return v1.LabelTopologyZone, v1.LabelTopologyRegion
}

func requiredTerms(pv *v1.PersistentVolume) []v1.NodeSelectorTerm {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return nil
	}
	return pv.Spec.NodeAffinity.Required.NodeSelectorTerms
}

func affinityHasKey(pv *v1.PersistentVolume, key string) bool {
	for _, t := range requiredTerms(pv) {
		for _, r := range t.MatchExpressions {
			if r.Key == key {
				return true
			}
		}
	}
	return false
}

func topologyValues(pv *v1.PersistentVolume, key string) []string {
	set := map[string]bool{}
	for _, t := range requiredTerms(pv) {
		for _, r := range t.MatchExpressions {
			if r.Key == key {
				for _, v := range r.Values {
					set[v] = true
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func replaceTopology(pv *v1.PersistentVolume, oldKey, newKey string) {
	terms := requiredTerms(pv)
	for i := range terms {
		for j := range terms[i].MatchExpressions {
			if terms[i].MatchExpressions[j].Key == oldKey {
				terms[i].MatchExpressions[j].Key = newKey
			}
		}
	}
}

// addTopology appends key In zones to every term (creating one if needed).
func addTopology(pv *v1.PersistentVolume, key string, zones []string) {
	set := map[string]bool{}
	for _, z := range zones {
		if z = strings.TrimSpace(z); z != "" {
			set[z] = true
		}
	}
	if len(set) == 0 {
		return
	}
	values := make([]string, 0, len(set))
	for z := range set {
		values = append(values, z)
	}
	sort.Strings(values)
	if pv.Spec.NodeAffinity == nil {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{}
	}
	if pv.Spec.NodeAffinity.Required == nil {
		pv.Spec.NodeAffinity.Required = &v1.NodeSelector{}
	}
	if len(pv.Spec.NodeAffinity.Required.NodeSelectorTerms) == 0 {
		pv.Spec.NodeAffinity.Required.NodeSelectorTerms = make([]v1.NodeSelectorTerm, 1)
	}
	req := v1.NodeSelectorRequirement{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}
	for i := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		t := &pv.Spec.NodeAffinity.Required.NodeSelectorTerms[i]
		t.MatchExpressions = append(t.MatchExpressions, req)
	}
}
